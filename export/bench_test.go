package export

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fairledger/fairledger/schemas"
)

// benchJobs makes n plausible jobs rows: 50 accounts × 20 users, a few
// partitions and QOS, array tasks, 5 TRES per row, one month of starts.
func benchJobs(n int) []JobRow {
	parts := []string{"cpu", "gpu", "bigmem", "debug"}
	qos := []string{"normal", "low", "high"}
	states := []string{"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}
	rows := make([]JobRow, n)
	for i := range rows {
		start := jan.Add(time.Duration(i%(31*86400)) * time.Second)
		end := start.Add(time.Duration(60+i%7200) * time.Second)
		cpus := int64(1 + i%64)
		gpu := float64(i % 3)
		r := &rows[i]
		*r = JobRow{JobID: fmt.Sprint(1000000 + i), JobIDRaw: int64(1000000 + i),
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
	rows := benchJobs(n)
	h, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := h.WritePartition(schemas.TableJobs, "c1", jan, rows); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	fi, err := os.Stat(filepath.Join(h.Dir, "jobs", "cluster=c1", "month=2025-01", "data.parquet"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(fi.Size())/n, "disk-bytes/row")
}
