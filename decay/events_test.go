package decay

//lint:file-ignore SA4016 the event tables spell every word as flags | count, a count of 0 included

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// refEvents is grid.events as it was before events were placed by counting
// (commit 136890c): every start and end event with its relative tick in the
// high 32 bits, in job order, to be sorted by sortByTick. It is the
// reference the grouped events are checked against.
func refEvents(g grid, j Jobs, stats *Stats) []uint64 {
	n := j.Len()
	stats.Jobs = n
	var ev []uint64
	for i := range n {
		s, e := j.Start[i], j.End[i]
		if e == s {
			stats.JobsEmpty++
			continue
		}
		t := refTicksOf(g, s, e)
		running := t.kFirst <= t.kLast
		partial := t.first < g.P
		var start uint64
		hi := min(t.kLast, g.kEnd)
		chunk := partial && running && t.kFirst > g.k0 && t.kFirst <= g.kEnd
		kOn := t.kFirst
		if partial {
			kOn++
		}
		kOn = max(kOn, g.k0+1)
		on := kOn <= hi
		startTick := kOn
		if chunk {
			start |= evFlagA
			startTick = t.kFirst
		}
		if on {
			start |= evFlagB
		}
		if start != 0 {
			ev = append(ev, uint64(startTick-g.k0)<<32|start|uint64(i))
		}
		var end uint64
		kE := t.kLast + 1
		if on && kE <= g.kEnd {
			end |= evFlagA
		}
		if g.limits && e != Running && kE > g.k0 && kE <= g.kEnd {
			end |= evFlagB
		}
		if end != 0 {
			ev = append(ev, uint64(kE-g.k0)<<32|evEnd|end|uint64(i))
		}
		switch {
		case start != 0 || end != 0:
			stats.JobsCharged++
		case !running && e != Running && kE > g.k0 && kE <= g.kEnd:
			stats.JobsBetweenTicks++
		default:
			stats.JobsOutside++
		}
	}
	return ev
}

// refTicksOf is grid.ticksOf as it was at commit 136890c, with integer
// divisions.
func refTicksOf(g grid, s, e int64) jobTicks {
	var t jobTicks
	t.kFirst = floorDiv(s-g.origin, g.P) + 1
	t.first = g.at(t.kFirst) - s
	if e == Running {
		t.kLast = g.kEnd
		return t
	}
	t.kLast = ceilDiv(e-g.origin, g.P) - 1
	t.tail = e - max(g.at(t.kLast), s)
	return t
}

// byTick takes every tick's events from q and returns them per tick, each
// tick's sorted (the order within a tick is free), leaving out empty ticks.
func byTick(q tickEvents, maxTick uint32) map[uint32][]uint32 {
	got := make(map[uint32][]uint32)
	for rel := uint32(1); rel <= maxTick; rel++ {
		if x := q.at(rel); len(x) > 0 {
			got[rel] = slices.Sorted(slices.Values(x))
		}
	}
	return got
}

// refByTick is byTick for refEvents sorted by sortByTick.
func refByTick(ev []uint64, maxTick uint32) map[uint32][]uint32 {
	sortByTick(ev, maxTick)
	want := make(map[uint32][]uint32)
	last := uint32(0)
	for _, x := range ev {
		rel := uint32(x >> 32)
		if rel < last {
			panic("sortByTick left events out of tick order")
		}
		last = rel
		want[rel] = append(want[rel], uint32(x))
	}
	for _, x := range want {
		slices.Sort(x)
	}
	return want
}

// TestEventsByTick checks both forms of grid.events, placed by counting and
// radix-sorted, against the events of refEvents sorted by sortByTick, tick
// by tick, on random jobs around and across the window: short and long,
// running, empty, starting and ending on ticks.
func TestEventsByTick(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(16, 1))
	for c := range 60 {
		P := []int64{1, 7, 10, 300}[c%4]
		origin := r.Int64N(1000) - 500
		k0 := r.Int64N(100)
		nTicks := []int64{0, 1, 2, 50, 3000}[c%5]
		g := grid{origin: origin, P: P, k0: k0, kEnd: k0 + nTicks, limits: c%3 != 0}
		n := []int{0, 1, 10, 2000}[c/4%4]
		j := Jobs{Start: make([]int64, n), End: make([]int64, n), Rate: make([]float64, n), Assoc: make([]int32, n)}
		lo, span := g.at(k0-3), (nTicks+6)*P
		for i := range n {
			s := lo + r.Int64N(span+1)
			if r.IntN(4) == 0 {
				s -= (s - origin) % P // on a tick (or the tick's floor for negative offsets)
			}
			var e int64
			switch x := r.IntN(10); {
			case x == 0:
				e = Running
			case x == 1:
				e = s
			case x < 5:
				e = s + r.Int64N(2*P+1)
			default:
				e = s + r.Int64N(span/2+1)
			}
			if s < 0 {
				s, e = 0, max(e-s, 0)
			}
			j.Start[i], j.End[i], j.Rate[i] = s, e, 1
		}
		var wantStats Stats
		want := refByTick(refEvents(g, j, &wantStats), uint32(nTicks))
		for _, dense := range []bool{true, false} {
			name := fmt.Sprintf("case %d (P %d, %d ticks, %d jobs, dense %v)", c, P, nTicks, n, dense)
			var stats Stats
			q, err := g.events(j, 1, &stats, dense)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if q.sparse == dense {
				t.Errorf("%s: sparse = %v", name, q.sparse)
			}
			if stats != wantStats {
				t.Errorf("%s: stats = %+v, want %+v", name, stats, wantStats)
			}
			if got := byTick(q, uint32(nTicks)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: events by tick differ from the radix-sorted reference:\n got %v\nwant %v", name, got, want)
			}
		}
	}
}

// TestEventsHandWorked places seven jobs on ticks of P = 10 s from origin 0,
// the window being ticks 1 … 5 (times 10 … 50), worked by hand from
// ticksOf's definitions (first tick strictly after the start, last strictly
// before the end):
//
//	job 0: 5 → 27     chunk of 5 s at tick 1, rate on at 2, off at 3, tail 7 s at 3
//	job 1: 20 → 40    starts on a tick: rate on at 3, off at 4, tail 10 s at 4
//	job 2: 41 → 44    between ticks 4 and 5: only its tail, at 5
//	job 3: 12 → run   chunk at 2, rate on at 3, never off in the window
//	job 4: 50 → 60    first tick 6, after the window: outside
//	job 5: 7 → 7      empty
//	job 6: 0 → 3      before tick 1: only its tail, at 1
//
// Without limits enforced there are no tails: jobs 2 and 6 fall between
// ticks, and the end events keep only the rate leaving.
func TestEventsHandWorked(t *testing.T) {
	t.Parallel()
	j := columns([]job{
		{5, 27, 1, 0}, {20, 40, 1, 0}, {41, 44, 1, 0}, {12, Running, 1, 0},
		{50, 60, 1, 0}, {7, 7, 1, 0}, {0, 3, 1, 0},
	})
	const A, B, E = evFlagA, evFlagB, evEnd
	for _, c := range []struct {
		limits bool
		want   map[uint32][]uint32
		stats  Stats
	}{
		{true, map[uint32][]uint32{
			1: {A | B | 0, E | B | 6},
			2: {A | B | 3},
			3: {B | 1, E | A | B | 0},
			4: {E | A | B | 1},
			5: {E | B | 2},
		}, Stats{Jobs: 7, JobsCharged: 5, JobsEmpty: 1, JobsOutside: 1}},
		{false, map[uint32][]uint32{
			1: {A | B | 0},
			2: {A | B | 3},
			3: {B | 1, E | A | 0},
			4: {E | A | 1},
		}, Stats{Jobs: 7, JobsCharged: 3, JobsBetweenTicks: 2, JobsEmpty: 1, JobsOutside: 1}},
	} {
		t.Run(fmt.Sprintf("limits=%v", c.limits), func(t *testing.T) {
			g := grid{origin: 0, P: 10, k0: 0, kEnd: 5, limits: c.limits}
			for _, dense := range []bool{true, false} {
				t.Run(fmt.Sprintf("dense=%v", dense), func(t *testing.T) {
					var stats Stats
					q, err := g.events(j, 1, &stats, dense)
					if err != nil {
						t.Fatalf("limits %v, dense %v: %v", c.limits, dense, err)
					}
					if stats != c.stats {
						t.Errorf("limits %v, dense %v: stats = %+v, want %+v", c.limits, dense, stats, c.stats)
					}
					if got := byTick(q, 5); !reflect.DeepEqual(got, c.want) {
						t.Errorf("limits %v, dense %v: events = %v, want %v", c.limits, dense, got, c.want)
					}
				})
			}
		})
	}
}
