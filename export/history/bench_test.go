package history

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// BenchmarkWriteJobs writes a 1,000,000-row jobs partition (rows given in
// generation order, so the writer also sorts them).
//
//	go test ./export/history -run '^$' -bench BenchmarkWriteJobs -benchtime 3x
func BenchmarkWriteJobs(b *testing.B) {
	const n = 1_000_000
	benchWriteJobs(b, "c1", jan, benchJobs(n), n)
}

// benchWriteJobs writes rows (n of them) as the jobs partition of cluster
// and month b.N times and reports CPU-s/op, rows/s and the file's size.
func benchWriteJobs(b *testing.B, cluster string, month time.Time, rows any, n int) {
	h, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for range b.N {
		if err := h.WritePartition(schemas.TableJobs, cluster, month, rows); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
	ps, err := h.Partitions(schemas.TableJobs)
	if err != nil || len(ps) != 1 {
		b.Fatalf("jobs files %+v, %v; want one", ps, err)
	}
	size := ps[0].Bytes
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(size)/float64(n), "disk-bytes/row")
	b.ReportMetric(float64(size), "file-bytes")
	b.ReportMetric(float64(n), "rows")
}

// benchMonth reads March 2024 of the 5 M-job year history that the
// pipeline benchmarks leave in $FAIRLEDGER_BENCH_DIR/history-year5m into a
// record.JobTable, with the history's own reader (Store.ReadPartition).
func benchMonth() (*record.JobTable, error) {
	src, err := Open(filepath.Join(benchDir(), "history-year5m"))
	if err != nil {
		return nil, err
	}
	var rows []record.JobRow
	if err := src.ReadPartition(schemas.TableJobs, "synth", benchMonthStart, &rows); err != nil {
		return nil, err
	}
	t := record.NewJobTable(record.NewJobDict(), len(rows))
	for i := range rows {
		t.AppendRow(&rows[i])
	}
	return t, nil
}

// benchMonthStart is the month benchMonth reads.
var benchMonthStart = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

// BenchmarkWriteJobsMonth writes a realistic month of jobs: March 2024 of
// the 5 M-job year history that the pipeline benchmarks leave in
// $FAIRLEDGER_BENCH_DIR/history-year5m (about 410,000 rows, read back with
// ReadPartition into a record.JobTable). It is skipped when that file is missing.
// BenchmarkPipelineYear5M rewrites that history (with fewer jobs when
// FAIRLEDGER_BENCH_JOBS is set), so compare runs by their rows metric.
//
//	FAIRLEDGER_BENCH_DIR=$PWD/.bench go test ./export/history -run '^$' -bench 'WriteJobsMonth$' -benchtime 3x -cpu 1
func BenchmarkWriteJobsMonth(b *testing.B) {
	t, err := benchMonth()
	if err != nil {
		b.Skipf("no month to write: %v", err)
	}
	benchWriteJobs(b, "synth", benchMonthStart, t, len(t.Recs))
}
