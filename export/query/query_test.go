package query

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"text/tabwriter"
)

// streamAll reads a whole result through Stream.
func streamAll(t *testing.T, d *DB, query string) (*Rows, [][]any) {
	t.Helper()
	r, err := d.Stream(context.Background(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer r.Close()
	var rows [][]any
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return r, rows
}

// TestStreamPages: a result of more than two pages comes back whole and in
// its order, with its own column names (two alike, one named rowid, which
// the pages are read by) and types; an empty result has its columns; the
// session runs the next statement after it.
func TestStreamPages(t *testing.T) {
	t.Parallel()
	d, err := OpenDuckDB(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	n := 2*StreamPageRows + 5
	for range 2 { // twice: the temporary table is dropped after the first
		r, rows := streamAll(t, d, fmt.Sprintf("SELECT i AS rowid, 2 * i AS a, -i AS a FROM range(%d) t(i) ORDER BY i DESC", n))
		if strings.Join(r.Columns, ",") != "rowid,a,a" || strings.Join(r.Types, ",") != "BIGINT,BIGINT,BIGINT" {
			t.Errorf("columns %v %v, want rowid,a,a of BIGINT", r.Columns, r.Types)
		}
		if len(rows) != n {
			t.Fatalf("%d rows, want %d", len(rows), n)
		}
		for k, row := range rows {
			i := int64(n - 1 - k)
			if row[0] != i || row[1] != 2*i || row[2] != -i {
				t.Fatalf("row %d = %v, want %d, %d, %d", k, row, i, 2*i, -i)
			}
		}
	}
	// A SELECT goes through the temporary table; PRAGMA, which DuckDB's
	// query function does not take, runs directly.
	for q, spooled := range map[string]bool{"SELECT 1": true, "FROM range(3)": true, "DESCRIBE SELECT 1": true, "PRAGMA version": false} {
		r, err := d.Stream(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if r.spool != spooled {
			t.Errorf("%s: spooled %v, want %v", q, r.spool, spooled)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	r, rows := streamAll(t, d, "SELECT 1 AS x, 'a' AS y WHERE false")
	if len(rows) != 0 || strings.Join(r.Columns, ",") != "x,y" || strings.Join(r.Types, ",") != "INTEGER,VARCHAR" {
		t.Errorf("empty result: columns %v %v, rows %v", r.Columns, r.Types, rows)
	}
}

// TestStreamSameAsQuery: through the temporary table, every value and
// type prints as the statement's own result does.
func TestStreamSameAsQuery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := OpenDuckDB(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	q := "SELECT TIMESTAMPTZ '2025-01-31 23:00:00+00' AS ts, TIMESTAMP '2025-01-31 23:00:00' AS t, DATE '2025-01-01' AS d," +
		" 123.456::DECIMAL(10,3) AS dec, INTERVAL 4 HOUR AS i, map {'billing': 2.5} AS m, [1, NULL] AS l," +
		" {'a': 'x,y'} AS s, union_value(k := 1) AS u, '\\xAA'::BLOB AS b, '5c1d2f7a-1111-4222-8333-944455556666'::UUID AS uu," +
		" 'x'::ENUM('x', 'y') AS e, '{\"k\": [1]}'::JSON AS j, NULL AS n, '' AS empty, 1e300 * 10 AS inf"
	res, err := d.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	r, rows := streamAll(t, d, q)
	for _, format := range []string{FormatTable, FormatCSV, FormatJSON} {
		var want, got bytes.Buffer
		if err := WriteResult(&want, res, format); err != nil {
			t.Fatal(err)
		}
		if err := WriteResult(&got, &Result{Columns: r.Columns, Types: r.Types, Rows: rows}, format); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s streamed:\n%s\nwant:\n%s", format, got.String(), want.String())
		}
	}
}

// TestStreamError: an error while the statement runs comes before any row,
// worded with the user's statement, not the one that spools it.
func TestStreamError(t *testing.T) {
	t.Parallel()
	d, err := OpenDuckDB(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.Stream(context.Background(), "SELECT CAST(i::VARCHAR || 'x' AS INTEGER) AS v FROM range(3) t(i)")
	if err == nil || !strings.Contains(err.Error(), "Conversion Error") || strings.Contains(err.Error(), spoolTable) || strings.Contains(err.Error(), "query(") {
		t.Errorf("error %v, want DuckDB's conversion error, without the spooling statement", err)
	}
}

// TestResultWriterTableLikeTabwriter: a table of up to TableWidthRows rows
// is laid out as text/tabwriter lays out its cells (padding 2, widths in
// runes, the last column unpadded): the layout the table had when it was
// written through tabwriter.
func TestResultWriterTableLikeTabwriter(t *testing.T) {
	t.Parallel()
	cols := []string{"account", "user", "ü", "n"}
	var rows [][]any
	for i := range TableWidthRows {
		rows = append(rows, []any{fmt.Sprintf("lab%d", i%37), strings.Repeat("é", i%11), "", int64(i)})
	}
	rows[5][1], rows[6][3] = nil, nil
	for _, n := range []int{0, 1, 7, TableWidthRows} {
		var want bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
		for _, row := range rows[:n] {
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = "NULL"
				if v != nil {
					cells[i] = fmt.Sprint(v)
				}
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := WriteResult(&got, &Result{Columns: cols, Rows: rows[:n]}, FormatTable); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d rows: table differs from tabwriter's:\n%.400s\nwant\n%.400s", n, got.String(), want.String())
		}
	}
}

// TestResultWriterTableWidths: the widths come from the header and the
// first TableWidthRows rows; a later, wider value is written whole, two
// spaces before the next column, and the lines after it keep the widths.
func TestResultWriterTableWidths(t *testing.T) {
	t.Parallel()
	rows := make([][]any, 0, TableWidthRows+2)
	for range TableWidthRows {
		rows = append(rows, []any{"x", int64(1)})
	}
	rows = append(rows, []any{"a-wider-value", int64(2)}, []any{"y", int64(3)})
	var out bytes.Buffer
	if err := WriteResult(&out, &Result{Columns: []string{"ab", "n"}, Rows: rows}, FormatTable); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	// Column ab: "ab" is the widest of the first rows (2) + 2 padding.
	want := map[int]string{0: "ab  n", 1: "x   1", TableWidthRows: "x   1", TableWidthRows + 1: "a-wider-value  2", TableWidthRows + 2: "y   3", TableWidthRows + 3: ""}
	if len(lines) != TableWidthRows+4 {
		t.Fatalf("%d lines, want %d", len(lines), TableWidthRows+4)
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d = %q, want %q", i, lines[i], w)
		}
	}
}

// failingWriter fails every write.
type failingWriter struct{ writes int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.writes++
	return 0, errors.New("broken pipe")
}

// TestResultWriterStopsAtWriteError: a write error (a closed pipe) is
// returned by the Write that met it, not after the whole result.
func TestResultWriterStopsAtWriteError(t *testing.T) {
	t.Parallel()
	for _, format := range []string{FormatCSV, FormatJSON, FormatTable} {
		fw := &failingWriter{}
		rw, err := NewResultWriter(fw, format, []string{"s"}, []string{"VARCHAR"})
		if err != nil {
			t.Fatal(err)
		}
		row := []any{strings.Repeat("v", 1000)}
		n := 0
		for ; n < 3*TableWidthRows; n++ {
			if err = rw.Write(row); err != nil {
				break
			}
		}
		if err == nil || n >= 3*TableWidthRows-1 || fw.writes != 1 {
			t.Errorf("%s: %d rows written before the error %v (%d writes)", format, n, err, fw.writes)
		}
	}
}
