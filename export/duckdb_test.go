package export

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// makeHistory writes a tiny hive-partitioned history with DuckDB itself
// (independently of the Parquet writers), so the views are tested on files
// another writer produced.
func makeHistory(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, p := range []string{"jobs/cluster=c1/month=2025-01", "jobs/cluster=c1/month=2025-02", "jobs/cluster=c2/month=2025-01", "runs/cluster=c1/month=2025-02"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`COPY (SELECT * FROM (VALUES ('labA', 'alice', TIMESTAMPTZ '2025-01-05 10:00:00+00', 4.0::DOUBLE, 2.0::DOUBLE),
		                              ('labA', 'bob',   TIMESTAMPTZ '2025-01-06 10:00:00+00', 1.5::DOUBLE, 0.0::DOUBLE)) t(account, "user", start, billing, gpu))
		 TO '` + dir + `/jobs/cluster=c1/month=2025-01/data.parquet' (FORMAT parquet)`,
		`COPY (SELECT 'labB' AS account, 'carol' AS "user", TIMESTAMPTZ '2025-02-01 00:00:00+00' AS start, 10.0::DOUBLE AS billing, 4.0::DOUBLE AS gpu)
		 TO '` + dir + `/jobs/cluster=c1/month=2025-02/data.parquet' (FORMAT parquet)`,
		`COPY (SELECT 'labA' AS account, 'dave' AS "user", TIMESTAMPTZ '2025-01-09 00:00:00+00' AS start, 7.0::DOUBLE AS billing, 1.0::DOUBLE AS gpu)
		 TO '` + dir + `/jobs/cluster=c2/month=2025-01/data.parquet' (FORMAT parquet)`,
		`COPY (SELECT 'r1' AS run_id, 3::BIGINT AS rejected) TO '` + dir + `/runs/cluster=c1/month=2025-02/run-20250201T000000Z-0000abcd.parquet' (FORMAT parquet)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	// A temp file left by a crashed writer must not be read.
	if err := os.WriteFile(filepath.Join(dir, "jobs/cluster=c1/month=2025-01/.data.parquet.tmp-1"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestOpenDuckDBViews(t *testing.T) {
	dir := makeHistory(t)
	ctx := context.Background()
	d, err := OpenDuckDB(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if strings.Join(d.Tables, ",") != "jobs,runs" || strings.Join(d.Missing, ",") != "usage,fairshare,associations" {
		t.Errorf("tables %v, missing %v", d.Tables, d.Missing)
	}
	// Hand-computed from makeHistory: c1 2025-01 labA 4+1.5, c1 2025-02 labB 10, c2 2025-01 labA 7.
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
