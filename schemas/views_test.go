package schemas

import (
	"fmt"
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

// TestViewsEmptyRelations: views.sql's fairledger_empty_<table> has the
// table's stored columns in file order, then the partition columns, each
// with the DuckDB type of its Parquet type (the DuckDB test in
// export/query checks the types against an empty file of the table).
func TestViewsEmptyRelations(t *testing.T) {
	got := map[string]string{}
	for _, st := range ViewStatements() {
		const p = "CREATE OR REPLACE MACRO fairledger_empty_"
		if strings.HasPrefix(st.SQL, p) {
			got[strings.TrimSuffix(strings.Fields(st.SQL[len(p):])[0], "()")] = st.SQL
		}
	}
	for _, tb := range Tables() {
		var b strings.Builder
		fmt.Fprintf(&b, "CREATE OR REPLACE MACRO fairledger_empty_%s() AS TABLE\nSELECT", tb.Name)
		cols := append(append([]Column{}, tb.Columns...), tb.Partition...)
		for i, c := range cols {
			if c.Type.SQL() == "" {
				t.Fatalf("%s.%s: type %s has no DuckDB spelling", tb.Name, c.Name, c.Type)
			}
			sep := ","
			if i == len(cols)-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "\n    CAST(NULL AS %s) AS \"%s\"%s", c.Type.SQL(), c.Name, sep)
		}
		b.WriteString("\nWHERE false")
		if want := b.String(); got[tb.Name] != want {
			t.Errorf("views.sql: fairledger_empty_%s is\n%s\nwant (from the table's columns)\n%s", tb.Name, got[tb.Name], want)
		}
		delete(got, tb.Name)
	}
	for name := range got {
		t.Errorf("views.sql: fairledger_empty_%s has no table", name)
	}
}
