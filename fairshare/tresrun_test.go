package fairshare

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/decay"
)

// runSecs returns what RunSecs adds for job j at at on a fresh vector.
func runSecs(t *testing.T, s Ticks, restarts []int64, j RunJob, at int64, alloc []uint64) []uint64 {
	t.Helper()
	dst := make([]uint64, len(alloc))
	RunSecs(s, restarts, j, at, alloc, dst)
	return dst
}

func schedule(t *testing.T, anchor, period int64, ticks ...int64) *decay.Schedule {
	t.Helper()
	s, err := decay.NewSchedule(anchor, period, ticks)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The case of docs/slurm-versions.md §6: P = 60, ticks 0, 60, 120, …; one
// job cpu=2, mem=1000, energy (never counted), node=1, billing=2, limit
// 10 min, q = 0.5, start 31, end 150. Every value by hand:
//
//	start: ⌊600·0.5⌋ = 300 s a unit: 600 / 300000 / 0 / 300 / 600
//	tick 60: δ = 60 − 31 = 29, ⌊14.5⌋ = 14: 286 a unit
//	tick 120: δ = 60, ⌊30⌋ = 30: 256 a unit
//	end 150: from L = 120, ⌊(631 − 120)·0.5⌋ = ⌊255.5⌋ = 255: 1 a unit left
func TestRunSecsCase(t *testing.T) {
	t.Parallel()
	s := schedule(t, 0, 60)
	alloc := []uint64{2, 1000, 0, 1, 2}
	j := RunJob{Start: 31, End: 150, LimitSec: 600, Factor: 0.5}
	for _, c := range []struct {
		name string
		at   int64
		want []uint64
		mins string
	}{
		{"before the start", 30, []uint64{0, 0, 0, 0, 0}, "cpu=0,mem=0,energy=0,node=0,billing=0"},
		{"at the start", 31, []uint64{600, 300000, 0, 300, 600}, "cpu=10,mem=5000,energy=0,node=5,billing=10"},
		{"before the first tick", 59, []uint64{600, 300000, 0, 300, 600}, "cpu=10,mem=5000,energy=0,node=5,billing=10"},
		// 572/60 = 9, 286000/60 = 4766, 286/60 = 4.
		{"tick 60", 60, []uint64{572, 286000, 0, 286, 572}, "cpu=9,mem=4766,energy=0,node=4,billing=9"},
		// 512/60 = 8, 256000/60 = 4266, 256/60 = 4.
		{"tick 120", 120, []uint64{512, 256000, 0, 256, 512}, "cpu=8,mem=4266,energy=0,node=4,billing=8"},
		{"before the end", 149, []uint64{512, 256000, 0, 256, 512}, "cpu=8,mem=4266,energy=0,node=4,billing=8"},
		// The residue: 1 s a unit; 1000/60 = 16.
		{"the residue at the end", 150, []uint64{2, 1000, 0, 1, 2}, "cpu=0,mem=16,energy=0,node=0,billing=0"},
		{"the residue long after", 100000, []uint64{2, 1000, 0, 1, 2}, "cpu=0,mem=16,energy=0,node=0,billing=0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := runSecs(t, s, nil, j, c.at, alloc)
			if !slices.Equal(got, c.want) {
				t.Errorf("at %d: %v, want %v", c.at, got, c.want)
			}
			mins := string(AppendTRESRunMins(nil, []string{"cpu", "mem", "energy", "node", "billing"}, got))
			if mins != c.mins {
				t.Errorf("at %d: %s, want %s", c.at, mins, c.mins)
			}
		})
	}
}

// The same job with slurmctld restarted at 130 (its log's ticks 120, then
// the new process's 130, then every 60 s), and again at 200:
//
//	rebuild at 130 from L = 120: cpu 600 − ⌊2·0.5·89⌋ = 511, mem 300000 −
//	⌊1000·0.5·89⌋ = 255500, node 300 − ⌊44.5⌋ = 256, billing 511
//	tick 130: δ = 10, ⌊5⌋ = 5: cpu 511 − 10 = 501, mem 255500 − 5000 =
//	250500, node 251, billing 501
//	end 150: ⌊(631 − 130)·0.5⌋ = ⌊250.5⌋ = 250: cpu 501 − 500 = 1, mem
//	250500 − 250000 = 500, node 1, billing 1
//	restart 200: the residue is cleared.
func TestRunSecsRestart(t *testing.T) {
	t.Parallel()
	s := schedule(t, 0, 60, 120, 130)
	alloc := []uint64{2, 1000, 0, 1, 2}
	j := RunJob{Start: 31, End: 150, LimitSec: 600, Factor: 0.5}
	restarts := []int64{130, 200}
	for _, c := range []struct {
		name string
		at   int64
		want []uint64
	}{
		{"before the restart, as in TestRunSecsCase", 129, []uint64{512, 256000, 0, 256, 512}},
		{"rebuilt at the restart and its tick", 130, []uint64{501, 250500, 0, 251, 501}},
		{"before the end", 149, []uint64{501, 250500, 0, 251, 501}},
		// 501 − 2·250, 250500 − 1000·250, 251 − 250
		{"the residue at the end", 150, []uint64{1, 500, 0, 1, 1}},
		{"before the second restart", 199, []uint64{1, 500, 0, 1, 1}},
		{"the second restart clears the residue", 200, []uint64{0, 0, 0, 0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := runSecs(t, s, restarts, j, c.at, alloc); !slices.Equal(got, c.want) {
				t.Errorf("at %d: %v, want %v", c.at, got, c.want)
			}
		})
	}
	// A job started after the last tick before the restart (start 125 >
	// L = 120) is rebuilt with its full commitment: ⌊600·0.5⌋ = 300, then
	// tick 130 removes ⌊(130 − 125)·0.5⌋ = ⌊2.5⌋ = 2: 298.
	late := RunJob{Start: 125, End: NotEnded, LimitSec: 600, Factor: 0.5}
	if got := runSecs(t, s, restarts, late, 130, []uint64{1}); got[0] != 298 {
		t.Errorf("started after the rebuild's tick: %d, want 298", got[0])
	}
}

// A job started after the last tick holds its full commitment: start 70,
// limit 600, q = 0.5, 3 CPUs, at 100 (ticks 60, 120): 3·⌊300⌋ = 900.
func TestRunSecsAfterLastTick(t *testing.T) {
	t.Parallel()
	s := schedule(t, 0, 60)
	j := RunJob{Start: 70, End: NotEnded, LimitSec: 600, Factor: 0.5}
	if got := runSecs(t, s, nil, j, 100, []uint64{3}); got[0] != 900 {
		t.Errorf("%d, want 900", got[0])
	}
}

// A job ending in a tick's second, before or after the tick: start 31,
// end 120, limit 600, q = 0.125, 2 CPUs; base ⌊600·0.125⌋ = 75; tick 60:
// δ = 29, ⌊3.625⌋ = 3; tick 120: δ = 60, ⌊7.5⌋ = 7.
//
//	before the tick: the end removes ⌊(631 − 60)·0.125⌋ = ⌊71.375⌋ = 71:
//	75 − 3 − 71 = 1 a unit, 2 cpu-s
//	after it: tick 120 removes 7, the end ⌊(631 − 120)·0.125⌋ = ⌊63.875⌋
//	= 63: 75 − 3 − 7 − 63 = 2 a unit, 4 cpu-s
//
// Running at 119: 75 − 3 = 72 a unit, 144.
func TestRunSecsEndInTickSecond(t *testing.T) {
	t.Parallel()
	s := schedule(t, 0, 60)
	j := RunJob{Start: 31, End: 120, LimitSec: 600, Factor: 0.125}
	if got := runSecs(t, s, nil, j, 119, []uint64{2}); got[0] != 144 {
		t.Errorf("running at 119: %d, want 144", got[0])
	}
	if got := runSecs(t, s, nil, j, 120, []uint64{2}); got[0] != 2 {
		t.Errorf("ended before the tick: %d, want 2", got[0])
	}
	j.EndsAfterTick = true
	if got := runSecs(t, s, nil, j, 120, []uint64{2}); got[0] != 4 {
		t.Errorf("ended after the tick: %d, want 4", got[0])
	}
	// EndsAfterTick means nothing for an end between ticks: end 121, from
	// L = 120: ⌊(631 − 120)·0.125⌋ = 63, as after the tick: 4.
	j.End = 121
	if got := runSecs(t, s, nil, j, 121, []uint64{2}); got[0] != 4 {
		t.Errorf("end 121 flagged after a tick: %d, want 4", got[0])
	}
}

// Explicit ticks 61 s then 59 s apart: anchor 0, P = 60, ticks 60, 121,
// 180, then 240, 300, …; a job from 10, limit 600 (to 610), q = 0.5, one
// CPU; base 300.
//
//	tick 60: δ = 50, 25; tick 121: δ = 61, ⌊30.5⌋ = 30; tick 180: δ = 59,
//	⌊29.5⌋ = 29: at 200 it holds 300 − 84 = 216 (the closed form on the
//	grid, ⌊(610 − 180)·0.5⌋, is 215)
//	ticks 240 and 300: 30 each: 156 at 300
//	ticks 240 … 600 (7 whole periods, 210), tick 660 past the limit: δ =
//	610 − 600 = 10, 5: at 3000, still running past its limit, 300 − 84 −
//	210 − 5 = 1 (the two halves dropped at 121 and 180)
func TestRunSecsExplicitTicks(t *testing.T) {
	t.Parallel()
	s := schedule(t, 0, 60, 60, 121, 180)
	j := RunJob{Start: 10, End: NotEnded, LimitSec: 600, Factor: 0.5}
	for _, c := range []struct {
		at   int64
		want uint64
	}{{200, 216}, {300, 156}, {3000, 1}} {
		t.Run(fmt.Sprintf("at %d", c.at), func(t *testing.T) {
			if got := runSecs(t, s, nil, j, c.at, []uint64{1}); got[0] != c.want {
				t.Errorf("at %d: %d, want %d", c.at, got[0], c.want)
			}
		})
	}
}

// With q = 1 every δ is whole: the value is the closed form alloc ×
// (start + limit − T). Start 31, limit 600, 4 CPUs, ticks 60 and 120: 4 ×
// (631 − 120) = 2044 at 150; ended at 150 it leaves nothing.
func TestRunSecsFactor1(t *testing.T) {
	t.Parallel()
	s := schedule(t, 0, 60)
	j := RunJob{Start: 31, End: NotEnded, LimitSec: 600, Factor: 1}
	if got := runSecs(t, s, nil, j, 150, []uint64{4}); got[0] != 2044 {
		t.Errorf("running: %d, want 2044", got[0])
	}
	j.End = 150
	if got := runSecs(t, s, nil, j, 150, []uint64{4}); got[0] != 0 {
		t.Errorf("ended: %d, want 0", got[0])
	}
	// UsageFactor 0 commits nothing.
	j.Factor, j.End = 0, NotEnded
	if got := runSecs(t, s, nil, j, 150, []uint64{4}); got[0] != 0 {
		t.Errorf("UsageFactor 0: %d, want 0", got[0])
	}
}

// No limit: InfiniteTimeLimitMin × 60 = 257698037700 s, q = 0.5: base
// 128849018850; start 31, one CPU.
//
//	at 150: ticks 60 (⌊14.5⌋ = 14) and 120 (30): 128849018850 − 44 =
//	128849018806
//	at 60,000,000: tick 60 (14) and 999,999 whole periods 120 …
//	60,000,000 (30 each, 29,999,970): 128849018850 − 29999984 =
//	128819018866
func TestRunSecsInfinite(t *testing.T) {
	t.Parallel()
	s := schedule(t, 0, 60)
	j := RunJob{Start: 31, End: NotEnded, LimitSec: InfiniteTimeLimitMin * 60, Factor: 0.5}
	for _, c := range []struct {
		at   int64
		want uint64
	}{{150, 128849018806}, {60000000, 128819018866}} {
		t.Run(fmt.Sprintf("at %d", c.at), func(t *testing.T) {
			if got := runSecs(t, s, nil, j, c.at, []uint64{1}); got[0] != c.want {
				t.Errorf("at %d: %d, want %d", c.at, got[0], c.want)
			}
		})
	}
}

func TestRollUpTRESRun(t *testing.T) {
	t.Parallel()
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
	// The pipeline formats every association's cell into one reused buffer.
	buf, secs := make([]byte, 0, 64), []uint64{28859, 983040 * 60, 0, 119, 60}
	if n := testing.AllocsPerRun(100, func() { buf = AppendTRESRunMins(buf[:0], names, secs) }); n != 0 {
		t.Errorf("AppendTRESRunMins into a reused buffer: %v allocations, want 0", n)
	}
}
