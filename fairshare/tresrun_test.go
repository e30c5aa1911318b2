package fairshare

import (
	"slices"
	"testing"
)

func TestCommittedSecs(t *testing.T) {
	const start = 36000 // 10:00
	for _, c := range []struct {
		name           string
		alloc          uint64
		limitSec, tick int64
		factor         float64
		want           uint64
	}{
		// 4 CPUs, limit 4 h, at 12:00: 2 h = 7200 s left → 28800 cpu-s.
		{"running", 4, 4 * 3600, 43200, 1, 28800},
		// UsageFactor 2 doubles the seconds left: 1800 s × 2 × 2 CPUs.
		{"factor 2", 2, 7200 + 1800, 43200, 2, 7200},
		// UsageFactor 0.5 of 7 s left is 3.5 s, truncated to 3 as C's cast
		// truncates: × 10 = 30.
		{"factor 0.5 truncates", 10, 7200 + 7, 43200, 0.5, 30},
		{"at its limit", 8, 7200, 43200, 1, 0},
		{"past its limit", 8, 3600, 43200, 1, 0},
		{"UsageFactor 0", 8, 36000, 43200, 0, 0},
		{"no allocation", 0, 36000, 43200, 1, 0},
		// No limit: 4294967295 min × 60 = 257698037700 s from the start,
		// 7200 s of it run.
		{"INFINITE", 1, InfiniteTimeLimitMin * 60, 43200, 1, 257698037700 - 7200},
	} {
		if got := CommittedSecs(c.alloc, start, c.limitSec, c.tick, c.factor); got != c.want {
			t.Errorf("%s: CommittedSecs = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestRollUpTRESRun(t *testing.T) {
	// root → A → {A/u1, A/u2}, root → B. The universe also knows A/gone,
	// which this tree lacks: its values go to A (Project).
	tree, err := NewTree([]Node{
		{Account: "root", Parent: -1},
		{Account: "A", Parent: 0, Shares: 1},
		{Account: "A", User: "u1", Parent: 1, Shares: 1},
		{Account: "A", User: "u2", Parent: 1, Shares: 1},
		{Account: "B", Parent: 0, Shares: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := NewTree([]Node{
		{Account: "root", Parent: -1},
		{Account: "A", Parent: 0, Shares: 1},
		{Account: "A", User: "gone", Parent: 1, Shares: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	u, err := NewUniverse([]*Tree{tree, gone})
	if err != nil {
		t.Fatal(err)
	}
	p := u.Project(tree)
	const nT = 2 // cpu, mem
	own := make([]uint64, len(p.Credit)*nT)
	set := func(k Key, cpu, mem uint64) {
		i, ok := u.Index(k)
		if !ok {
			t.Fatalf("universe lacks %v", k)
		}
		own[i*nT], own[i*nT+1] = cpu, mem
	}
	set(Key{Account: "A", User: "u1"}, 600, 60000)
	set(Key{Account: "A", User: "u2"}, 20, 1000)
	set(Key{Account: "A", User: "gone"}, 3, 7)
	set(Key{Account: "B"}, 5, 9)
	out := make([]uint64, tree.Len()*nT)
	RollUpTRESRun(p, nT, own, out)
	// By hand: u1 600/60000, u2 20/1000, A = u1 + u2 + gone = 623/61007,
	// B 5/9, root = A + B = 628/61016.
	want := map[Key][2]uint64{
		{Account: "root"}:          {628, 61016},
		{Account: "A"}:             {623, 61007},
		{Account: "A", User: "u1"}: {600, 60000},
		{Account: "A", User: "u2"}: {20, 1000},
		{Account: "B"}:             {5, 9},
	}
	for pos := range tree.Len() {
		k := Key{Account: tree.Account[pos], User: tree.User[pos]}
		w := want[k]
		if got := out[pos*nT : pos*nT+nT]; !slices.Equal(got, w[:]) {
			t.Errorf("%v: %v, want %v", k, got, want[k])
		}
	}
}

func TestAppendTRESRunMins(t *testing.T) {
	names := []string{"cpu", "mem", "energy", "node", "gres/gpu"}
	// Minutes are floored: 28859 s is 480 min 59 s.
	got := string(AppendTRESRunMins([]byte("x:"), names, []uint64{28859, 983040 * 60, 0, 119, 60}))
	if want := "x:cpu=480,mem=983040,energy=0,node=1,gres/gpu=1"; got != want {
		t.Errorf("AppendTRESRunMins = %q, want %q", got, want)
	}
}
