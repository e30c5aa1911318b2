package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/query"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/internal/synth"
	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/schemas"
)

// TestLongSacctWindowNights: nights whose sacct files reach five days back
// (sacct -S now-5days) give jobs again after they left the hot segments
// (pipeline.HotWindow is three days); each is found through the settled
// segments' statistics and replaced, never duplicated, and the history
// equals one run over the whole window, as with one-day files.
func TestLongSacctWindowNights(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 2500)
	single := t.TempDir()
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, filepath.Join(dir, "sacct.psv")), runOpts(single, end)); err != nil {
		t.Fatal(err)
	}
	nightly := t.TempDir()
	for n := from.AddDate(0, 0, 1); !n.After(end); n = n.AddDate(0, 0, 1) {
		f := filepath.Join(dir, "long-"+n.Format(time.DateOnly)+".psv")
		sacctAsOf(t, filepath.Join(dir, "sacct.psv"), f, n.AddDate(0, 0, -5), n)
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, f), runOpts(nightly, n)); err != nil {
			t.Fatalf("night %s: %v", n.Format(time.DateOnly), err)
		}
	}
	for _, table := range []string{schemas.TableUsage, schemas.TableFairshare, schemas.TableAssociations} {
		sameFiles(t, table, tableFiles(t, nightly, table), tableFiles(t, single, table))
	}
	sameJobs(t, nightly, single)
}

// TestRecomputeKilledThenNight: a --from recompute killed at random
// moments leaves the history it started from (one commit publishes
// everything, the removal of the checkpoints it supersedes included), and
// the ordinary night after it gives the history the uninterrupted
// recompute and night give: the same usage, fair-share snapshots,
// association trees, jobs (but for their source file and line: the
// recompute reads another file than the nights did) and final checkpoint.
func TestRecomputeKilledThenNight(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir, from, end := nightlyCluster(t, 6000)
	recomputeTo := from.AddDate(0, 0, 12)
	full := filepath.Join(dir, "recompute.psv")
	sacctAsOf(t, filepath.Join(dir, "sacct.psv"), full, from, recomputeTo)
	recomputeFrom := from.AddDate(0, 0, 4)
	next := recomputeTo.AddDate(0, 0, 1)
	nightAfter := nightFile(dir, next)
	sacctAsOf(t, filepath.Join(dir, "sacct.psv"), nightAfter, recomputeTo, next)
	base := t.TempDir()
	nights(t, dir, base, from, recomputeTo)
	_ = end

	run := func(hist, sacct string, to time.Time, from time.Time) {
		t.Helper()
		opt := runOpts(hist, to)
		opt.From = from
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, sacct), opt); err != nil {
			t.Fatal(err)
		}
	}
	ref := t.TempDir()
	copyHistory(t, base, ref, false)
	run(ref, full, recomputeTo, recomputeFrom)
	run(ref, nightAfter, next, time.Time{})
	// The kill delays are spread over how long the recompute takes in a
	// child process, measured as the kills are made (process start
	// included, on a machine as loaded as then): the shorter of two runs,
	// since a first run on a loaded machine (CI's make test, every
	// package at once) once took so long that 5 of 6 kills came after the
	// recomputes had finished.
	var d time.Duration
	for i := range 2 {
		scratch := t.TempDir()
		copyHistory(t, base, scratch, false)
		took := timeChild(t, dir, scratch, full, recomputeTo, "FAIRLEDGER_CRASH_FROM="+strconv.FormatInt(recomputeFrom.Unix(), 10))
		if i == 0 || took < d {
			d = took
		}
	}
	want := computedState(t, ref, next)

	r := rand.New(rand.NewPCG(9, 3))
	// Six tries, and more (up to twelve) until three were killed before
	// they finished: a try whose kill came late checks nothing new.
	killed := 0
	for try := 0; try < 12 && (try < 6 || killed < 3); try++ {
		hist := t.TempDir()
		copyHistory(t, base, hist, false)
		delay := time.Duration(r.Float64() * 1.2 * float64(d))
		if crashChild(t, dir, hist, full, recomputeTo, delay, "FAIRLEDGER_CRASH_FROM="+strconv.FormatInt(recomputeFrom.Unix(), 10)) {
			killed++
		}
		checkReadable(t, hist)
		run(hist, nightAfter, next, time.Time{})
		sameFiles(t, fmt.Sprintf("try %d (killed after %s)", try, delay), computedState(t, hist, next), want)
	}
	if killed < 3 {
		t.Errorf("only %d of 12 recomputes were killed before they finished", killed)
	}
}

// computedState is what a history computed: its usage, fairshare and
// associations tables, its jobs without source file and line, and the
// checkpoint at to.
func computedState(t *testing.T, hist string, to time.Time) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, table := range []string{schemas.TableUsage, schemas.TableFairshare, schemas.TableAssociations} {
		for k, b := range tableFiles(t, hist, table) {
			m[table+"/"+k] = b
		}
	}
	jobs, err := history.EncodeRows(schemas.TableJobs, jobsWithoutSource(t, hist, "synth"))
	if err != nil {
		t.Fatal(err)
	}
	m["jobs"] = jobs
	cp := "current/state/cluster=synth/checkpoint-" + to.UTC().Format("20060102T150405Z") + ".json"
	if m[cp], err = os.ReadFile(filepath.Join(hist, cp)); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRunRefusesDamagedHistory: a run refuses to build on a history whose
// files do not match its manifest — a truncated file anywhere, a flipped
// byte in a file the night reads (a hot jobs segment) — naming the file,
// and leaves the history as it was.
func TestRunRefusesDamagedHistory(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 1500)
	hist := t.TempDir()
	nights(t, dir, hist, from, from.AddDate(0, 0, 6))
	n := from.AddDate(0, 0, 7)
	sacctAsOf(t, filepath.Join(dir, "sacct.psv"), nightFile(dir, n), n.AddDate(0, 0, -1), n)
	m := manifestOf(t, hist)
	var hot, settled history.Partition
	for _, p := range m.Files(schemas.TableJobs, "synth") {
		if p.Hot {
			hot = p
		} else {
			settled = p
		}
	}
	if hot.Path == "" || settled.Path == "" {
		t.Fatalf("want a hot and a settled jobs segment, have %v", m.Files(schemas.TableJobs, "synth"))
	}
	for _, c := range []struct {
		name   string
		p      history.Partition
		damage func(b []byte) []byte
	}{
		{"flipped bytes in a hot segment", hot, func(b []byte) []byte {
			for i := len(b) / 2; i < len(b)/2+16; i++ {
				b[i] ^= 0xff
			}
			return b
		}},
		{"truncated settled segment", settled, func(b []byte) []byte { return b[:len(b)-100] }},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(hist, "current", filepath.FromSlash(c.p.Path))
			good, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			// The file is a hard link shared by generations: write a new
			// inode in its place, as a disk error would change the data.
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, c.damage(append([]byte(nil), good...)), 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshotDir(t, hist)
			_, err = pipeline.Run(context.Background(), siteInputs(t, dir, nightFile(dir, n)), runOpts(hist, n))
			var ce *history.CorruptError
			if !errors.As(err, &ce) || ce.Path != c.p.Path {
				t.Fatalf("run on a damaged history: %v, want a CorruptError naming %s", err, c.p.Path)
			}
			sameFiles(t, "history after the refused run", snapshotDir(t, hist), before)
			if err := os.WriteFile(file, good, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, nightFile(dir, n)), runOpts(hist, n)); err != nil {
		t.Fatalf("run after the repair: %v", err)
	}
}

// TestNightsFileCount: three weeks of nights leave a bounded number of
// files — compaction merges a partition's settled segments of a size
// class once it has four, so after a run no partition holds more than
// three of one class, and the history far fewer files than runs × tables.
func TestNightsFileCount(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 1500)
	hist := t.TempDir()
	nights(t, dir, hist, from, from.AddDate(0, 0, 21))
	m := manifestOf(t, hist)
	type class struct{ table, month string }
	perClass := map[class]map[int]int{}
	data := 0
	for _, p := range m.Partitions {
		if p.Table == history.TableState {
			continue
		}
		data++
		if p.Hot {
			continue
		}
		k := class{p.Table, p.Month}
		if perClass[k] == nil {
			perClass[k] = map[int]int{}
		}
		c := 0
		for r := p.Rows; r >= 4; r /= 4 {
			c++
		}
		perClass[k][c]++
		if perClass[k][c] > 3 {
			t.Errorf("%s %s: %d settled segments of %d to %d rows", p.Table, p.Month, perClass[k][c], 1<<(2*c), 1<<(2*c+2))
		}
	}
	// 21 nights write 21 runs files and, each, a fairshare, an
	// associations, a jobs and a usage segment: over 105 files without
	// compaction. With it, a month of one table holds at most 3 segments
	// of each class reached (1-row runs files reach class 2 in 21 nights)
	// and one hot one.
	if data > 50 {
		t.Errorf("%d data files after 21 nights", data)
	}
	t.Logf("%d data files after 21 nights", data)
}

// TestLateJobUsage: a job missing from the files of the nights it ran in
// and given for the first time a week later, after it left the hot
// segments, is not charged to fair share (it ended before the checkpoint:
// outside the window), but it joins the jobs table and its usage days are
// recomputed with every other job of those days, read from the settled
// segments: the usage and jobs tables equal one run's over the whole
// window.
func TestLateJobUsage(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 2000)
	full := filepath.Join(dir, "sacct.psv")
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "|") {
		col[h] = i
	}
	// The late job: a finished job that ran a few hours on the fourth day.
	day4 := from.AddDate(0, 0, 3).Unix()
	var late string
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		s, err1 := strconv.ParseInt(f[col["Start"]], 10, 64)
		e, err2 := strconv.ParseInt(f[col["End"]], 10, 64)
		if err1 == nil && err2 == nil && s > day4 && e < day4+86400 && e-s > 3600 && f[col["State"]] == "COMPLETED" {
			late = l
			break
		}
	}
	if late == "" {
		t.Fatal("no job for the test")
	}
	seen := from.AddDate(0, 0, 11)
	hist := t.TempDir()
	for n := from.AddDate(0, 0, 1); !n.After(end); n = n.AddDate(0, 0, 1) {
		f := nightFile(dir, n)
		sacctAsOf(t, full, f, n.AddDate(0, 0, -1), n)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.Replace(b, []byte(late+"\n"), nil, 1)
		if n.Equal(seen) {
			b = append(b, late+"\n"...)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sum, err := pipeline.Run(context.Background(), siteInputs(t, dir, f), runOpts(hist, n))
		if err != nil {
			t.Fatalf("night %s: %v", n.Format(time.DateOnly), err)
		}
		if n.Equal(seen) && sum.Decay.JobsOutside < 1 {
			t.Errorf("night %s: %d jobs outside the window, want the late one among them", n.Format(time.DateOnly), sum.Decay.JobsOutside)
		}
	}
	single := t.TempDir()
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, full), runOpts(single, end)); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "usage", tableFiles(t, hist, schemas.TableUsage), tableFiles(t, single, schemas.TableUsage))
	sameJobs(t, hist, single)
}

// TestRunConvertsOldHistory: a history written by the release before the
// generation store (testdata/history-v1: two runs of a synthetic cluster,
// see its README) is converted by the next run, which then continues it:
// every table and the final checkpoint equal those of a history the
// current code wrote with the same runs.
func TestRunConvertsOldHistory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := synth.WriteDir(dir, synth.Options{Seed: 5, Jobs: 3000, Labs: 20, Cluster: "synth", Location: time.UTC}); err != nil {
		t.Fatal(err)
	}
	sacct := filepath.Join(dir, "sacct.psv")
	old := t.TempDir()
	copyHistory(t, filepath.Join("..", "testdata", "history-v1"), old, false)
	fresh := t.TempDir()
	for _, to := range []string{"2025-02-15", "2025-04-05"} {
		at, _ := time.Parse(time.DateOnly, to)
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, sacct), runOpts(fresh, at)); err != nil {
			t.Fatal(err)
		}
	}
	next := time.Date(2025, 4, 6, 0, 0, 0, 0, time.UTC)
	dry := runOpts(old, next)
	dry.DryRun = true
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, sacct), dry); !errors.Is(err, history.ErrOldLayout) {
		t.Fatalf("dry run on the old layout: %v, want ErrOldLayout", err)
	}
	for _, h := range []string{old, fresh} {
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, sacct), runOpts(h, next)); err != nil {
			t.Fatalf("%s: %v", h, err)
		}
	}
	if _, err := os.Stat(filepath.Join(old, "manifest.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the old manifest is still there: %v", err)
	}
	// history-v1's snapshots hold TRESRunMins as the code of its time
	// computed them (the closed form at each snapshot's tick), no
	// assoc_line (it came later), and EffectvUsage and LevelFS from double
	// arithmetic (not slurmctld's long double), which the converted history
	// keeps: its fairshare cells are compared without TRESRunMins, and
	// without those three up to history-v1's last run, every other table
	// and column exactly.
	last := time.Date(2025, 4, 5, 0, 0, 0, 0, time.UTC)
	got, want := computedState(t, old, next), computedState(t, fresh, next)
	for k, b := range fairshareWithoutTRESRun(t, old, last) {
		got[k] = b
	}
	for k, b := range fairshareWithoutTRESRun(t, fresh, last) {
		want[k] = b
	}
	sameFiles(t, "converted and continued", got, want)
}

// fairshareWithoutTRESRun returns the fairshare partitions of hist as
// computedState keys them, with every tres_run_mins cell cleared, and the
// assoc_line, effectv_usage and level_fs of the snapshots up to noLineTo.
func fairshareWithoutTRESRun(t *testing.T, hist string, noLineTo time.Time) map[string][]byte {
	t.Helper()
	v := openView(t, hist)
	defer v.Close()
	out := map[string][]byte{}
	for _, p := range v.Files(schemas.TableFairshare, "") {
		k := schemas.TableFairshare + "/cluster=" + p.Cluster + "/month=" + p.Month
		if _, done := out[k]; done {
			continue
		}
		m, _ := schemas.ParseMonth(p.Month)
		var rows []record.FairshareRow
		if err := v.ReadPartition(schemas.TableFairshare, p.Cluster, m, &rows); err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			rows[i].TRESRunMins = nil
			if !rows[i].Snapshot.After(noLineTo) {
				rows[i].AssocLine = nil
				// Computed then with double arithmetic, where
				// slurmctld's long double can differ in the last bit
				// (fairshare/longdouble.go).
				rows[i].EffectvUsage, rows[i].LevelFS = nil, nil
			}
		}
		b, err := history.EncodeRows(schemas.TableFairshare, any(rows))
		if err != nil {
			t.Fatal(err)
		}
		out[k] = b
	}
	return out
}

// TestRecomputeRebuildsRemovedFiles: when damaged files are removed from
// the history (what fairledger verify --repair does: one commit without
// them), a recompute from the newest checkpoint at or before their
// earliest row, with the nights' sacct files from then on, rebuilds them:
// the usage, snapshots, association trees, jobs and final checkpoint equal
// those of the undamaged history.
func TestRecomputeRebuildsRemovedFiles(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 2500)
	want := t.TempDir()
	nights(t, dir, want, from, end)
	// January's files reach back to the first run (no checkpoint before
	// them: the rerun starts at the origin); February's have checkpoints
	// before them.
	for _, month := range []string{"2025-01", "2025-02"} {
		t.Run(month, func(t *testing.T) { rebuildRemoved(t, dir, want, month, end) })
	}
}

func rebuildRemoved(t *testing.T, dir, want, month string, last time.Time) {
	hist := t.TempDir()
	copyHistory(t, want, hist, false)
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	// One settled file of each kind of the month.
	var earliest int64 = math.MaxInt64
	removed := 0
	for _, table := range []string{schemas.TableJobs, schemas.TableUsage, schemas.TableFairshare, schemas.TableAssociations} {
		for _, p := range tx.Base().Files(table, "synth") {
			if p.Month == month && !p.Hot {
				tx.Remove(p)
				earliest = min(earliest, p.MinTime)
				removed++
				break
			}
		}
	}
	if removed != 4 {
		t.Fatalf("removed %d files, want one of each of the 4 tables", removed)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// The newest checkpoint before the earliest removed row (a run
	// resuming at a checkpoint writes snapshots after its To, not at it),
	// or, when none is, the history's origin (where its first run
	// started).
	var c time.Time
	var origin int64
	for _, name := range mustStates(t, h) {
		b, err := h.ReadState("synth", name)
		if err != nil {
			t.Fatal(err)
		}
		var cp struct{ To, Origin int64 }
		if err := json.Unmarshal(b, &cp); err != nil {
			t.Fatal(err)
		}
		origin = cp.Origin
		if cp.To < earliest {
			c = time.Unix(cp.To, 0).UTC()
		}
	}
	if c.IsZero() {
		c = time.Unix(origin, 0).UTC()
	}
	var files []string
	for n := c.Truncate(24*time.Hour).AddDate(0, 0, 1); !n.After(last); n = n.AddDate(0, 0, 1) {
		files = append(files, nightFile(dir, n))
	}
	opt := runOpts(hist, last)
	opt.From = c
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, files...), opt); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "rebuilt", computedState(t, hist, last), computedState(t, want, last))
}

// mustStates lists the checkpoints of cluster synth, oldest first.
func mustStates(t *testing.T, h *history.Store) []string {
	t.Helper()
	names, err := h.States("synth")
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(names, func(n string) bool { return !history.IsCheckpoint(n) })
}

// TestReadersDuringNights: `sql`-style readers (a DuckDB session over the
// pinned generation) and sshare-style readers (View, ReadPartition) query
// in a loop while nightly runs commit: no query fails, and every answer
// is one a committed generation gives — the number of snapshots never
// goes back and always matches the generation the reader pinned.
func TestReadersDuringNights(t *testing.T) {
	dir, from, _ := nightlyCluster(t, 1500)
	hist := t.TempDir()
	nights(t, dir, hist, from, from.AddDate(0, 0, 1)) // a first generation to read
	stop := make(chan struct{})
	type result struct {
		queries, failures int
		last              int64
		err               error
	}
	done := make(chan result)
	go func() {
		var r result
		h := &history.Store{Dir: hist}
		for {
			select {
			case <-stop:
				done <- r
				return
			default:
			}
			db, err := query.OpenDuckDB(context.Background(), hist)
			if err != nil {
				r.failures++
				r.err = err
				continue
			}
			res, err := db.Query(context.Background(), "SELECT count(DISTINCT snapshot) FROM fairshare")
			gen := db.Generation
			db.Close()
			r.queries++
			if err != nil {
				r.failures++
				r.err = err
				continue
			}
			n := res.Rows[0][0].(int64)
			if n < r.last {
				r.failures++
				r.err = fmt.Errorf("generation %d: %d snapshots after %d", gen, n, r.last)
			}
			r.last = n
			v, err := h.View()
			if err == nil {
				var rows []record.FairshareRow
				err = v.ReadPartition(schemas.TableFairshare, "synth", from, &rows)
				v.Close()
			}
			if err != nil {
				r.failures++
				r.err = err
			}
		}
	}()
	nights(t, dir, hist, from.AddDate(0, 0, 1), from.AddDate(0, 0, 20))
	close(stop)
	r := <-done
	if r.failures > 0 {
		t.Fatalf("%d of %d reads failed while runs committed; last: %v", r.failures, r.queries, r.err)
	}
	if r.queries < 10 {
		t.Errorf("only %d queries ran during the nights", r.queries)
	}
	if r.last < 2 {
		t.Errorf("the readers saw %d snapshots at most", r.last)
	}
	t.Logf("%d queries during 19 nights, 0 failures", r.queries)
}
