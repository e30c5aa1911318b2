// Package export is the last stage of the pipeline: it turns the billed
// Arrow jobs batches and the Go rows of the other stages (daily usage,
// fair-share snapshots, association trees, run records) into the Parquet
// history analysts query with SQL, and defines DuckDB views over it in a
// read-only session confined to the history's files (OpenDuckDB), whose
// results stream in bounded memory (DB.Stream, ResultWriter). A run's
// fair-share snapshots go into their files one by one, straight from each
// snapshot's tree and fairshare.Result (SnapshotSegments), without rows.
//
// The history is a series of generations, each a hive-partitioned tree of
// immutable Parquet segments; the current symlink names the committed one:
//
//	<history>/current -> gen/<N>
//	<history>/gen/<N>/manifest.json
//	<history>/gen/<N>/<table>/cluster=<cluster>/month=<YYYY-MM>/part-<16 hex>.parquet (or hot-…)
//	<history>/gen/<N>/state/cluster=<cluster>/checkpoint-<20060102T150405Z>.json
//
// with the columns defined once in schemas.Tables (cluster and month live
// only in the path). A writer builds the next generation in a Txn (new
// files, hard links to the files it keeps, the manifest) and publishes it
// with one rename of the symlink; a reader pins a generation with a View.
// Equal rows give equal bytes and file names. See docs/history-store.md.
//
// export touches files: it writes and reads the history directory, and a
// DuckDB session has a temporary directory of its own. It is
// the only package that links cgo (through DuckDB, for the views).
package export
