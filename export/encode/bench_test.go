package encode

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

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
		benchWrite(b, jobsEncoder(t, def.SortBy), len(t.Recs))
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

// BenchmarkPriorityEncoder measures the priority table's encoders, to
// io.Discard, on the 1,000,000 rows of benchPriority: parquet-go's
// GenericWriter (encoder, what the table was written with) and the
// columnar priorityEncoder. Both sort the rows first (sortedOrder). It
// reports rows/s, CPU seconds an op and the allocations.
//
//	go test ./export/encode -run '^$' -bench PriorityEncoder -benchtime 3x -benchmem -cpu 1
func BenchmarkPriorityEncoder(b *testing.B) {
	def, err := schemas.TableByName(schemas.TablePriority)
	if err != nil {
		b.Fatal(err)
	}
	rows := benchPriority(1_000_000)
	for _, e := range []struct {
		name string
		enc  func([]record.PriorityRow, []string) func(io.Writer) error
	}{
		{"generic", func(rows []record.PriorityRow, sortBy []string) func(io.Writer) error {
			return encoder(rows, record.ComparePriority, sortBy)
		}},
		{"columnar", priorityEncoder},
	} {
		b.Run(e.name, func(b *testing.B) { benchWrite(b, e.enc(rows, def.SortBy), len(rows)) })
	}
}

// benchWrite calls write (an encoder's function) b.N times with
// io.Discard and reports its allocations, its CPU seconds an op and the
// rows it writes a second (n a call).
func benchWrite(b *testing.B, write func(io.Writer) error, n int) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for range b.N {
		if err := write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// benchPriority makes n plausible priority rows in the order a run hands
// them over, by time: at each daily snapshot its waiting jobs, in priority
// order (so not in job id order: the encoders sort them), between
// snapshots each job's submit and start rows. 1,000 users in 50 accounts,
// 4 partitions, 3 QOS; every other row has the three TRES terms of a site
// weighting TRES (PriorityWeightTRES), the others an empty map.
func benchPriority(n int) []record.PriorityRow {
	r := rand.New(rand.NewPCG(1, 2))
	parts := []string{"cpu", "gpu", "bigmem", "debug"}
	qos := []string{"normal", "low", "high"}
	users, accounts := make([]string, 1000), make([]string, 50)
	for i := range users {
		users[i] = fmt.Sprintf("user%03d", i)
	}
	for i := range accounts {
		accounts[i] = fmt.Sprintf("acct%02d", i)
	}
	const pending = 2000 // waiting jobs at a snapshot
	rows := make([]record.PriorityRow, 0, n)
	var snap *time.Time
	at, job, waiting := jan, int64(1_000_000), 0
	for i := 0; len(rows) < n; i++ {
		row := record.PriorityRow{ComputedAt: at, Snapshot: snap, Priority: int64(r.IntN(1 << 24)),
			AgeW: float64(r.IntN(1000)), AssocW: 0, FairShareW: r.Float64() * 1e4, JobSizeW: float64(r.IntN(100)),
			PartitionW: 1000, QOSW: float64(r.IntN(3) * 100)}
		u := r.IntN(len(users))
		row.User, row.Account = users[u], accounts[u%len(accounts)]
		row.Partition, row.QOS = parts[r.IntN(len(parts))], qos[r.IntN(len(qos))]
		if i%2 == 0 {
			row.TRESW = map[string]float64{"cpu": float64(r.IntN(64)), "mem": r.Float64() * 100, "gres/gpu": float64(r.IntN(4) * 250)}
		} else {
			row.TRESW = map[string]float64{}
		}
		sub := at.Add(-time.Duration(r.IntN(86400)) * time.Second)
		row.Submit, row.Eligible = &sub, &sub
		switch {
		case at.Hour() == 0 && at.Minute() == 0 && at.Second() == 0: // a snapshot
			row.At, row.Event, row.ComputedAt = at, record.EventPending, at.Add(-30*time.Second)
			row.JobID = job - int64(r.IntN(50_000))
			if waiting++; waiting == pending {
				at, waiting = at.Add(time.Second), 0
			}
		case i%2 == 0:
			job++
			row.At, row.Event, row.JobID = at, record.EventSubmit, job
			at = at.Add(time.Duration(1+r.IntN(5)) * time.Second)
		default:
			wait, rank, waiting := int64(at.Sub(sub)/time.Second), int64(r.IntN(100)), int64(100+r.IntN(900))
			row.At, row.Event, row.JobID = at, record.EventStart, job-int64(r.IntN(1000))
			row.WaitSec, row.Rank, row.Waiting = &wait, &rank, &waiting
			next := at.Add(time.Duration(1+r.IntN(5)) * time.Second)
			if day := at.Truncate(24 * time.Hour).Add(24 * time.Hour); !next.Before(day) {
				next, snap = day, &day
			}
			at = next
		}
		if r.IntN(10) == 0 {
			a := row.JobID - int64(r.IntN(10))
			row.ArrayJobID = &a
		}
		rows = append(rows, row)
	}
	return rows
}
