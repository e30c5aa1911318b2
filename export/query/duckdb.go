package query

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver (cgo)

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/internal/deadpid"
	"github.com/fairledger/fairledger/schemas"
)

// DB is an in-memory DuckDB session over one committed generation of a
// history, with a view per history table. It is read-only and confined to
// that generation's files: see OpenDuckDB.
type DB struct {
	db *sql.DB
	// Tables are the views, one per history table, in the order of
	// schemas/views.sql; every one is defined.
	Tables []string
	// Missing are the tables with no file yet (a new cluster, a run whose
	// rows were all rejected): their views answer with no rows, with the
	// columns and types a file of the table gives.
	Missing []string
	// Generation is the committed generation the views read; it stays in
	// place until Close, whatever runs commit meanwhile.
	Generation int64
	// Moments are the relations of the session's moment (FairshareAt,
	// PriorityAt) when it was opened with one (DuckDBOptions.Moment).
	Moments []string

	view *history.View
	// tmp is the session's own directory: the link to the generation and
	// DuckDB's spill files.
	tmp string
	// link is tmp's symbolic link to the generation's directory, through
	// which the views name its files ("" when the history is empty).
	link string
	// The session's limits (DuckDBOptions), which a *LimitError names.
	memoryLimitMiB, tempLimitMiB int64
}

// DuckDBOptions tune a DuckDB session.
type DuckDBOptions struct {
	// MemoryLimitMiB is DuckDB's memory_limit in MiB: past it, DuckDB
	// spills to the session's temporary directory (0: DuckDB's default,
	// 80% of the machine's memory).
	MemoryLimitMiB int64
	// Moment, when set, is called with the session's pinned generation
	// before the session is locked; the moment it returns becomes the
	// relations FairshareAt and PriorityAt (see Moment). Its error is
	// OpenDuckDBWith's, unwrapped.
	Moment func(v *history.View) (*Moment, error)
	// TempLimitMiB is DuckDB's max_temp_directory_size in MiB: the most
	// the session's spill files may take on disk, past which a query fails
	// with a *LimitError (0: DuckDB's default, 90% of the free space of
	// the disk that holds os.TempDir).
	TempLimitMiB int64
}

// SessionPrefix starts the name of a session's temporary directory in
// os.TempDir: SessionPrefix + pid + "-" + a random part. OpenDuckDBWith
// removes the directories of dead pids, which a killed session left.
const SessionPrefix = "fairledger-duckdb-"

// OpenDuckDB opens a session with DuckDB's default memory limit; see
// OpenDuckDBWith.
func OpenDuckDB(ctx context.Context, dir string) (*DB, error) {
	return OpenDuckDBWith(ctx, dir, DuckDBOptions{})
}

// OpenDuckDBWith opens an in-memory DuckDB database over the committed
// generation of the history in dir, pinned until Close (a run committing
// meanwhile changes nothing the session reads), and defines the views of
// schemas/views.sql, each over the explicit list of its table's files in
// that generation's manifest: no glob, so nothing else is read, whatever
// characters the history's path holds. A table without a file has an
// empty view of its columns (views.sql's fairledger_empty_<table>). The
// session's temporary directory (os.TempDir, named by SessionPrefix and the
// process's pid) holds a link to the generation and DuckDB's spill files;
// Close removes it, and the next session removes one a killed process left.
//
// Every file's size and Parquet footer are checked first, so that a
// damaged file is named rather than failing a query inside DuckDB. The
// views read the files at query time: they must stay readable.
//
// With opt.Moment, the session also has the relations of a moment,
// FairshareAt and PriorityAt: tables in DuckDB's memory, loaded from a
// file that is removed before the lock, so they add no path it may read.
//
// The session is then locked: DuckDB may read those files and nothing
// else (enable_external_access off, allowed_paths the files), installs
// and loads no extension, and its configuration cannot be changed; its
// statements (Query, Stream) may only read (SELECT, EXPLAIN).
func OpenDuckDBWith(ctx context.Context, dir string, opt DuckDBOptions) (*DB, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("history directory: %w", err)
	}
	if err := history.CheckExists(dir); err != nil {
		return nil, err
	}
	v, err := (&history.Store{Dir: abs}).View()
	if err != nil {
		return nil, err
	}
	if err := v.CheckFooters(); err != nil {
		v.Close()
		return nil, history.DamageHint(err, dir, v.Generation())
	}
	d := &DB{view: v, Generation: v.Generation()}
	if err := d.open(ctx, abs, opt); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func (d *DB) open(ctx context.Context, abs string, opt DuckDBOptions) error {
	var err error
	// A session killed by SIGKILL (or SIGTERM before its handler) leaves
	// its directory, spill files and all: the next session removes it.
	if _, err := deadpid.Remove(os.TempDir(), SessionPrefix); err != nil {
		return fmt.Errorf("duckdb session: %w", err)
	}
	if d.tmp, err = os.MkdirTemp("", deadpid.Name(SessionPrefix, os.Getpid())+"*"); err != nil {
		return fmt.Errorf("duckdb session: %w", err)
	}
	d.memoryLimitMiB, d.tempLimitMiB = opt.MemoryLimitMiB, opt.TempLimitMiB
	// DuckDB reads a key=value directory anywhere in a file's path as a
	// hive partition column: the session's own path must hold none.
	if strings.Contains(d.tmp, "=") {
		return fmt.Errorf("duckdb session: temporary directory %s: its path holds '=', which DuckDB reads as a partition column; set TMPDIR to another directory", d.tmp)
	}
	if d.view.Dir != "" {
		d.link = filepath.Join(d.tmp, "generation")
		if err := os.Symlink(d.view.Dir, d.link); err != nil {
			return fmt.Errorf("duckdb session: %w", err)
		}
	}
	if d.db, err = sql.Open("duckdb", ""); err != nil {
		return fmt.Errorf("open duckdb: %w", err)
	}
	// One connection: variables and settings are per connection.
	d.db.SetMaxOpenConns(1)
	// Set before the views are defined, so that defining them reads each
	// file's footer once: the files never change.
	if _, err := d.db.ExecContext(ctx, "SET parquet_metadata_cache = true"); err != nil {
		return fmt.Errorf("duckdb session: %w", err)
	}
	if _, err := d.db.ExecContext(ctx, "SET VARIABLE history = "+SQLString(abs)); err != nil {
		return fmt.Errorf("set history: %w", err)
	}
	// The views read the files of the generation pinned here: the
	// statements of views.sql that would pin one by reading
	// current/manifest.json are replaced by fairledger_files, the map
	// table -> files the views read, set from the View's manifest.
	var (
		allowed []string
		entries []string
	)
	for _, tb := range schemas.Tables() {
		files, ok := d.viewFiles(tb.Name)
		if !ok {
			continue
		}
		list := make([]string, len(files))
		for i, f := range files {
			list[i] = SQLString(globLiteral(f))
			allowed = append(allowed, SQLString(f))
			if g := globLiteral(f); g != f {
				allowed = append(allowed, SQLString(g)) // DuckDB checks the pattern and the file
			}
		}
		entries = append(entries, SQLString(tb.Name)+": ["+strings.Join(list, ", ")+"]")
	}
	set := "SET VARIABLE " + schemas.ViewsFilesVariable + " = CAST(MAP {" + strings.Join(entries, ", ") + "} AS MAP(VARCHAR, VARCHAR[]))"
	if _, err := d.db.ExecContext(ctx, set); err != nil {
		return fmt.Errorf("duckdb session: set the views' files: %w", err)
	}
	for _, st := range schemas.ViewStatements() {
		if st.Pin {
			continue
		}
		if _, err := d.db.ExecContext(ctx, st.SQL); err != nil {
			if st.Table == "" {
				return fmt.Errorf("views.sql: %s: %w", st.SQL, err)
			}
			return d.queryError(fmt.Errorf("define view %s: %w", st.Table, err))
		}
		if st.Table != "" {
			d.Tables = append(d.Tables, st.Table)
		}
	}
	if opt.Moment != nil {
		m, err := opt.Moment(d.view)
		if err != nil {
			return err
		}
		if err := d.loadMoment(ctx, m); err != nil {
			return err
		}
	}
	settings := []string{
		"SET temp_directory = " + SQLString(filepath.Join(d.tmp, "spill")),
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		"SET allow_community_extensions = false",
		"SET allowed_paths = [" + strings.Join(allowed, ", ") + "]",
		"SET enable_external_access = false",
	}
	if opt.MemoryLimitMiB > 0 {
		settings = append(settings, fmt.Sprintf("SET memory_limit = '%dMiB'", opt.MemoryLimitMiB))
	}
	if opt.TempLimitMiB > 0 {
		settings = append(settings, fmt.Sprintf("SET max_temp_directory_size = '%dMiB'", opt.TempLimitMiB))
	}
	settings = append(settings, "SET lock_configuration = true") // last
	for _, s := range settings {
		if _, err := d.db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("duckdb session: %s: %w", s, err)
		}
	}
	return nil
}

// viewFiles returns the files the view of table reads, as the session
// names them: the generation's files of the table through the link. A
// table with none joins Missing (its view is views.sql's
// fairledger_empty_<table>: no rows, the table's columns).
func (d *DB) viewFiles(table string) ([]string, bool) {
	parts := d.view.Files(table, "")
	if len(parts) == 0 {
		d.Missing = append(d.Missing, table)
		return nil, false
	}
	files := make([]string, len(parts))
	for i, p := range parts {
		files[i] = filepath.Join(d.link, filepath.FromSlash(p.Path))
	}
	return files, true
}

// globLiteral escapes the characters DuckDB expands in a file name, even
// in an explicit list (* ? [), as one-character classes ([*] [?] [[]), so
// that the name matches only itself.
func globLiteral(name string) string {
	if !strings.ContainsAny(name, "*?[") {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '*', '?', '[':
			b.WriteByte('[')
			b.WriteByte(c)
			b.WriteByte(']')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// SQLString quotes s as a DuckDB (standard SQL) string literal: in single
// quotes, each ' doubled. It is the one quoting of values spliced into the
// SQL this package and its callers run (the reports' queries).
func SQLString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Close closes the session, releases its generation and removes its
// temporary directory.
func (d *DB) Close() error {
	var err error
	if d.db != nil {
		err = d.db.Close()
	}
	if verr := d.view.Close(); err == nil {
		err = verr
	}
	if d.tmp != "" {
		if rerr := os.RemoveAll(d.tmp); err == nil {
			err = rerr
		}
	}
	return err
}
