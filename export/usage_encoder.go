package export

import (
	"io"

	"github.com/parquet-go/parquet-go"
)

// usageColumns are the leaf columns of the usage table
// (parquet.SchemaOf(UsageRow{})), in the order usageValues numbers them.
var usageColumns = []string{"account", "user", "partition", "period_start", "billing_sec", "cpu_sec",
	"mem_mb_sec", "gpu_sec"}

// usageEncoder returns a function writing usage rows as Parquet in
// compareUsage order, as encoder(rows, compareUsage, sortBy) does, but a
// column at a time instead of through parquet-go's reflection (which took
// half of the usage table's writing time; TestUsageEncoderBytes checks the
// bytes are the same).
func usageEncoder(rows []UsageRow, sortBy []string) func(io.Writer) error {
	return func(w io.Writer) error {
		order := sortedOrder(rows, compareUsage)
		if order == nil {
			order = identity(len(rows))
		}
		return writeSortedColumns[UsageRow](w, sortBy, usageColumns, order,
			func(v [][]parquet.Value, batch []int32) { usageValues(v, rows, batch) })
	}
}

// usageValues sets v[c][k] to the value of leaf column c of row batch[k],
// as GenericWriter[UsageRow] writes it (every column is required).
func usageValues(v [][]parquet.Value, rows []UsageRow, batch []int32) {
	v = v[:len(usageColumns)]
	for k, i := range batch {
		r := &rows[i]
		v[0][k] = stringValue(r.Account)
		v[1][k] = stringValue(r.User)
		v[2][k] = stringValue(r.Partition)
		v[3][k] = parquet.Int64Value(r.PeriodStart.UnixMicro())
		v[4][k] = parquet.DoubleValue(r.BillingSec)
		v[5][k] = parquet.DoubleValue(r.CPUSec)
		v[6][k] = parquet.DoubleValue(r.MemMBSec)
		v[7][k] = parquet.DoubleValue(r.GPUSec)
	}
}
