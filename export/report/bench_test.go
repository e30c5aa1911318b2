package report

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/fairledger/fairledger/export/query"
	"github.com/fairledger/fairledger/internal/synth"
	"github.com/fairledger/fairledger/pipeline"
)

// benchHistory returns the history of the benchmarks' year, synth.Year5M
// (5,000,000 jobs, 300 labs, 366 daily snapshots), as `fairledger run`
// writes it. The generated inputs and the history are kept in
// $FAIRLEDGER_BENCH_DIR (default: a fairledger-bench directory in the temp
// dir) and made only once; FAIRLEDGER_BENCH_JOBS makes a smaller year.
func benchHistory(b *testing.B) (string, int) {
	b.Helper()
	base := os.Getenv("FAIRLEDGER_BENCH_DIR")
	if base == "" {
		base = filepath.Join(os.TempDir(), "fairledger-bench")
	}
	opt := synth.Year5M()
	if n, err := strconv.Atoi(os.Getenv("FAIRLEDGER_BENCH_JOBS")); err == nil && n > 0 {
		opt.Jobs = n
	}
	name, err := synth.CacheName(opt)
	if err != nil {
		b.Fatal(err)
	}
	hist := filepath.Join(base, "report-history-"+name)
	if _, err := os.Stat(filepath.Join(hist, ".complete")); err == nil {
		return hist, opt.Jobs
	}
	b.Logf("generating the %d-job year and running the pipeline into %s (once)", opt.Jobs, hist)
	files, err := synth.Cached(base, opt)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.RemoveAll(hist); err != nil {
		b.Fatal(err)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(pipeline.DefaultMemoryLimit)) // as `fairledger run` does
	if err := runPipeline(files.Dir, files.Sacct, hist, opt.To, false); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hist, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return hist, opt.Jobs
}

// BenchmarkReportAllAccounts writes the HTML report of every lab of the
// benchmarks' 5 M-job year (300 labs, 366 daily snapshots): one DuckDB
// session, LoadShared, then Reports, which reads the labs' rows a batch at
// a time, as `fairledger report --all-accounts` does (minus writing the
// files).
//
//	FAIRLEDGER_BENCH_DIR=$PWD/.bench go test ./export/report -run '^$' -bench ReportAllAccounts -benchtime 3x -benchmem
func BenchmarkReportAllAccounts(b *testing.B) {
	dir, jobs := benchHistory(b)
	ctx := context.Background()
	labs := 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		db, err := query.OpenDuckDB(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		d, err := LoadShared(ctx, db, Options{})
		if err != nil {
			b.Fatal(err)
		}
		labs = len(d.Labs())
		err = d.Reports(ctx, db, d.Labs(), func(_ int, r *Report) error { return r.WriteHTML(io.Discard) })
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
	b.StopTimer()
	if labs == 0 {
		b.Fatal("no labs")
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/all-labs")
	b.ReportMetric(float64(labs), "labs")
	b.ReportMetric(float64(jobs)/sec, "jobs/s")
}
