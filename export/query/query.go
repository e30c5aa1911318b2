package query

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/fairledger/fairledger/internal/safetext"
)

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

// Query runs one read-only statement (see Stream) and collects its whole
// result: for the small results of the reports.
func (d *DB) Query(ctx context.Context, query string) (*Result, error) {
	r, err := d.rows(ctx, query, false)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	res := &Result{Columns: r.Columns, Types: r.Types}
	for {
		row, err := r.Next()
		if err == io.EOF {
			return res, r.Close()
		}
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row)
	}
}

// Stream runs one read-only statement and returns its result to be read a
// row at a time, in memory bounded by the session's memory limit whatever
// the result's size: DuckDB's driver holds a whole result in memory, so a
// SELECT's result goes first into a temporary table (which DuckDB spills
// to disk past its memory limit) and is then read back in pages of up to
// StreamPageRows rows, as many as fit a page's share of the memory limit
// (pageBytes) at the widest row read so far. An error of the statement
// comes before its first row.
//
// Only SELECT (with DESCRIBE, SHOW, SUMMARIZE, PRAGMA, which DuckDB runs
// as SELECTs) and EXPLAIN run; several statements are refused (the driver
// would run them all and return only the last result).
func (d *DB) Stream(ctx context.Context, query string) (*Rows, error) {
	return d.rows(ctx, query, true)
}

// StreamPageRows is the most rows Stream reads back from its temporary
// table at a time.
const StreamPageRows = 16 * 1024

// firstPageRows is the size of Stream's first page, read before any row's
// width is known.
const firstPageRows = 64

// pageBytes is how many bytes of values a page of Stream should hold: an
// eighth of the session's memory limit, at least 1 MiB (64 MiB without a
// limit). DuckDB holds a page's whole result in memory, where it cannot
// spill: a page of StreamPageRows rows of 200 kB is 3.2 GB.
func pageBytes(limitMiB int64) int64 {
	if limitMiB <= 0 {
		return 64 << 20
	}
	return max(limitMiB<<20/8, 1<<20)
}

// spoolTable is the temporary table Stream writes a result into.
const spoolTable = "fairledger_result"

// Rows is a statement's result, read a row at a time (Stream).
type Rows struct {
	// Columns are the result's column names.
	Columns []string
	// Types are the columns' DuckDB type names (see Result.Types).
	Types []string

	d     *DB
	ctx   context.Context
	conn  *sql.Conn
	rows  *sql.Rows // the page being read, or the whole result
	spool bool      // the result is in spoolTable
	next  int64     // spooled: the rowid of the next page
	size  int       // spooled: the rows asked for in the page
	read  int       // spooled: the rows read of the page
	wide  int64     // spooled: the most bytes of a row read so far
	done  bool
}

// errSeveralStatements is returned for a query of more than one statement.
var errSeveralStatements = errors.New("query: several statements; run one statement at a time")

// ErrReadOnly is returned for a statement that is not a SELECT or an
// EXPLAIN: a session reads the history and writes nothing.
var ErrReadOnly = errors.New("the history's DuckDB session is read-only: it runs SELECT and EXPLAIN statements only")

func (d *DB) rows(ctx context.Context, query string, spool bool) (*Rows, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	r := &Rows{d: d, ctx: ctx, conn: conn}
	if err := r.start(query, spool); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// start checks the statement and runs it: into spoolTable when spool is
// set and DuckDB can (PRAGMA, a SELECT to DuckDB but not to its query
// table function, runs directly), else directly.
func (r *Rows) start(query string, spool bool) error {
	st, err := r.d.check(r.conn, query)
	if err != nil {
		return err
	}
	r.Columns = st.names
	if spool && st.typ == duckdb.STATEMENT_TYPE_SELECT {
		var ok bool
		if ok, err = r.startSpool(query); err != nil {
			return err
		}
		if ok {
			return r.page()
		}
	}
	rows, err := r.conn.QueryContext(r.ctx, query)
	if err != nil {
		return r.d.queryError(err)
	}
	r.rows = rows
	return r.setTypes()
}

// statement is what check learns of a statement.
type statement struct {
	typ   duckdb.StmtType
	names []string
}

// check prepares query, which parses and binds it without running it, and
// refuses several statements and any statement but SELECT and EXPLAIN.
func (d *DB) check(conn *sql.Conn, query string) (statement, error) {
	var st statement
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("query: driver connection of type %T", dc)
		}
		ps, err := c.Prepare(query)
		if err != nil {
			// The driver's Prepare refuses several statements with this
			// message (it runs none of them).
			if strings.Contains(err.Error(), "multi-statement") {
				if !strings.Contains(strings.TrimRight(query, "; \t\r\n"), ";") {
					return errors.New("query: DuckDB runs this statement as several: a PIVOT must list its values (PIVOT ... ON col IN (...))")
				}
				return errSeveralStatements
			}
			return d.queryError(err)
		}
		defer ps.Close()
		s, ok := ps.(*duckdb.Stmt)
		if !ok {
			return fmt.Errorf("query: driver statement of type %T", ps)
		}
		if st.typ, err = s.StatementType(); err != nil {
			return fmt.Errorf("query: %w", err)
		}
		if st.typ != duckdb.STATEMENT_TYPE_SELECT && st.typ != duckdb.STATEMENT_TYPE_EXPLAIN {
			return fmt.Errorf("query: %w, not %s", ErrReadOnly, statementName(st.typ))
		}
		// EXPLAIN ANALYZE runs its statement, whatever it is (a COPY
		// could overwrite a history file, which the session may read).
		if st.typ == duckdb.STATEMENT_TYPE_EXPLAIN && explainRuns(query) {
			return fmt.Errorf("query: %w, not EXPLAIN ANALYZE (or EXPLAIN with options), which runs its statement", ErrReadOnly)
		}
		n, err := s.ColumnCount()
		if err != nil {
			return fmt.Errorf("query: %w", err)
		}
		st.names = make([]string, n)
		for i := range st.names {
			if st.names[i], err = s.ColumnName(i); err != nil {
				return fmt.Errorf("query: %w", err)
			}
		}
		return nil
	})
	return st, err
}

// explainRuns reports whether an EXPLAIN statement runs the statement it
// explains: EXPLAIN ANALYZE (or ANALYSE), or EXPLAIN with an option list
// "(...)", which may hold ANALYZE. It reads the words after the comments
// and white space that may precede them.
func explainRuns(query string) bool {
	var words []string
	for s := query; len(words) < 2; {
		s = strings.TrimLeft(s, " \t\r\n\f\v")
		switch {
		case strings.HasPrefix(s, "--"):
			_, s, _ = strings.Cut(s, "\n")
			continue
		case strings.HasPrefix(s, "/*"):
			s = skipBlockComment(s)
			continue
		case strings.HasPrefix(s, "("):
			words = append(words, "(")
			s = s[1:]
			continue
		}
		i := 0
		for i < len(s) && isIdentByte(s[i]) {
			i++
		}
		if i == 0 {
			break
		}
		words = append(words, strings.ToUpper(s[:i]))
		s = s[i:]
	}
	if len(words) < 2 || words[0] != "EXPLAIN" {
		// Not the EXPLAIN DuckDB parsed: refuse rather than guess.
		return true
	}
	return words[1] == "ANALYZE" || words[1] == "ANALYSE" || words[1] == "("
}

// skipBlockComment returns s after the /* comment */ it starts with
// (comments nest, as in DuckDB's parser); "" when it is not closed.
func skipBlockComment(s string) string {
	depth := 0
	for i := 0; i+1 < len(s); i++ {
		switch s[i : i+2] {
		case "/*":
			depth++
			i++
		case "*/":
			depth--
			i++
			if depth == 0 {
				return s[i+1:]
			}
		}
	}
	return ""
}

// statementName names a statement type for the read-only refusal.
func statementName(t duckdb.StmtType) string {
	switch t {
	case duckdb.STATEMENT_TYPE_INSERT:
		return "INSERT"
	case duckdb.STATEMENT_TYPE_UPDATE:
		return "UPDATE"
	case duckdb.STATEMENT_TYPE_DELETE:
		return "DELETE"
	case duckdb.STATEMENT_TYPE_CREATE, duckdb.STATEMENT_TYPE_CREATE_FUNC:
		return "CREATE"
	case duckdb.STATEMENT_TYPE_ALTER:
		return "ALTER"
	case duckdb.STATEMENT_TYPE_DROP:
		return "DROP"
	case duckdb.STATEMENT_TYPE_COPY:
		return "COPY"
	case duckdb.STATEMENT_TYPE_EXPORT:
		return "EXPORT"
	case duckdb.STATEMENT_TYPE_ATTACH:
		return "ATTACH"
	case duckdb.STATEMENT_TYPE_DETACH:
		return "DETACH"
	case duckdb.STATEMENT_TYPE_LOAD, duckdb.STATEMENT_TYPE_EXTENSION:
		return "INSTALL or LOAD"
	case duckdb.STATEMENT_TYPE_SET, duckdb.STATEMENT_TYPE_VARIABLE_SET:
		return "SET"
	case duckdb.STATEMENT_TYPE_PRAGMA:
		return "PRAGMA"
	case duckdb.STATEMENT_TYPE_CALL:
		return "CALL"
	case duckdb.STATEMENT_TYPE_TRANSACTION:
		return "transaction"
	case duckdb.STATEMENT_TYPE_PREPARE, duckdb.STATEMENT_TYPE_EXECUTE:
		return "PREPARE or EXECUTE"
	case duckdb.STATEMENT_TYPE_VACUUM, duckdb.STATEMENT_TYPE_ANALYZE:
		return "VACUUM or ANALYZE"
	}
	return fmt.Sprintf("type %d", t)
}

// startSpool writes the result of query, a checked SELECT, into
// spoolTable, in its order. The query goes to DuckDB's query table
// function as a string, so that no text of it can end the statement
// around it, and the columns are renamed c0, c1, ...: a result may name
// two columns alike, or one rowid. It returns false, having run nothing,
// when DuckDB cannot take the query that way.
func (r *Rows) startSpool(query string) (bool, error) {
	cols := make([]string, len(r.Columns))
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d", i)
	}
	ctas := "CREATE TEMP TABLE " + spoolTable + " AS SELECT * FROM query(" + SQLString(query) + ") AS q(" + strings.Join(cols, ", ") + ")"
	var prepared bool
	err := r.conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("query: driver connection of type %T", dc)
		}
		ps, err := c.Prepare(ctas)
		if err != nil {
			return nil // not prepared: run the query directly
		}
		defer ps.Close()
		prepared = true
		ex, ok := ps.(driver.StmtExecContext)
		if !ok {
			return fmt.Errorf("query: driver statement of type %T", ps)
		}
		if _, err := ex.ExecContext(r.ctx, nil); err != nil {
			return r.d.queryError(withoutLine(err))
		}
		return nil
	})
	if err != nil || !prepared {
		return false, err
	}
	r.spool = true
	return true, nil
}

// withoutLine drops the "LINE 1: ..." context of an error of the spooling
// statement: it would show the statement around the user's query.
func withoutLine(err error) error {
	var de *duckdb.Error
	if !errors.As(err, &de) {
		return err
	}
	msg, _, _ := strings.Cut(de.Msg, "\n\nLINE ")
	return &duckdb.Error{Type: de.Type, Msg: msg}
}

// page starts reading the next page of spoolTable: firstPageRows rows,
// then as many as pageBytes holds at the widest row so far.
func (r *Rows) page() error {
	r.size = firstPageRows
	if r.wide > 0 {
		r.size = int(min(max(pageBytes(r.d.memoryLimitMiB)/r.wide, 1), StreamPageRows))
	}
	q := fmt.Sprintf("SELECT * FROM %s WHERE rowid >= %d AND rowid < %d ORDER BY rowid", spoolTable, r.next, r.next+int64(r.size))
	r.next += int64(r.size)
	r.read = 0
	rows, err := r.conn.QueryContext(r.ctx, q)
	if err != nil {
		return r.d.queryError(err)
	}
	r.rows = rows
	if r.Types == nil {
		return r.setTypes()
	}
	return nil
}

func (r *Rows) setTypes() error {
	cts, err := r.rows.ColumnTypes()
	if err != nil {
		return fmt.Errorf("query column types: %w", err)
	}
	r.Types = make([]string, len(cts))
	for i, ct := range cts {
		r.Types[i] = ct.DatabaseTypeName()
	}
	if r.Columns == nil || len(r.Columns) != len(cts) {
		if r.Columns, err = r.rows.Columns(); err != nil {
			return fmt.Errorf("query columns: %w", err)
		}
	}
	return nil
}

// Next returns the next row (a new slice, values as Result holds them),
// or io.EOF after the last.
func (r *Rows) Next() ([]any, error) {
	for !r.done {
		if r.rows.Next() {
			vals := make([]any, len(r.Columns))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := r.rows.Scan(ptrs...); err != nil {
				return nil, fmt.Errorf("query row: %w", err)
			}
			r.read++
			if r.spool {
				r.wide = max(r.wide, rowBytes(vals))
			}
			return vals, nil
		}
		if err := r.rows.Err(); err != nil {
			return nil, r.d.queryError(err)
		}
		if err := r.rows.Close(); err != nil {
			return nil, r.d.queryError(err)
		}
		r.rows = nil
		if !r.spool || r.read < r.size { // a short page is the last
			r.done = true
			break
		}
		if err := r.page(); err != nil {
			return nil, err
		}
	}
	return nil, io.EOF
}

// rowBytes estimates the memory of a row's values: the bytes of strings
// and blobs, 16 for any other value, nested values summed.
func rowBytes(vals []any) int64 {
	var n int64
	for _, v := range vals {
		n += valueBytes(v)
	}
	return n
}

func valueBytes(v any) int64 {
	switch v := v.(type) {
	case string:
		return 16 + int64(len(v))
	case []byte:
		return 16 + int64(len(v))
	case []any:
		return 16 + rowBytes(v)
	case map[string]any:
		n := int64(16)
		for k, e := range v {
			n += int64(len(k)) + valueBytes(e)
		}
		return n
	}
	return 16
}

// Close ends the reading, drops the temporary table and returns the
// connection to the session.
func (r *Rows) Close() error {
	if r.conn == nil {
		return nil
	}
	var err error
	if r.rows != nil {
		err = r.rows.Close()
		r.rows = nil
	}
	if r.spool {
		// A fresh context: the table goes even when the query's was
		// cancelled.
		if _, derr := r.conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+spoolTable); err == nil {
			err = derr
		}
		r.spool = false
	}
	if cerr := r.conn.Close(); err == nil {
		err = cerr
	}
	r.conn = nil
	return err
}

// queryError words a DuckDB error for the user: "query: ..." with the
// session's paths of the history's files given as the history's own, and,
// for a table that does not exist, the views there are (rather than
// DuckDB's guess at a system table such as pg_constraint).
func (d *DB) queryError(err error) error {
	var de *duckdb.Error
	if !errors.As(err, &de) {
		return fmt.Errorf("query: %w", err)
	}
	msg := de.Msg
	if d.link != "" {
		msg = strings.ReplaceAll(msg, d.link+string(filepath.Separator), d.view.Dir+string(filepath.Separator))
	}
	if de.Type == duckdb.ErrorTypePermission {
		head, tail, _ := strings.Cut(msg, "\n")
		msg = head + " (the session reads the history's own files and writes none)"
		if tail != "" {
			msg += "\n" + tail
		}
	}
	if de.Type == duckdb.ErrorTypeCatalog && strings.Contains(msg, "Table with name ") {
		head, tail, _ := strings.Cut(msg, "\n")
		const mean = "Did you mean \""
		if i := strings.Index(tail, mean); i >= 0 {
			s := tail[i+len(mean):]
			if j := strings.Index(s, "\"?"); j >= 0 && !slices.Contains(d.Tables, s[:j]) && !slices.Contains(d.Moments, s[:j]) {
				tail = tail[:i] + strings.TrimPrefix(s[j+2:], "\n")
			}
		}
		msg = head + " The history's views are " + strings.Join(d.Tables, ", ")
		if len(d.Moments) > 0 {
			msg += "; the moment's relations " + strings.Join(d.Moments, ", ")
		}
		msg += "."
		if tail = strings.TrimLeft(tail, "\n"); tail != "" {
			msg += "\n" + tail
		}
	}
	if de.Type == duckdb.ErrorTypeOutOfMemory {
		return fmt.Errorf("query: %w", d.limitError(msg))
	}
	return fmt.Errorf("query: %w", &duckdb.Error{Type: de.Type, Msg: msg})
}

// Limits a LimitError names.
const (
	// LimitMemory is DuckDB's memory limit (DuckDBOptions.MemoryLimitMiB),
	// or an allocation the process could not make (DuckDB's "failed to
	// allocate"; a process limit set by the caller, such as RLIMIT_DATA).
	LimitMemory = "memory"
	// LimitTemp is the size of the session's spill files
	// (DuckDBOptions.TempLimitMiB).
	LimitTemp = "temp"
)

// LimitError is a query that ran out of one of the session's limits. Its
// message is DuckDB's first line, without DuckDB's advice (SET threads,
// SET memory_limit, PRAGMA max_temp_directory_size), which the locked
// session refuses: the caller says what the user can change instead.
type LimitError struct {
	// Limit is LimitMemory or LimitTemp.
	Limit string
	// LimitMiB is the session's setting of that limit (0: DuckDB's
	// default).
	LimitMiB int64
	// Err is DuckDB's error, its advice removed.
	Err *duckdb.Error
}

func (e *LimitError) Error() string { return e.Err.Error() }

// Unwrap returns DuckDB's error.
func (e *LimitError) Unwrap() error { return e.Err }

// limitError words an out-of-memory error of DuckDB as the limit it ran
// out of: the spill files' (DuckDB's "failed to offload data block",
// TemporaryFileManager::IncreaseSizeOnDisk) or the memory's.
func (d *DB) limitError(msg string) *LimitError {
	e := &LimitError{Limit: LimitMemory, LimitMiB: d.memoryLimitMiB}
	if strings.Contains(msg, "max_temp_directory_size") {
		e.Limit, e.LimitMiB = LimitTemp, d.tempLimitMiB
	}
	// DuckDB's advice follows the first line, as "\n\nPossible
	// solutions:" or "\nThis limit was set by ...".
	msg, _, _ = strings.Cut(msg, "\n")
	e.Err = &duckdb.Error{Type: duckdb.ErrorTypeOutOfMemory, Msg: strings.TrimSpace(msg)}
	return e
}

// OutOfMemory reports an error of DuckDB running out of its memory limit
// or of its spill files' (see LimitError).
func OutOfMemory(err error) bool {
	var de *duckdb.Error
	return errors.As(err, &de) && de.Type == duckdb.ErrorTypeOutOfMemory
}

// Formats of WriteResult and ResultWriter.
const (
	FormatTable = "table"
	FormatCSV   = "csv"
	FormatJSON  = "json"
)

// TableWidthRows is how many rows a table's column widths are measured
// on: a ResultWriter holds that many rows back, then writes every later
// row with those widths (a wider value is written whole and pushes the
// rest of its line right).
const TableWidthRows = 10000

// TableWidthBytes bounds the rows a ResultWriter holds back for a table's
// widths: past this many bytes of cells it measures the rows it holds, so
// that wide rows are not held in memory 10,000 at a time (2 GB of 200 kB
// strings, past sql's process limit).
const TableWidthBytes = 16 << 20

// WriteResult writes a query result as an aligned table, CSV (with a
// header line) or JSON (one array of objects, keys in column order), as
// ResultWriter does.
func WriteResult(w io.Writer, r *Result, format string) error {
	rw, err := NewResultWriter(w, format, r.Columns, r.Types)
	if err != nil {
		return err
	}
	for _, row := range r.Rows {
		if err := rw.Write(row); err != nil {
			return err
		}
	}
	return rw.Close()
}

// ResultWriter writes a query result a row at a time: CSV with a header
// line, JSON as one array of objects (keys in column order), or a table
// aligned on its first TableWidthRows rows (fewer when they pass
// TableWidthBytes). Values print as DuckDB prints
// them (see textValue); NULL is "NULL" in a table, an empty field in CSV
// and null in JSON.
type ResultWriter struct {
	w      *bufio.Writer
	out    *errWriter
	format string
	cols   []string
	types  []*colType
	n      int // rows written or held
	// A table's held rows (its cells), until its widths are known.
	held      [][]string
	heldBytes int   // the bytes of held's cells
	widths    []int // a table's column widths, padding included; nil until known
}

// tablePadding is the spaces between a table's columns.
const tablePadding = 2

// NewResultWriter starts writing a result of the given columns and types
// (as Result has them) to w in format (table, csv or json; "" is table).
func NewResultWriter(w io.Writer, format string, columns, types []string) (*ResultWriter, error) {
	switch format {
	case "":
		format = FormatTable
	case FormatTable, FormatCSV, FormatJSON:
	default:
		return nil, fmt.Errorf("unknown format %q (want table, csv or json)", format)
	}
	out := &errWriter{w: w}
	rw := &ResultWriter{w: bufio.NewWriterSize(out, 64*1024), out: out, format: format, cols: columns,
		types: make([]*colType, len(columns))}
	for i := range rw.types {
		rw.types[i] = unknownType
		if i < len(types) {
			rw.types[i] = parseColType(types[i])
		}
	}
	switch format {
	case FormatCSV:
		for i, c := range columns {
			if i > 0 {
				rw.w.WriteByte(',')
			}
			rw.w.WriteString(csvQuote(c))
		}
		rw.w.WriteByte('\n')
	case FormatJSON:
		rw.w.WriteByte('[')
	}
	return rw, nil
}

// Write writes one row.
func (rw *ResultWriter) Write(row []any) error {
	defer func() { rw.n++ }()
	switch rw.format {
	case FormatCSV:
		for i, v := range row {
			if i > 0 {
				rw.w.WriteByte(',')
			}
			// Written by hand rather than with encoding/csv, which cannot
			// quote an empty field: "" is an empty string, nothing is NULL.
			if v != nil {
				rw.w.WriteString(csvQuote(textValue(rw.types[i], v, false)))
			}
		}
		rw.w.WriteByte('\n')
	case FormatJSON:
		var b strings.Builder
		if rw.n > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  {")
		for i, v := range row {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(jsonString(rw.cols[i]))
			b.WriteString(": ")
			writeJSON(&b, rw.types[i], v)
		}
		b.WriteByte('}')
		rw.w.WriteString(b.String())
	default:
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = "NULL"
			if v != nil {
				// A value can come from a name the site's databases hold:
				// its control characters are spelled out, never sent to
				// the terminal (docs/bad-input.md, "Hostile names").
				cells[i] = safetext.Visible(textValue(rw.types[i], v, false))
			}
		}
		if rw.widths == nil {
			rw.held = append(rw.held, cells)
			for _, c := range cells {
				rw.heldBytes += len(c)
			}
			if len(rw.held) < TableWidthRows && rw.heldBytes < TableWidthBytes {
				return nil
			}
			rw.flushHeld()
			break
		}
		rw.writeLine(cells)
	}
	return rw.out.err // the first error of a write the buffer made
}

// errWriter keeps the first error of its writer: a ResultWriter stops at
// a write error (a closed pipe) rather than formatting the rest.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// flushHeld measures the table's widths on its header and held rows and
// writes them.
func (rw *ResultWriter) flushHeld() {
	rw.widths = make([]int, len(rw.cols))
	cols := make([]string, len(rw.cols))
	for i, c := range rw.cols {
		cols[i] = safetext.Visible(c)
	}
	measure := func(cells []string) {
		for i, c := range cells {
			if i < len(rw.widths) {
				rw.widths[i] = max(rw.widths[i], utf8.RuneCountInString(c)+tablePadding)
			}
		}
	}
	measure(cols)
	for _, cells := range rw.held {
		measure(cells)
	}
	rw.writeLine(cols)
	for _, cells := range rw.held {
		rw.writeLine(cells)
	}
	rw.held = nil
}

// writeLine writes a table line: every cell but the last padded to its
// column's width, or followed by the padding when wider.
func (rw *ResultWriter) writeLine(cells []string) {
	for i, c := range cells {
		rw.w.WriteString(c)
		if i == len(cells)-1 {
			break
		}
		w := utf8.RuneCountInString(c)
		pad := tablePadding
		if i < len(rw.widths) && rw.widths[i]-w > pad {
			pad = rw.widths[i] - w
		}
		for range pad {
			rw.w.WriteByte(' ')
		}
	}
	rw.w.WriteByte('\n')
}

// Close ends the result (a table's held rows, JSON's closing bracket) and
// flushes it.
func (rw *ResultWriter) Close() error {
	switch rw.format {
	case FormatJSON:
		rw.w.WriteString("\n]\n")
	case FormatTable:
		if rw.widths == nil {
			rw.flushHeld()
		}
	}
	return rw.w.Flush()
}

// csvQuote quotes a CSV field (RFC 4180) when it is empty, holds a comma,
// quote or line break, or starts with white space.
func csvQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s[0] != '\t' {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
