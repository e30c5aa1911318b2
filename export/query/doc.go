// Package query is the history's DuckDB session: views over one pinned
// generation of a history, read-only statements whose results stream in
// bounded memory, and results printed as DuckDB prints them. It is the
// only package that links DuckDB, and so cgo.
//
// Place in the pipeline: after the history, for the commands that read it
// (fairledger sql, and report through package report). OpenDuckDB pins
// the committed generation (history.View), checks every file's size and
// Parquet footer against the manifest, and defines the views of
// schemas/views.sql (less its pin, which reads the manifest) over the
// explicit list of each table's files in that generation, or over the
// table's empty relation when it has none, in an in-memory database locked to those files: no
// extension, no other file, no change of settings, only SELECT and
// EXPLAIN (DB.Query, DB.Stream). ResultWriter and WriteResult print a
// result as a table, CSV or JSON with DuckDB's own text for every type;
// SQLString is the one quoting of values spliced into SQL.
//
// query reads the history's files and writes none; a session has a
// temporary directory of its own (a link to the generation and DuckDB's
// spill files), removed by Close.
package query
