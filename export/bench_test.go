package export

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
	"github.com/parquet-go/parquet-go"
)

// benchJobs makes n plausible jobs rows: 50 accounts × 20 users, a few
// partitions and QOS, array tasks, 5 TRES per row, one month of starts.
func benchJobs(n int) []record.JobRow {
	parts := []string{"cpu", "gpu", "bigmem", "debug"}
	qos := []string{"normal", "low", "high"}
	states := []string{"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}
	rows := make([]record.JobRow, n)
	for i := range rows {
		start := jan.Add(time.Duration(i%(31*86400)) * time.Second)
		end := start.Add(time.Duration(60+i%7200) * time.Second)
		cpus := int64(1 + i%64)
		gpu := float64(i % 3)
		r := &rows[i]
		*r = record.JobRow{JobID: fmt.Sprint(1000000 + i), JobIDRaw: int64(1000000 + i),
			User: fmt.Sprintf("user%03d", i%1000), Account: fmt.Sprintf("acct%02d", i%50),
			Partition: parts[i%len(parts)], QOS: qos[i%len(qos)], State: states[i%len(states)],
			Submit: &start, Eligible: &start, Start: start, End: &end, ElapsedSec: ptr(int64(end.Sub(start) / time.Second)),
			ChargedSec: int64(end.Sub(start) / time.Second), TimelimitMin: ptr[int64](240), NNodes: 1, AllocCPUs: cpus,
			MemMB: float64(cpus * 4096), NodeCount: 1, GPU: gpu,
			TRES:    map[string]float64{"cpu": float64(cpus), "mem": float64(cpus * 4096), "node": 1, "gres/gpu": gpu, "billing": float64(cpus)},
			Billing: float64(cpus) + 10*gpu, BillingSlurm: cpus + 10*int64(gpu), UsageFactor: 1,
			SourceFile: fmt.Sprintf("sacct-2025-01-%02d.txt", 1+i%31), SourceLine: int64(2 + i)}
		if i%10 == 0 {
			r.ArrayJobID, r.ArrayTaskID = ptr(int64(1000000+i-i%100)), ptr(int64(i%100))
		}
	}
	return rows
}

// BenchmarkWriteJobs writes a 1,000,000-row jobs partition (rows given in
// generation order, so the writer also sorts them).
//
//	go test ./export -run '^$' -bench BenchmarkWriteJobs -benchtime 3x
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

// BenchmarkJobsEncoder measures only the jobs encoder (jobsEncoder, to
// io.Discard) on a sorted record.JobTable: the 1,000,000 synthetic rows of
// BenchmarkWriteJobs and, when present, the realistic month of
// BenchmarkWriteJobsMonth.
//
//	FAIRLEDGER_BENCH_DIR=$PWD/.bench go test ./export -run '^$' -bench 'JobsEncoder$' -benchtime 5x -cpu 1
func BenchmarkJobsEncoder(b *testing.B) {
	def, err := schemas.TableByName(schemas.TableJobs)
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, t *record.JobTable) {
		t.Sort()
		enc := jobsEncoder(t, def.SortBy)
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cpuSeconds()
		for range b.N {
			if err := enc(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
		b.ReportMetric(float64(len(t.Recs))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(len(t.Recs)), "rows")
	}
	b.Run("synthetic", func(b *testing.B) { run(b, jobTableOf(benchJobs(1_000_000))) })
	b.Run("month", func(b *testing.B) {
		t, err := benchMonth()
		if err != nil {
			b.Skipf("no month to write: %v", err)
		}
		run(b, t)
	})
}

// BenchmarkJobsTRESColumns measures the TRES map's two leaf columns
// alone (jobColumns.appendTRES, then ColumnWriter.WriteRowValues into
// parquet-go's repeated column buffers, pages cut and compressed as in a
// file) on the realistic month of BenchmarkWriteJobsMonth, in batches of
// writeBatch rows and, to show what a batch's size costs, of 4,096 rows
// (which cuts other pages: not what the encoder writes). It reports CPU
// seconds an op and CPU nanoseconds a row, and is skipped without the
// month.
//
//	FAIRLEDGER_BENCH_DIR=$PWD/.bench go test ./export -run '^$' -bench 'JobsTRESColumns' -benchtime 10x -cpu 1
func BenchmarkJobsTRESColumns(b *testing.B) {
	t, err := benchMonth()
	if err != nil {
		b.Skipf("no month to write: %v", err)
	}
	t.Sort()
	def, err := schemas.TableByName(schemas.TableJobs)
	if err != nil {
		b.Fatal(err)
	}
	vals := newJobValues(t)
	for _, batch := range []int{writeBatch, 4096} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			opts := append(tableWriterOptions[record.JobRow](def.SortBy), jobsWriterSchema(vals.strs))
			pw := parquet.NewGenericWriter[record.JobRow](io.Discard, opts...)
			cols := pw.BeginRowGroup().ColumnWriters()
			leaves, err := jobLeaves(pw.Schema())
			if err != nil {
				b.Fatal(err)
			}
			tres := make([]int, 0, 2) // the columns of the TRES map's keys and values
			for _, f := range []jobField{jobTRESKey, jobTRESValue} {
				tres = append(tres, slices.Index(leaves, f))
			}
			e := jobColumns{t: t, v: vals, leaves: leaves}
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for range b.N {
				for lo := 0; lo < len(t.Recs); lo += batch {
					recs := t.Recs[lo:min(lo+batch, len(t.Recs))]
					for i, c := range tres {
						col := vals.tresKeys
						if i == 1 {
							col = vals.tresVals
						}
						e.vals = e.appendTRES(e.vals[:0], recs, col)
						if _, err := cols[c].WriteRowValues(e.vals); err != nil {
							b.Fatal(err)
						}
					}
				}
				for _, c := range tres {
					if err := cols[c].Flush(); err != nil {
						b.Fatal(err)
					}
				}
			}
			cpu := (cpuSeconds() - cpu0) / float64(b.N)
			b.ReportMetric(cpu, "cpu-s/op")
			b.ReportMetric(cpu*1e9/float64(len(t.Recs)), "cpu-ns/row")
		})
	}
}

// benchMonth reads March 2024 of the 5 M-job year history that the
// pipeline benchmarks leave in $FAIRLEDGER_BENCH_DIR/history-year5m into a
// record.JobTable, with export's own reader (History.ReadPartition).
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
//	FAIRLEDGER_BENCH_DIR=$PWD/.bench go test ./export -run '^$' -bench 'WriteJobsMonth$' -benchtime 3x -cpu 1
func BenchmarkWriteJobsMonth(b *testing.B) {
	t, err := benchMonth()
	if err != nil {
		b.Skipf("no month to write: %v", err)
	}
	benchWriteJobs(b, "synth", benchMonthStart, t, len(t.Recs))
}
