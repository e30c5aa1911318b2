package schemas

import (
	_ "embed" // views.sql
	"strings"
)

//go:embed views.sql
var viewsSQL string

// ViewsSQL returns the DuckDB statements that define one view per history
// table (jobs, usage, fairshare, associations, runs) over the Parquet files
// under the directory held in the DuckDB variable `history`. The same file
// works from the DuckDB CLI (see its header).
func ViewsSQL() string { return viewsSQL }

// ViewStatements splits ViewsSQL into its statements, each with the name of
// the table it defines ("" for settings).
func ViewStatements() []ViewStatement {
	// Drop comment lines first: a comment may hold a ';'.
	var code []string
	for _, l := range strings.Split(viewsSQL, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "--") {
			code = append(code, l)
		}
	}
	var out []ViewStatement
	for _, stmt := range strings.Split(strings.Join(code, "\n"), ";") {
		s := strings.TrimSpace(stmt)
		if s == "" {
			continue
		}
		v := ViewStatement{SQL: s}
		const p = "CREATE OR REPLACE VIEW "
		if strings.HasPrefix(s, p) {
			v.Table = strings.Fields(s[len(p):])[0]
		}
		out = append(out, v)
	}
	return out
}

// ViewStatement is one statement of ViewsSQL.
type ViewStatement struct {
	Table string // the view (= table) it defines, "" for a setting
	SQL   string
}
