package query

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/history/historytest"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/record/recordtest"
)

// commitForeign and foreignFile are historytest's.
var commitForeign = historytest.CommitForeign

type foreignFile = historytest.ForeignFile

// duckDBFile runs a COPY ... TO of query with DuckDB and returns the file.
func duckDBFile(t *testing.T, db *sql.DB, query string) []byte {
	t.Helper()
	name := filepath.Join(t.TempDir(), "f.parquet")
	if _, err := db.Exec(`COPY (` + query + `) TO '` + name + `' (FORMAT parquet)`); err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// makeHistory writes a tiny hive-partitioned history's files with DuckDB
// itself (independently of the Parquet writers) and commits them, so the
// views are tested on files another writer produced; the January jobs of
// c1 are two segments. Beside the committed generation lie what crashed
// commits leave, which must not be read: a stage directory and a whole
// generation 2 the current symlink never pointed to, each with a jobs file
// of 1000 billing.
func makeHistory(t *testing.T) string {
	t.Helper()
	h := openHistory(t)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	file := func(query string) []byte { return duckDBFile(t, db, query) }
	commitForeign(t, h,
		foreignFile{Table: "jobs", Cluster: "c1", Month: "2025-01", Data: file(`SELECT * FROM (VALUES ('labA', 'alice', TIMESTAMPTZ '2025-01-05 10:00:00+00', 4.0::DOUBLE, 2.0::DOUBLE)) t(account, "user", start, billing, gpu)`)},
		foreignFile{Table: "jobs", Cluster: "c1", Month: "2025-01", Data: file(`SELECT * FROM (VALUES ('labA', 'bob',   TIMESTAMPTZ '2025-01-06 10:00:00+00', 1.5::DOUBLE, 0.0::DOUBLE)) t(account, "user", start, billing, gpu)`)},
		foreignFile{Table: "jobs", Cluster: "c1", Month: "2025-02", Data: file(`SELECT 'labB' AS account, 'carol' AS "user", TIMESTAMPTZ '2025-02-01 00:00:00+00' AS start, 10.0::DOUBLE AS billing, 4.0::DOUBLE AS gpu`)},
		foreignFile{Table: "jobs", Cluster: "c2", Month: "2025-01", Data: file(`SELECT 'labA' AS account, 'dave' AS "user", TIMESTAMPTZ '2025-01-09 00:00:00+00' AS start, 7.0::DOUBLE AS billing, 1.0::DOUBLE AS gpu`)},
		foreignFile{Table: "runs", Cluster: "c1", Month: "2025-02", Data: file(`SELECT 'r1' AS run_id, 3::BIGINT AS rejected`)},
	)
	stray := file(`SELECT 'labZ' AS account, 'zed' AS "user", TIMESTAMPTZ '2025-01-07 00:00:00+00' AS start, 1000.0::DOUBLE AS billing, 0.0::DOUBLE AS gpu`)
	const strayPath = "jobs/cluster=c1/month=2025-01/part-00000000000000ff.parquet"
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	// A crash between the stage's rename and the symlink switch: a
	// complete generation 2 (links to generation 1's files, the stray
	// file, its manifest) that never became current.
	sum := sha256.Sum256(stray)
	m.Generation = 2
	m.Partitions = append(m.Partitions, history.Partition{Table: "jobs", Cluster: "c1", Month: "2025-01",
		Path: strayPath, Rows: 1, Bytes: int64(len(stray)), SHA256: hex.EncodeToString(sum[:])})
	historytest.CrashUncommitted(t, h, m, historytest.File{Path: strayPath, Data: stray})
	// A crash mid-commit: a stage with a written file and a temp file.
	historytest.CrashStage(t, h, 3, historytest.File{Path: strayPath, Data: stray},
		historytest.File{Path: "jobs/cluster=c1/month=2025-01/.part-new" + historytest.TmpMarker, Data: []byte("partial")})
	return h.Dir
}

func TestOpenDuckDBViews(t *testing.T) {
	t.Parallel()
	dir := makeHistory(t)
	ctx := context.Background()
	d, err := OpenDuckDB(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if strings.Join(d.Tables, ",") != "jobs,usage,fairshare,associations,runs,priority" || strings.Join(d.Missing, ",") != "usage,fairshare,associations,priority" || d.Generation != 1 {
		t.Errorf("tables %v, missing %v, generation %d; want every table, usage,fairshare,associations,priority, 1", d.Tables, d.Missing, d.Generation)
	}
	// Hand-computed from makeHistory: c1 2025-01 labA 4+1.5 (two segments),
	// c1 2025-02 labB 10, c2 2025-01 labA 7; no labZ of the crashed commits.
	res, err := d.Query(ctx, `SELECT cluster, month, account, sum(billing) AS b, count(*) AS n
		FROM jobs GROUP BY ALL ORDER BY cluster, month, account`)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteResult(&out, res, FormatCSV); err != nil {
		t.Fatal(err)
	}
	want := "cluster,month,account,b,n\nc1,2025-01,labA,5.5,2\nc1,2025-02,labB,10.0,1\nc2,2025-01,labA,7.0,1\n"
	if out.String() != want {
		t.Errorf("csv =\n%s\nwant\n%s", out.String(), want)
	}
	res, err = d.Query(ctx, `SELECT "user", start FROM jobs WHERE cluster = 'c1' ORDER BY start LIMIT 1`)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := WriteResult(&out, res, FormatJSON); err != nil {
		t.Fatal(err)
	}
	if want := "[\n  {\"user\": \"alice\", \"start\": \"2025-01-05T10:00:00Z\"}\n]\n"; out.String() != want {
		t.Errorf("json = %q, want %q", out.String(), want)
	}
	res, err = d.Query(ctx, `SELECT run_id, rejected FROM runs`)
	if err != nil || len(res.Rows) != 1 || res.Rows[0][1] != int64(3) {
		t.Errorf("runs = %+v, %v", res, err)
	}
}

func TestWriteResultTable(t *testing.T) {
	t.Parallel()
	r := &Result{Columns: []string{"account", "f"}, Rows: [][]any{{"labA", 0.5}, {"labBB", nil}}}
	var out bytes.Buffer
	if err := WriteResult(&out, r, FormatTable); err != nil {
		t.Fatal(err)
	}
	if want := "account  f\nlabA     0.5\nlabBB    NULL\n"; out.String() != want {
		t.Errorf("table = %q, want %q", out.String(), want)
	}
	if err := WriteResult(&out, r, "xml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestOpenDuckDBNotADir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing, file := filepath.Join(dir, "nope"), filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		missing: "history directory " + missing + " does not exist (fairledger run creates it)",
		file:    "history directory " + file + ": not a directory",
	} {
		if _, err := OpenDuckDB(context.Background(), path); err == nil || err.Error() != want {
			t.Errorf("OpenDuckDB(%s): err = %v, want %s", path, err, want)
		}
	}
}

// TestOpenDuckDBDamaged: a committed file that is cut short, whose footer
// is garbage or that is missing makes OpenDuckDB fail with a history.CorruptError
// naming it, and the message says which generation and how to check the
// history, instead of a DuckDB error in the middle of a query.
func TestOpenDuckDBDamaged(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		damage  func(file string) error
		problem string
	}{
		{"cut short", func(f string) error { return os.Truncate(f, 100) }, "100 bytes, the manifest says "},
		{"bad footer", func(f string) error {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			copy(b[len(b)-12:], "garbagegarba")
			// A new file: the generations share the old one (hard links).
			if err := os.Remove(f); err != nil {
				return err
			}
			return os.WriteFile(f, b, 0o644)
		}, "not valid Parquet"},
		{"missing", os.Remove, "no such file"},
	} {
		dir := makeHistory(t)
		h := &history.Store{Dir: dir}
		p := histOnlyFile(t, h, "jobs", "c1", "2025-02")
		if err := c.damage(histPath(h, p)); err != nil {
			t.Fatal(err)
		}
		d, err := OpenDuckDB(context.Background(), dir)
		if err == nil {
			d.Close()
			t.Errorf("%s: OpenDuckDB succeeded", c.name)
			continue
		}
		var ce *history.CorruptError
		if !errors.As(err, &ce) || ce.Path != p.Path {
			t.Errorf("%s: error %v, want a CorruptError of %s", c.name, err, p.Path)
		}
		want := "history file " + p.Path + " is damaged: "
		tail := " (in " + filepath.Join(dir, "gen", "00000001") + "); run fairledger verify --history " + dir + " to check every file"
		if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, c.problem) || !strings.HasSuffix(msg, tail) {
			t.Errorf("%s: error %q, want %q ... %q ... %q", c.name, msg, want, c.problem, tail)
		}
	}
}

// sampleHistory writes one file of every table, from the sample rows, into
// the history in dir (created), cluster c1, January 2025.
func sampleHistory(t *testing.T, dir string) *history.Store {
	t.Helper()
	h, err := history.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	jan := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for table, rows := range map[string]any{
		"jobs": sampleJobs(), "usage": sampleUsage(), "fairshare": sampleFairshare(),
		"associations": sampleAssociations(), "runs": []record.RunRow{sampleRun()}, "priority": recordtest.Priority(),
	} {
		if err := h.WritePartition(table, "c1", jan, rows); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// queryCSV runs query in d and returns its CSV.
func queryCSV(t *testing.T, d *DB, query string) string {
	t.Helper()
	res, err := d.Query(context.Background(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	var out bytes.Buffer
	if err := WriteResult(&out, res, FormatCSV); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestOpenDuckDBEmptyViews: in a history where no table has a file yet,
// every view is defined and answers with no rows, with the columns and
// types the view has over a file of the table (hive columns cluster and
// month included), so that a query written for a full history runs.
func TestOpenDuckDBEmptyViews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	empty, err := OpenDuckDB(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if want := "jobs,usage,fairshare,associations,runs,priority"; strings.Join(empty.Tables, ",") != want || strings.Join(empty.Missing, ",") != want {
		t.Errorf("tables %v, missing %v: want %s for both", empty.Tables, empty.Missing, want)
	}
	full, err := OpenDuckDB(ctx, sampleHistory(t, t.TempDir()).Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	if len(full.Missing) != 0 {
		t.Errorf("missing %v in a history with every table", full.Missing)
	}
	for _, table := range empty.Tables {
		if got := queryCSV(t, empty, "SELECT count(*) AS n, count(DISTINCT cluster) AS c, max(month) AS m FROM "+table); got != "n,c,m\n0,0,\n" {
			t.Errorf("%s: %q, want no rows", table, got)
		}
		describe := "SELECT column_name, column_type FROM (DESCRIBE " + table + ")"
		want := queryCSV(t, full, describe)
		if got := queryCSV(t, empty, describe); got != want {
			t.Errorf("empty view %s:\n%s\nwant the columns over a file:\n%s", table, got, want)
		}
		if !strings.Contains(want, "\ncluster,VARCHAR\nmonth,VARCHAR\n") {
			t.Errorf("view %s lacks the hive columns:\n%s", table, want)
		}
	}
}

// TestOpenDuckDBPathNotAGlob: a history whose path holds glob characters
// ([, *, ?) and a quote is read, not a sibling directory the path read as
// a glob matches (h[s]*?'q matches hsXY'q); and a key=value directory
// above the history adds no column to the views (DuckDB would read it as
// a hive partition).
func TestOpenDuckDBPathNotAGlob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	parent := filepath.Join(t.TempDir(), "site=a")
	odd := sampleHistory(t, filepath.Join(parent, "h[s]*?'q"))
	sibling := sampleHistory(t, filepath.Join(parent, "hsXY'q"))
	// The sibling holds a second run: a glob would count 3 runs.
	if _, err := sibling.AppendRun("c1", record.RunRow{RunID: "sibling", Started: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDuckDB(ctx, odd.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	run := sampleRun()
	if got, want := queryCSV(t, d, "SELECT run_id, cluster, month FROM runs"), "run_id,cluster,month\n"+run.RunID+",c1,2025-01\n"; got != want {
		t.Errorf("runs = %q, want %q", got, want)
	}
	if got := queryCSV(t, d, "SELECT count(*) FROM (DESCRIBE runs) WHERE column_name = 'site'"); got != "count_star()\n0\n" {
		t.Errorf("the views have a site column from the directory above the history: %q", got)
	}
	if got, want := queryCSV(t, d, "SELECT count(*) FROM jobs"), fmt.Sprintf("count_star()\n%d\n", len(sampleJobs())); got != want {
		t.Errorf("jobs count = %q, want %q", got, want)
	}
}

// TestOpenDuckDBUnknownTable: a table name that is not a view is answered
// with the views there are, and without DuckDB's guess at a system table
// (pg_constraint was its guess for an empty history).
func TestOpenDuckDBUnknownTable(t *testing.T) {
	t.Parallel()
	d, err := OpenDuckDB(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, q := range []string{"SELECT * FROM jbos", "SELECT * FROM pg_constrain", "SELECT count(*) FROM sacct"} {
		_, err := d.Query(context.Background(), q)
		if err == nil {
			t.Errorf("%s: no error", q)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "does not exist! The history's views are jobs, usage, fairshare, associations, runs, priority.") || strings.Contains(msg, "pg_") && !strings.Contains(msg, "pg_constrain does") {
			t.Errorf("%s: %q, want the views listed and no system table suggested", q, msg)
		}
	}
}

// TestDuckDBReadOnly: the session refuses every statement that writes,
// reads a file outside the history's generation or changes the session,
// before it runs; and nothing is written. SELECTs (with DESCRIBE, SHOW,
// SUMMARIZE, PRAGMA) and EXPLAIN still run.
func TestDuckDBReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := sampleHistory(t, t.TempDir())
	d, err := OpenDuckDB(ctx, h.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	runs := histOnlyFile(t, h, "runs", "c1", "2025-01")
	histFile, err := filepath.EvalSymlinks(histPath(h, runs))
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(histFile)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	secret := filepath.Join(out, "secret.csv")
	if err := os.WriteFile(secret, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := "read-only: it runs SELECT and EXPLAIN statements only"
	denied := "file system operations are disabled by configuration"
	for _, c := range []struct{ query, want string }{
		{"COPY jobs TO " + SQLString(filepath.Join(out, "jobs.csv")), denied},
		{"COPY (SELECT 1 AS x) TO " + SQLString(histFile) + " (FORMAT parquet, USE_TMP_FILE false)", readOnly + ", not COPY"},
		{"EXPLAIN ANALYZE COPY (SELECT 1 AS x) TO " + SQLString(histFile) + " (FORMAT parquet, USE_TMP_FILE false)", "not EXPLAIN ANALYZE"},
		{"explain /* c */ analyse SELECT 1", "not EXPLAIN ANALYZE"},
		{"EXPLAIN (ANALYZE) SELECT 1", "not EXPLAIN ANALYZE"},
		{"EXPORT DATABASE " + SQLString(filepath.Join(out, "export")), denied},
		{"ATTACH " + SQLString(filepath.Join(out, "x.duckdb")), readOnly + ", not ATTACH"},
		{"ATTACH ':memory:' AS scratch", readOnly + ", not ATTACH"},
		{"INSTALL httpfs", readOnly + ", not INSTALL or LOAD"},
		{"LOAD httpfs", readOnly + ", not INSTALL or LOAD"},
		{"LOAD " + SQLString(filepath.Join(out, "x.duckdb_extension")), readOnly + ", not INSTALL or LOAD"},
		{"SET enable_external_access = true", readOnly + ", not SET"},
		{"RESET lock_configuration", readOnly + ", not SET"},
		{"SET VARIABLE history = '/'", readOnly + ", not SET"},
		{"CREATE TABLE t AS SELECT 1", readOnly + ", not CREATE"},
		{"CREATE OR REPLACE VIEW jobs AS SELECT 1", readOnly + ", not CREATE"},
		{"DROP VIEW jobs", readOnly + ", not DROP"},
		{"INSERT INTO jobs VALUES (1)", ""}, // a view: refused one way or another
		{"CALL pragma_version()", readOnly + ", not CALL"},
		{"SELECT * FROM read_csv(" + SQLString(secret) + ")", denied},
		{"SELECT * FROM read_text(" + SQLString(secret) + ")", denied},
		{"SELECT * FROM glob(" + SQLString(out+"/*") + ")", denied},
		{"SELECT * FROM read_parquet(" + SQLString(filepath.Join(h.Dir, history.CurrentLink, "runs", "*", "*", "*.parquet")) + ")", denied},
		{"SELECT * FROM query('COPY jobs TO ''" + filepath.Join(out, "q.csv") + "''')", "Expected a single SELECT statement"},
		{"SELECT 1; COPY jobs TO " + SQLString(filepath.Join(out, "m.csv")), "several statements"},
	} {
		_, err := d.Query(ctx, c.query)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.query, err, c.want)
		}
		if r, err := d.Stream(ctx, c.query); err == nil {
			r.Close()
			t.Errorf("%s: Stream ran it", c.query)
		}
	}
	if after, err := os.ReadFile(histFile); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the history's runs file changed (%v)", err)
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 1 {
		t.Errorf("files written beside the secret: %v (%v)", entries, err)
	}
	// The lock held: the configuration is as set.
	if got := queryCSV(t, d, "SELECT current_setting('enable_external_access') AS e, current_setting('lock_configuration') AS l"); got != "e,l\nfalse,true\n" {
		t.Errorf("settings after the refusals: %q", got)
	}
	for q, want := range map[string]string{
		"SELECT count(*) AS n FROM jobs":                                      fmt.Sprintf("n\n%d\n", len(sampleJobs())),
		"SELECT count(*) AS n FROM (DESCRIBE runs)":                           "n\n",
		"SELECT count(*) AS n FROM (SHOW TABLES)":                             "n\n6\n",
		"SELECT column_name FROM (SUMMARIZE runs) WHERE column_name = 'read'": "column_name\nread\n",
		"PRAGMA table_info('usage')":                                          "cid,",
		"EXPLAIN SELECT * FROM jobs":                                          "explain_key,explain_value\n",
		"SELECT * FROM query('SELECT 42 AS answer')":                          "answer\n42\n",
	} {
		if got := queryCSV(t, d, q); !strings.HasPrefix(got, want) {
			t.Errorf("%s = %q, want it to start with %q", q, got, want)
		}
	}
}
