package export

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver (cgo)

	"github.com/fairledger/fairledger/schemas"
)

// DB is an in-memory DuckDB session with the history views defined.
type DB struct {
	db *sql.DB
	// Tables are the views defined; tables with no Parquet file yet are
	// left out (DuckDB cannot bind a view over nothing).
	Tables []string
	// Missing are the history tables that have no file yet.
	Missing []string
	// Generation is the committed generation the views read; it stays in
	// place until Close, whatever runs commit meanwhile.
	Generation int64

	view *View
}

// ExistingHistory checks that dir is an existing directory, for the
// commands that read a history (Open creates a missing one): it tells a
// path that does not exist from one that is not a directory.
func ExistingHistory(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("history directory %s does not exist (fairledger run creates it)", dir)
	case err != nil:
		return fmt.Errorf("history directory: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("history directory %s: not a directory", dir)
	}
	return nil
}

// OpenDuckDB opens an in-memory DuckDB database and defines a view per
// history table that has files under dir, from schemas.ViewsSQL, over the
// committed generation, pinned until Close (a run committing meanwhile
// changes nothing the session reads). Every file's size and Parquet footer
// are checked first, so that a damaged file is named rather than failing
// a query inside DuckDB.
func OpenDuckDB(ctx context.Context, dir string) (*DB, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("history directory: %w", err)
	}
	if err := ExistingHistory(dir); err != nil {
		return nil, err
	}
	v, err := (&History{Dir: abs}).View()
	if err != nil {
		return nil, err
	}
	if err := v.CheckFooters(); err != nil {
		v.Close()
		var ce *CorruptError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("%w (in %s); run fairledger verify --history %s to check every file",
				err, filepath.Join(dir, genDir, genName(v.Generation())), dir)
		}
		return nil, err
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		v.Close()
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	// One connection: variables and settings are per connection.
	db.SetMaxOpenConns(1)
	d := &DB{db: db, view: v, Generation: v.Generation()}
	if _, err := db.ExecContext(ctx, "SET VARIABLE history = "+quoteSQL(abs)); err != nil {
		d.Close()
		return nil, fmt.Errorf("set history: %w", err)
	}
	pinned := "'/" + genDir + "/" + genName(v.Generation()) + "/"
	for _, st := range schemas.ViewStatements() {
		if st.Table != "" && len(v.Files(st.Table, "")) == 0 {
			d.Missing = append(d.Missing, st.Table)
			continue
		}
		q := strings.ReplaceAll(st.SQL, "'/"+currentLink+"/", pinned)
		if _, err := db.ExecContext(ctx, q); err != nil {
			d.Close()
			return nil, fmt.Errorf("define view %s: %w", st.Table, err)
		}
		if st.Table != "" {
			d.Tables = append(d.Tables, st.Table)
		}
	}
	return d, nil
}

// quoteSQL quotes s as a SQL string literal.
func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Close closes the session and releases its generation.
func (d *DB) Close() error {
	err := d.db.Close()
	if verr := d.view.Close(); err == nil {
		err = verr
	}
	return err
}

// Result is a query's column names and rows (values as the driver returns
// them: int64, float64, string, bool, time.Time, []byte, duckdb.Decimal,
// duckdb.Interval, []any, map[string]any, duckdb.OrderedMap, nil).
type Result struct {
	Columns []string
	// Types are the columns' DuckDB type names as the driver spells them
	// (TIMESTAMPTZ, DECIMAL(10,3), STRUCT("a" INTEGER), ...): WriteResult
	// needs them to tell a TIMESTAMP from a TIMESTAMPTZ or a DATE.
	Types []string
	Rows  [][]any
}

// Query runs one SQL statement and collects its result. Several
// statements are refused (the driver would run them all and return only
// the last result).
func (d *DB) Query(ctx context.Context, query string) (*Result, error) {
	if err := d.oneStatement(ctx, query); err != nil {
		return nil, err
	}
	rows, err := d.db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("query columns: %w", err)
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, fmt.Errorf("query column types: %w", err)
	}
	res := &Result{Columns: cols, Types: make([]string, len(cts))}
	for i, ct := range cts {
		res.Types[i] = ct.DatabaseTypeName()
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("query row: %w", err)
		}
		res.Rows = append(res.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return res, nil
}

// errSeveralStatements is returned by Query for a query of more than one
// statement.
var errSeveralStatements = errors.New("query: several statements; run one statement at a time")

// oneStatement refuses a query of several statements. Only a query with a
// semicolon before its end can be one; for those the driver's Prepare,
// which parses the query without running it, tells.
func (d *DB) oneStatement(ctx context.Context, query string) error {
	if !strings.Contains(strings.TrimRight(query, "; \t\r\n"), ";") {
		return nil
	}
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return nil
		}
		st, err := c.Prepare(query)
		if err != nil {
			// The driver's Prepare refuses several statements with this
			// message; any other error is left for QueryContext to report.
			if strings.Contains(err.Error(), "multi-statement") {
				return errSeveralStatements
			}
			return nil
		}
		return st.Close()
	})
}
