package schemas

import (
	_ "embed" // views.sql
	"strings"
)

//go:embed views.sql
var viewsSQL string

// ViewsSQL returns the DuckDB statements that define one view per history
// table (jobs, usage, fairshare, associations, runs, priority) over the
// Parquet files of one generation of the history in the directory held in
// the DuckDB variable `history`: the committed one, or the one the
// variable `generation` names. The same file works from the DuckDB CLI and
// any DuckDB client (see its header).
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
		v := ViewStatement{SQL: s, Pin: strings.HasPrefix(s, "SET VARIABLE fairledger_")}
		const p = "CREATE OR REPLACE VIEW "
		if strings.HasPrefix(s, p) {
			v.Table = strings.Fields(s[len(p):])[0]
		}
		out = append(out, v)
	}
	return out
}

// ViewsFilesVariable is the DuckDB variable the views read their files
// from: a MAP(VARCHAR, VARCHAR[]) from table name to the table's files
// (a table without a key has an empty view). ViewsSQL's Pin statements set
// it from a generation's manifest; a program that pins the generation
// itself sets it instead and skips them.
const ViewsFilesVariable = "fairledger_files"

// ViewStatement is one statement of ViewsSQL.
type ViewStatement struct {
	// Table is the view (= table) the statement defines, "" for a
	// setting, a macro or a pin.
	Table string
	// Pin marks the statements that pin a generation: they read its
	// manifest.json and set ViewsFilesVariable.
	Pin bool
	SQL string
}
