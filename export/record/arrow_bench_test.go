package record

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fairledger/fairledger/schemas"
)

// BenchmarkAppendBatch turns a billed batch of 200,000 plausible jobs
// (1,000 users in 50 accounts, 4 partitions, 3 QOS, 4 states, a few
// hundred TRES sets, array tasks and cancellations now and then) into
// records, as the pipeline does with every batch it ingests, and reports
// the CPU time a row, with and without the batch's TRES set numbers.
//
//	go test ./export/record -run '^$' -bench AppendBatch -benchtime 20x -cpu 1
func BenchmarkAppendBatch(b *testing.B) {
	const n = 200_000
	parts := []string{"cpu", "gpu", "bigmem", "debug"}
	qos := []string{"normal", "low", "high"}
	states := []string{"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}
	specs := make([]jobSpec, n)
	for i := range specs {
		start := int64(1_704_067_200 + i*13)
		cpus := int64(1 + i%48)
		s := &specs[i]
		*s = jobSpec{jobID: fmt.Sprint(7_000_000 + i), raw: int64(7_000_000 + i),
			user: fmt.Sprintf("user%03d", i*7%1000), account: fmt.Sprintf("acct%02d", i*7%1000/20),
			part: parts[i%len(parts)], qos: qos[i%len(qos)], state: states[i%len(states)],
			submit: ptr(start - int64(i%600)), start: &start, end: ptr(start + int64(60+i%7200)),
			elapsed: ptr(int64(60 + i%7200)), nnodes: 1, cpus: cpus,
			tres:    map[string]float64{"billing": float64(cpus), "cpu": float64(cpus), "mem": float64(cpus * 1000), "node": 1},
			billing: float64(cpus), billingSlurm: cpus, usageFactor: 1, sourceLine: int64(2 + i)}
		if i%10 == 0 {
			s.jobID, s.arrJob, s.arrTask = fmt.Sprintf("%d_%d", 7_000_000+i-i%100, i%100), ptr(int64(7_000_000+i-i%100)), ptr(int64(i%100))
		}
		if i%4 == 2 {
			s.cancelledBy = ptr(s.user)
		}
		if i%3 == 0 {
			s.tres["gres/gpu"] = float64(i % 4)
		}
	}
	rec := buildBatch(b, memory.NewGoAllocator(), specs)
	defer rec.Release()
	// sets: the batch numbers its TRES maps (alloc_tres_set), as ingest's
	// batches do; rows: it does not, and every row's map is read.
	plain := withoutColumn(rec, schemas.ColAllocTRESSet)
	defer plain.Release()
	for _, bc := range []struct {
		name string
		rec  arrow.RecordBatch
	}{{"sets", rec}, {"rows", plain}} {
		b.Run(bc.name, func(b *testing.B) {
			t := NewJobTable(NewJobDict(), n)
			cpu0 := cpuTime()
			for b.Loop() {
				t.Reset()
				if err := t.AppendBatch(bc.rec); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/n, "cpu-ns/row")
		})
	}
}

// cpuTime is the user and system CPU time the process has used (the
// benchmark machines are shared: wall time misleads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
