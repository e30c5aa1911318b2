package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/schemas"
)

// sameHistory checks that two histories have the same usage, fair-share
// and association tables byte for byte, the same jobs rows but for source
// file and line, and the same last checkpoint.
func sameHistory(t *testing.T, got, want string, cp string) {
	t.Helper()
	for _, table := range []string{schemas.TableUsage, schemas.TableFairshare, schemas.TableAssociations} {
		sameFiles(t, table, tableFiles(t, got, table), tableFiles(t, want, table))
	}
	sameJobs(t, got, want)
	a, err1 := os.ReadFile(filepath.Join(got, cp))
	b, err2 := os.ReadFile(filepath.Join(want, cp))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("checkpoints differ:\n got %s\nwant %s", a, b)
	}
}

// TestSameFileTwiceIsOnce: a run given the same sacct file twice charges
// and writes every job once: its history equals the run given the file
// once, bit for bit, and it counts every record of the second copy as a
// duplicate.
func TestSameFileTwiceIsOnce(t *testing.T) {
	t.Parallel()
	dir, _, end := nightlyCluster(t, 1500)
	f := filepath.Join(dir, "sacct.psv")
	once := t.TempDir()
	s1, err := pipeline.Run(context.Background(), siteInputs(t, dir, f), runOpts(once, end))
	if err != nil {
		t.Fatal(err)
	}
	twice := t.TempDir()
	s2, err := pipeline.Run(context.Background(), siteInputs(t, dir, f, f), runOpts(twice, end))
	if err != nil {
		t.Fatal(err)
	}
	sameHistory(t, twice, once, "current/state/cluster=synth/checkpoint-20250210T000000Z.json")
	if s1.Duplicates != 0 || s2.Duplicates != s1.Ingest.Ingested {
		t.Errorf("duplicates: once %d, twice %d; want 0 and the %d records of one copy", s1.Duplicates, s2.Duplicates, s1.Ingest.Ingested)
	}
	if s2.Decay != s1.Decay || s2.JobsWritten != s1.JobsWritten {
		t.Errorf("twice: decay %+v, written %d; once: decay %+v, written %d", s2.Decay, s2.JobsWritten, s1.Decay, s1.JobsWritten)
	}
}

// sacctLines splits a sacct -P file into its header and rows.
func sacctLines(t *testing.T, p string) (string, []string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return lines[0], lines[1:]
}

// TestOverlappingNightlyFiles: two nightly files with overlapping windows
// (sacct -S two days back) in one run, jobs RUNNING in the first and
// finished in the second among them, give the history of the run over
// one file merged from them by hand: every row of the first, replaced in
// place by the second's row of the same (JobIDRaw, Start), then the
// second's other rows.
func TestOverlappingNightlyFiles(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 3000)
	d0 := from.AddDate(0, 0, 5)
	n1, n2 := filepath.Join(dir, "n1.psv"), filepath.Join(dir, "n2.psv")
	full := filepath.Join(dir, "sacct.psv")
	sacctAsOf(t, full, n1, d0, d0.AddDate(0, 0, 2))
	sacctAsOf(t, full, n2, d0.AddDate(0, 0, 1), d0.AddDate(0, 0, 3))

	hdr, rows1 := sacctLines(t, n1)
	_, rows2 := sacctLines(t, n2)
	col := map[string]int{}
	for i, h := range strings.Split(hdr, "|") {
		col[h] = i
	}
	key := func(row string) string {
		f := strings.Split(row, "|")
		return f[col["JobIDRaw"]] + "@" + f[col["Start"]]
	}
	state := func(row string) string { return strings.Split(row, "|")[col["State"]] }
	second := map[string]string{}
	for _, r := range rows2 {
		second[key(r)] = r
	}
	var merged []string
	inFirst := map[string]bool{}
	overlap, finishedLater := 0, 0
	for _, r := range rows1 {
		k := key(r)
		inFirst[k] = true
		if r2, ok := second[k]; ok {
			overlap++
			if state(r) == "RUNNING" && state(r2) != "RUNNING" {
				finishedLater++
			}
			r = r2
		}
		merged = append(merged, r)
	}
	for _, r := range rows2 {
		if !inFirst[key(r)] {
			merged = append(merged, r)
		}
	}
	if overlap == 0 || finishedLater == 0 {
		t.Fatalf("%d rows in both files, %d running in the first and finished in the second: the test proves little", overlap, finishedLater)
	}
	mf := filepath.Join(dir, "merged.psv")
	if err := os.WriteFile(mf, []byte(hdr+"\n"+strings.Join(merged, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	to := d0.AddDate(0, 0, 3)
	both := t.TempDir()
	sum, err := pipeline.Run(context.Background(), siteInputs(t, dir, n1, n2), runOpts(both, to))
	if err != nil {
		t.Fatal(err)
	}
	want := t.TempDir()
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, mf), runOpts(want, to)); err != nil {
		t.Fatal(err)
	}
	sameHistory(t, both, want, "current/state/cluster=synth/checkpoint-"+to.Format("20060102T150405Z")+".json")
	if sum.Duplicates != int64(overlap) {
		t.Errorf("duplicates %d, want the %d rows in both files", sum.Duplicates, overlap)
	}
}

// siteWith writes a site directory with test24_1's slurm.conf and
// association tree (fairshare/testdata/test24_1.txt: no decay, limits
// enforced, so a cpu=1 job of N seconds adds N to its user's raw usage) and
// the given sacct files.
func siteWith(t *testing.T, sacct ...string) (string, []string) {
	t.Helper()
	src, _ := goldenSite(t, "fairshare/testdata/test24_1.txt")
	dir := t.TempDir()
	for _, f := range []string{"slurm.conf", "assoc.psv"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	for i, s := range sacct {
		p := filepath.Join(dir, "sacct"+string(rune('1'+i))+".psv")
		body := "JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Start|End|Elapsed|State|AllocCPUS|AllocTRES\n" + s
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return dir, files
}

// rawUsage returns the raw usage of every user association in the
// fair-share snapshot at at.
func rawUsage(t *testing.T, history, cluster string, at time.Time) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, r := range snapshotAt(t, history, cluster, at) {
		if r.IsUser && r.RawUsage != nil {
			out[r.User] = *r.RawUsage
		}
	}
	return out
}

// jobRows reads every jobs row of history as "job_id_raw charged_sec".
func jobRows(t *testing.T, hist, cluster string) []string {
	t.Helper()
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range partitionMonths(t, h, schemas.TableJobs, cluster) {
		var rows []record.JobRow
		if err := h.ReadPartition(schemas.TableJobs, cluster, m, &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			out = append(out, strings.Join([]string{itoa(r.JobIDRaw), itoa(r.ChargedSec)}, " "))
		}
	}
	slices.Sort(out)
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRunningThenFinishedChargedOnce: job 2001 is RUNNING in the first
// file and COMPLETED after an hour in the second. The run charges it
// once, for its 3600 s (test24_1's site: raw usage is seconds), and the default
// --to is its end, the latest end, not now: nothing is running any more.
func TestRunningThenFinishedChargedOnce(t *testing.T) {
	t.Parallel()
	dir, files := siteWith(t,
		"2001|2001|test24_1|normal|normal|AccountB|User1|2025-01-01T00:00:00|2025-01-01T00:00:00|Unknown|00:30:00|RUNNING|1|billing=1,cpu=1,mem=1M,node=1\n"+
			"2002|2002|test24_1|normal|normal|AccountC|User2|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T00:10:00|00:10:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n",
		"2001|2001|test24_1|normal|normal|AccountB|User1|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n")
	hist := t.TempDir()
	opt := runOpts(hist, time.Time{})
	opt.Now = func() time.Time { return time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC) }
	sum, err := pipeline.Run(context.Background(), siteInputs(t, dir, files...), opt)
	if err != nil {
		t.Fatal(err)
	}
	to := time.Date(2025, 1, 1, 1, 0, 0, 0, time.UTC)
	if !sum.To.Equal(to) || sum.Duplicates != 1 {
		t.Fatalf("to %s, duplicates %d; want %s and 1", sum.To, sum.Duplicates, to)
	}
	got := rawUsage(t, hist, "test24_1", to)
	if got["User1"] != 3600 || got["User2"] != 600 {
		t.Errorf("raw usage %v, want User1 3600 and User2 600", got)
	}
	if g, w := jobRows(t, hist, "test24_1"), []string{"2001 3600", "2002 600"}; !slices.Equal(g, w) {
		t.Errorf("jobs %v, want %v", g, w)
	}
	cp, err := os.ReadFile(filepath.Join(hist, "current", "state", "cluster=test24_1", "checkpoint-20250101T010000Z.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(cp, []byte(`"running":[]`)) {
		t.Errorf("checkpoint carries running jobs: %s", cp)
	}
}
