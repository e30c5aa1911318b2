package encode

import (
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
	"github.com/parquet-go/parquet-go"
)

// BenchmarkJobsEncoder measures only the jobs encoder (jobsEncoder, to
// io.Discard) on a sorted record.JobTable: the 1,000,000 synthetic rows of
// BenchmarkWriteJobs and, when present, the realistic month of
// BenchmarkWriteJobsMonth.
//
//	FAIRLEDGER_BENCH_DIR=$PWD/.bench go test ./export/encode -run '^$' -bench 'JobsEncoder$' -benchtime 5x -cpu 1
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
//	FAIRLEDGER_BENCH_DIR=$PWD/.bench go test ./export/encode -run '^$' -bench 'JobsTRESColumns' -benchtime 10x -cpu 1
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
