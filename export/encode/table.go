package encode

import (
	"bytes"
	"fmt"
	"io"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// Table returns the function writing rows as one Parquet file of table
// def, in the table's order (SortBy): rows is a []record.JobRow or a
// *record.JobTable (sorted in place), a []record.UsageRow,
// []record.FairshareRow, []record.AssociationRow or []record.RunRow. The
// same rows give the same bytes.
func Table(def schemas.Table, rows any) (func(io.Writer) error, error) {
	switch r := rows.(type) {
	case []record.JobRow:
		return jobsEncoder(record.JobTableOf(r), def.SortBy), nil
	case *record.JobTable:
		r.Sort()
		return jobsEncoder(r, def.SortBy), nil
	case []record.UsageRow:
		return usageEncoder(r, def.SortBy), nil
	case []record.FairshareRow:
		return fairshareEncoder(r, def.SortBy), nil
	case []record.AssociationRow:
		return associationsEncoder(r, def.SortBy), nil
	case []record.RunRow:
		return encoder(r, record.CompareRuns, def.SortBy), nil
	case []record.PriorityRow:
		return encoder(r, record.ComparePriority, def.SortBy), nil
	}
	return nil, fmt.Errorf("rows of type %T", rows)
}

// Rows returns rows (as Table takes them) encoded as one file of table, in
// the table's order: the bytes one segment of exactly these rows has,
// whichever segments a history stores them in. Tests compare histories
// written in different steps with it.
func Rows(table string, rows any) ([]byte, error) {
	def, err := schemas.TableByName(table)
	if err != nil {
		return nil, err
	}
	encode, err := Table(def, rows)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := encode(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
