package live

import (
	"math"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
)

// TestRunningAt checks which jobs runningAt puts at each snapshot, by
// hand: snapshots at 1000, 1200, 1250 and 5000 (period 300). A job runs at
// a snapshot s when start < s and it has not ended by s (or it is still
// running; a job starting in s's second is left to the next, as a run
// ending at s leaves it to the next run); its residue counts from the
// first snapshot at or after it ended. First every job ends before a
// decay tick of its end's second (endBy = End: ended at that second's
// instant); then none does (endBy = End + 1: a snapshot in the end's
// second still sees the job running).
func TestRunningAt(t *testing.T) {
	t.Parallel()
	jobs := decay.Jobs{
		Start: []int64{0, 900, 899, 100, 1000, 1199, 4800, 600, 10, 5000, 6000},
		End:   []int64{decay.Running, 2000, 900, 1201, 1100, 1200, decay.Running, 4801, 20, 5000, 7000},
	}
	// 0: from 0, running: all four.
	// 1: 900-2000: 1000, 1200, 1250; ended by 5000.
	// 2: 899-900: none; ended by 1000.
	// 3: 100-1201: 1000, 1200 (ends after it); ended by 1250.
	// 4: 1000-1100: none (it started in 1000's second); ended by 1200.
	// 5: 1199-1200: ends in the second of 1200: none; ended by 1200.
	// 6: 4800, running: 5000.
	// 7: 600-4801: 1000, 1200, 1250; ended by 5000.
	// 8: 10-20: none; ended by 1000.
	// 9: 5000-5000, zero length: none; ended by 5000.
	// 10: 6000-7000, after the last snapshot: none.
	snaps := []int64{1000, 1200, 1250, 5000}
	wantAt := [][]int32{{0, 1, 3, 7}, {0, 1, 3, 7}, {0, 1, 7}, {0, 6}}
	for _, c := range []struct {
		since int64
		ended [][]int32
	}{
		{math.MaxInt64, [][]int32{nil, nil, nil, nil}},
		{0, [][]int32{{2, 8}, {4, 5}, {3}, {1, 7, 9}}},
		// Ends at or after 1150: 5 (1200), 3 (1201), 1, 7, 9.
		{1150, [][]int32{nil, {5}, {3}, {1, 7, 9}}},
	} {
		at, ended := runningAt(jobs, snaps, 300, c.since, func(j int) int64 { return jobs.End[j] })
		for i := range snaps {
			if !slices.Equal(at[i], wantAt[i]) {
				t.Errorf("since %d, snapshot %d: running %v, want %v", c.since, snaps[i], at[i], wantAt[i])
			}
			if !slices.Equal(ended[i], c.ended[i]) {
				t.Errorf("since %d, snapshot %d: ended %v, want %v", c.since, snaps[i], ended[i], c.ended[i])
			}
		}
	}
	// A window too long for the lookup table (binary search): the far
	// snapshot sees the two jobs still running, 0 and 6.
	far := int64(300 << 23)
	at, _ := runningAt(jobs, []int64{1000, 1200, far}, 300, math.MaxInt64, func(j int) int64 { return jobs.End[j] })
	for i, w := range [][]int32{{0, 1, 3, 7}, {0, 1, 3, 7}, {0, 6}} {
		if !slices.Equal(at[i], w) {
			t.Errorf("long window, snapshot %d: jobs %v, want %v", i, at[i], w)
		}
	}
	// Two snapshots in one period: 1001 and 1299 (period 300 from 1001).
	// Job 0, 1100-1299, runs at neither (it starts after 1001 and ends
	// in 1299's second) and its residue counts from 1299; job 1,
	// 1001-1300, runs at 1299 only (it started in 1001's second).
	two := decay.Jobs{Start: []int64{1100, 1001}, End: []int64{1299, 1300}}
	at, ended := runningAt(two, []int64{1001, 1299}, 300, 0, func(j int) int64 { return two.End[j] })
	if len(at[0]) != 0 || !slices.Equal(at[1], []int32{1}) || !slices.Equal(ended[1], []int32{0}) {
		t.Errorf("one period: running %v, ended %v; want [[] [1]], [[] [0]]", at, ended)
	}

	// No tick in any end's second: job 5 (1199-1200) runs at 1200 and
	// its residue counts from 1250; job 9 (5000-5000) never ran and
	// ends after the last snapshot's instant; the others as above.
	later := func(j int) int64 { return jobs.End[j] + 1 }
	wantAt = [][]int32{{0, 1, 3, 7}, {0, 1, 3, 5, 7}, {0, 1, 7}, {0, 6}}
	for _, c := range []struct {
		since int64
		ended [][]int32
	}{
		{0, [][]int32{{2, 8}, {4}, {3, 5}, {1, 7}}},
		{1150, [][]int32{nil, nil, {3, 5}, {1, 7}}},
	} {
		at, ended := runningAt(jobs, snaps, 300, c.since, later)
		for i := range snaps {
			if !slices.Equal(at[i], wantAt[i]) {
				t.Errorf("ends after the tick, since %d, snapshot %d: running %v, want %v", c.since, snaps[i], at[i], wantAt[i])
			}
			if !slices.Equal(ended[i], c.ended[i]) {
				t.Errorf("ends after the tick, since %d, snapshot %d: ended %v, want %v", c.since, snaps[i], ended[i], c.ended[i])
			}
		}
	}
}

// TestTRESRunCells runs TRESRun.Cells over one association (root → A →
// A/u) and the docs/slurm-versions.md §6 job (cpu=2, mem=1000, node=1, billing=2, limit
// 10 min, q = 0.5, start 31, end 150) on ticks 0, 60, 120, 130 (explicit:
// slurmctld restarted at 130), 190, 250, …, with a second job (cpu=1,
// q = 0.5, limit 10 min, start 140, end 200 after the tick 190 in its
// second) and a restart at 260. By hand, cpu and mem seconds of A/u:
//
//	at 100 (job 1, tick 60: 600 − 2·14 = 572): cpu=9 (572/60),
//	mem=4766 (286000/60)
//	at 150 (job 1 ends in this second, no tick in it: still running at
//	150.000, docs/slurm-semantics.md §2.9; rebuilt at the restart 130,
//	the restart case of docs/slurm-versions.md §6: 2·300 − ⌊2·0.5·(120 −
//	31)⌋ = 511, tick 130 takes 2·⌊10·0.5⌋ = 10: cpu 501; mem 300000 −
//	44500 − 5000 = 250500; job 2 running, started after the restart and
//	no tick since its start: ⌊600·0.5⌋ = 300): cpu 801 → 13, mem 250500
//	→ 4175
//	at 200 (job 1 ended: residue 1 / 500, §6; job 2 ends in this second
//	with no tick in it: running, 300 − ⌊(190 − 140)·0.5⌋ = 275): cpu 276
//	→ 4, mem 500 → 8
//	at 260 (job 2 ended: end ⌊(740 − 190)·0.5⌋ = 275, residue 0; the
//	restart clears job 1's residue): nothing
func TestTRESRunCells(t *testing.T) {
	t.Parallel()
	tree, uni, p := project(t, []fairshare.Node{
		{Account: "root", Parent: -1},
		{Account: "A", Parent: 0, Shares: 1},
		{Account: "A", User: "u", Parent: 1, Shares: 1},
	})
	u, _ := uni.Index(fairshare.Key{Account: "A", User: "u"})
	dict := record.NewJobDict()
	half := dict.Name("half")
	tres1 := dict.TRESSet(map[string]float64{"cpu": 2, "mem": 1000, "node": 1, "billing": 2})
	tres2 := dict.TRESSet(map[string]float64{"cpu": 1})
	sched, err := decay.NewSchedule(0, 60, []int64{120, 130})
	if err != nil {
		t.Fatal(err)
	}
	jobs := decay.Jobs{Start: []int64{31, 140}, End: []int64{150, 200}, Assoc: []int32{int32(u), int32(u)}}
	snaps := []int64{100, 150, 200, 260}
	r := &TRESRun{
		names: []string{"cpu", "mem"}, jobs: jobs, dict: dict,
		extra:  &Extra{TRES: []uint32{tres1, tres2}, QOS: []uint32{half, half}, LimitMin: []uint32{10, 10}},
		factor: func(string) float64 { return 0.5 },
		sched:  sched, after: map[int32]bool{1: true}, restarts: []int64{130, 260}, snaps: snaps,
		qos: map[uint32]float64{},
	}
	r.at, r.ended = runningAt(jobs, snaps, 60, 120, r.endBy) // the log begins at its first tick, 120
	for i, want := range []string{"cpu=9,mem=4766", "cpu=13,mem=4175", "cpu=4,mem=8", ""} {
		cells, err := r.Cells(i, snaps[i], p, len(p.Credit))
		if err != nil {
			t.Fatal(err)
		}
		for pos, c := range cells {
			if c != want {
				t.Errorf("at %d, %s/%s: %q, want %q", snaps[i], tree.Account[pos], tree.User[pos], c, want)
			}
		}
	}
	if _, err := r.Cells(0, 101, p, len(p.Credit)); err == nil {
		t.Error("cells took a time that is not the snapshot's")
	}
}

// project builds the tree of nodes, its universe and its projection.
func project(t *testing.T, nodes []fairshare.Node) (*fairshare.Tree, *fairshare.Universe, *fairshare.Projection) {
	t.Helper()
	tree, err := fairshare.NewTree(nodes)
	if err != nil {
		t.Fatal(err)
	}
	uni, err := fairshare.NewUniverse([]*fairshare.Tree{tree})
	if err != nil {
		t.Fatal(err)
	}
	return tree, uni, uni.Project(tree)
}
