// Package encode writes the history's rows as Parquet: the schema of each
// table, the compression codecs, and an encoder per table that writes the
// same bytes parquet-go's generic writer would, in a fraction of its time.
//
// Place in the pipeline: between record and history. Table (and Rows, its
// bytes) takes a table's rows (a record.JobTable for the jobs, Go rows for
// the others) and returns the function writing them as one file, in the
// table's order, each column with the encoding and codec its doc comments
// measure (jobsSchema, jobsCodec). Snapshots writes a month's fairshare
// and associations files snapshot by snapshot, straight from the
// fairshare package's trees and results, on goroutines of their own.
// CheckSchemas checks the row types against schemas.Tables.
//
// encode writes only to the io.Writers it is given and touches no file:
// package history names the files, places them in a commit and reads
// them back. It does not link DuckDB.
package encode
