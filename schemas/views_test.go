package schemas

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestViewsCoverTables: views.sql defines exactly one view per documented
// history table, each over that table's files in fairledger_files (or its
// empty relation), and nothing else reads a file but the pin.
func TestViewsCoverTables(t *testing.T) {
	views := map[string]string{}
	for _, st := range ViewStatements() {
		if st.Table != "" {
			if _, dup := views[st.Table]; dup {
				t.Errorf("view %s defined twice", st.Table)
			}
			views[st.Table] = st.SQL
		}
	}
	for _, tb := range Tables() {
		sql, ok := views[tb.Name]
		if !ok {
			t.Errorf("no view for table %s", tb.Name)
			continue
		}
		if want := fmt.Sprintf("CREATE OR REPLACE VIEW %s AS FROM fairledger_table('%s')", tb.Name, tb.Name); sql != want {
			t.Errorf("view %s is\n%s\nwant\n%s", tb.Name, sql, want)
		}
		delete(views, tb.Name)
	}
	for name := range views {
		t.Errorf("view %s has no documented table", name)
	}
}

// TestViewsPin: the statements that read a manifest are the pin (which
// `fairledger sql` skips, setting fairledger_files itself); they come
// before any view, and the last of them sets fairledger_files.
func TestViewsPin(t *testing.T) {
	var pins []ViewStatement
	sawView := false
	for _, st := range ViewStatements() {
		reads := strings.Contains(st.SQL, "manifest.json") || strings.Contains(st.SQL, "read_json") || strings.Contains(st.SQL, "glob(")
		switch {
		case st.Pin:
			if sawView {
				t.Errorf("pin statement after a view: %s", st.SQL)
			}
			pins = append(pins, st)
		case reads:
			t.Errorf("statement reads the manifest but is not a pin: %s", st.SQL)
		case st.Table != "":
			sawView = true
		}
	}
	if len(pins) == 0 || !strings.HasPrefix(pins[len(pins)-1].SQL, "SET VARIABLE "+ViewsFilesVariable+" = ") {
		t.Errorf("the last pin statement does not set %s: %v", ViewsFilesVariable, pins)
	}
}

// TestViewsEmptyRelations (-update rewrites views.sql's per-table
// statements from the tables instead, writeViews): views.sql's fairledger_empty_<table> has the
// table's stored columns in file order, then the partition columns, each
// with the DuckDB type of its Parquet type (the DuckDB test in
// export/query checks the types against an empty file of the table).
func TestViewsEmptyRelations(t *testing.T) {
	if *update {
		// The statements checked below are the embedded copy, compiled
		// before the rewrite: the next run checks the new file.
		writeViews(t)
		return
	}
	got := map[string]string{}
	for _, st := range ViewStatements() {
		const p = "CREATE OR REPLACE MACRO fairledger_empty_"
		if strings.HasPrefix(st.SQL, p) {
			got[strings.TrimSuffix(strings.Fields(st.SQL[len(p):])[0], "()")] = st.SQL
		}
	}
	for _, tb := range Tables() {
		want, err := emptyMacro(tb)
		if err != nil {
			t.Fatal(err)
		}
		if got[tb.Name] != want {
			t.Errorf("views.sql: fairledger_empty_%s is\n%s\nwant (from the table's columns)\n%s", tb.Name, got[tb.Name], want)
		}
		delete(got, tb.Name)
	}
	for name := range got {
		t.Errorf("views.sql: fairledger_empty_%s has no table", name)
	}
}

// emptyMacro is the fairledger_empty_<table> statement of tb (without its
// semicolon): the stored columns in file order, then the partition
// columns, each NULL cast to the DuckDB type of its Parquet type.
func emptyMacro(tb Table) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE OR REPLACE MACRO fairledger_empty_%s() AS TABLE\nSELECT", tb.Name)
	cols := append(append([]Column{}, tb.Columns...), tb.Partition...)
	for i, c := range cols {
		if c.Type.SQL() == "" {
			return "", fmt.Errorf("%s.%s: type %s has no DuckDB spelling", tb.Name, c.Name, c.Type)
		}
		sep := ","
		if i == len(cols)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "\n    CAST(NULL AS %s) AS \"%s\"%s", c.Type.SQL(), c.Name, sep)
	}
	b.WriteString("\nWHERE false")
	return b.String(), nil
}

// writeViews rewrites the statements of views.sql that follow from the
// tables: an empty macro per table (emptyMacro), in Tables' order, where
// the first of them stands, and a view per table at the end of the file.
// The pin, the helper macros and the comments stay as written.
func writeViews(t *testing.T) {
	t.Helper()
	const (
		firstEmpty = "CREATE OR REPLACE MACRO fairledger_empty_"
		afterEmpty = "-- fairledger_table(name)"
		firstView  = "CREATE OR REPLACE VIEW "
	)
	b, err := os.ReadFile("views.sql")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	i, j, k := strings.Index(src, firstEmpty), strings.Index(src, afterEmpty), strings.Index(src, firstView)
	if i < 0 || j < i || k < j {
		t.Fatalf("views.sql: want the empty macros, then %q, then the views", afterEmpty)
	}
	var out strings.Builder
	out.WriteString(src[:i])
	for _, tb := range Tables() {
		m, err := emptyMacro(tb)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString(m + ";\n\n")
	}
	out.WriteString(src[j:k])
	for n, tb := range Tables() {
		if n > 0 {
			out.WriteString("\n")
		}
		fmt.Fprintf(&out, "%s%s AS FROM fairledger_table('%s');\n", firstView, tb.Name, tb.Name)
	}
	if err := os.WriteFile("views.sql", []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
