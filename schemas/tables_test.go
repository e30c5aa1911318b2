package schemas

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite schemas/<table>.md from tables.go")

// TestTableDocs checks that each schemas/<table>.md is exactly what
// Table.Markdown renders (-update rewrites them), and that every .md file
// here is a table's.
func TestTableDocs(t *testing.T) {
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tbl := range Tables() {
		docs = slices.DeleteFunc(docs, func(d string) bool { return d == tbl.Name+".md" })
	}
	for _, d := range docs {
		t.Errorf("schemas/%s documents no table of Tables(): remove it, or add the table", d)
	}
	for _, tbl := range Tables() {
		path := filepath.Join(".", tbl.Name+".md")
		want := tbl.Markdown()
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./schemas -run TestTableDocs -update)", err)
		}
		if string(got) != want {
			t.Errorf("%s drifted from tables.go; run go test ./schemas -run TestTableDocs -update", path)
		}
	}
}

// TestTablesWellFormed checks the contract every table definition keeps:
// snake_case unique names, a description for each column, sort keys that
// name stored columns, and no partition column stored in the files.
func TestTablesWellFormed(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	wantNames := []string{TableJobs, TableUsage, TableFairshare, TableAssociations, TableRuns, TablePriority}
	tables := Tables()
	if len(tables) != len(wantNames) {
		t.Fatalf("Tables() has %d tables, want %d", len(tables), len(wantNames))
	}
	for i, tbl := range tables {
		if tbl.Name != wantNames[i] {
			t.Errorf("Tables()[%d].Name = %q, want %q", i, tbl.Name, wantNames[i])
		}
		seen := map[string]bool{}
		for _, c := range tbl.Columns {
			if !snake.MatchString(c.Name) {
				t.Errorf("%s.%s: not snake_case", tbl.Name, c.Name)
			}
			if seen[c.Name] {
				t.Errorf("%s.%s: duplicate column", tbl.Name, c.Name)
			}
			seen[c.Name] = true
			if c.Description == "" {
				t.Errorf("%s.%s: no description", tbl.Name, c.Name)
			}
			if c.Type.SQL() == "" {
				t.Errorf("%s.%s: type %q has no SQL spelling", tbl.Name, c.Name, c.Type)
			}
		}
		for _, p := range tbl.Partition {
			if seen[p.Name] {
				t.Errorf("%s.%s: partition column stored in the files", tbl.Name, p.Name)
			}
		}
		for _, k := range tbl.SortBy {
			if !seen[k] {
				t.Errorf("%s: sort key %q is not a column", tbl.Name, k)
			}
		}
	}
}

// TestTableColumns spot-checks the column contract the DuckDB views rely on.
func TestTableColumns(t *testing.T) {
	tests := []struct {
		table, column string
		typ           Type
		nullable      bool
	}{
		{TableJobs, "end", TypeTimestamp, true},
		{TableJobs, "start", TypeTimestamp, false},
		{TableJobs, "tres", TypeMapStringDouble, false},
		{TableJobs, "billing_slurm", TypeInt64, false},
		{TableJobs, "charged_sec", TypeInt64, false},
		{TableUsage, "period_start", TypeTimestamp, false},
		{TableUsage, "billing_sec", TypeDouble, false},
		{TableFairshare, "raw_shares", TypeInt64, true},
		{TableFairshare, "level_fs", TypeDouble, true},
		{TableFairshare, "rank", TypeInt32, true},
		{TableFairshare, "shares_parent", TypeBool, false},
		{TableAssociations, "shares", TypeInt64, true},
		{TableRuns, "skipped", TypeMapStringInt64, false},
		{TableRuns, "inputs", TypeInputList, false},
	}
	for _, tt := range tests {
		t.Run(tt.table+"."+tt.column, func(t *testing.T) {
			tbl, err := TableByName(tt.table)
			if err != nil {
				t.Fatal(err)
			}
			c, ok := tbl.Column(tt.column)
			if !ok {
				t.Errorf("%s has no column %q", tt.table, tt.column)
				return
			}
			if c.Type != tt.typ || c.Nullable != tt.nullable {
				t.Errorf("%s.%s = (%s, nullable %v), want (%s, nullable %v)", tt.table, tt.column, c.Type, c.Nullable, tt.typ, tt.nullable)
			}
		})
	}
	if _, err := TableByName("nope"); err == nil {
		t.Errorf("TableByName(%q) succeeded, want an error", "nope")
	}
}
