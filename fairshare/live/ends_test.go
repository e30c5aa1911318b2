package live

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/decay"
)

// TestLiveEnds checks which job ends NewEnds puts in each snapshot, by
// hand: ticks every 300 s from origin 0; snapshots at 1000 (tick 900),
// 1200 (tick 1200, on the grid), 1250 and 1280 (tick 1200 again) and 5000
// (tick 4800). A job's end belongs to every snapshot with tick < end < at:
// one ending in the snapshot's own second still runs at its instant.
func TestLiveEnds(t *testing.T) {
	t.Parallel()
	r := decay.Running
	jobs := decay.Jobs{
		Start: []int64{0, 0, 0, 0, 1100, 1210, 0, 4000, 5000, 100, 1100},
		End:   []int64{950, 900, 1000, 1001, 1230, 1240, r, 4900, 5000, 6000, 1260},
		Rate:  []float64{1, 1, 1, 1, 2, 0, 1, 1, 1, 1, 1},
		Assoc: []int32{0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 2},
	}
	// 0: ends 950 in (900, 1000]: snapshot 0.
	// 1: ends on tick 900: in its usage, none.
	// 2: ends 1000, the snapshot's second: still running at it; charged
	// by tick 1200, none.
	// 3: ends 1001: charged by tick 1200, none.
	// 4: ends 1230: snapshots 1250 and 1280 (1200's (1200, 1200] is empty).
	// 5: rate 0: none. 6: running: none.
	// 7: ends 4900: snapshot 4. 8: zero length: none. 9: after the last: none.
	// 10: ends 1260: snapshot 1280.
	l := NewEnds(jobs, []int64{1000, 1200, 1250, 1280, 5000}, gridOf(t, 0, 300), 300, 0, EndCharges{})
	want := [][]int32{{0}, nil, {4}, {4, 10}, {7}}
	for i := range want {
		if !slices.Equal(l.at[i], want[i]) {
			t.Errorf("snapshot %d (tick %d): jobs %v, want %v", i, l.ticks[i], l.at[i], want[i])
		}
	}
	// Snapshot 1280 at tick 1200, no decay: assoc 1 gets job 4's
	// 2·(1230 − 1200) = 60, assoc 2 job 10's 1·(1260 − 1200) = 60.
	got, err := l.Usage(3, 1280, 1200, []float64{5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	if w := []float64{5, 66, 67}; !slices.Equal(got, w) {
		t.Errorf("usage at 1280 = %v, want %v", got, w)
	}
	// No end after tick 1200 at 1200: nothing to add.
	if got, err := l.Usage(1, 1200, 1200, []float64{5, 6, 7}); err != nil || got != nil {
		t.Errorf("usage at 1200 = %v, %v, want nil, nil", got, err)
	}
	// A decay that took the snapshot at another tick is an error.
	if _, err := l.Usage(0, 1000, 600, []float64{5, 6, 7}); err == nil {
		t.Error("usage with another tick: no error")
	}
	// A job starting after the tick is charged from its start: job 4
	// again, H = 3600 s, snapshot 1250: 2·30·d^30 with d^30 =
	// 0.994241091: 59.654465.
	l = NewEnds(jobs, []int64{1250}, gridOf(t, 0, 300), 300, 3600, EndCharges{})
	got, err = l.Usage(0, 1250, 1200, []float64{0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if d := got[1] - 59.654465; d > 5e-7 || d < -5e-7 {
		t.Errorf("decayed end charge = %.7f, want 59.654465", got[1])
	}

	// A long window: far is a tick; the job ending 50 s after it is in
	// the far snapshot.
	far := int64(300 << 23)
	jobs = decay.Jobs{Start: []int64{0, far - 10}, End: []int64{950, far + 50}, Rate: []float64{1, 1}, Assoc: []int32{0, 0}}
	l = NewEnds(jobs, []int64{1000, far + 100}, gridOf(t, 0, 300), 300, 0, EndCharges{})
	if !slices.Equal(l.at[0], []int32{0}) || !slices.Equal(l.at[1], []int32{1}) {
		t.Errorf("long window: %v, want [[0] [1]]", l.at)
	}
	// A grid not through 0: origin 7, the snapshot at 1000 is taken at
	// tick 907; an end at 907 is in it, one at 908 is not.
	jobs = decay.Jobs{Start: []int64{0, 0}, End: []int64{907, 908}, Rate: []float64{1, 1}, Assoc: []int32{0, 0}}
	if l = NewEnds(jobs, []int64{1000}, gridOf(t, 7, 300), 300, 0, EndCharges{}); !slices.Equal(l.at[0], []int32{1}) {
		t.Errorf("origin 7: %v, want [1]", l.at[0])
	}
}

// BenchmarkLiveEnds is the cost live RawUsage adds to a run of the
// 5 M-job year's size: placing every job's end (NewEnds, once a run)
// and adding the end charges of 366 daily snapshots on 2,191
// associations (Usage).
//
//	go test ./fairshare/live -run '^$' -bench LiveEnds
func BenchmarkLiveEnds(b *testing.B) {
	const n, nAssoc, period = 5_000_000, 2191, 300
	from := int64(1735689600) // 2025-01-01
	snaps := make([]int64, 366)
	for i := range snaps {
		snaps[i] = from + int64(i)*86400
	}
	rng := rand.New(rand.NewPCG(1, 2))
	jobs := decay.Jobs{Start: make([]int64, n), End: make([]int64, n), Rate: make([]float64, n), Assoc: make([]int32, n)}
	for j := range n {
		s := from + rng.Int64N(365*86400)
		jobs.Start[j], jobs.End[j] = s, s+1+rng.Int64N(86400)
		jobs.Rate[j], jobs.Assoc[j] = float64(1+rng.IntN(64)), int32(rng.IntN(nAssoc))
	}
	own := make([]float64, nAssoc)
	b.ResetTimer()
	for range b.N {
		l := NewEnds(jobs, snaps, gridOf(b, 0, period), period, 7*86400, EndCharges{})
		for i, at := range snaps {
			if _, err := l.Usage(i, at, at-at%period, own); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// gridOf is the schedule of ticks every period from origin.
func gridOf(tb testing.TB, origin, period int64) *decay.Schedule {
	tb.Helper()
	s, err := decay.NewSchedule(origin, period, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// On slurmctld's logged ticks (state at 0, P = 60, ticks at 61 and 120): a
// job ending at 100 is in the snapshot at 110 (tick 61), one ending at 61
// is in tick 61's usage, one ending at 125 in the snapshot at 130 (tick
// 120).
func TestLiveEndsLogTicks(t *testing.T) {
	t.Parallel()
	s, err := decay.NewSchedule(0, 60, []int64{61, 120})
	if err != nil {
		t.Fatal(err)
	}
	jobs := decay.Jobs{Start: []int64{0, 0, 0}, End: []int64{100, 61, 125}, Rate: []float64{1, 1, 1}, Assoc: []int32{0, 0, 0}}
	l := NewEnds(jobs, []int64{110, 130}, s, 60, 0, EndCharges{})
	if !slices.Equal(l.ticks, []int64{61, 120}) || !slices.Equal(l.at[0], []int32{0}) || !slices.Equal(l.at[1], []int32{2}) {
		t.Errorf("ticks %v, ends %v; want [61 120] and [[0] [2]]", l.ticks, l.at)
	}
}

// An end slurmctld charged twice (decay.Window.EndCharge; ticks every 60
// s, no decay): job 0 ends in tick 120's own second, after its pass, and
// its end charges 60 s again at once, so the snapshots of tick 120 after
// its second hold rate·60 = 120 more (the one at 120, the instant 120.000,
// precedes the end); job 1 ends at 121 and its end charged 61 s (from the
// tick before): 61 where the seconds since the tick give 1. Job 2, ending
// at 120 and charged once, is in tick 120's usage already.
func TestLiveEndsChargedTwice(t *testing.T) {
	t.Parallel()
	jobs := decay.Jobs{Start: []int64{0, 0, 0}, End: []int64{120, 121, 120}, Rate: []float64{2, 1, 1}, Assoc: []int32{0, 1, 2}}
	l := NewEnds(jobs, []int64{120, 130}, gridOf(t, 0, 60), 60, 0, EndCharges{Sec: map[int32]int64{0: 60, 1: 61}})
	if len(l.at[0]) != 0 || !slices.Equal(l.at[1], []int32{0, 1}) {
		t.Fatalf("ends %v, want [[] [0 1]]", l.at)
	}
	got, err := l.Usage(1, 130, 120, []float64{5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	if w := []float64{125, 67, 7}; !slices.Equal(got, w) {
		t.Errorf("usage at 130 = %v, want %v", got, w)
	}
	// The same ends charged before the fair-share step of the tick at 120
	// (InPass): that tick's usage holds them (decay.Window.
	// EndChargeInPass), so no snapshot adds them again; the usage at 130
	// is the tick's, 5, 6, 7.
	l = NewEnds(jobs, []int64{120, 130}, gridOf(t, 0, 60), 60, 0,
		EndCharges{Sec: map[int32]int64{0: 60, 1: 61}, InPass: map[int32]bool{0: true, 1: true}})
	if len(l.at[0]) != 0 || len(l.at[1]) != 0 {
		t.Errorf("ends charged in the pass: %v, want none", l.at)
	}
}
