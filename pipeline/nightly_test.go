package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/internal/synth"
	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/schemas"
)

// nightlyCluster generates a three-week cluster that crosses a month
// boundary and returns its directory (slurm.conf, assoc.psv, qos.psv and
// sacct.psv as sacct shows it at the end).
func nightlyCluster(t *testing.T, jobs int) (string, time.Time, time.Time) {
	t.Helper()
	from := time.Date(2025, 1, 20, 0, 0, 0, 0, time.UTC)
	end := time.Date(2025, 2, 10, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	if _, err := synth.WriteDir(dir, synth.Options{Seed: 11, Labs: 8, UsersPerLab: 3, Jobs: jobs, From: from, To: end,
		Now: end, UnixTimes: true, StepFraction: -1}); err != nil {
		t.Fatal(err)
	}
	return dir, from, end
}

// sacctAsOf writes what `sacct -X -P -S since -E now` would have shown at
// now, derived from the final sacct file (Unix times): jobs not started by
// now are left out, jobs still running at now are RUNNING with End Unknown
// and Elapsed up to now, jobs that ended before since are left out.
func sacctAsOf(t *testing.T, full, out string, since, now time.Time) {
	t.Helper()
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	hdr := strings.Split(lines[0], "|")
	col := map[string]int{}
	for i, h := range hdr {
		col[h] = i
	}
	for _, c := range []string{"Start", "End", "Elapsed", "ElapsedRaw", "State", "ExitCode"} {
		if _, ok := col[c]; !ok {
			t.Fatalf("sacct file lacks %s", c)
		}
	}
	var b bytes.Buffer
	b.WriteString(lines[0] + "\n")
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		start, err := strconv.ParseInt(f[col["Start"]], 10, 64)
		if err != nil || start >= now.Unix() {
			continue // pending (Unknown start) or not started yet
		}
		end, err := strconv.ParseInt(f[col["End"]], 10, 64)
		running := err != nil || end > now.Unix()
		if !running && end < since.Unix() {
			continue
		}
		if running {
			el := now.Unix() - start
			f[col["End"]] = "Unknown"
			f[col["State"]] = "RUNNING"
			f[col["ExitCode"]] = "0:0"
			f[col["ElapsedRaw"]] = strconv.FormatInt(el, 10)
			f[col["Elapsed"]] = elapsedStr(el)
		}
		b.WriteString(strings.Join(f, "|") + "\n")
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func elapsedStr(s int64) string {
	d, h, m, sec := s/86400, s%86400/3600, s%3600/60, s%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
}

// nightFile is the sacct file of the night ending at n.
func nightFile(dir string, n time.Time) string {
	return filepath.Join(dir, "sacct-"+n.Format("2006-01-02")+".psv")
}

// nights runs the cluster night by night, each night's sacct file covering
// the previous midnight to this one, into history.
func nights(t *testing.T, dir, history string, from, end time.Time) {
	t.Helper()
	nightsWith(t, dir, history, from, end, runOpts)
}

// nightsWith is nights with each night's options from opts.
func nightsWith(t *testing.T, dir, history string, from, end time.Time, opts func(string, time.Time) pipeline.Options) {
	t.Helper()
	for n := from.AddDate(0, 0, 1); !n.After(end); n = n.AddDate(0, 0, 1) {
		f := nightFile(dir, n)
		sacctAsOf(t, filepath.Join(dir, "sacct.psv"), f, n.AddDate(0, 0, -1), n)
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, f), opts(history, n)); err != nil {
			t.Fatalf("night %s: %v", n.Format(time.DateOnly), err)
		}
	}
}

// openView pins the committed generation of history; the caller closes it.
func openView(t *testing.T, hist string) *history.View {
	t.Helper()
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	v, err := h.View()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// tableFiles returns the bytes of every file of table, by relative path.
func tableFiles(t *testing.T, history, table string) map[string][]byte {
	t.Helper()
	v := openView(t, history)
	defer v.Close()
	out := map[string][]byte{}
	for _, p := range v.Files(table, "") {
		k := "cluster=" + p.Cluster + "/month=" + p.Month
		if _, done := out[k]; done {
			continue
		}
		m, _ := schemas.ParseMonth(p.Month)
		var b []byte
		switch table {
		case schemas.TableJobs:
			b = canonical[record.JobRow](t, v, table, p.Cluster, m)
		case schemas.TableUsage:
			b = canonical[record.UsageRow](t, v, table, p.Cluster, m)
		case schemas.TableFairshare:
			b = canonical[record.FairshareRow](t, v, table, p.Cluster, m)
		case schemas.TableAssociations:
			b = canonical[record.AssociationRow](t, v, table, p.Cluster, m)
		case schemas.TableRuns:
			b = canonical[record.RunRow](t, v, table, p.Cluster, m)
		case schemas.TablePriority:
			b = canonical[record.PriorityRow](t, v, table, p.Cluster, m)
		}
		out[k] = b
	}
	return out
}

// canonical reads a partition of v, whatever segments hold it, and
// returns its rows encoded as one file: equal rows, equal bytes.
func canonical[T any](t *testing.T, v *history.View, table, cluster string, m time.Time) []byte {
	t.Helper()
	var rows []T
	if err := v.ReadPartition(table, cluster, m, &rows); err != nil {
		t.Fatal(err)
	}
	b, err := history.EncodeRows(table, any(rows))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// partitionMonths lists the months of table's partitions of cluster, once
// each, in order.
func partitionMonths(t *testing.T, h *history.Store, table, cluster string) []time.Time {
	t.Helper()
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	for _, p := range m.Files(table, cluster) {
		mt, _ := schemas.ParseMonth(p.Month)
		if len(out) == 0 || !out[len(out)-1].Equal(mt) {
			out = append(out, mt)
		}
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d files, want %d (%v vs %v)", what, len(got), len(want), slices.Sorted(mapsKeys(got)), slices.Sorted(mapsKeys(want)))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s missing", what, k)
		} else if !bytes.Equal(g, w) {
			t.Errorf("%s: %s differs", what, k)
		}
	}
}

func mapsKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sameJobs fails the test unless the jobs tables of two histories of
// cluster synth hold the same rows but for their source file and line.
func sameJobs(t *testing.T, got, want string) {
	t.Helper()
	g, w := jobsWithoutSource(t, got, "synth"), jobsWithoutSource(t, want, "synth")
	if len(g) != len(w) {
		t.Fatalf("jobs: %d rows, want %d (one per job run)", len(g), len(w))
	}
	for i := range w {
		if !reflect.DeepEqual(g[i], w[i]) {
			t.Fatalf("jobs row %d:\n got %v\nwant %v", i, g[i], w[i])
		}
	}
}

// manifestOf reads the committed manifest of a history.
func manifestOf(t testing.TB, hist string) history.Manifest {
	t.Helper()
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// copyHistory copies a history, keeping its symbolic link; with link its
// data files and checkpoints are hard-linked (they are never written in
// place) and only the manifests copied (a commit empties an old
// generation's manifest before removing it).
func copyHistory(t testing.TB, src, dst string, link bool) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case fi.IsDir():
			return os.MkdirAll(to, 0o755)
		case fi.Name() == ".lock":
			return nil
		case link && fi.Name() != "manifest.json":
			return os.Link(p, to)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// jobsWithoutSource reads the jobs table with the source file and line
// blanked (the nightly files are other files than the single one).
func jobsWithoutSource(t *testing.T, hist, cluster string) []record.JobRow {
	t.Helper()
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	var all []record.JobRow
	for _, m := range partitionMonths(t, h, schemas.TableJobs, cluster) {
		var rows []record.JobRow
		if err := h.ReadPartition(schemas.TableJobs, cluster, m, &rows); err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			rows[i].SourceFile, rows[i].SourceLine = "", 0
		}
		all = append(all, rows...)
	}
	return all
}

// TestNightlyEqualsSingleRun: the cluster run night by night (21 nightly
// sacct files, jobs running across nights, a month boundary) gives the same
// usage and fair-share history, bit for bit, as one run over the whole
// window; the jobs tables agree but for source file and line.
func TestNightlyEqualsSingleRun(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 3000)
	single := t.TempDir()
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, filepath.Join(dir, "sacct.psv")), runOpts(single, end)); err != nil {
		t.Fatal(err)
	}
	nightly := t.TempDir()
	nights(t, dir, nightly, from, end)

	for _, table := range []string{schemas.TableUsage, schemas.TableFairshare, schemas.TableAssociations} {
		sameFiles(t, table, tableFiles(t, nightly, table), tableFiles(t, single, table))
	}
	sameJobs(t, nightly, single)
	// The last checkpoints hold the same usage state and running jobs.
	cp := "current/state/cluster=synth/checkpoint-20250210T000000Z.json"
	a, err1 := os.ReadFile(filepath.Join(nightly, cp))
	b, err2 := os.ReadFile(filepath.Join(single, cp))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !bytes.Equal(a, b) {
		t.Error("final checkpoints differ")
	}
	// There were jobs running across nights, or the test proves little.
	if !bytes.Contains(b, []byte(`"job_id_raw"`)) {
		t.Error("no job was running at the end; make the cluster busier")
	}
}

// TestRerunSameNightIsIdempotent: running a night twice leaves every
// table's rows (runs apart) and the checkpoints as after one run.
func TestRerunSameNightIsIdempotent(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 1500)
	hist := t.TempDir()
	nights(t, dir, hist, from, from.AddDate(0, 0, 3))
	before := historyState(t, hist)
	n := from.AddDate(0, 0, 3)
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, nightFile(dir, n)), runOpts(hist, n)); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "history", historyState(t, hist), before)
}

// snapshotDir reads every regular file under dir, and the target of every
// symbolic link.
func snapshotDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".lock" {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = []byte("-> " + target)
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withRequest rewrites a sacct file (Unix times) with the ReqCPUS and
// ReqNodes columns a site dumps for job priority: what each job asked
// for, here what it got.
func withRequest(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	hdr := strings.Split(lines[0], "|")
	cpus, nodes := slices.Index(hdr, "AllocCPUS"), slices.Index(hdr, "NNodes")
	var b bytes.Buffer
	b.WriteString(lines[0] + "|ReqCPUS|ReqNodes\n")
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		b.WriteString(l + "|" + f[cpus] + "|" + f[nodes] + "\n")
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sacctAsOfAll is sacctAsOf with every state, as a site dumps it for job
// priority (`sacct -s PD,R,CD,CA,…`): a job submitted by now but not
// started is PENDING, with no start, end or allocation; one cancelled
// while pending before now keeps its record.
func sacctAsOfAll(t *testing.T, full, out string, since, now time.Time) {
	t.Helper()
	sacctAsOf(t, full, out, since, now)
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	hdr := strings.Split(lines[0], "|")
	col := func(name string) int { return slices.Index(hdr, name) }
	var b bytes.Buffer
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		submit, err := strconv.ParseInt(f[col("Submit")], 10, 64)
		if err != nil || submit >= now.Unix() {
			continue
		}
		start, serr := strconv.ParseInt(f[col("Start")], 10, 64)
		end, eerr := strconv.ParseInt(f[col("End")], 10, 64)
		switch {
		case serr == nil && start < now.Unix():
			continue // started: sacctAsOf wrote it
		case serr != nil && eerr == nil && end < now.Unix():
			if end >= since.Unix() {
				b.WriteString(l + "\n") // cancelled while pending, in the window
			}
			continue
		}
		f[col("Start")], f[col("End")], f[col("State")], f[col("ExitCode")] = "Unknown", "Unknown", "PENDING", "0:0"
		f[col("Elapsed")], f[col("ElapsedRaw")], f[col("AllocCPUS")], f[col("AllocTRES")] = "00:00:00", "0", "0", ""
		b.WriteString(strings.Join(f, "|") + "\n")
	}
	o, err := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNightlyEqualsSingleRunPriority: with --priority, the cluster run
// night by night from dumps of every state (the jobs waiting at each
// night's end among them, with no start yet) gives the same priority
// table, bit for bit, as one run over the whole window.
func TestNightlyEqualsSingleRunPriority(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 1500)
	full := filepath.Join(dir, "sacct.psv")
	withRequest(t, full)
	opts := func(hist string, to time.Time) pipeline.Options {
		o := runOpts(hist, to)
		o.Priority = true
		return o
	}
	single := t.TempDir()
	sum, err := pipeline.Run(context.Background(), siteInputs(t, dir, full), opts(single, end))
	if err != nil {
		t.Fatal(err)
	}
	// The rows add up: the never-started ones are read and not charged.
	if in, res := sum.Ingest.Ingested, sum.Resolve; res.Rows != in || res.Charged+res.NotCharged() != in || res.ByReason[decay.ReasonNoStart] == 0 {
		t.Errorf("ingested %d; resolved %d, charged %d, not charged %v", in, res.Rows, res.Charged, res.ByReason)
	}
	nightly := t.TempDir()
	pending := 0
	for n := from.AddDate(0, 0, 1); !n.After(end); n = n.AddDate(0, 0, 1) {
		f := nightFile(dir, n)
		sacctAsOfAll(t, full, f, n.AddDate(0, 0, -1), n)
		if b, err := os.ReadFile(f); err == nil {
			pending += bytes.Count(b, []byte("|PENDING|"))
		}
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, f), opts(nightly, n)); err != nil {
			t.Fatalf("night %s: %v", n.Format(time.DateOnly), err)
		}
	}
	want := tableFiles(t, single, schemas.TablePriority)
	if len(want) == 0 || pending == 0 {
		t.Fatalf("%d priority partitions, %d pending records in the nights' dumps: make the cluster busier", len(want), pending)
	}
	t.Logf("%d pending records in the nights' dumps", pending)
	sameFiles(t, schemas.TablePriority, tableFiles(t, nightly, schemas.TablePriority), want)
}
