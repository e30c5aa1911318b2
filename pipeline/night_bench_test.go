package pipeline_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/internal/synth"
	"github.com/fairledger/fairledger/pipeline"
)

// The nightly benchmarks run each night (and the backfill before it) in a
// child process, this test binary running TestBenchChild, so that every
// figure has its own peak RSS; `fairledger run` sets the same memory limit
// (pipeline.DefaultMemoryLimit).

// nightYear is the cluster of the nightly benchmarks: 5,000,000 jobs a
// year with their steps and Unix times, as `fairledger gen --jobs 5000000
// --from 2025-01-01 --to 2026-01-01 --unix-times` writes it (12.9 M sacct
// rows, 2.6 GB); years > 1 spreads 5 M jobs a year over more years.
func nightYear(years int) synth.Options {
	return synth.Options{Seed: 1, Jobs: 5_000_000 * years, From: time.Date(2026-years, 1, 1, 0, 0, 0, 0, time.UTC),
		To: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), UnixTimes: true}
}

// BenchmarkNightAfterYear5M is issue 22's night: the 5 M-job year
// backfilled to 2025-12-30 (the backfill is measured once, when its
// history is not cached yet in $FAIRLEDGER_BENCH_DIR), then the night to
// 2025-12-31 with the rows of the last two days as `sacct -S now-2days`
// gives them at Dec 31 00:00. Each iteration copies the backfilled history
// (not timed) and runs the night.
//
//	go test ./pipeline -run '^$' -bench NightAfterYear5M -benchtime 3x
func BenchmarkNightAfterYear5M(b *testing.B) { benchNight(b, 1) }

// BenchmarkNightAfterTwoYears5M is the same night on a two-year history
// (10 M jobs): a night's cost does not grow with the history.
func BenchmarkNightAfterTwoYears5M(b *testing.B) { benchNight(b, 2) }

func benchNight(b *testing.B, years int) {
	files := benchCluster(b, nightYear(years))
	nightTo := time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
	backfill := cachedBackfill(b, files, nightTo.AddDate(0, 0, -1), years)
	night := filepath.Join(filepath.Dir(backfill), "night-20251231.psv")
	if _, err := os.Stat(night); err != nil {
		writeNights(b, files.Sacct, map[string][2]time.Time{night: {nightTo.AddDate(0, 0, -2), nightTo}})
	}
	measureNight(b, files, backfill, night, nightTo)
}

// measureNight runs the night of the sacct file to to on a copy of the
// history backfill (the copy not timed) b.N times, and reports the last
// run's wall and CPU time, sacct rows/s and peak RSS.
func measureNight(b *testing.B, files synth.Files, backfill, sacct string, to time.Time) {
	var r childRun
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		hist := filepath.Join(b.TempDir(), "h")
		copyHistory(b, backfill, hist, true)
		b.StartTimer()
		r = runChild(b, files.Dir, hist, sacct, to, time.Time{})
	}
	b.ReportMetric(r.wall.Seconds(), "night-s")
	b.ReportMetric(r.cpu.Seconds(), "night-CPU-s")
	b.ReportMetric(float64(r.rows)/r.wall.Seconds(), "night-rows/s")
	b.ReportMetric(r.rssMiB, "night-peak-RSS-MiB")
}

// BenchmarkThirtyNights5M runs the 30 nights of December after a backfill
// of the 5 M-job year to Dec 1, each with its two-day file, and reports
// the first and the 30th night's time and the history's data files after
// each: a night's cost stays flat and the file count bounded.
//
//	go test ./pipeline -run '^$' -bench ThirtyNights5M -benchtime 1x
func BenchmarkThirtyNights5M(b *testing.B) {
	files := benchCluster(b, nightYear(1))
	first := time.Date(2025, 12, 2, 0, 0, 0, 0, time.UTC)
	backfill := cachedBackfill(b, files, first.AddDate(0, 0, -1), 1)
	dir := filepath.Dir(backfill)
	want := map[string][2]time.Time{}
	for n := first; n.Day() != 1 || n.Equal(first); n = n.AddDate(0, 0, 1) {
		f := filepath.Join(dir, "night-"+n.Format("20060102")+".psv")
		if _, err := os.Stat(f); err != nil {
			want[f] = [2]time.Time{n.AddDate(0, 0, -2), n}
		}
		if n.Day() == 31 {
			break
		}
	}
	writeNights(b, files.Sacct, want)
	var firstNight, lastNight childRun
	var filesFirst, filesLast int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		hist := filepath.Join(b.TempDir(), "h")
		copyHistory(b, backfill, hist, true)
		b.StartTimer()
		for k := 0; k < 30; k++ {
			n := first.AddDate(0, 0, k)
			r := runChild(b, files.Dir, hist, filepath.Join(dir, "night-"+n.Format("20060102")+".psv"), n, time.Time{})
			switch k {
			case 0:
				firstNight, filesFirst = r, dataFiles(b, hist)
			case 29:
				lastNight, filesLast = r, dataFiles(b, hist)
			}
		}
	}
	b.ReportMetric(firstNight.wall.Seconds(), "night1-s")
	b.ReportMetric(lastNight.wall.Seconds(), "night30-s")
	b.ReportMetric(lastNight.rssMiB, "night30-peak-RSS-MiB")
	b.ReportMetric(float64(filesFirst), "files-after-night1")
	b.ReportMetric(float64(filesLast), "files-after-night30")
}

// benchCluster returns the generated cluster o, cached.
func benchCluster(b *testing.B, o synth.Options) synth.Files {
	dir := os.Getenv("FAIRLEDGER_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "fairledger-bench")
	}
	files, err := synth.Cached(dir, o)
	if err != nil {
		b.Fatal(err)
	}
	return files
}

// cachedBackfill returns the history of files backfilled to to, made (and
// measured) the first time.
func cachedBackfill(b *testing.B, files synth.Files, to time.Time, years int) string {
	hist := filepath.Join(files.Dir, "backfill-"+to.Format("20060102"))
	if _, err := os.Stat(filepath.Join(hist, "current")); err == nil {
		return hist
	}
	os.RemoveAll(hist)
	r := runChild(b, files.Dir, hist, files.Sacct, to, time.Time{})
	b.Logf("backfill of %d year(s) to %s: %.1f s wall, %.1f CPU-s, %.0f sacct rows/s, peak RSS %.0f MiB",
		years, to.Format(time.DateOnly), r.wall.Seconds(), r.cpu.Seconds(), float64(r.rows)/r.wall.Seconds(), r.rssMiB)
	b.ReportMetric(r.wall.Seconds(), "backfill-s")
	b.ReportMetric(r.rssMiB, "backfill-peak-RSS-MiB")
	return hist
}

// writeNights writes, in one pass over sacct, each night file of nights
// (path → [since, until)): the header and the rows that started before
// until and ended at or after since or not at all, as issue 22's awk
// filter cuts them.
func writeNights(b *testing.B, sacct string, nights map[string][2]time.Time) {
	if len(nights) == 0 {
		return
	}
	in, err := os.Open(sacct)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	type out struct {
		w          *bufio.Writer
		f          *os.File
		since, end int64
	}
	var outs []out
	for p, w := range nights {
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		outs = append(outs, out{bufio.NewWriter(f), f, w[0].Unix(), w[1].Unix()})
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	startCol, endCol := -1, -1
	for first := true; sc.Scan(); first = false {
		line := sc.Text()
		f := strings.Split(line, "|")
		if first {
			for i, h := range f {
				switch h {
				case "Start":
					startCol = i
				case "End":
					endCol = i
				}
			}
			for _, o := range outs {
				o.w.WriteString(line + "\n")
			}
			continue
		}
		start, err := strconv.ParseInt(f[startCol], 10, 64)
		if err != nil {
			continue
		}
		end, endErr := strconv.ParseInt(f[endCol], 10, 64)
		for _, o := range outs {
			if start < o.end && (endErr != nil || end >= o.since) {
				o.w.WriteString(line + "\n")
			}
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	for _, o := range outs {
		if err := o.w.Flush(); err != nil {
			b.Fatal(err)
		}
		o.f.Close()
	}
}

// childRun is what a run in a child process took.
type childRun struct {
	wall, cpu time.Duration
	rssMiB    float64
	rows      int64
}

// runChild runs one night in a child process (TestBenchChild) and
// measures it.
func runChild(b *testing.B, dir, hist, sacct string, to, from time.Time) childRun {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FAIRLEDGER_BENCH_CHILD_DIR="+dir, "FAIRLEDGER_BENCH_CHILD_HISTORY="+hist,
		"FAIRLEDGER_BENCH_CHILD_SACCT="+sacct, "FAIRLEDGER_BENCH_CHILD_TO="+strconv.FormatInt(to.Unix(), 10))
	if !from.IsZero() {
		cmd.Env = append(cmd.Env, "FAIRLEDGER_BENCH_CHILD_FROM="+strconv.FormatInt(from.Unix(), 10))
	}
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(t0)
	if err != nil {
		b.Fatalf("run into %s: %v\n%s", hist, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := childRun{wall: wall, rssMiB: float64(ru.Maxrss) / 1024,
		cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	for _, l := range strings.Split(string(out), "\n") {
		if s, ok := strings.CutPrefix(l, "rows "); ok {
			r.rows, _ = strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		}
	}
	return r
}

// TestBenchChild is the process the nightly benchmarks run: one run
// described by its environment. It is not a test on its own.
func TestBenchChild(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("FAIRLEDGER_BENCH_CHILD_DIR")
	if dir == "" {
		t.Skip("run by the nightly benchmarks")
	}
	to, err := strconv.ParseInt(os.Getenv("FAIRLEDGER_BENCH_CHILD_TO"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	opt := runOpts(os.Getenv("FAIRLEDGER_BENCH_CHILD_HISTORY"), time.Unix(to, 0))
	if from, err := strconv.ParseInt(os.Getenv("FAIRLEDGER_BENCH_CHILD_FROM"), 10, 64); err == nil {
		opt.From = time.Unix(from, 0)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		setMemoryLimit()
	}
	sum, err := pipeline.Run(context.Background(), siteInputs(t, dir, os.Getenv("FAIRLEDGER_BENCH_CHILD_SACCT")), opt)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("rows %d\n", sum.Ingest.Read)
}

// setMemoryLimit sets the soft memory limit `fairledger run` sets.
func setMemoryLimit() { debug.SetMemoryLimit(pipeline.DefaultMemoryLimit) }

// dataFiles counts the committed data files of a history.
func dataFiles(b *testing.B, hist string) int {
	m := manifestOf(b, hist)
	n := 0
	for _, p := range m.Partitions {
		if p.Table != history.TableState {
			n++
		}
	}
	return n
}
