// Package export is the last stage of the pipeline: it turns the billed
// Arrow jobs batches and the Go rows of the other stages (daily usage,
// fair-share snapshots, association trees, run records) into the Parquet
// history analysts query with SQL, and defines DuckDB views over it.
//
// The history is hive-partitioned:
//
//	<history>/<table>/cluster=<cluster>/month=<YYYY-MM>/data.parquet
//	<history>/runs/cluster=<cluster>/month=<YYYY-MM>/run-<20060102T150405Z>-<8 hex>.parquet
//	<history>/manifest.json
//
// with the columns defined once in schemas.Tables (cluster and month live
// only in the path). Every file is written to a dot-prefixed temp file in
// its directory, fsynced, renamed into place and the directory fsynced, so
// a reader sees the old file or the new one, never a torn one; identical
// rows give identical bytes.
//
// export touches files: it writes and reads the history directory. It is
// the only package that links cgo (through DuckDB, for the views).
package export
