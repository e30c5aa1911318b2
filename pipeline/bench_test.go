package pipeline_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/fairledger/fairledger/internal/synth"
	"github.com/fairledger/fairledger/pipeline"
)

// BenchmarkPipelineYear5M is the whole nightly job on a generated year of
// 5,000,000 jobs (300 labs, synth.Year5M, cached in $FAIRLEDGER_BENCH_DIR):
// ingest → billing → decay (105,408 ticks) → 366 daily fair-share snapshots →
// the Parquet history, from scratch, under the soft memory limit `fairledger
// run` sets (pipeline.DefaultMemoryLimit). It reports wall time, sacct rows/s,
// the history's size and the peak RSS of the test process. The yardstick,
// the same file through one DuckDB statement, is
// BenchmarkDuckDBYardstickYear5M in package export/query (same `make bench`).
//
//	go test ./pipeline -run '^$' -bench 'PipelineYear5M$' -benchtime 1x
func BenchmarkPipelineYear5M(b *testing.B) { benchYear5M(b, false) }

// BenchmarkPipelineYear5MDryRun is BenchmarkPipelineYear5M as a dry run
// (Options.DryRun): the same ingest, billing, decay and fair-share
// snapshots, with no history written and no input hashed. It is the part
// of the pipeline that compares like with like with the DuckDB yardstick,
// which writes no history either. Its peak RSS is the test process's: run
// it alone for its own.
//
//	go test ./pipeline -run '^$' -bench PipelineYear5MDryRun -benchtime 1x
func BenchmarkPipelineYear5MDryRun(b *testing.B) { benchYear5M(b, true) }

// BenchmarkPipelineYear5MPriority is BenchmarkPipelineYear5M with job
// priority (Options.Priority): the waiting jobs of every daily snapshot
// and their factors into the priority table.
//
//	go test ./pipeline -run '^$' -bench PipelineYear5MPriority -benchtime 1x
func BenchmarkPipelineYear5MPriority(b *testing.B) { benchYear5MWith(b, false, true) }

func benchYear5M(b *testing.B, dry bool) { benchYear5MWith(b, dry, false) }

func benchYear5MWith(b *testing.B, dry, prio bool) {
	dir := os.Getenv("FAIRLEDGER_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "fairledger-bench")
	}
	opt := synth.Year5M()
	if n, err := strconv.Atoi(os.Getenv("FAIRLEDGER_BENCH_JOBS")); err == nil && n > 0 {
		opt.Jobs = n // a smaller year, for profiling
	}
	files, err := synth.Cached(dir, opt)
	if err != nil {
		b.Fatal(err)
	}
	hist := filepath.Join(dir, "history-year5m")
	if os.Getenv("GOMEMLIMIT") == "" {
		lim := int64(pipeline.DefaultMemoryLimit)
		if prio {
			lim = pipeline.DefaultPriorityMemoryLimit
		}
		debug.SetMemoryLimit(lim) // as `fairledger run` does
	}
	var sum *pipeline.Summary
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := os.RemoveAll(hist); err != nil {
			b.Fatal(err)
		}
		in := siteInputs(b, files.Dir, files.Sacct)
		b.StartTimer()
		sum, err = pipeline.Run(context.Background(), in, pipeline.Options{History: hist, To: opt.To,
			SnapshotEvery: 24 * time.Hour, Location: time.UTC, Log: zerolog.Nop(), Version: "bench", DryRun: dry, Priority: prio})
		if err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/run")
	b.ReportMetric(float64(sum.Ingest.Read)/sec, "rows/s")
	b.ReportMetric(float64(sum.Decay.JobsCharged), "jobs")
	b.ReportMetric(float64(sum.Snapshots), "snapshots")
	b.ReportMetric(sum.Phases.Read.Seconds(), "read-s")   // parse, bill, spill
	b.ReportMetric(sum.Phases.Decay.Seconds(), "decay-s") // decay and snapshots, after read
	if !dry {
		b.ReportMetric(sum.Phases.Jobs.Seconds(), "jobs-s") // jobs and usage tables, beside decay
		b.ReportMetric(float64(dirBytes(b, hist))/1e6, "history-MB")
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB")
	}
}

func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkPipelineAssoc100k is the whole nightly job on a large association
// tree: 10,000 labs with 9 users each on average (about 102,600
// associations, `fairledger gen --labs 10000 --users-per-lab 9 --jobs 200000
// --from 2025-01-01 --to 2025-03-01`), 200,000 jobs over two months, 59
// daily snapshots, from scratch, under the soft memory limit `fairledger
// run` sets. The files are generated into a temp directory before the
// timer starts; each iteration reads the association dump and slurm.conf
// (timed: ingest is part of the case) and runs into a fresh history. It
// reports wall and CPU time (user + system, every goroutine), the
// associations, the snapshots and the peak RSS of the test process (run it
// alone for its own).
//
//	go test ./pipeline -run '^$' -bench 'PipelineAssoc100k$' -benchtime 1x
func BenchmarkPipelineAssoc100k(b *testing.B) {
	dir := b.TempDir()
	from, to := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	if _, err := synth.WriteDir(dir, synth.Options{Seed: 1, Labs: 10_000, UsersPerLab: 9, Jobs: 200_000,
		From: from, To: to}); err != nil {
		b.Fatal(err)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(pipeline.DefaultMemoryLimit) // as `fairledger run` does
	}
	var sum *pipeline.Summary
	var assocs int
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hist := filepath.Join(dir, "history-"+strconv.Itoa(i))
		in := siteInputs(b, dir, filepath.Join(dir, "sacct.psv"))
		assocs = len(in.Assoc[0].Assoc.Rows)
		var err error
		sum, err = pipeline.Run(context.Background(), in, pipeline.Options{History: hist, To: to,
			SnapshotEvery: 24 * time.Hour, Location: time.UTC, Log: zerolog.Nop(), Version: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := os.RemoveAll(hist); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/run")
	b.ReportMetric(float64(assocs), "associations")
	b.ReportMetric(float64(sum.Snapshots), "snapshots")
	b.ReportMetric(sum.Phases.Decay.Seconds(), "decay-s")
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB")
		cpu := ru.Utime.Nano() + ru.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
		b.ReportMetric(float64(cpu)/1e9/float64(b.N), "cpu-s/run") // removing the histories included
	}
}
