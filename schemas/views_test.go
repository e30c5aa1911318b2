package schemas

import (
	"strings"
	"testing"
)

// TestViewsCoverTables: views.sql defines exactly one view per documented
// history table, over that table's own directory.
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
		if !strings.Contains(sql, "'/"+tb.Name+"/cluster=*/month=*/") {
			t.Errorf("view %s does not read %s/cluster=*/month=*/: %s", tb.Name, tb.Name, sql)
		}
		delete(views, tb.Name)
	}
	for name := range views {
		t.Errorf("view %s has no documented table", name)
	}
}
