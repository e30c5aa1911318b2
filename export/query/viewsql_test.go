package query

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/schemas"
)

// outsideSession is a DuckDB session as an outside client opens one: no
// fairledger code but schemas/views.sql's text, run whole after setting
// the variables (the DuckDB CLI's SET VARIABLE and .read).
func outsideSession(t *testing.T, vars ...string) (*sql.DB, error) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1) // variables are per connection
	for _, v := range vars {
		if _, err := db.Exec("SET VARIABLE " + v); err != nil {
			t.Fatal(err)
		}
	}
	_, err = db.Exec(schemas.ViewsSQL())
	return db, err
}

// outsideSum is the usage table's sum of billing_sec and the number of
// rows of the other tables, through the session's views.
func outsideSum(t *testing.T, db *sql.DB) (float64, string) {
	t.Helper()
	var sum float64
	if err := db.QueryRow("SELECT sum(billing_sec) FROM usage").Scan(&sum); err != nil {
		t.Fatal(err)
	}
	var others []string
	for _, tb := range schemas.Tables() {
		if tb.Name == schemas.TableUsage {
			continue
		}
		var n, cols int
		if err := db.QueryRow("SELECT count(*), (SELECT count(*) FROM (DESCRIBE "+tb.Name+")) FROM "+tb.Name).Scan(&n, &cols); err != nil {
			t.Fatal(err)
		}
		others = append(others, fmt.Sprintf("%s %d rows %d columns", tb.Name, n, cols))
	}
	return sum, strings.Join(others, ", ")
}

// TestViewsSQLOutside: views.sql, run by a plain DuckDB client on a
// history that has files of the usage table only, loads, answers with the
// usage of the generation committed when it was read, and gives every
// other table (priority included) an empty view of its columns. The views
// keep that generation while later commits happen (here a shared flock on
// its manifest, as history.View takes, keeps it on disk past the two
// generations a commit leaves), reading the file again moves to the newest,
// and the variable generation pins an older one still on disk.
func TestViewsSQLOutside(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	for k := 1; k <= 2; k++ {
		if err := concCommit(h, k); err != nil {
			t.Fatal(err)
		}
	}
	history := "history = " + SQLString(h.Dir)
	db, err := outsideSession(t, history)
	if err != nil {
		t.Fatalf("views.sql on a history without priority files: %v", err)
	}
	var empty []string
	for _, tb := range schemas.Tables() {
		if tb.Name != schemas.TableUsage {
			empty = append(empty, fmt.Sprintf("%s 0 rows %d columns", tb.Name, len(tb.Columns)+len(tb.Partition)))
		}
	}
	wantOthers := strings.Join(empty, ", ")
	if sum, others := outsideSum(t, db); sum != concSum(2) || others != wantOthers {
		t.Errorf("after commit 2: sum %v, %s; want %v, %s", sum, others, concSum(2), wantOthers)
	}

	pin, err := h.View() // holds generation 2
	if err != nil {
		t.Fatal(err)
	}
	defer pin.Close()
	for k := 3; k <= 5; k++ {
		if err := concCommit(h, k); err != nil {
			t.Fatal(err)
		}
	}
	if sum, _ := outsideSum(t, db); sum != concSum(2) {
		t.Errorf("views read at generation 2, after commit 5: sum %v, want generation 2's %v", sum, concSum(2))
	}
	if _, err := db.Exec(schemas.ViewsSQL()); err != nil {
		t.Fatal(err)
	}
	if sum, _ := outsideSum(t, db); sum != concSum(5) {
		t.Errorf("views read again: sum %v, want generation 5's %v", sum, concSum(5))
	}
	old, err := outsideSession(t, history, "generation = 2")
	if err != nil {
		t.Fatal(err)
	}
	if sum, _ := outsideSum(t, old); sum != concSum(2) {
		t.Errorf("generation = 2: sum %v, want %v", sum, concSum(2))
	}
}

// TestViewsSQLOutsideErrors: views.sql refuses to load, naming what to
// set, without the history variable, on a directory without a commit and
// for a generation no longer on disk.
func TestViewsSQLOutsideErrors(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	for _, c := range []struct {
		vars []string
		want string
	}{
		{nil, "views.sql: set the history directory first, as in SET VARIABLE history = '/var/lib/fairledger/history'"},
		{[]string{"history = " + SQLString(h.Dir)}, "views.sql: " + h.Dir + "/current/manifest.json does not exist: set the variable history to the directory that holds current and gen/"},
		{[]string{"history = " + SQLString(h.Dir), "generation = 7"}, "views.sql: " + h.Dir + "/gen/00000007/manifest.json does not exist"},
	} {
		if _, err := outsideSession(t, c.vars...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("views.sql with %v: error %v, want %q", c.vars, err, c.want)
		}
	}
}

// TestViewsSQLOutsideLaterSession: views kept in a database file outlive
// the session's variables; used in a later session they fail, saying to
// read views.sql again, rather than answer with no rows.
func TestViewsSQLOutsideLaterSession(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	if err := concCommit(h, 1); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "views.duckdb")
	open := func() *sql.DB {
		db, err := sql.Open("duckdb", file)
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		return db
	}
	db := open()
	for _, s := range []string{"SET VARIABLE history = " + SQLString(h.Dir), schemas.ViewsSQL()} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	var sum float64
	if err := db.QueryRow("SELECT sum(billing_sec) FROM usage").Scan(&sum); err != nil || sum != concSum(1) {
		t.Fatalf("first session: sum %v, %v; want %v", sum, err, concSum(1))
	}
	db.Close()
	db = open()
	defer db.Close()
	const want = "views.sql: the view usage has no files in this session: run views.sql again"
	if err := db.QueryRow("SELECT sum(billing_sec) FROM usage").Scan(&sum); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("later session: sum %v, error %v; want %q", sum, err, want)
	}
}
