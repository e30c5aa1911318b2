// Package encode writes the history's rows as Parquet: the schema of each
// table, the compression codecs, and an encoder per table that writes the
// same bytes parquet-go's generic writer would, in a fraction of its time.
//
// Place in the pipeline: between record and history. Jobs (a
// record.JobTable), Usage, Fairshare, Associations, Priority and Sorted
// (any other table's Go rows) each take one table's rows and return the
// function writing them as one file, in the table's order, each column
// with the encoding and codec its doc comments measure (jobsSchema,
// jobsCodec); which table takes which is said once, in the history's list
// of tables (export/history/tables.go). Snapshots writes a month's fairshare and
// associations files snapshot by snapshot, straight from the fairshare
// package's trees and results, on goroutines of their own. CheckSchema
// compares a row type's or a file's Parquet schema with its table's
// definition (schemas.Tables).
//
// encode writes only to the io.Writers it is given and touches no file:
// package history names the files, places them in a commit and reads
// them back. It does not link DuckDB.
package encode
