package schemas

import (
	"strings"
	"testing"
)

// TestViewsCoverTables: views.sql defines exactly one view per documented
// history table, over the Parquet files of that table's own directory in
// the committed generation.
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
		// Every segment of the committed generation: query.OpenDuckDB
		// replaces this glob with the pinned generation's list of files.
		if want := "'/current/" + tb.Name + "/cluster=*/month=*/*.parquet'"; strings.Count(sql, "'/current/") != 1 || !strings.Contains(sql, want) {
			t.Errorf("view %s does not read %s once: %s", tb.Name, want, sql)
		}
		delete(views, tb.Name)
	}
	for name := range views {
		t.Errorf("view %s has no documented table", name)
	}
}
