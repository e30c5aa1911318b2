package billing

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchPartitions mixes weighted partitions, typed GPUs, licenses and a
// partition without weights (billed the CPU count).
var benchPartitions = []Partition{
	{Name: "gpu", TRESBillingWeights: "CPU=1.0,Mem=0.25G,GRES/gpu=2.0,license/lic1=1.5"},
	{Name: "a100", TRESBillingWeights: "CPU=0.5,Mem=0.1G,GRES/gpu:a100=20,node=2"},
	{Name: "cpu"},
	{Name: "bigmem", TRESBillingWeights: "CPU=1.0,Mem=0.25G"},
}

// benchJobs returns n synthetic jobs: partition indexes and the dense columns
// of the benchPartitions table (cpu, mem, node, gres/gpu, gres/gpu:a100,
// license/lic1).
func benchJobs(n int) (part []int32, cols [][]float64) {
	r := rand.New(rand.NewPCG(1, 2))
	part = make([]int32, n)
	cols = make([][]float64, 6)
	for j := range cols {
		cols[j] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		part[i] = int32(r.IntN(len(benchPartitions)))
		nodes := float64(1 + r.IntN(4))
		cols[0][i] = nodes * float64(1+r.IntN(64)) // cpu
		cols[1][i] = cols[0][i] * 4096             // mem MiB
		cols[2][i] = nodes                         // node
		gpus := float64(r.IntN(3)) * nodes         // gres/gpu
		cols[3][i] = gpus
		if part[i] == 1 {
			cols[4][i] = gpus // gres/gpu:a100
		}
		cols[5][i] = float64(r.IntN(2)) // license/lic1
	}
	return part, cols
}

// BenchmarkBillable5M bills 5,000,000 jobs × 6 TRES columns over 4
// partitions, one kernel call per op, in each mode.
//
//	go test ./billing -run '^$' -bench 'BenchmarkBillable5M' -benchtime 20x
func BenchmarkBillable5M(b *testing.B) {
	const n = 5_000_000
	part, cols := benchJobs(n)
	out := make([]float64, n)
	for _, flags := range [][]string{nil, {"MAX_TRES"}, {"MAX_TRES_GRES"}} {
		tab, err := Compile(benchPartitions, flags, nil)
		if err != nil {
			b.Fatal(err)
		}
		if got := len(tab.DenseTRES()); got != len(cols) {
			b.Fatalf("DenseTRES() has %d columns, benchmark builds %d", got, len(cols))
		}
		b.Run(tab.Mode().String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Billable(out, part, cols, tab)
			}
			perJob := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / n
			b.ReportMetric(perJob, "ns/job")
			b.ReportMetric(1e9/perJob, "jobs/s")
		})
	}
}

// BenchmarkApply64K runs the Arrow adapter on a 65,536-row jobs batch
// (dictionary mapping, three kernels, output record).
//
//	go test ./billing -run '^$' -bench 'BenchmarkApply64K' -benchtime 200x
func BenchmarkApply64K(b *testing.B) {
	const n = 65536
	part, cols := benchJobs(n)
	names := []string{"gpu", "a100", "cpu", "bigmem", "retired"} // "retired": not in slurm.conf
	qos := []string{"normal", "half", "free"}
	rows := make([]jobRow, n)
	for i := range rows {
		p := names[part[i]]
		if i%100 == 0 {
			p = names[4]
		}
		rows[i] = jobRow{
			partition: p, qos: qos[i%len(qos)], sacct: cols[0][i], noSacct: i%200 == 0,
			tres: map[string]float64{
				"cpu": cols[0][i], "mem": cols[1][i], "node": cols[2][i], "gres/gpu": cols[3][i],
				"gres/gpu:a100": cols[4][i], "license/lic1": cols[5][i],
			},
		}
	}
	mem := memory.NewGoAllocator()
	tab, err := Compile(benchPartitions, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	rec := buildJobs(mem, []string{"gres/gpu:a100", "license/lic1"}, rows)
	defer rec.Release()
	factor := func(q string) (float64, bool) {
		if q == "half" {
			return 0.5, true
		}
		return 1, true
	}
	b.ReportAllocs()
	for b.Loop() {
		out, _, err := tab.Apply(mem, rec, factor)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	perRow := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / n
	b.ReportMetric(perRow, "ns/row")
	b.ReportMetric(1e9/perRow, "rows/s")
}
