package priority

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/internal/release"
)

// compute returns job j's factors at the tick.
func compute(p Params, c Cluster, j Job) Factors {
	var f Factors
	p.Compute(&f, &c, &j, tick)
	return f
}

// TestAge: age = min(at − eligible, PriorityMaxAge) / PriorityMaxAge,
// 0 without an eligible time or before it (PM set_priority_factors).
func TestAge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		eligible  int64
		maxAgeSec uint32
		weight    uint32
		want      float64
	}{
		// 600 s of 1200 s: 600/1200 = 0.5.
		{"half of PriorityMaxAge", tick - 600, 1200, 1000, 0.5},
		// 675/1200 = 0.5625.
		{"675 s of 1200 s", tick - 675, 1200, 1000, 0.5625},
		// diff = max: "diff < max_age" fails, so 1.
		{"exactly PriorityMaxAge", tick - 1200, 1200, 1000, 1},
		// 5000 s > 1200 s: capped at 1.
		{"past PriorityMaxAge", tick - 5000, 1200, 1000, 1},
		// eligible at the tick: 0/1200.
		{"eligible at the tick", tick, 1200, 1000, 0},
		// accrue time 0 (sacct Eligible=Unknown): no age at all.
		{"eligible unknown", 0, 1200, 1000, 0},
		// --begin in the future: diff stays 0, 0/1200.
		{"eligible after the tick", tick + 60, 1200, 1000, 0},
		// PriorityMaxAge=0: 0 < 0 fails for every diff, so 1 — even for
		// a job eligible only later.
		{"PriorityMaxAge 0", tick - 10, 0, 1000, 1},
		{"PriorityMaxAge 0, eligible after the tick", tick + 60, 0, 1000, 1},
		{"PriorityMaxAge 0, eligible unknown", 0, 0, 1000, 0},
		// PriorityWeightAge=0: the factor is not computed.
		{"weight 0", tick - 600, 1200, 0, 0},
		// 7 days default: 302400/604800 = 0.5.
		{"default PriorityMaxAge 7-0", tick - 302400, 604800, 1000, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, c, j := testParams(release.Series{}), testCluster(), workedJob()
			p.MaxAgeSec, p.Weights.Age = tc.maxAgeSec, tc.weight
			j.EligibleSec = tc.eligible
			if got := compute(p, c, j).Age; got != tc.want {
				t.Errorf("Age = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFairShare: the fair-share factor is the association's FairShare,
// 0 without a weight.
func TestFairShare(t *testing.T) {
	t.Parallel()
	p, c, j := testParams(release.Series{}), testCluster(), workedJob()
	j.FairShare = 0.000049
	t.Run("weighted", func(t *testing.T) {
		if got := compute(p, c, j).FairShare; got != 0.000049 {
			t.Errorf("FairShare = %v, want 0.000049", got)
		}
	})
	t.Run("weight 0", func(t *testing.T) {
		p.Weights.FairShare = 0
		if got := compute(p, c, j).FairShare; got != 0 {
			t.Errorf("FairShare = %v, want 0", got)
		}
	})
}

// TestJobSize works the job-size factor out for each rule of
// set_priority_factors on the 4-node, 64-CPU test cluster.
func TestJobSize(t *testing.T) {
	t.Parallel()
	old := release.Series{Major: 22, Minor: 5}
	tests := []struct {
		name       string
		release    release.Series
		favorSmall bool
		relative   bool
		nodes      uint32
		cpus       uint32
		limit      uint32
		clusterN   uint32 // 0: 4
		weight     uint32 // 0: 1000
		want       float64
	}{
		// (1/4 + 16/64)/2 = (0.25 + 0.25)/2 = 0.25.
		{name: "favor large", nodes: 1, cpus: 16, want: 0.25},
		// No CPU count: nodes only, not halved: 2/4 = 0.5.
		{name: "favor large without CPUs", nodes: 2, cpus: 0, want: 0.5},
		// The whole cluster: (4/4 + 64/64)/2 = 1.
		{name: "favor large whole cluster", nodes: 4, cpus: 64, want: 1},
		// More nodes than the cluster: (6/4 + 16/64)/2 = (1.5+0.25)/2 = 0.875.
		{name: "favor large more nodes than the cluster", nodes: 6, cpus: 16, want: 0.875},
		// ((4−1)/4 + (64−16)/64)/2 = (0.75 + 0.75)/2 = 0.75.
		{name: "favor small", favorSmall: true, nodes: 1, cpus: 16, want: 0.75},
		// (4−1)/4 = 0.75, not halved.
		{name: "favor small without CPUs", favorSmall: true, nodes: 1, cpus: 0, want: 0.75},
		// ((4−4)/4 + (64−64)/64)/2 = 0.
		{name: "favor small whole cluster", favorSmall: true, nodes: 4, cpus: 64, want: 0},
		// 23.02: nodes ≥ the cluster's give 0; (0 + 48/64)/2 = 0.375.
		{name: "favor small more nodes than the cluster", favorSmall: true, nodes: 6, cpus: 16, want: 0.375},
		// 22.05: 4 − 6 in uint32 is 4294967294; /4 = 1073741823.5;
		// + 0.75, /2 ≈ 5.4e8, clamped to 1.
		{name: "favor small more nodes than the cluster 22.05", release: old, favorSmall: true, nodes: 6, cpus: 16, want: 1},
		// The same job in 22.05 and 23.02 when it fits: 0.75 both.
		{name: "favor small 22.05", release: old, favorSmall: true, nodes: 1, cpus: 16, want: 0.75},
		// max(1·64/4, 8) = 16 CPUs; /60 min; /64 CPUs = 1/240.
		{name: "small relative to time", relative: true, nodes: 1, cpus: 8, limit: 60, want: 1.0 / 240},
		// The page's example: the whole system for one minute is 1:
		// max(4·64/4, 64)/1/64 = 1.
		{name: "small relative to time whole system one minute", relative: true, nodes: 4, cpus: 64, limit: 1, want: 1},
		// CPUs above the nodes' share: max(16, 32)/2/64 = 0.25.
		{name: "small relative to time CPUs count", relative: true, nodes: 1, cpus: 32, limit: 2, want: 0.25},
		// With PriorityFavorSmall: 1 − 1/240 = 239/240.
		{name: "small relative to time favor small", relative: true, favorSmall: true, nodes: 1, cpus: 8, limit: 60, want: 239.0 / 240},
		// Limit unknown: 1 minute, slurmctld's fallback: 16/1/64 = 0.25.
		{name: "small relative to time no limit", relative: true, nodes: 1, cpus: 8, limit: 0, want: 0.25},
		// UNLIMITED (4294967295 min): 16/4294967295/64.
		{name: "small relative to time unlimited", relative: true, nodes: 1, cpus: 8, limit: math.MaxUint32, want: 16.0 / 4294967295 / 64},
		// More than the cluster per minute: max(8·64/4, 64)/1/64 =
		// 128/64 = 2, clamped to 1.
		{name: "small relative to time clamped", relative: true, nodes: 8, cpus: 64, limit: 1, want: 1},
		// 23.02 on: a cluster without nodes has no job-size factor.
		{name: "no nodes", clusterN: math.MaxUint32, nodes: 1, cpus: 16, want: 0},
		// PriorityWeightJobSize=0: not computed.
		{name: "weight 0", weight: math.MaxUint32, nodes: 1, cpus: 16, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, c, j := testParams(tc.release), testCluster(), workedJob()
			p.FavorSmall, p.Flags.SmallRelativeToTime = tc.favorSmall, tc.relative
			switch tc.weight {
			case 0:
			case math.MaxUint32:
				p.Weights.JobSize = 0
			default:
				p.Weights.JobSize = tc.weight
			}
			if tc.clusterN == math.MaxUint32 {
				c.Nodes = 0
			}
			j.Nodes, j.CPUs, j.TimeLimitMin = tc.nodes, tc.cpus, tc.limit
			if got := compute(p, c, j).JobSize; got != tc.want {
				t.Errorf("JobSize = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPartitionFactor: PriorityJobFactor over the highest of all
// partitions (10), raw with NO_NORMAL_PART, 0 for a factor of 0.
func TestPartitionFactor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		part     int
		pjf      int // -1: as in the test cluster
		noNormal bool
		allZero  bool
		want     float64
	}{
		// long: 10/10 = 1.
		{name: "highest", part: pLong, pjf: -1, want: 1},
		// short: 1/10 = 0.1.
		{name: "lowest", part: pShort, pjf: -1, want: 0.1},
		// gpu: 4/10 = 0.4.
		{name: "gpu", part: pGPU, pjf: -1, want: 0.4},
		// NO_NORMAL_PART: the raw 10.
		{name: "NO_NORMAL_PART", part: pLong, pjf: -1, noNormal: true, want: 10},
		// PriorityJobFactor 0: the factor is not set.
		{name: "factor 0", part: pShort, pjf: 0, want: 0},
		{name: "factor 0 NO_NORMAL_PART", part: pShort, pjf: 0, noNormal: true, want: 0},
		// Every partition at 0: the maximum starts at 1, 0/1 = 0, no NaN.
		{name: "every partition 0", part: pShort, allZero: true, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, c, j := testParams(release.Series{}), testCluster(), workedJob()
			p.Flags.NoNormalPart = tc.noNormal
			if tc.pjf >= 0 {
				c.Partitions[tc.part].PriorityJobFactor = uint16(tc.pjf)
			}
			if tc.allZero {
				for i := range c.Partitions {
					c.Partitions[i].PriorityJobFactor = 0
				}
			}
			j.Partitions = []int{tc.part}
			if got := compute(p, c, j).Partition; got != tc.want {
				t.Errorf("Partition = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("single partition of factor 1", func(t *testing.T) {
		// Only short (1): 1/max(1, 1) = 1.
		p, c, j := testParams(release.Series{}), testCluster(), workedJob()
		c.Partitions = c.Partitions[:1]
		j.Partitions = []int{pShort}
		if got := compute(p, c, j).Partition; got != 1 {
			t.Errorf("Partition = %v, want 1", got)
		}
	})
	t.Run("weight 0", func(t *testing.T) {
		p, c, j := testParams(release.Series{}), testCluster(), workedJob()
		p.Weights.Partition = 0
		if got := compute(p, c, j).Partition; got != 0 {
			t.Errorf("Partition = %v, want 0", got)
		}
	})
}

// TestQOSFactor: the QOS priority over the highest QOS priority (500).
func TestQOSFactor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		qos      []QOS
		max      uint32
		noNormal bool
		weight   uint32
		want     float64
	}{
		// 100/500 = 0.2.
		{"high", []QOS{qosHigh}, 500, false, 2000, 0.2},
		// 500/500 = 1.
		{"urgent", []QOS{qosUrgent}, 500, false, 2000, 1},
		// Priority 0: not set.
		{"normal", []QOS{qosNormal}, 500, false, 2000, 0},
		// NO_NORMAL_QOS: the raw 100.
		{"NO_NORMAL_QOS", []QOS{qosHigh}, 500, true, 2000, 100},
		// A highest priority of 0 (dumps that disagree): 0, not NaN or Inf.
		{"highest 0", []QOS{qosHigh}, 0, false, 2000, 0},
		// No QOS at all.
		{"no QOS", nil, 500, false, 2000, 0},
		// PriorityWeightQOS=0.
		{"weight 0", []QOS{qosHigh}, 500, false, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, c, j := testParams(release.Series{}), testCluster(), workedJob()
			p.Flags.NoNormalQOS, p.Weights.QOS = tc.noNormal, tc.weight
			c.MaxQOSPriority = tc.max
			j.QOS = tc.qos
			if got := compute(p, c, j).QOS; got != tc.want {
				t.Errorf("QOS = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAssocFactor: the association priority over the highest (200).
func TestAssocFactor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		prio     uint32
		max      uint32
		noNormal bool
		weight   uint32
		want     float64
	}{
		// 100/200 = 0.5.
		{"half", 100, 200, false, 500, 0.5},
		// 200/200 = 1.
		{"highest", 200, 200, false, 500, 1},
		// No priority: 0/200.
		{"none", 0, 200, false, 500, 0},
		// NO_NORMAL_ASSOC: the raw 100.
		{"NO_NORMAL_ASSOC", 100, 200, true, 500, 100},
		// No association has a priority: 0, not NaN.
		{"highest 0", 0, 0, false, 500, 0},
		// PriorityWeightAssoc=0.
		{"weight 0", 100, 200, false, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, c, j := testParams(release.Series{}), testCluster(), workedJob()
			p.Flags.NoNormalAssoc, p.Weights.Assoc = tc.noNormal, tc.weight
			c.MaxAssocPriority = tc.max
			j.AssocPriority = tc.prio
			if got := compute(p, c, j).Assoc; got != tc.want {
				t.Errorf("Assoc = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTRESFactors: each TRES count over the partition's total, raw with
// NO_NORMAL_TRES, none without PriorityWeightTRES.
func TestTRESFactors(t *testing.T) {
	t.Parallel()
	// In long (32 CPUs, 128000 MiB, 2 nodes, 4 GPUs), 16 CPUs, 32000 MiB,
	// 1 node, 1 GPU: cpu 16/32 = 0.5, mem 32000/128000 = 0.25, node
	// 1/2 = 0.5, gres/gpu 1/4 = 0.25; the rest 0.
	want := make([]float64, 9)
	want[tCPU], want[tMem], want[tNode], want[tGPU] = 0.5, 0.25, 0.5, 0.25
	t.Run("normalised", func(t *testing.T) {
		p, c, j := testParams(release.Series{}), testCluster(), workedJob()
		if got := compute(p, c, j).TRES; !slices.Equal(got, want) {
			t.Errorf("TRES = %v, want %v", got, want)
		}
	})
	t.Run("NO_NORMAL_TRES", func(t *testing.T) {
		p, c, j := testParams(release.Series{}), testCluster(), workedJob()
		p.Flags.NoNormalTRES = true
		raw := make([]float64, 9)
		raw[tCPU], raw[tMem], raw[tNode], raw[tGPU] = 16, 32000, 1, 1
		if got := compute(p, c, j).TRES; !slices.Equal(got, raw) {
			t.Errorf("TRES = %v, want %v", got, raw)
		}
	})
	t.Run("partition without the TRES", func(t *testing.T) {
		// A partition total of 0 gives 0, not Inf.
		p, c, j := testParams(release.Series{}), testCluster(), workedJob()
		c.Partitions[pLong].TRES[tGPU] = 0
		w := slices.Clone(want)
		w[tGPU] = 0
		if got := compute(p, c, j).TRES; !slices.Equal(got, w) {
			t.Errorf("TRES = %v, want %v", got, w)
		}
	})
	t.Run("PriorityWeightTRES unset", func(t *testing.T) {
		p, c, j := testParams(release.Series{}), testCluster(), workedJob()
		p.Weights.TRES, p.Weights.TRESConfig = nil, ""
		if got := compute(p, c, j).TRES; len(got) != 0 {
			t.Errorf("TRES = %v, want none", got)
		}
	})
	t.Run("short job vector", func(t *testing.T) {
		// A job listing only cpu: the other counts are 0.
		p, c, j := testParams(release.Series{}), testCluster(), workedJob()
		j.TRES = []uint64{16}
		w := make([]float64, 9)
		w[tCPU] = 0.5
		if got := compute(p, c, j).TRES; !slices.Equal(got, w) {
			t.Errorf("TRES = %v, want %v", got, w)
		}
	})
}

// TestParseFlags: PriorityFlags words matched by case-insensitive
// substring; NO_NORMAL_ALL sets all four NO_NORMAL_* flags.
func TestParseFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		items []string
		want  Flags
	}{
		{"none", nil, Flags{}},
		{"NO_NORMAL_ALL", []string{"NO_NORMAL_ALL"},
			Flags{NoNormalAssoc: true, NoNormalPart: true, NoNormalQOS: true, NoNormalTRES: true}},
		{"NO_NORMAL_PART alone", []string{"NO_NORMAL_PART"}, Flags{NoNormalPart: true}},
		{"lower case", []string{"no_normal_qos", "small_relative_to_time"},
			Flags{NoNormalQOS: true, SmallRelativeToTime: true}},
		{"with fair-share flags", []string{"NO_FAIR_TREE", "NO_NORMAL_ASSOC", "INCR_ONLY", "NO_NORMAL_TRES"},
			Flags{NoNormalAssoc: true, NoNormalTRES: true, IncrOnly: true}},
		{"accrue and running", []string{"ACCRUE_ALWAYS", "CALCULATE_RUNNING"},
			Flags{AccrueAlways: true, CalculateRunning: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseFlags(tc.items); got != tc.want {
				t.Errorf("ParseFlags(%q) = %+v, want %+v", tc.items, got, tc.want)
			}
		})
	}
}

// TestWorkedJob: the worked job in long, by hand:
//
//	age        675/1200 = 0.5625           × 1000  =  562.5
//	assoc      100/200  = 0.5              × 500   =  250
//	fair share 0.25                        × 10000 = 2500
//	job size   (1/4 + 16/64)/2 = 0.25      × 1000  =  250
//	partition  10/10 = 1                   × 1000  = 1000
//	QOS        100/500 = 0.2               × 2000  =  400
//	TRES       cpu 16/32 = 0.5             × 500   =  250
//	           mem 32000/128000 = 0.25     × 200   =   50
//	           gres/gpu 1/4 = 0.25         × 3000  =  750
//	sum                                            = 6012.5 → 6012
func TestWorkedJob(t *testing.T) {
	t.Parallel()
	p, c := testParams(release.Series{Major: 22, Minor: 5}), testCluster()
	r := oneRow(t, p, c, workedJob())
	got := [6]float64{r.Weighted.Age, r.Weighted.Assoc, r.Weighted.FairShare, r.Weighted.JobSize, r.Weighted.Partition, r.Weighted.QOS}
	if want := [6]float64{562.5, 250, 2500, 250, 1000, 400}; got != want {
		t.Errorf("weighted age, assoc, fair share, job size, partition, QOS = %v, want %v", got, want)
	}
	tres := make([]float64, 9)
	tres[tCPU], tres[tMem], tres[tGPU] = 250, 50, 750 // node has no weight
	if !slices.Equal(r.Weighted.TRES, tres) {
		t.Errorf("weighted TRES = %v, want %v", r.Weighted.TRES, tres)
	}
	if r.Priority != 6012 || r.Sum() != 6012.5 {
		t.Errorf("Priority = %d, Sum = %v; want 6012, 6012.5", r.Priority, r.Sum())
	}
	if r.JobID != 1001 || r.User != "alice" || r.Account != "chem" || r.Partition != "long" || r.QOS != "high" {
		t.Errorf("row names = %d %s %s %s %s", r.JobID, r.User, r.Account, r.Partition, r.QOS)
	}
	var n Factors
	r.Normalized(&n, &p.Weights)
	if n.Age != 0.5625 || n.Assoc != 0.5 || n.FairShare != 0.25 || n.JobSize != 0.25 || n.Partition != 1 || n.QOS != 0.2 ||
		n.TRES[tCPU] != 0.5 || n.TRES[tMem] != 0.25 || n.TRES[tNode] != 0 || n.TRES[tGPU] != 0.25 {
		t.Errorf("Normalized = %+v", n)
	}
}

// TestSumAndClamp: the site factor is added and nice subtracted; the sum
// is truncated, at least 1 (0 is a held job's), at most 2³²−1.
func TestSumAndClamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		edit     func(p *Params, j *Job)
		priority uint32
		sum      float64
	}{
		// 6012.5 − 100 = 5912.5 → 5912.
		{"nice 100", func(_ *Params, j *Job) { j.Nice = 100 }, 5912, 5912.5},
		// 6012.5 + 300 = 6312.5 → 6312 (a negative nice raises it).
		{"nice -300", func(_ *Params, j *Job) { j.Nice = -300 }, 6312, 6312.5},
		// 6012.5 + 50 = 6062.5 → 6062.
		{"site 50", func(_ *Params, j *Job) { j.Site = 50 }, 6062, 6062.5},
		// 6012.5 − 10000 < 1: clamped to 1 (sprio prints 1 too).
		{"nice past the sum", func(_ *Params, j *Job) { j.Nice = 10000 }, 1, 1},
		// The largest nice: 6012.5 − 2147483645 is far below 1.
		{"largest nice", func(_ *Params, j *Job) { j.Nice = 2147483645 }, 1, 1},
		// No weights at all: 0 → 1.
		{"no weights", func(p *Params, _ *Job) { p.Weights = Weights{} }, 1, 1},
		// Fair share 1 and QOS 1 at weight 2³²−1 each: 2·(2³²−1) =
		// 8589934590 > 2³²−1, so slurmctld keeps 4294967295; sprio's sum
		// is not capped.
		{"over 32 bits", func(p *Params, j *Job) {
			p.Weights = Weights{FairShare: math.MaxUint32, QOS: math.MaxUint32}
			j.FairShare, j.QOS = 1, []QOS{qosUrgent}
		}, math.MaxUint32, 8589934590},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, c, j := testParams(release.Series{}), testCluster(), workedJob()
			tc.edit(&p, &j)
			r := oneRow(t, p, c, j)
			if r.Priority != tc.priority || r.Sum() != tc.sum {
				t.Errorf("Priority = %d, Sum = %v; want %d, %v", r.Priority, r.Sum(), tc.priority, tc.sum)
			}
		})
	}
	t.Run("clamp", func(t *testing.T) {
		for _, tc := range []struct {
			in   float64
			want uint32
		}{{-5, 1}, {0, 1}, {0.99, 1}, {1, 1}, {1.99, 1}, {4294967295.9, 4294967295}, {4294967296, 4294967295}, {1e30, 4294967295}} {
			if got := clampPriority(tc.in); got != tc.want {
				t.Errorf("clampPriority(%v) = %d, want %d", tc.in, got, tc.want)
			}
		}
	})
}

// TestHeldAndDirect: a held job has no row; an admin-set priority replaces
// the computed one and clears the factors.
func TestHeldAndDirect(t *testing.T) {
	t.Parallel()
	p, c := testParams(release.Series{}), testCluster()
	t.Run("held", func(t *testing.T) {
		j := workedJob()
		j.Held = true
		if rows := rowsOf(t, p, c, j); len(rows) != 0 {
			t.Errorf("held job: %d rows, want none", len(rows))
		}
	})
	t.Run("no partition", func(t *testing.T) {
		j := workedJob()
		j.Partitions = nil
		if rows := rowsOf(t, p, c, j); len(rows) != 0 {
			t.Errorf("job without partition: %d rows, want none", len(rows))
		}
	})
	t.Run("direct", func(t *testing.T) {
		j := workedJob()
		j.DirectPriority = 999
		r := oneRow(t, p, c, j)
		if r.Direct != 999 || r.Priority != 999 || r.Sum() != 999 || r.Weighted.Age != 0 || len(r.Weighted.TRES) != 0 || r.Site != 0 || r.Nice != 0 {
			t.Errorf("direct row = %+v", r)
		}
	})
	t.Run("direct, two partitions, 22.05", func(t *testing.T) {
		// 22.05 copies the cleared factors of each partition unmarked
		// and sets the partition term: short 1/10 × 1000 = 100, long
		// 1000; site and nice are 0 − NICE_OFFSET.
		p := testParams(release.Series{Major: 22, Minor: 5})
		j := workedJob()
		j.DirectPriority = 999
		j.Partitions = []int{pShort, pLong}
		rows := rowsOf(t, p, c, j)
		if len(rows) != 2 {
			t.Fatalf("%d rows, want 2", len(rows))
		}
		for i, part := range []float64{100, 1000} {
			r := rows[i]
			if r.Direct != 0 || r.Priority != 999 || r.Weighted.Partition != part || r.Site != -2147483648 || r.Nice != -2147483648 || r.Sum() != part {
				t.Errorf("row %d = %+v, want partition %v", i, r, part)
			}
		}
	})
	t.Run("direct, two partitions, 23.02", func(t *testing.T) {
		p := testParams(release.Series{Major: 23, Minor: 2})
		j := workedJob()
		j.DirectPriority = 999
		j.Partitions = []int{pShort, pLong}
		for i, r := range rowsOf(t, p, c, j) {
			if r.Direct != 999 || r.Weighted.Partition != 0 || r.Site != 0 {
				t.Errorf("row %d = %+v", i, r)
			}
		}
	})
}

// TestMultiPartition: a job submitted to short and long has a row per
// partition with that partition's partition and TRES terms.
//
//	short: partition 1/10 × 1000 = 100; TRES cpu 16/64 × 500 = 125,
//	       mem 32000/256000 × 200 = 25, gpu 1/8 × 3000 = 375 (525);
//	       100 + (562.5 + 250 + 2500 + 250 + 400 + 525) = 4587.5 → 4587
//	long:  1000 + (562.5 + 250 + 2500 + 250 + 400 + 1050) = 6012.5 → 6012
func TestMultiPartition(t *testing.T) {
	t.Parallel()
	p, c := testParams(release.Series{Major: 22, Minor: 5}), testCluster()
	j := workedJob()
	j.Partitions = []int{pShort, pLong}
	rows := rowsOf(t, p, c, j)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	want := []struct {
		name      string
		partition float64
		tres      [3]float64 // cpu, mem, gpu
		priority  uint32
		sum       float64
	}{
		{"short", 100, [3]float64{125, 25, 375}, 4587, 4587.5},
		{"long", 1000, [3]float64{250, 50, 750}, 6012, 6012.5},
	}
	for i, w := range want {
		r := rows[i]
		tres := [3]float64{r.Weighted.TRES[tCPU], r.Weighted.TRES[tMem], r.Weighted.TRES[tGPU]}
		if r.Partition != w.name || r.Weighted.Partition != w.partition || tres != w.tres || r.Priority != w.priority || r.Sum() != w.sum {
			t.Errorf("row %d = %s part %v TRES %v priority %d sum %v; want %+v",
				i, r.Partition, r.Weighted.Partition, tres, r.Priority, r.Sum(), w)
		}
		if r.Weighted.Age != 562.5 || r.Weighted.QOS != 400 {
			t.Errorf("row %d: the job's other terms changed: %+v", i, r.Weighted)
		}
	}
	t.Run("PriorityTier order", func(t *testing.T) {
		// gpu has PriorityTier 2: its row comes first whatever the
		// order requested; short and long (tier 1) keep theirs.
		j := workedJob()
		j.Partitions = []int{pLong, pShort, pGPU}
		var names []string
		for _, r := range rowsOf(t, p, c, j) {
			names = append(names, r.Partition)
		}
		if want := []string{"gpu", "long", "short"}; !slices.Equal(names, want) {
			t.Errorf("rows %v, want %v", names, want)
		}
	})
}

// TestMultiQOS: from 24.11 a job asking for QOS high, urgent and normal
// has a row per partition and QOS, the QOS ordered urgent (500), high
// (100), normal (0). The job's own QOS is urgent (500/500 × 2000 = 2000);
// high is 100/500 × 2000 = 400; normal, of priority 0, keeps the job's
// 2000. The other terms are the worked job's: 6012.5 − 400 = 5612.5.
func TestMultiQOS(t *testing.T) {
	t.Parallel()
	c := testCluster()
	j := workedJob()
	j.QOS = []QOS{qosHigh, qosUrgent, qosNormal}
	t.Run("24.11", func(t *testing.T) {
		p := testParams(release.Series{Major: 24, Minor: 11})
		rows := rowsOf(t, p, c, j)
		want := []struct {
			qos      string
			term     float64
			priority uint32
		}{
			// 1000 + (562.5+250+2500+250+2000+1050) = 7612.5
			{"urgent", 2000, 7612},
			// 1000 + (…+400…) = 6012.5
			{"high", 400, 6012},
			{"normal", 2000, 7612},
		}
		if len(rows) != len(want) {
			t.Fatalf("%d rows, want %d", len(rows), len(want))
		}
		for i, w := range want {
			if r := rows[i]; r.QOS != w.qos || r.Weighted.QOS != w.term || r.Priority != w.priority {
				t.Errorf("row %d = %s %v %d, want %+v", i, r.QOS, r.Weighted.QOS, r.Priority, w)
			}
		}
	})
	t.Run("24.11 two partitions", func(t *testing.T) {
		p := testParams(release.Series{Major: 24, Minor: 11})
		j := j
		j.Partitions = []int{pShort, pLong}
		var got []string
		for _, r := range rowsOf(t, p, c, j) {
			got = append(got, r.Partition+"/"+r.QOS)
		}
		want := []string{"short/urgent", "short/high", "short/normal", "long/urgent", "long/high", "long/normal"}
		if !slices.Equal(got, want) {
			t.Errorf("rows %v, want %v", got, want)
		}
	})
	t.Run("24.05 uses the first QOS only", func(t *testing.T) {
		// Before 24.11 a job has one QOS: high, 400, 6012.5.
		p := testParams(release.Series{Major: 24, Minor: 5})
		r := oneRow(t, p, c, j)
		if r.QOS != "high" || r.Weighted.QOS != 400 || r.Priority != 6012 {
			t.Errorf("row = %s %v %d, want high 400 6012", r.QOS, r.Weighted.QOS, r.Priority)
		}
	})
}

// TestIncrOnly: with INCR_ONLY slurmctld keeps the higher of the old and
// the new priority.
func TestIncrOnly(t *testing.T) {
	t.Parallel()
	p := testParams(release.Series{})
	for _, tc := range []struct {
		name            string
		incrOnly        bool
		prev, comp, out uint32
	}{
		{"lower without the flag", false, 5000, 4000, 4000},
		{"lower with INCR_ONLY", true, 5000, 4000, 5000},
		{"higher with INCR_ONLY", true, 4000, 5000, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.Flags.IncrOnly = tc.incrOnly
			if got := p.Next(tc.prev, tc.comp); got != tc.out {
				t.Errorf("Next(%d, %d) = %d, want %d", tc.prev, tc.comp, got, tc.out)
			}
		})
	}
}

// TestNoNormalAll: Slurm's test24.6 (testsuite/expect/test24.6 at
// slurm-22-05-8-1): PriorityFlags=NO_NORMAL_ALL, weights assoc, partition
// and QOS 1, PriorityWeightTRES=cpu=1; association priority 100, QOS
// priority 200, partitions of PriorityJobFactor 10 and 20; a job on all n
// CPUs of a partition shows ASSOC 100, PARTITION 10 (20), QOS 200 and
// TRES cpu=n.
func TestNoNormalAll(t *testing.T) {
	t.Parallel()
	const n = 4
	tres := []string{"cpu", "mem", "energy", "node", "billing"}
	c := Cluster{
		TRES: tres, Nodes: 1, CPUs: n, MaxAssocPriority: 100, MaxQOSPriority: 200,
		Partitions: []Partition{
			{Name: "p1", PriorityJobFactor: 10, TRES: []uint64{n, 1000, 0, 1}},
			{Name: "p2", PriorityJobFactor: 20, TRES: []uint64{n, 1000, 0, 1}},
		},
	}
	p := Params{
		Weights: Weights{Assoc: 1, Partition: 1, QOS: 1, JobSize: 1, TRES: []float64{1}, TRESConfig: "cpu=1"},
		Flags:   ParseFlags([]string{"NO_NORMAL_ALL"}),
		Release: release.Series{Major: 22, Minor: 5},
	}
	j := Job{ID: 3, AssocPriority: 100, QOS: []QOS{{Name: "tq1", Priority: 200}},
		Partitions: []int{0, 1}, Nodes: 1, CPUs: n, TRES: []uint64{n, 100, 0, 1}}
	rows := p.AppendRows(nil, &c, []Job{j}, tick)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	for i, part := range []float64{10, 20} {
		r := rows[i]
		if r.Weighted.Assoc != 100 || r.Weighted.Partition != part || r.Weighted.QOS != 200 || r.Weighted.TRES[0] != n {
			t.Errorf("row %d = %+v, want assoc 100, partition %v, QOS 200, cpu %d", i, r.Weighted, part, n)
		}
	}
}

// TestAppendRowsReuse: rows past the end of the slice are reused, TRES
// included, with the same result and no allocation once the buffer has
// grown.
func TestAppendRowsReuse(t *testing.T) {
	p, c := testParams(release.Series{}), testCluster()
	a, b := workedJob(), workedJob()
	b.ID, b.Partitions = 1002, []int{pShort, pLong}
	jobs := []Job{a, b}
	first := p.AppendRows(nil, &c, jobs, tick)
	want := make([]Row, len(first))
	for i, r := range first {
		want[i] = r
		want[i].Weighted.TRES = slices.Clone(r.Weighted.TRES)
	}
	buf := first[:0]
	allocs := testing.AllocsPerRun(20, func() {
		buf = p.AppendRows(buf[:0], &c, jobs, tick)
	})
	for i := range want {
		if !rowEqual(buf[i], want[i]) {
			t.Errorf("reused row %d = %+v, want %+v", i, buf[i], want[i])
		}
	}
	// The multi-partition job weighs its own factors once into a fresh
	// Factors; nothing else allocates.
	if allocs > 2 {
		t.Errorf("AppendRows into a grown buffer: %v allocations, want at most 2", allocs)
	}
	// A Computer kept from call to call reuses its scratch space too.
	var cp Computer
	buf = cp.AppendRows(&p, buf[:0], &c, jobs, tick)
	allocs = testing.AllocsPerRun(20, func() {
		buf = cp.AppendRows(&p, buf[:0], &c, jobs, tick)
	})
	for i := range want {
		if !rowEqual(buf[i], want[i]) {
			t.Errorf("Computer's row %d = %+v, want %+v", i, buf[i], want[i])
		}
	}
	if allocs != 0 {
		t.Errorf("Computer.AppendRows into a grown buffer: %v allocations, want 0", allocs)
	}
}

// rowEqual compares two rows, TRES by value.
func rowEqual(a, b Row) bool { return reflect.DeepEqual(a, b) }

// BenchmarkAppendRows: rows per second for 10 000 pending jobs, one in
// three in two partitions.
//
//	go test ./priority -run '^$' -bench AppendRows -benchmem
func BenchmarkAppendRows(b *testing.B) {
	p, c := testParams(release.Series{}), testCluster()
	jobs := make([]Job, 10000)
	for i := range jobs {
		jobs[i] = workedJob()
		jobs[i].ID = uint32(i + 1)
		jobs[i].EligibleSec = tick - int64(i%5000)
		if i%3 == 0 {
			jobs[i].Partitions = []int{pShort, pLong}
		}
	}
	rows := p.AppendRows(nil, &c, jobs, tick) // grow the buffer once
	b.ReportAllocs()
	for b.Loop() {
		rows = p.AppendRows(rows[:0], &c, jobs, tick)
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestPriorityAt: a row's Terms give, at any time, the priority
// AppendRows computes then, to the bit: for a job in one partition, in
// several partitions and QOS (24.11: the other order of the sum), not yet
// eligible, past PriorityMaxAge, with nice and site, with an admin-set
// priority, and with no age weight.
func TestPriorityAt(t *testing.T) {
	t.Parallel()
	several := workedJob()
	several.Partitions, several.QOS = []int{pShort, pLong, pGPU}, []QOS{qosHigh, qosUrgent}
	niced := workedJob()
	niced.Nice, niced.Site, niced.FairShare = -300, 7, 0.731
	later := workedJob()
	later.EligibleSec = tick + 500 // eligible only after some of the times below
	direct := workedJob()
	direct.DirectPriority = 4242
	noAge := testParams(release.Series{Major: 24, Minor: 11})
	noAge.Weights.Age = 0
	cases := []struct {
		name string
		p    Params
		j    Job
	}{
		{"one partition", testParams(release.Series{Major: 22, Minor: 5}), workedJob()},
		{"several partitions, 22.05", testParams(release.Series{Major: 22, Minor: 5}), several},
		{"several partitions and QOS, 24.11", testParams(release.Series{Major: 24, Minor: 11}), several},
		{"nice and site", testParams(release.Series{Major: 23, Minor: 2}), niced},
		{"eligible later", testParams(release.Series{Major: 22, Minor: 5}), later},
		{"admin-set", testParams(release.Series{Major: 23, Minor: 2}), direct},
		{"no age weight", noAge, several},
	}
	c := testCluster()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var cp Computer
			_, terms := cp.AppendRowsTerms(&tc.p, nil, nil, &c, []Job{tc.j}, tick-3600)
			if len(terms) == 0 {
				t.Fatal("no terms")
			}
			// From before eligibility to well past PriorityMaxAge (1200 s),
			// through times whose age factor is not a round number.
			for _, at := range []int64{tick - 7200, tick, tick + 1, tick + 333, tick + 499, tick + 500, tick + 617, tick + 1199, tick + 1700, tick + 99999} {
				rows := tc.p.AppendRows(nil, &c, []Job{tc.j}, at)
				if len(rows) != len(terms) {
					t.Fatalf("at %d: %d rows, %d terms", at, len(rows), len(terms))
				}
				for i := range rows {
					if got := tc.p.PriorityAt(&terms[i], at); got != rows[i].Priority {
						t.Errorf("at %d, row %d (%s): PriorityAt %d, AppendRows %d", at, i, rows[i].Partition, got, rows[i].Priority)
					}
					if c.Partitions[terms[i].Partition].Name != rows[i].Partition {
						t.Errorf("row %d: terms of partition %d, row of %s", i, terms[i].Partition, rows[i].Partition)
					}
				}
			}
		})
	}
}
