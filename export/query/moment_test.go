package query

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/record/recordtest"
)

// sampleMoment is a moment of cluster c9 made of the sample rows: the
// fairshare rows of 2025-01-31 and the pending rows of 2025-01-01.
func sampleMoment() *Moment {
	var pending []record.PriorityRow
	for _, r := range recordtest.Priority() {
		if r.Event == record.EventPending {
			pending = append(pending, r)
		}
	}
	return &Moment{Cluster: "c9", Time: recordtest.TS("2025-01-31T00:00:00Z", 0), Fairshare: sampleFairshare(), Priority: pending}
}

// TestOpenDuckDBMoment: a session opened with a moment has the relations
// fairshare_at and priority_at, with the views' columns and types and the
// moment's rows, given by the session's own generation; they cannot be
// changed, and the session reads no file it did not before (the Parquet
// file the rows came through is gone, and allowed_paths does not name it).
func TestOpenDuckDBMoment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := sampleHistory(t, t.TempDir())
	m := sampleMoment()
	var gen int64
	d, err := OpenDuckDBWith(ctx, h.Dir, DuckDBOptions{Moment: func(v *history.View) (*Moment, error) {
		gen = v.Generation()
		return m, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if gen != d.Generation {
		t.Errorf("the moment was given generation %d, the session holds %d", gen, d.Generation)
	}
	if got := strings.Join(d.Moments, ","); got != "fairshare_at,priority_at" {
		t.Errorf("Moments = %s, want fairshare_at,priority_at", got)
	}
	for _, rel := range [][2]string{{FairshareAt, "fairshare"}, {PriorityAt, "priority"}} {
		q := "SELECT (SELECT list((column_name, column_type)) FROM (DESCRIBE " + rel[0] + ")) = (SELECT list((column_name, column_type)) FROM (DESCRIBE " + rel[1] + ")) AS same"
		if got := queryCSV(t, d, q); got != "same\ntrue\n" {
			t.Errorf("%s and %s: columns the same = %q, want true", rel[0], rel[1], got)
		}
	}
	// The sample rows: alice of chem (gpu) has FairShare 0.5; job 12
	// waited in cpu and gpu, its TRES factor cpu=31.25, mem=3.2, job 3 in
	// cpu with priority 1 and no TRES factor.
	if got, want := queryCSV(t, d, `SELECT count(*) AS n, count(*) FILTER (cluster = 'c9' AND month = '2025-01') AS c9,
		max(fair_share) FILTER ("user" = 'alice') AS alice FROM fairshare_at`), "n,c9,alice\n4,4,0.5\n"; got != want {
		t.Errorf("fairshare_at = %q, want %q", got, want)
	}
	if got, want := queryCSV(t, d, `SELECT job_id, "partition", priority, tres_w, cluster, month FROM priority_at ORDER BY job_id, "partition"`),
		"job_id,partition,priority,tres_w,cluster,month\n3,cpu,1,{},c9,2025-01\n12,cpu,10715,\"{cpu=31.25, mem=3.2}\",c9,2025-01\n12,gpu,11615,\"{cpu=31.25, mem=3.2}\",c9,2025-01\n"; got != want {
		t.Errorf("priority_at =\n%s\nwant\n%s", got, want)
	}
	for _, q := range []string{"INSERT INTO fairshare_at SELECT * FROM fairshare", "DELETE FROM priority_at",
		"UPDATE fairshare_at SET fair_share = 1", "DROP TABLE priority_at", "CREATE OR REPLACE TABLE fairshare_at AS SELECT 1"} {
		if _, err := d.Query(ctx, q); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: error %v, want ErrReadOnly", q, err)
		}
	}
	if got := queryCSV(t, d, "SELECT count(*) AS n FROM priority_at"); got != "n\n3\n" {
		t.Errorf("priority_at after the refused writes: %q rows", got)
	}
	entries, err := os.ReadDir(d.tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".parquet") {
			t.Errorf("the session's directory still holds %s", e.Name())
		}
	}
	got := queryCSV(t, d, "SELECT current_setting('allowed_paths') AS p, current_setting('enable_external_access') AS e, current_setting('lock_configuration') AS l")
	if strings.Contains(got, FairshareAt) || strings.Contains(got, PriorityAt) || !strings.HasSuffix(got, ",false,true\n") {
		t.Errorf("settings = %q: want the history's files only, external access off, locked", got)
	}
}

// TestOpenDuckDBMomentEmpty: a moment without job priority, in a history
// whose fairshare and priority tables have no file, still gives both
// relations, priority_at empty, with the columns of the empty views.
func TestOpenDuckDBMomentEmpty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := sampleMoment()
	m.Priority = nil
	d, err := OpenDuckDBWith(ctx, t.TempDir(), DuckDBOptions{Moment: func(*history.View) (*Moment, error) { return m, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := queryCSV(t, d, "SELECT (SELECT count(*) FROM fairshare_at) AS f, (SELECT count(*) FROM priority_at) AS p"); got != "f,p\n4,0\n" {
		t.Errorf("rows = %q, want 4 and 0", got)
	}
	for _, rel := range [][2]string{{FairshareAt, "fairshare"}, {PriorityAt, "priority"}} {
		q := "SELECT (SELECT list((column_name, column_type)) FROM (DESCRIBE " + rel[0] + ")) = (SELECT list((column_name, column_type)) FROM (DESCRIBE " + rel[1] + ")) AS same"
		if got := queryCSV(t, d, q); got != "same\ntrue\n" {
			t.Errorf("%s and the empty %s: columns the same = %q, want true", rel[0], rel[1], got)
		}
	}
}

// TestOpenDuckDBMomentError: the moment's error is the session's, and
// nothing is left behind; without a moment the relations do not exist.
func TestOpenDuckDBMomentError(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	errNone := errors.New("no moment at 2025-01-31T00:00:00Z")
	_, err := OpenDuckDBWith(ctx, t.TempDir(), DuckDBOptions{Moment: func(*history.View) (*Moment, error) { return nil, errNone }})
	if err != errNone {
		t.Errorf("error %v, want the moment's, unwrapped", err)
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Errorf("TMPDIR holds %v (%v), want nothing", entries, err)
	}
	d, err := OpenDuckDB(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.Query(ctx, "SELECT * FROM fairshare_at")
	if err == nil || !strings.Contains(err.Error(), "The history's views are jobs, usage, fairshare, associations, runs, priority.") {
		t.Errorf("fairshare_at without a moment: %v", err)
	}
	if len(d.Moments) != 0 {
		t.Errorf("Moments = %v without a moment", d.Moments)
	}
}

// BenchmarkOpenDuckDBMoment opens a session with a moment of a saturated
// queue: 10,000 associations and 100,000 waiting jobs, against the same
// session without it (sub-benchmark none). Reproduce with
//
//	go test ./export/query -run '^$' -bench OpenDuckDBMoment -benchtime 5x
func BenchmarkOpenDuckDBMoment(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	at := recordtest.TS("2025-06-17T14:37:00Z", 0)
	base := sampleFairshare()[2] // a user row
	fs := make([]record.FairshareRow, 10_000)
	for i := range fs {
		fs[i] = base
		fs[i].Snapshot, fs[i].User = at, "u"+strconv.Itoa(i)
	}
	pr := make([]record.PriorityRow, 100_000)
	for i := range pr {
		pr[i] = recordtest.Priority()[1]
		pr[i].At, pr[i].Snapshot, pr[i].JobID, pr[i].Priority = at, &at, int64(1_000_000+i), int64(i%20_000)
	}
	m := &Moment{Cluster: "c1", Time: at, Fairshare: fs, Priority: pr}
	for _, c := range []struct {
		name string
		opt  DuckDBOptions
	}{
		{"none", DuckDBOptions{}},
		{"moment", DuckDBOptions{Moment: func(*history.View) (*Moment, error) { return m, nil }}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				d, err := OpenDuckDBWith(ctx, dir, c.opt)
				if err != nil {
					b.Fatal(err)
				}
				if err := d.Close(); err != nil {
					b.Fatal(err)
				}
			}
			if c.opt.Moment != nil {
				b.ReportMetric(float64(len(fs)+len(pr))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			}
		})
	}
}
