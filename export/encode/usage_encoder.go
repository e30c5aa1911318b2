package encode

import (
	"io"

	"github.com/fairledger/fairledger/export/record"
	"github.com/parquet-go/parquet-go"
)

// usageColumns are the leaf columns of the usage table
// (parquet.SchemaOf(record.UsageRow{})), in the order usageValues numbers them.
var usageColumns = []string{"account", "user", "partition", "period_start", "billing_sec", "cpu_sec",
	"mem_mb_sec", "gpu_sec"}

// usageEncoder returns a function writing usage rows as Parquet in
// record.CompareUsage order, as encoder(rows, record.CompareUsage, sortBy) does, but a
// column at a time instead of through parquet-go's reflection (which took
// half of the usage table's writing time; TestUsageEncoderBytes checks the
// bytes are the same).
func usageEncoder(rows []record.UsageRow, sortBy []string) func(io.Writer) error {
	return func(w io.Writer) error {
		order := usageOrder(rows)
		return writeSortedColumns[record.UsageRow](w, sortBy, usageColumns, order,
			func(v [][]parquet.Value, batch []int32) { usageValues(v, rows, batch) })
	}
}

// usageOrder returns the positions of rows in record.CompareUsage order, ties in
// input order: the order sortedOrder(rows, record.CompareUsage) gives (identity
// where that gives nil).
//
// A month's rows hold a few thousand (account, user, partition) names and
// a few dozen days, so each row gets the rank of its names and the rank of
// its day among the distinct ones, and two stable counting sorts (by day
// rank, then by name rank) order the rows in linear time; the comparison
// sort on strings took a quarter of the usage encoder's time. The pipeline
// adds a month's rows job by job, so a row mostly has the names of the row
// before: it takes that row's name id without a map lookup (the names
// share their bytes, so the comparison stops at the pointers). Rows whose
// day carries a monotonic clock reading (which time.Compare, and so
// record.CompareUsage, compares instead of the wall clock when both times have
// one) are sorted with sortedOrder instead.
func usageOrder(rows []record.UsageRow) []int32 {
	dayIDs := make([]int32, len(rows))
	nameIDs := make([]int32, len(rows))
	days, names := newIDSet[instant](0), newIDSet[rowNames](0)
	lastDay, lastDayID := instant{}, int32(-1)
	for i := range rows {
		r := &rows[i]
		t := r.PeriodStart
		if t != t.Round(0) {
			order := sortedOrder(rows, record.CompareUsage)
			if order == nil {
				order = identity(len(rows))
			}
			return order
		}
		if in := instantOf(t); lastDayID < 0 || in != lastDay {
			lastDay, lastDayID = in, days.id(in)
		}
		dayIDs[i] = lastDayID
		if i > 0 {
			if p := &rows[i-1]; p.Account == r.Account && p.User == r.User && p.Partition == r.Partition {
				nameIDs[i] = nameIDs[i-1]
				continue
			}
		}
		nameIDs[i] = names.id(rowNames{r.Account, r.User, r.Partition})
	}
	return twoKeyOrder(days.rank(dayIDs, compareInstants), len(days.list),
		names.rank(nameIDs, compareRowNames), len(names.list))
}

// usageValues sets v[c][k] to the value of leaf column c of row batch[k],
// as GenericWriter[record.UsageRow] writes it (every column is required).
func usageValues(v [][]parquet.Value, rows []record.UsageRow, batch []int32) {
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
