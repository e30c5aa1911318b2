// Package export is the last part of the pipeline: it turns the billed
// jobs and the other stages' results into the Parquet history analysts
// query with SQL. It holds no code; its sub-packages, in the order the
// data goes through them:
//
//   - record: the rows the pipeline hands to the history, in memory
//     (JobTable from the Arrow batches, the Go rows of the other tables,
//     the fair-share rows of a snapshot). No I/O, no Parquet, no DuckDB.
//   - encode: those rows as Parquet, one encoder per table, to an
//     io.Writer. No file, no DuckDB.
//   - history: the history directory: generations, commits, the
//     manifest, the lock, checkpoints, verify and repair, migration, and
//     the read API sshare uses. It touches the history's files; no
//     DuckDB.
//   - query: the DuckDB session over a pinned generation and DuckDB-style
//     printing of results: the only package that links DuckDB and cgo.
//   - report: the lab heads' reports, computed through query.
//
// record/recordtest holds the sample rows their tests share. Imports go
// one way, record ← encode ← history ← query ← report;
// internal/repotest/deps_test.go enforces that the pipeline and every package but
// query and report build without DuckDB. See docs/architecture.md and
// docs/history-store.md.
package export
