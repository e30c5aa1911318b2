package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// foreignFile is a Parquet file another writer made (DuckDB, an older
// fairledger), to commit as a segment of its (table, cluster, month)
// partition.
type foreignFile struct {
	table, cluster, month string
	data                  []byte
}

// commitForeign commits files in one commit, as the store names and lists
// its own: each replaces the committed segments of its partition (files
// of one partition in one call are all kept). It returns their entries.
func commitForeign(t *testing.T, h *History, files ...foreignFile) []Partition {
	t.Helper()
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort()
	var out []Partition
	for _, f := range files {
		for _, p := range tx.Base().Files(f.table, f.cluster) {
			if p.Month == f.month {
				tx.Remove(p)
			}
		}
		pf, err := parquet.OpenFile(bytes.NewReader(f.data), int64(len(f.data)))
		if err != nil {
			t.Fatal(err)
		}
		p := Partition{Table: f.table, Cluster: f.cluster, Month: f.month, Rows: pf.NumRows()}
		err = tx.writeNamed(&p, partitionDir(f.table, f.cluster, f.month), "part-", ".parquet", func(w io.Writer) error {
			_, err := w.Write(f.data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return out
}

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
		foreignFile{"jobs", "c1", "2025-01", file(`SELECT * FROM (VALUES ('labA', 'alice', TIMESTAMPTZ '2025-01-05 10:00:00+00', 4.0::DOUBLE, 2.0::DOUBLE)) t(account, "user", start, billing, gpu)`)},
		foreignFile{"jobs", "c1", "2025-01", file(`SELECT * FROM (VALUES ('labA', 'bob',   TIMESTAMPTZ '2025-01-06 10:00:00+00', 1.5::DOUBLE, 0.0::DOUBLE)) t(account, "user", start, billing, gpu)`)},
		foreignFile{"jobs", "c1", "2025-02", file(`SELECT 'labB' AS account, 'carol' AS "user", TIMESTAMPTZ '2025-02-01 00:00:00+00' AS start, 10.0::DOUBLE AS billing, 4.0::DOUBLE AS gpu`)},
		foreignFile{"jobs", "c2", "2025-01", file(`SELECT 'labA' AS account, 'dave' AS "user", TIMESTAMPTZ '2025-01-09 00:00:00+00' AS start, 7.0::DOUBLE AS billing, 1.0::DOUBLE AS gpu`)},
		foreignFile{"runs", "c1", "2025-02", file(`SELECT 'r1' AS run_id, 3::BIGINT AS rejected`)},
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
	gen1, gen2 := filepath.Join(h.Dir, genDir, genName(1)), filepath.Join(h.Dir, genDir, genName(2))
	for _, p := range m.Partitions {
		dst := filepath.Join(gen2, filepath.FromSlash(p.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(gen1, filepath.FromSlash(p.Path)), dst); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(gen2, filepath.FromSlash(strayPath)), stray, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(stray)
	m.Generation = 2
	m.Partitions = append(m.Partitions, Partition{Table: "jobs", Cluster: "c1", Month: "2025-01",
		Path: strayPath, Rows: 1, Bytes: int64(len(stray)), SHA256: hex.EncodeToString(sum[:])})
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gen2, manifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// A crash mid-commit: a stage with a written file and a temp file.
	stage := filepath.Join(h.Dir, genDir, stagePrefix+genName(3)+"-00c0ffee")
	if err := os.MkdirAll(filepath.Join(stage, "jobs", "cluster=c1", "month=2025-01"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, filepath.FromSlash(strayPath)), stray, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, "jobs", "cluster=c1", "month=2025-01", ".part-new"+tmpMarker), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	return h.Dir
}

func TestOpenDuckDBViews(t *testing.T) {
	dir := makeHistory(t)
	ctx := context.Background()
	d, err := OpenDuckDB(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if strings.Join(d.Tables, ",") != "jobs,runs" || strings.Join(d.Missing, ",") != "usage,fairshare,associations" || d.Generation != 1 {
		t.Errorf("tables %v, missing %v, generation %d; want jobs,runs, usage,fairshare,associations, 1", d.Tables, d.Missing, d.Generation)
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

// TestOpenDuckDBDamaged: a committed file that is cut short, whose footer
// is garbage or that is missing makes OpenDuckDB fail with a CorruptError
// naming it, and the message says which generation and how to check the
// history, instead of a DuckDB error in the middle of a query.
func TestOpenDuckDBDamaged(t *testing.T) {
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
		h := &History{Dir: dir}
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
		var ce *CorruptError
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
