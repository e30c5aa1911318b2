package encode

import (
	"io"

	"github.com/fairledger/fairledger/export/record"
)

// The encoders of the history's tables, one per row type. Each returns the
// function writing its rows as one Parquet file of the table whose sort
// columns are sortBy (schemas.Table.SortBy), in the table's order; the same
// rows give the same bytes. Which table takes which encoder is said once,
// in the history's list of tables (export/history/tables.go).

// Jobs writes the records of t, sorted in place first (record.JobTable.Sort),
// as a file of the jobs table (see jobsEncoder).
func Jobs(t *record.JobTable, sortBy []string) func(io.Writer) error {
	t.Sort()
	return jobsEncoder(t, sortBy)
}

// Usage writes usage rows in record.CompareUsage order (see usageEncoder).
func Usage(rows []record.UsageRow, sortBy []string) func(io.Writer) error {
	return usageEncoder(rows, sortBy)
}

// Fairshare writes fairshare rows in record.CompareFairshare order (see
// fairshareEncoder).
func Fairshare(rows []record.FairshareRow, sortBy []string) func(io.Writer) error {
	return fairshareEncoder(rows, sortBy)
}

// Associations writes associations rows in record.CompareAssociations
// order (see associationsEncoder).
func Associations(rows []record.AssociationRow, sortBy []string) func(io.Writer) error {
	return associationsEncoder(rows, sortBy)
}

// Priority writes priority rows in record.ComparePriority order (see
// priorityEncoder).
func Priority(rows []record.PriorityRow, sortBy []string) func(io.Writer) error {
	return priorityEncoder(rows, sortBy)
}

// Sorted writes rows of any table through parquet-go's generic writer, in
// cmp order (as given when cmp is nil): the encoder of the table too small
// to need one of its own (runs), and the reference the others write the
// same bytes as.
func Sorted[T any](rows []T, cmp func(a, b *T) int, sortBy []string) func(io.Writer) error {
	return encoder(rows, cmp, sortBy)
}
