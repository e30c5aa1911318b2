package pipeline_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkFloodNight2M is a night that would blow up a night sized by its
// rows: the 5 M-job year backfilled to 2025-12-30 (cached, as for
// BenchmarkNightAfterYear5M), then the night to 2025-12-31 with the
// two-day file and 2,000,000 more one-second jobs of one user
// (zhang_lab/lrahman, spread over Dec 30) — a runaway array, or a user's
// script in a loop. It reports the night's wall and CPU time, sacct rows/s
// and the child process's peak RSS.
//
//	go test ./pipeline -run '^$' -bench 'FloodNight2M$' -benchtime 1x
func BenchmarkFloodNight2M(b *testing.B) { benchFlood(b, 2_000_000) }

// BenchmarkFloodNight10M is BenchmarkFloodNight2M with 10,000,000 jobs in
// the night: its time should grow linearly from the 2 M one, its memory
// not at all.
func BenchmarkFloodNight10M(b *testing.B) { benchFlood(b, 10_000_000) }

func benchFlood(b *testing.B, n int) {
	files := benchCluster(b, nightYear(1))
	nightTo := time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
	backfill := cachedBackfill(b, files, nightTo.AddDate(0, 0, -1), 1)
	dir := filepath.Dir(backfill)
	night := filepath.Join(dir, "night-20251231.psv")
	if _, err := os.Stat(night); err != nil {
		writeNights(b, files.Sacct, map[string][2]time.Time{night: {nightTo.AddDate(0, 0, -2), nightTo}})
	}
	flood := filepath.Join(dir, fmt.Sprintf("flood-%d-20251231.psv", n))
	if _, err := os.Stat(flood); err != nil {
		if err := writeFlood(night, flood, n, nightTo.AddDate(0, 0, -1)); err != nil {
			b.Fatal(err)
		}
	}
	measureNight(b, files, backfill, flood, nightTo)
}

// writeFlood writes the night file night followed by n one-second jobs of
// zhang_lab/lrahman spread evenly over the day from day on, with job ids
// from 900,000,000 (above any the generator writes), to flood.
func writeFlood(night, flood string, n int, day time.Time) (err error) {
	in, err := os.Open(night)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.Create(flood + ".tmp")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(flood+".tmp", flood)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := io.Copy(w, in); err != nil {
		return err
	}
	// The columns of the generator's header (JobID|JobIDRaw|Cluster|
	// Partition|QOS|Account|User|Submit|Eligible|Start|End|Elapsed|
	// ElapsedRaw|Suspended|State|ExitCode|NNodes|AllocCPUS|ReqTRES|
	// AllocTRES|Timelimit|JobName).
	const tres = "billing=1,cpu=1,mem=1000M,node=1"
	var line []byte
	for i := range n {
		id := strconv.Itoa(900_000_000 + i)
		start := strconv.FormatInt(day.Unix()+int64(i)*86400/int64(n), 10)
		end := strconv.FormatInt(day.Unix()+int64(i)*86400/int64(n)+1, 10)
		line = append(line[:0], id...)
		line = append(line, '|')
		line = append(line, id...)
		line = append(line, "|synth|shared|normal|zhang_lab|lrahman|"...)
		for range 3 { // Submit, Eligible, Start
			line = append(line, start...)
			line = append(line, '|')
		}
		line = append(line, end...)
		line = append(line, "|00:00:01|1|00:00:00|COMPLETED|0:0|1|1|"+tres+"|"+tres+"|00:10:00|flood\n"...)
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return w.Flush()
}

// BenchmarkBackfillYear5M is the backfill of the 5 M-job year (nightYear,
// 12.9 M sacct rows) from scratch to 2026-01-01 in a child process, as
// `fairledger run` makes it, under its memory limit: wall and CPU time,
// sacct rows/s and the child's own peak RSS (BenchmarkPipelineYear5M's
// RSS is the test process's, with whatever ran before it).
//
//	go test ./pipeline -run '^$' -bench 'BackfillYear5M$' -benchtime 1x
func BenchmarkBackfillYear5M(b *testing.B) { benchBackfill(b, 1) }

// BenchmarkBackfillYear20M is BenchmarkBackfillYear5M with 20,000,000
// jobs in the same year (51 M sacct rows, about 10 GB generated once into
// $FAIRLEDGER_BENCH_DIR): time should grow 4× from the 5 M year, memory
// not at all.
func BenchmarkBackfillYear20M(b *testing.B) { benchBackfill(b, 4) }

func benchBackfill(b *testing.B, scale int) {
	o := nightYear(1)
	o.Jobs *= scale
	files := benchCluster(b, o)
	var r childRun
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r = runChild(b, files.Dir, filepath.Join(b.TempDir(), "h"), files.Sacct, o.To, time.Time{})
	}
	b.ReportMetric(r.wall.Seconds(), "backfill-s")
	b.ReportMetric(r.cpu.Seconds(), "backfill-CPU-s")
	b.ReportMetric(float64(r.rows)/r.wall.Seconds(), "sacct-rows/s")
	b.ReportMetric(r.rssMiB, "backfill-peak-RSS-MiB")
}
