package queue

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/priority"
)

// TestAssocByPartition checks that a waiting job's ASSOC and FAIRSHARE
// factors are those of its own association, chosen by its partition
// (docs/slurm-semantics.md §4.4, §13.2): slurmctld looks the association
// up with the job's partition, falling back to the user's association
// without one (assoc_mgr.c, assoc_mgr_fill_in_assoc), and
// priority/multifactor takes both factors from job_ptr->assoc_ptr.
//
// The tree, worked by hand: root → dept (1 share) → gus in partition
// fast (1 share, usage 400), gus in partition batch (1 share, usage 100),
// ann without a partition (2 shares, usage 500). dept's level shares are
// 4 and its usage 1000, so Fair Tree's LevelFS = S/U is, for gus/fast,
// .25/.4 = 0.625; gus/batch .25/.1 = 2.5; ann .5/.5 = 1. Ranked by LevelFS
// the three users get FairShare 3/3 (gus/batch), 2/3 (ann), 1/3
// (gus/fast). Association priorities: gus/fast 40, gus/batch 80 (the
// value it inherits from dept), ann 80; the highest is 80.
//
// With PriorityWeightAssoc 1000 and PriorityWeightFairshare 900:
//
//	gus in fast:  ASSOC 1000·40/80 = 500,  FAIRSHARE 900·1/3 = 300
//	gus in batch: ASSOC 1000·80/80 = 1000, FAIRSHARE 900·3/3 = 900
//	ann in fast (no association of fast): her own, 1000 and 900·2/3 = 600
//	ann in fast,batch: one row per partition, both with her association
//	(slurmctld refuses a job in several partitions whose associations
//	differ: job_mgr.c, _check_for_part_assocs)
//
// Keyed by account and user only, gus's two jobs got the factors of one
// and the same association.
func TestAssocByPartition(t *testing.T) {
	t.Parallel()
	nodes := []fairshare.Node{
		{Account: "root", Parent: -1, Shares: 1},
		{Account: "dept", Parent: 0, Shares: 1},
		{Account: "dept", User: "gus", Partition: "fast", Parent: 1, Shares: 1},
		{Account: "dept", User: "gus", Partition: "batch", Parent: 1, Shares: 1},
		{Account: "dept", User: "ann", Parent: 1, Shares: 2},
	}
	tree, err := fairshare.NewTree(nodes)
	if err != nil {
		t.Fatal(err)
	}
	usage := make([]float64, tree.Len())
	for p := range usage {
		switch {
		case tree.User[p] == "gus" && tree.Partition[p] == "fast":
			usage[p] = 400
		case tree.User[p] == "gus" && tree.Partition[p] == "batch":
			usage[p] = 100
		case tree.User[p] == "ann":
			usage[p] = 500
		case tree.Account[p] == "dept" && tree.User[p] == "":
			usage[p] = 1000
		case tree.Parent[p] < 0:
			usage[p] = 1000
		}
	}
	var res fairshare.Result
	fairshare.Compute(fairshare.FairTreeAlgo, tree, usage, 1, &res)

	cluster := priority.Cluster{Nodes: 1, CPUs: 1, MaxAssocPriority: 80,
		Partitions: []priority.Partition{{Name: "fast", PriorityJobFactor: 1}, {Name: "batch", PriorityJobFactor: 1}}}
	dump := Dump{Cluster: cluster, Assoc: map[AssocKey]uint32{
		{Account: "dept", User: "gus", Partition: "fast"}:  40,
		{Account: "dept", User: "gus", Partition: "batch"}: 80,
		{Account: "dept", User: "ann"}:                     80,
	}}
	params := priority.Params{Weights: priority.Weights{Assoc: 1000, FairShare: 900}, MaxAgeSec: 3600,
		Release: release.Series{Major: 24, Minor: 11}}
	m := NewModel(params, cluster, []uint32{60, 60}, nil, []Dump{dump})
	const t0 = 100000
	job := func(id uint32, user, parts string) Job {
		return Job{ID: id, Who: m.Who(user, "dept"), Where: m.Where("normal", parts), Nodes: 1, CPUs: 1,
			TimeLimitMin: 60, Submit: t0, Eligible: t0, Ran: -1}
	}
	jobs := []Job{job(1, "gus", "fast"), job(2, "gus", "batch"), job(3, "ann", "fast"), job(4, "ann", "fast,batch")}
	p := &Writer{Model: m, Jobs: jobs, PendingOnly: true}
	p.Add(t0+60, t0+60, 0, tree, &res)
	var got []string
	for _, r := range m.AppendRecords(nil, &p.Out) {
		got = append(got, fmt.Sprintf("%d %s %s assoc=%.0f fs=%.0f", r.JobID, r.User, r.Partition,
			math.Round(r.AssocW*1e6)/1e6, math.Round(r.FairShareW*1e6)/1e6))
	}
	slices.Sort(got)
	want := []string{
		"1 gus fast assoc=500 fs=300",
		"2 gus batch assoc=1000 fs=900",
		"3 ann fast assoc=1000 fs=600",
		"4 ann batch assoc=1000 fs=600",
		"4 ann fast assoc=1000 fs=600",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%q\nwant\n%q", got, want)
	}
}

// TestLookupAssoc checks assoc_mgr_fill_in_assoc's choice: the
// association of the partition, else the user's without one, else none.
func TestLookupAssoc(t *testing.T) {
	t.Parallel()
	m := map[AssocKey]int{
		{Account: "a", User: "u", Partition: "p"}: 1,
		{Account: "a", User: "u"}:                 2,
		{Account: "a", User: "v", Partition: "p"}: 3,
	}
	for _, tc := range []struct {
		k    AssocKey
		want int
		ok   bool
	}{
		{AssocKey{"a", "u", "p"}, 1, true},
		{AssocKey{"a", "u", "q"}, 2, true},
		{AssocKey{"a", "u", ""}, 2, true},
		{AssocKey{"a", "v", "p"}, 3, true},
		{AssocKey{"a", "v", "q"}, 0, false},
		{AssocKey{"b", "u", "p"}, 0, false},
	} {
		if got, ok := lookupAssoc(m, tc.k); got != tc.want || ok != tc.ok {
			t.Errorf("lookupAssoc(%+v) = %d, %v; want %d, %v", tc.k, got, ok, tc.want, tc.ok)
		}
	}
}
