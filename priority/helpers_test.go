package priority

import (
	"testing"

	"github.com/fairledger/fairledger/internal/release"
)

// The cluster of the tests: the weights of issue 26's live cluster (Age
// 1000, Fairshare 10000, JobSize 1000, Partition 1000, QOS 2000, Assoc 500,
// PriorityWeightTRES=CPU=500,Mem=200,GRES/gpu=3000, PriorityMaxAge=20)
// on four nodes of 16 CPUs, 64000 MiB and 2 GPUs:
//
//	partition  PriorityJobFactor  nodes  cpu  mem     gpu
//	short      1                  4      64   256000  8
//	long       10                 2      32   128000  4
//	gpu        4                  2      32   128000  4   (PriorityTier 2)
//
// QOS priorities normal 0, high 100, urgent 500 (highest 500); association
// priorities up to 200.

// Indexes of the test cluster's TRES.
const (
	tCPU  = 0
	tMem  = 1
	tNode = 3
	tGPU  = 8
)

// Indexes of the test cluster's partitions.
const (
	pShort = 0
	pLong  = 1
	pGPU   = 2
)

// tick is the time of the computations: a decay tick.
const tick int64 = 1_700_000_000

// testTRES are the test cluster's TRES in slurmctld's order.
func testTRES() []string {
	return []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages", "gres/gpu"}
}

// tresVec returns a vector over testTRES with cpu, mem, node and gpu set.
func tresVec(cpu, mem, node, gpu uint64) []uint64 {
	v := make([]uint64, len(testTRES()))
	v[tCPU], v[tMem], v[tNode], v[tGPU] = cpu, mem, node, gpu
	return v
}

// testParams are the test cluster's slurm.conf settings for release r.
func testParams(r release.Series) Params {
	w := make([]float64, len(testTRES()))
	w[tCPU], w[tMem], w[tGPU] = 500, 200, 3000
	return Params{
		Weights: Weights{
			Age: 1000, Assoc: 500, FairShare: 10000, JobSize: 1000, Partition: 1000, QOS: 2000,
			TRES: w, TRESConfig: "CPU=500,Mem=200,GRES/gpu=3000",
		},
		MaxAgeSec: 20 * 60,
		Release:   r,
	}
}

// testCluster is the test cluster.
func testCluster() Cluster {
	return Cluster{
		TRES:             testTRES(),
		Nodes:            4,
		CPUs:             64,
		MaxAssocPriority: 200,
		MaxQOSPriority:   500,
		Partitions: []Partition{
			{Name: "short", PriorityJobFactor: 1, PriorityTier: 1, TRES: tresVec(64, 256000, 4, 8)},
			{Name: "long", PriorityJobFactor: 10, PriorityTier: 1, TRES: tresVec(32, 128000, 2, 4)},
			{Name: "gpu", PriorityJobFactor: 4, PriorityTier: 2, TRES: tresVec(32, 128000, 2, 4)},
		},
	}
}

// The QOS of the test cluster.
var (
	qosNormal = QOS{Name: "normal", Priority: 0}
	qosHigh   = QOS{Name: "high", Priority: 100}
	qosUrgent = QOS{Name: "urgent", Priority: 500}
)

// workedJob is the job every factor of which is worked out by hand in
// TestWorkedJob: job 1001 of alice (account chem), in long with QOS high,
// eligible 675 s before the tick, one node, 16 CPUs, 32000 MiB, one GPU.
func workedJob() Job {
	return Job{
		ID: 1001, User: "alice", Account: "chem",
		EligibleSec:   tick - 675,
		FairShare:     0.25,
		AssocPriority: 100,
		QOS:           []QOS{qosHigh},
		Partitions:    []int{pLong},
		Nodes:         1,
		CPUs:          16,
		TimeLimitMin:  60,
		TRES:          tresVec(16, 32000, 1, 1),
	}
}

// rowsOf returns the rows of jobs at the tick.
func rowsOf(t *testing.T, p Params, c Cluster, jobs ...Job) []Row {
	t.Helper()
	return p.AppendRows(nil, &c, jobs, tick)
}

// oneRow returns the single row of job j.
func oneRow(t *testing.T, p Params, c Cluster, j Job) Row {
	t.Helper()
	rows := rowsOf(t, p, c, j)
	if len(rows) != 1 {
		t.Fatalf("job %d: %d rows, want 1", j.ID, len(rows))
	}
	return rows[0]
}
