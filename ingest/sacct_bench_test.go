package ingest

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fairledger/fairledger/internal/synth"
)

// benchSacct returns a generated sacct file of about rows rows, cached in
// $FAIRLEDGER_BENCH_DIR (default: the OS temp dir) between runs.
func benchSacct(b *testing.B, jobs int) (string, int64) {
	b.Helper()
	dir := os.Getenv("FAIRLEDGER_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "fairledger-bench")
	}
	sub := filepath.Join(dir, "sacct-"+strconv.Itoa(jobs))
	path := filepath.Join(sub, "sacct.psv")
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		return path, fi.Size()
	}
	if _, err := synth.WriteDir(sub, synth.Options{Seed: 7, Jobs: jobs, Labs: 300}); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, fi.Size()
}

// cpuSeconds is the process's user+system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// peakRSSMiB is the process's peak resident set size so far.
func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}

// BenchmarkIngestSacct5M streams a generated sacct file of 5,000,000 rows
// (about 2 M allocation records plus their steps) into Arrow batches.
//
//	go test ./ingest -run x -bench IngestSacct5M -benchtime 1x
//
// (or `make bench`). It reports rows/s, MB/s, CPU ns per row and the peak
// RSS of the whole test process.
func BenchmarkIngestSacct5M(b *testing.B) {
	path, size := benchSacct(b, 1_950_000)
	b.ResetTimer()
	cpu0 := cpuSeconds()
	var st Stats
	for i := 0; i < b.N; i++ {
		var err error
		st, err = ReadSacct(path, SacctOptions{}, func(arrow.RecordBatch) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(st.Read)/sec, "rows/s")
	b.ReportMetric(float64(size)/1e6/sec, "MB/s")
	b.ReportMetric(float64(st.Read), "rows")
	// CPU time per row is steadier than wall time on a shared machine.
	b.ReportMetric((cpuSeconds()-cpu0)*1e9/float64(st.Read)/float64(b.N), "cpu-ns/row")
	b.ReportMetric(peakRSSMiB(), "peakRSS-MiB")
}
