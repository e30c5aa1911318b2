// Package history is the fairledger history store: the directory of
// Parquet files a run writes and every reader reads, its commits, its
// checkpoints and its checks.
//
// Place in the pipeline: the last stage. A run (package pipeline) opens
// the store (Open), takes its lock (Store.Lock) and builds the next
// generation in one Txn: the new segments of each table (Txn.Write, the
// rows encoded by package encode; SnapshotSegments for the month's
// fair-share snapshots, straight from each snapshot's tree and result),
// the base files it replaces (Txn.Remove), its checkpoint
// (Txn.WriteState), the merges of compaction (Txn.Compact, which plans
// them from the manifest alone), then Commit. Readers pin a generation
// with a View: sshare reads a snapshot with its run's settings
// (View.Snapshot, View.RunConfig), package query defines DuckDB views
// over the View's files. Verify and Repair check and mend a history;
// Migrate converts the layout before generations.
//
// What depends on a table (its Go rows, order, encoder, the statistics of
// its segments, how older files are upgraded on read, what a repair cuts)
// is said once, in the list of tables (tables.go); the store goes through
// it and never switches on a table or a row type.
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
// Equal rows give equal bytes and file names. Every manifest read is
// checked against its checksum (a *ManifestError otherwise), every file
// read against the manifest (size, SHA-256, row count); Verify also
// compares each file's statistics with its rows. See
// docs/history-store.md.
//
// history touches files: it writes and reads the history directory and
// nothing else. It does not link DuckDB.
package history
