package decay

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// job is one row of a test's job list.
type job struct {
	start, end int64
	rate       float64
	assoc      int32
}

func columns(js []job) Jobs {
	var j Jobs
	for _, x := range js {
		j.Start = append(j.Start, x.start)
		j.End = append(j.End, x.end)
		j.Rate = append(j.Rate, x.rate)
		j.Assoc = append(j.Assoc, x.assoc)
	}
	return j
}

// snap is the usage reported at one snapshot.
type snap struct {
	at, tick int64
	usage    []float64
}

// runWindow advances st over (st.Tick, to] and returns the snapshots.
func runWindow(t *testing.T, p Params, st *State, parent []int32, js []job, to int64, at ...int64) ([]snap, Stats) {
	t.Helper()
	var out []snap
	stats, err := Advance(p, st, Window{
		Parent: parent, Jobs: columns(js), To: to, Snapshots: at,
		OnSnapshot: func(at, tick int64, usage []float64) error {
			out = append(out, snap{at, tick, append([]float64(nil), usage...)})
			return nil
		},
	})
	if err != nil {
		t.Fatalf("Advance: %v", err)
	}
	return out, stats
}

func mustState(t *testing.T, p Params, n int, start int64) *State {
	t.Helper()
	st, err := NewState(p, n, start)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Resets at a DAILY and a MONTHLY boundary B in Europe/Berlin, H = 0 (no
// decay, so every number is a plain sum), P = 300, ticks at B+120+300k.
// Job A: rate 2 on [B−1000, B+1000); job C: rate 1 on [B−700, B−100); limits.
//
//	tick   A                      C                       U
//	B−780  2·220 = 440 (partial)  —                       440
//	B−480  600                    1·220 (partial)         1260
//	B−180  600                    300                     2160
//	B+120  reset (B ≤ B+120): C's tail 1·80 (added at B−100) is wiped;
//	       A's chunk (B−180, B+120] = 600 goes to the new period   600
//	B+420  600                                            1200
//	B+720  600                                            1800
//	B+1020 tail 2·(1000−720) = 560                        2360 (no limits: 1800)
func TestResetBoundaries(t *testing.T) {
	t.Parallel()
	ber := berlin(t)
	tests := []struct {
		period    string
		b         time.Time // the boundary
		nextAfter time.Time // the boundary after it
	}{
		// 2024-05-16 00:00 CEST; next 2024-05-17 00:00 CEST = 5/16T22:00Z.
		{"DAILY", time.Date(2024, 5, 16, 0, 0, 0, 0, ber), utc(2024, 5, 16, 22, 0)},
		// 2024-02-01 00:00 CET; next 2024-03-01 00:00 CET = 2/29T23:00Z.
		{"MONTHLY", time.Date(2024, 2, 1, 0, 0, 0, 0, ber), utc(2024, 2, 29, 23, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.period, func(t *testing.T) {
			for _, limits := range []bool{true, false} {
				t.Run(fmt.Sprintf("limits=%v", limits), func(t *testing.T) {
					B := tt.b.Unix()
					p := Params{CalcPeriodSec: 300, OriginUnix: B + 120, ResetPeriod: tt.period, Location: ber, LimitsEnforced: limits}
					st := mustState(t, p, 1, B-1980)
					if st.NextReset != B {
						t.Fatalf("%s: NewState NextReset = %d, want the boundary %d", tt.period, st.NextReset, B)
					}
					js := []job{{B - 1000, B + 1000, 2, 0}, {B - 700, B - 100, 1, 0}}
					got, stats := runWindow(t, p, st, []int32{-1}, js, B+1020, B-180, B+119, B+120, B+1020)
					end := 2360.0
					if !limits {
						end = 1800
					}
					want := []snap{{B - 180, B - 180, []float64{2160}}, {B + 119, B - 180, []float64{2160}},
						{B + 120, B + 120, []float64{600}}, {B + 1020, B + 1020, []float64{end}}}
					for i, w := range want {
						if got[i].tick != w.tick || got[i].usage[0] != w.usage[0] {
							t.Errorf("%s limits=%v: snapshot(%d) = tick %d usage %v, want tick %d usage %v",
								tt.period, limits, w.at-B, got[i].tick-B, got[i].usage[0], w.tick-B, w.usage[0])
						}
					}
					if stats.Resets != 1 || st.LastReset != B || st.NextReset != tt.nextAfter.Unix() {
						t.Errorf("%s: Resets = %d, LastReset = %d, NextReset = %v; want 1, %d, %v",
							tt.period, stats.Resets, st.LastReset-B, time.Unix(st.NextReset, 0).UTC(), 0, tt.nextAfter)
					}
				})
			}
		})
	}
}

// DAILY across the spring-forward day in Berlin (2024-03-31 has 23 hours).
// H = 0, P = 300, origin 0, no limits. State at 3/30 23:55 CET (22:55Z); its
// first boundary is midnight(3/30)+1d = 3/31 00:00 CET (3/30T23:00Z). The
// boundary after it is 3/31 00:00 CET + 86400 s = 4/1 01:00 CEST (3/31T23:00Z),
// so there is no reset at local midnight 4/1 00:00 CEST (3/31T22:00Z).
// A job with rate 1 runs from 3/31T21:30Z onwards:
//
//	3/31T22:00Z  6 chunks of 300      1800 (midnight, no reset)
//	3/31T22:55Z  + 11 chunks          5100
//	3/31T23:00Z  reset, then 300       300
//	3/31T23:10Z  + 2 chunks            900
func TestResetDailySpringForward(t *testing.T) {
	t.Parallel()
	p := Params{CalcPeriodSec: 300, ResetPeriod: "DAILY", Location: berlin(t)}
	st := mustState(t, p, 1, utc(2024, 3, 30, 22, 55).Unix())
	js := []job{{utc(2024, 3, 31, 21, 30).Unix(), Running, 1, 0}}
	at := []time.Time{utc(2024, 3, 31, 22, 0), utc(2024, 3, 31, 22, 55), utc(2024, 3, 31, 23, 0), utc(2024, 3, 31, 23, 10)}
	want := []float64{1800, 5100, 300, 900}
	var ats []int64
	for _, a := range at {
		ats = append(ats, a.Unix())
	}
	got, stats := runWindow(t, p, st, []int32{-1}, js, ats[len(ats)-1], ats...)
	for i := range want {
		if got[i].usage[0] != want[i] {
			t.Errorf("usage(%v) = %v, want %v", at[i], got[i].usage[0], want[i])
		}
	}
	if stats.Resets != 2 {
		t.Errorf("Resets = %d, want 2 (3/30T23:00Z and 3/31T23:00Z)", stats.Resets)
	}
}

// DAILY across the fall-back day in Berlin (2024-10-27 has 25 hours), as
// Slurm's _next_reset really behaves. H = 0, P = 300, origin 0, no limits.
// State at 10/27 12:00 CET (11:00Z); first boundary b = midnight(10/27) +
// 86400 s = 10/27T22:00Z (23:00 CET). After a reset at b, R = b and
// _next_reset(R) is again b (R's local day is still 10/27), and stays b
// until now > b + 1 day: so usage is reset at every tick from b to b+86400
// (10/28T22:00Z); at b+86700 the boundary becomes b+86400 (≤ now), so
// b+87000 (22:10Z) resets once more with R = 10/28 23:00 CET, whose next
// boundary is midnight(10/28)+1d = 10/29 00:00 CET (10/28T23:00Z): a normal
// reset. Resets: 87000/300 + 1 = 291, plus 1 = 292. A rate-1 job runs from
// before the window:
//
//	10/27T21:55Z  10 h 55 min of chunks  39300
//	10/27T22:00Z  reset, 300               300
//	10/27T22:05Z  reset again, 300         300
//	10/28T22:10Z  last repeated reset      300
//	10/28T22:15Z                           600
//	10/28T22:55Z                          3000
//	10/28T23:00Z  reset at 10/29 00:00 CET 300
func TestResetDailyFallBack(t *testing.T) {
	t.Parallel()
	p := Params{CalcPeriodSec: 300, ResetPeriod: "daily", Location: berlin(t)}
	st := mustState(t, p, 1, utc(2024, 10, 27, 11, 0).Unix())
	js := []job{{utc(2024, 10, 27, 10, 0).Unix(), Running, 1, 0}}
	at := []time.Time{utc(2024, 10, 27, 21, 55), utc(2024, 10, 27, 22, 0), utc(2024, 10, 27, 22, 5),
		utc(2024, 10, 28, 22, 10), utc(2024, 10, 28, 22, 15), utc(2024, 10, 28, 22, 55), utc(2024, 10, 28, 23, 0)}
	want := []float64{39300, 300, 300, 300, 600, 3000, 300}
	var ats []int64
	for _, a := range at {
		ats = append(ats, a.Unix())
	}
	got, stats := runWindow(t, p, st, []int32{-1}, js, ats[len(ats)-1], ats...)
	for i := range want {
		if got[i].usage[0] != want[i] {
			t.Errorf("usage(%v) = %v, want %v", at[i], got[i].usage[0], want[i])
		}
	}
	if stats.Resets != 292 {
		t.Errorf("Resets = %d, want 292", stats.Resets)
	}
	if want := utc(2024, 10, 29, 23, 0).Unix(); st.NextReset != want {
		t.Errorf("NextReset = %v, want %v", time.Unix(st.NextReset, 0).UTC(), time.Unix(want, 0).UTC())
	}
}

// §2.2: with H = 0 nothing decays and chunks are undecayed, so usage is a
// plain sum. P = 300, window (0, 3000]; with limits every second of every
// job is charged once: Σ B·q·(E−S). Without limits each job loses the time
// after its last tick, and jobs between two ticks are lost entirely.
//
//	job  [S, E)       rate   limits            no limits
//	a    [0, 3000)    1.5    1.5·3000 = 4500   1.5·2700 = 4050 (ends on tick 3000: ended before it)
//	b    [100, 250)   2      2·150 = 300       0 (between ticks 0 and 300)
//	c    [250, 1234)  0.25   0.25·984 = 246    0.25·(1200−250) = 237.5
//	d    [600, 601)   3      3                 0 (no tick strictly inside)
//	e    [900, 1500)  1      600               300 (ends on tick 1500)
//	f    [700, 700)   9      0 (empty)         0
//	total                    5649              4587.5
func TestNoDecayIsPlainSum(t *testing.T) {
	t.Parallel()
	js := []job{{0, 3000, 1.5, 0}, {100, 250, 2, 0}, {250, 1234, 0.25, 0}, {600, 601, 3, 0}, {900, 1500, 1, 0}, {700, 700, 9, 0}}
	tests := []struct {
		limits  bool
		want    float64
		charged int
		between int
	}{
		{true, 5649, 5, 0},
		{false, 4587.5, 3, 2},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("limits=%v", tt.limits), func(t *testing.T) {
			p := Params{HalfLifeSec: 0, CalcPeriodSec: 300, LimitsEnforced: tt.limits}
			st := mustState(t, p, 1, 0)
			_, stats := runWindow(t, p, st, []int32{-1}, js, 3000)
			if st.Usage[0] != tt.want {
				t.Errorf("H=0 limits=%v: usage = %v, want %v", tt.limits, st.Usage[0], tt.want)
			}
			if stats.JobsCharged != tt.charged || stats.JobsBetweenTicks != tt.between || stats.JobsEmpty != 1 || stats.Jobs != 6 || stats.Ticks != 10 {
				t.Errorf("H=0 limits=%v: stats = %+v, want charged %d, between %d, empty 1, jobs 6, ticks 10", tt.limits, stats, tt.charged, tt.between)
			}
		})
	}
}

// TestNegativeRates: negative TRESBillingWeights give negative billing,
// and Slurm's _apply_new_usage adds run_decay × billable_tres ×
// UsageFactor to usage_raw of the association and every ancestor whatever
// its sign. H = 0 (no decay: plain sums), P = 300, limits, tree root 0
// with children 1 and 2:
//
//	assoc 1: [0, 600) rate 2: 2·600 = 1200; [0, 600) rate −0.5: −300  → 900
//	assoc 2: [100, 700) rate −1.5 (a negative total): tick 300 −1.5·200,
//	         tick 600 −1.5·300, tail at 700 −1.5·100: −900 in all;
//	         [0, 600) rate −1e−30: −3e−28 a tick, below 2^−64, truncated
//	         toward zero to 0 by the exact sums                     → −900
//	root: 900 − 900 = 0
//
// With H = 3600 the same jobs with every rate negated give the negated
// usage (up to the last bits of the fixed-point conversion).
func TestNegativeRates(t *testing.T) {
	t.Parallel()
	parent := []int32{-1, 0, 0}
	js := []job{{0, 600, 2, 1}, {0, 600, -0.5, 1}, {100, 700, -1.5, 2}, {0, 600, -1e-30, 2}}
	p := Params{CalcPeriodSec: 300, LimitsEnforced: true}
	st := mustState(t, p, len(parent), 0)
	runWindow(t, p, st, parent, js, 900)
	for i, want := range []float64{0, 900, -900} {
		if st.Usage[i] != want {
			t.Errorf("H=0: usage[%d] = %v, want %v", i, st.Usage[i], want)
		}
	}
	p.HalfLifeSec = 3600
	pos, neg := slices.Clone(js), slices.Clone(js)
	for i := range neg {
		neg[i].rate = -neg[i].rate
	}
	a, b := mustState(t, p, len(parent), 0), mustState(t, p, len(parent), 0)
	runWindow(t, p, a, parent, pos, 1500)
	runWindow(t, p, b, parent, neg, 1500)
	for i := range parent {
		if !relClose(b.Usage[i], -a.Usage[i], 1e-14) || (a.Usage[i] != 0 && math.Signbit(a.Usage[i]) == math.Signbit(b.Usage[i])) {
			t.Errorf("H=3600: usage[%d] with rates negated = %v, want −%v", i, b.Usage[i], a.Usage[i])
		}
	}
}

// TestToFixedNegative: a negative value converts as the negation of its
// magnitude, truncated toward zero; v − ⌊v⌋ would make −1e−30 into −1 +
// (1.0 rounded)·2^64, which does not fit the fraction.
func TestToFixedNegative(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ v, want float64 }{
		{-4.5, -4.5}, {-0.25, -0.25}, {-1e-30, 0}, {-0x1p-64, -0x1p-64}, {-(1<<40 + 0.75), -(1<<40 + 0.75)}, {3.125, 3.125},
	} {
		if got := toFixed(tt.v).float(); got != tt.want {
			t.Errorf("toFixed(%v).float() = %v, want %v", tt.v, got, tt.want)
		}
	}
	var sum fixed
	sum.add(toFixed(2.75))
	sum.add(toFixed(-2.75))
	if sum != (fixed{}) {
		t.Errorf("toFixed(2.75) + toFixed(-2.75) = %+v, want 0", sum)
	}
}

// Ticks every 300 s, H = 3600: f = d^300 = 0.9438806422256244 (§11.4) and a
// full chunk is c = 300·d^300 = 283.1641926676873.
//
// A job [300, 900) with rate 1 starts on tick 300 (nothing at 300: δ = 0)
// and ends on tick 900, so by §2.5 it is ended before tick 900:
//
//	600: c
//	900: c·f, plus with limits its tail δ = 900−600 = 300 added before the
//	     decay: + c·f, i.e. 2·c·f
//
// The same job ending one second later, at 901, is running at 900:
//
//	900: c·f + c; 1200: (c·f + c)·f, plus with limits the 1-s tail 1·d·f.
func TestJobsOnTicks(t *testing.T) {
	t.Parallel()
	const f, c = 0.9438806422256244, 283.1641926676873
	const d = 1 - 0.693/3600
	tests := []struct {
		end               int64
		limits            bool
		u600, u900, u1200 float64
	}{
		{900, false, c, c * f, c * f * f},
		{900, true, c, 2 * c * f, 2 * c * f * f},
		{901, false, c, c*f + c, (c*f + c) * f},
		{901, true, c, c*f + c, (c*f+c)*f + d*f},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("job [300,%d) limits=%v", tt.end, tt.limits), func(t *testing.T) {
			p := Params{HalfLifeSec: 3600, CalcPeriodSec: 300, LimitsEnforced: tt.limits}
			st := mustState(t, p, 1, 0)
			got, _ := runWindow(t, p, st, []int32{-1}, []job{{300, tt.end, 1, 0}}, 1200, 300, 600, 900, 1200)
			for i, want := range []float64{0, tt.u600, tt.u900, tt.u1200} {
				if !relClose(got[i].usage[0], want, 1e-12) {
					t.Errorf("job [300,%d) limits=%v: usage(%d) = %.12f, want %.12f", tt.end, tt.limits, got[i].at, got[i].usage[0], want)
				}
			}
		})
	}
}

// A job that never spans a tick: [310, 590) between ticks 300 and 600, rate
// 5, H = 3600. Without limits Slurm never charges it; with limits its tail
// 5·280·d^280 is added at 590 and decayed by d^300 at tick 600:
// 5·280·d^280·d^300 = 1252.086661746011 (computed with C doubles).
func TestJobBetweenTicks(t *testing.T) {
	t.Parallel()
	for _, limits := range []bool{false, true} {
		t.Run(fmt.Sprintf("limits=%v", limits), func(t *testing.T) {
			p := Params{HalfLifeSec: 3600, CalcPeriodSec: 300, LimitsEnforced: limits}
			st := mustState(t, p, 1, 0)
			_, stats := runWindow(t, p, st, []int32{-1}, []job{{310, 590, 5, 0}}, 600)
			want, between, charged := 0.0, 1, 0
			if limits {
				want, between, charged = 1252.086661746011, 0, 1
			}
			if !relClose(st.Usage[0], want, 1e-12) {
				t.Errorf("limits=%v: usage = %.12f, want %.12f", limits, st.Usage[0], want)
			}
			if stats.JobsBetweenTicks != between || stats.JobsCharged != charged {
				t.Errorf("limits=%v: stats = %+v, want between %d, charged %d", limits, stats, between, charged)
			}
		})
	}
}

// A running job is charged only up to the window's last tick; the next night
// charges the rest from its final record. H = 0, limits, rate 2, start 100.
//
//	night 1, window (0, 1250]: last tick 1200; 2·(1200−100) = 2200
//	night 2, window (1200, 1800], job ended at 1500 (on a tick: ended
//	before it), so no chunk at 1500 but its tail 2·(1500−1200) = 600 → 2800
//	= 2·(1500−100), as one run over (0, 1800] gives.
func TestRunningJob(t *testing.T) {
	t.Parallel()
	p := Params{CalcPeriodSec: 300, LimitsEnforced: true}
	st := mustState(t, p, 1, 0)
	_, stats := runWindow(t, p, st, []int32{-1}, []job{{100, Running, 2, 0}}, 1250)
	if st.Usage[0] != 2200 || st.Tick != 1200 || stats.JobsCharged != 1 {
		t.Errorf("night 1: usage %v at tick %d, charged %d; want 2200 at 1200, 1", st.Usage[0], st.Tick, stats.JobsCharged)
	}
	_, stats = runWindow(t, p, st, []int32{-1}, []job{{100, 1500, 2, 0}}, 1800)
	if st.Usage[0] != 2800 || stats.JobsCharged != 1 {
		t.Errorf("night 2: usage %v, charged %d; want 2800, 1", st.Usage[0], stats.JobsCharged)
	}
	one := mustState(t, p, 1, 0)
	runWindow(t, p, one, []int32{-1}, []job{{100, 1500, 2, 0}}, 1800)
	if one.Usage[0] != 2800 {
		t.Errorf("single run: usage %v, want 2800", one.Usage[0])
	}
	// A job starting on the window's last tick is charged nothing yet.
	st = mustState(t, p, 1, 0)
	_, stats = runWindow(t, p, st, []int32{-1}, []job{{1200, Running, 2, 0}}, 1200)
	if st.Usage[0] != 0 || stats.JobsOutside != 1 {
		t.Errorf("job starting at the last tick: usage %v, outside %d; want 0, 1", st.Usage[0], stats.JobsOutside)
	}
}

// Usage propagates along the direct parent chain up to and including root
// (§2.4). Tree (index: name, parent):
//
//	0 root; 1 A (0); 2 B (0); 3 A1 (1); 4 u1 (3); 5 u2 (1); 6 u3 (2)
//
// H = 0, limits, P = 300. Jobs: u1 rate 1 [0, 600) = 600; u2 rate 2 [0, 300)
// = 600; u3 rate 3 [300, 900) = 1800; one charged to account B itself, rate 1
// [0, 300) = 300. Hence A1 = 600, A = 600 + 600 = 1200, B = 1800 + 300 = 2100,
// root = 3300.
func TestAncestorPropagation(t *testing.T) {
	t.Parallel()
	parent := []int32{-1, 0, 0, 1, 3, 1, 2}
	js := []job{{0, 600, 1, 4}, {0, 300, 2, 5}, {300, 900, 3, 6}, {0, 300, 1, 2}}
	p := Params{CalcPeriodSec: 300, LimitsEnforced: true}
	st := mustState(t, p, len(parent), 0)
	runWindow(t, p, st, parent, js, 900)
	want := []float64{3300, 1200, 2100, 600, 600, 600, 1800}
	for i := range want {
		if st.Usage[i] != want[i] {
			t.Errorf("usage[%d] = %v, want %v", i, st.Usage[i], want[i])
		}
	}
	// With decay, every account still equals the sum over its children
	// plus its own jobs (up to rounding).
	p.HalfLifeSec = 3600
	st = mustState(t, p, len(parent), 0)
	runWindow(t, p, st, parent, js, 1500)
	u := st.Usage
	sums := []struct {
		i    int
		want float64
	}{{0, u[1] + u[2]}, {1, u[3] + u[5]}, {3, u[4]}}
	for _, s := range sums {
		if !relClose(u[s.i], s.want, 1e-14) {
			t.Errorf("decayed usage[%d] = %v, want sum of children %v", s.i, u[s.i], s.want)
		}
	}
}

// A snapshot reports usage at the last tick at or before its time, including
// the state's own tick before any tick is processed.
func TestSnapshotTicks(t *testing.T) {
	t.Parallel()
	p := Params{CalcPeriodSec: 300}
	st := mustState(t, p, 1, 600)
	got, _ := runWindow(t, p, st, []int32{-1}, []job{{0, Running, 1, 0}}, 1000, 600, 899, 900, 900, 1000)
	want := []struct {
		tick int64
		u    float64
	}{{600, 0}, {600, 0}, {900, 300}, {900, 300}, {900, 300}}
	for i, w := range want {
		if got[i].tick != w.tick || got[i].usage[0] != w.u {
			t.Errorf("snapshot %d at %d = tick %d usage %v, want tick %d usage %v", i, got[i].at, got[i].tick, got[i].usage[0], w.tick, w.u)
		}
	}
}

func TestAdvanceErrors(t *testing.T) {
	t.Parallel()
	p := Params{CalcPeriodSec: 300}
	ok := func() Window {
		return Window{Parent: []int32{-1, 0}, Jobs: columns([]job{{0, 600, 1, 1}}), To: 900}
	}
	tests := []struct {
		name   string
		p      Params
		mutate func(w *Window, st *State)
	}{
		{"bad params", Params{HalfLifeSec: -1, CalcPeriodSec: -5, ResetPeriod: "HOURLY"}, nil},
		{"bad job with reset change and growth", Params{CalcPeriodSec: 300, ResetPeriod: "DAILY"}, func(w *Window, _ *State) {
			w.Parent = []int32{-1, 0, 0}
			w.Jobs.End[0] = -1
		}},
		{"grid mismatch", Params{CalcPeriodSec: 600}, nil},
		{"state off grid", p, func(_ *Window, st *State) { st.Tick = 7 }},
		{"to before state", p, func(w *Window, _ *State) { w.To = -300 }},
		{"parent after child", p, func(w *Window, _ *State) { w.Parent = []int32{-1, 1} }},
		{"tree shrank", p, func(w *Window, _ *State) { w.Parent = []int32{-1} }},
		{"assoc out of range", p, func(w *Window, _ *State) { w.Jobs.Assoc[0] = 2 }},
		// A negative rate is charged (TestNegativeRates); one of −2^40 or
		// below is out of the exact sums' range, as 2^40 is.
		{"rate -2^40", p, func(w *Window, _ *State) { w.Jobs.Rate[0] = -(1 << 40) }},
		{"NaN rate", p, func(w *Window, _ *State) { w.Jobs.Rate[0] = math.NaN() }},
		{"end before start", p, func(w *Window, _ *State) { w.Jobs.End[0] = -1 }},
		{"ragged columns", p, func(w *Window, _ *State) { w.Jobs.Rate = nil }},
		{"snapshot outside", p, func(w *Window, _ *State) {
			w.Snapshots = []int64{901}
			w.OnSnapshot = func(int64, int64, []float64) error { return nil }
		}},
		{"snapshots unsorted", p, func(w *Window, _ *State) {
			w.Snapshots = []int64{600, 300}
			w.OnSnapshot = func(int64, int64, []float64) error { return nil }
		}},
		{"snapshots without callback", p, func(w *Window, _ *State) { w.Snapshots = []int64{300} }},
		{"callback error", p, func(w *Window, _ *State) {
			w.Snapshots = []int64{300}
			w.OnSnapshot = func(int64, int64, []float64) error { return errTest }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mustState(t, p, 2, 0)
			w := ok()
			if tt.mutate != nil {
				tt.mutate(&w, st)
			}
			before := st.Clone()
			if _, err := Advance(tt.p, st, w); err == nil {
				t.Errorf("Advance(%s) = nil error, want an error", tt.name)
			}
			if tt.name != "callback error" && !reflect.DeepEqual(st, before) {
				t.Errorf("Advance(%s) changed the state to %+v, want it untouched (%+v)", tt.name, *st, *before)
			}
		})
	}
}

type testError struct{}

func (testError) Error() string { return "test error" }

var errTest = testError{}

// TestJobsReserve: Reserve makes room without changing the jobs, and
// never shrinks.
func TestJobsReserve(t *testing.T) {
	t.Parallel()
	j := Jobs{Start: []int64{1, 2}, End: []int64{3, Running}, Rate: []float64{0.5, 2}, Assoc: []int32{0, 1}}
	j.Reserve(100)
	if j.Len() != 2 || j.Start[1] != 2 || j.End[1] != Running || j.Rate[0] != 0.5 || j.Assoc[1] != 1 {
		t.Fatalf("Reserve changed the jobs: %+v", j)
	}
	for name, c := range map[string]int{"Start": cap(j.Start), "End": cap(j.End), "Rate": cap(j.Rate), "Assoc": cap(j.Assoc)} {
		if c < 100 {
			t.Errorf("cap(%s) = %d after Reserve(100)", name, c)
		}
	}
	start := &j.Start[0]
	j.Reserve(10)
	j.Start = append(j.Start, make([]int64, 98)...)
	if &j.Start[0] != start {
		t.Errorf("appending within the reserve reallocated")
	}
}

// TestAdvanceTickForest applies one tick to a forest of two trees, 0 ← 1
// and 2 ← 3, with f = 0.5 and cP = 2, worked by hand (children first):
//
//	3: x = 3·2 + 0.5 = 6.5, U = 6·0.5 + 6.5 = 9.5, acc[2] = 6.5
//	2: x = 0·2 + 6.5 = 6.5, U = 2·0.5 + 6.5 = 7.5 (a root)
//	1: x = 1·2 + 1   = 3,   U = 4·0.5 + 3   = 5,   acc[0] = 3
//	0: x = 1·2 + 3   = 5,   U = 8·0.5 + 5   = 9   (a root)
//
// and every acc is left zero.
func TestAdvanceTickForest(t *testing.T) {
	t.Parallel()
	e := &engine{w: Window{Parent: []int32{-1, 0, -1, 2}}}
	e.initTree(4)
	if want := []int32{0, 0, 2, 2}; !reflect.DeepEqual(e.up, want) {
		t.Fatalf("up = %v, want %v", e.up, want)
	}
	u := []float64{8, 4, 2, 6}
	copy(e.acc, []float64{0, 1, 0, 0.5})
	advanceTick(u, []float64{1, 1, 0, 3}, e.acc, e.up, 0.5, 2)
	if want := []float64{9, 5, 7.5, 9.5}; !reflect.DeepEqual(u, want) {
		t.Errorf("usage = %v, want %v", u, want)
	}
	if want := []float64{0, 0, 0, 0}; !reflect.DeepEqual(e.acc, want) {
		t.Errorf("acc = %v, want %v", e.acc, want)
	}
}

// TestSortByTick checks sortByTick against a comparison sort of the same
// events: the result must be ordered by tick and, sorted whole, equal the
// input sorted whole (the order within a tick is free).
func TestSortByTick(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 9))
	for _, c := range []struct {
		n       int
		maxTick uint32
	}{{0, 5}, {1, 5}, {2, 0}, {7, 1}, {100, 3}, {1000, 999}, {5000, 2047}, {5000, 2048}, {3000, 1 << 20}, {3000, 1<<32 - 2}} {
		t.Run(fmt.Sprintf("%d events, max tick %d", c.n, c.maxTick), func(t *testing.T) {
			ev := make([]uint64, c.n)
			for i := range ev {
				var tick uint64
				switch r.IntN(4) {
				case 0:
					tick = uint64(c.maxTick) // the last tick
				case 1:
					tick = uint64(min(c.maxTick, 1)) // the first
				default:
					tick = r.Uint64N(uint64(c.maxTick) + 1)
				}
				ev[i] = tick<<32 | r.Uint64N(1<<32)
			}
			want := slices.Clone(ev)
			slices.Sort(want)
			got := slices.Clone(ev)
			sortByTick(got, c.maxTick)
			if !slices.IsSortedFunc(got, func(a, b uint64) int { return cmp.Compare(a>>32, b>>32) }) {
				t.Errorf("sortByTick(%d events, max tick %d): not in tick order", c.n, c.maxTick)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("sortByTick(%d events, max tick %d): events lost or changed", c.n, c.maxTick)
			}
		})
	}
}

// TestAdvanceTickFlat applies one tick to three roots with f = 0.5 and
// cP = 2, worked by hand: U = U·0.5 + rate·2 + acc.
//
//	0: 8·0.5 + 1·2 + 0   = 6
//	1: 0·0.5 + 0·2 + 0   = 0 (idle)
//	2: 6·0.5 + 3·2 + 0.5 = 9.5
//
// initTree must find the forest flat, and the general kernel must agree.
func TestAdvanceTickFlat(t *testing.T) {
	t.Parallel()
	e := &engine{w: Window{Parent: []int32{-1, -1, -1}}}
	e.initTree(3)
	if !e.flat {
		t.Fatal("three roots: flat = false, want true")
	}
	want := []float64{6, 0, 9.5}
	u, acc := []float64{8, 0, 6}, []float64{0, 0, 0.5}
	advanceTickFlat(u, []float64{1, 0, 3}, acc, 0.5, 2)
	if !reflect.DeepEqual(u, want) || !reflect.DeepEqual(acc, []float64{0, 0, 0}) {
		t.Errorf("advanceTickFlat: usage = %v, acc = %v, want %v and zeros", u, acc, want)
	}
	u, acc = []float64{8, 0, 6}, []float64{0, 0, 0.5}
	advanceTick(u, []float64{1, 0, 3}, acc, e.up, 0.5, 2)
	if !reflect.DeepEqual(u, want) || !reflect.DeepEqual(acc, []float64{0, 0, 0}) {
		t.Errorf("advanceTick: usage = %v, acc = %v, want %v and zeros", u, acc, want)
	}
	e = &engine{w: Window{Parent: []int32{-1, -1, 1}}}
	if e.initTree(3); e.flat {
		t.Error("a child of 1: flat = true, want false")
	}
}

// A failing OnSnapshot comes back as "snapshot at <t>: <err>", with no
// "decay:" of its own: the caller names the stage (the pipeline says
// "decay: snapshot at …"), so the prefix is not given twice.
func TestAdvanceSnapshotErrorContext(t *testing.T) {
	t.Parallel()
	p := Params{CalcPeriodSec: 300}
	st := mustState(t, p, 2, 0)
	_, err := Advance(p, st, Window{
		Parent: []int32{-1, 0}, Jobs: columns([]job{{0, 600, 1, 1}}), To: 900, Snapshots: []int64{300},
		OnSnapshot: func(int64, int64, []float64) error { return errTest },
	})
	if want := "snapshot at 300: " + errTest.Error(); err == nil || err.Error() != want {
		t.Errorf("Advance with a failing OnSnapshot = %v, want %q", err, want)
	}
	if !errors.Is(err, errTest) {
		t.Errorf("Advance lost the callback's error: %v", err)
	}
}

// TestAdvanceTickActive applies one tick to five roots of which 0 and 3
// are active, with f = 0.5 and cP = 2, worked by hand as in
// TestAdvanceTickFlat (U = U·0.5 + rate·2 + acc); the idle ones stay at
// +0, and advanceTickFlat gives the same vector.
//
//	0: 8·0.5 + 1·2 + 0   = 6
//	3: 6·0.5 + 3·2 + 0.5 = 9.5
func TestAdvanceTickActive(t *testing.T) {
	t.Parallel()
	want := []float64{6, 0, 0, 9.5, 0}
	u, acc, rate := []float64{8, 0, 0, 6, 0}, []float64{0, 0, 0, 0.5, 0}, []float64{1, 0, 0, 3, 0}
	advanceTickActive(u, rate, acc, []int32{3, 0}, 0.5, 2)
	if !reflect.DeepEqual(u, want) || !reflect.DeepEqual(acc, []float64{0, 0, 0, 0, 0}) {
		t.Errorf("advanceTickActive: usage = %v, acc = %v, want %v and zeros", u, acc, want)
	}
	for a, x := range u {
		if x == 0 && math.Signbit(x) {
			t.Errorf("association %d: -0", a)
		}
	}
	u, acc = []float64{8, 0, 0, 6, 0}, []float64{0, 0, 0, 0.5, 0}
	advanceTickFlat(u, rate, acc, 0.5, 2)
	if !reflect.DeepEqual(u, want) {
		t.Errorf("advanceTickFlat: usage = %v, want %v", u, want)
	}
}

// TestAdvanceIdleAssociations: on a flat forest of 1,000 associations of
// which 300 run jobs (starting one after the other over 20 days, so that
// most ticks find a few activated since the last merge) and 3 more only
// carry usage from the checkpoint, every snapshot and the final state are
// bit for bit those of the same window on those 303 associations alone
// (where all are active and every tick takes advanceTickFlat), and the
// 697 idle ones stay at +0.
func TestAdvanceIdleAssociations(t *testing.T) {
	t.Parallel()
	p := Params{HalfLifeSec: 7 * 86400, CalcPeriodSec: 300}
	const n, start = 1000, int64(1_735_689_600) // 2025-01-01
	r := rand.New(rand.NewPCG(5, 5))
	carried := []int32{0, 500, 998} // checkpoint usage only
	var used []int32                // run jobs
	for _, a := range r.Perm(n) {
		if len(used) < 300 && !slices.Contains(carried, int32(a)) {
			used = append(used, int32(a))
		}
	}
	both := append(slices.Clone(used), carried...)
	small := map[int32]int32{}
	for i, a := range both {
		small[a] = int32(i)
	}
	var big, few Jobs
	for range 3000 {
		a := used[r.IntN(len(used))]
		s := start + r.Int64N(20*86400)
		e := s + 1 + r.Int64N(3*86400)
		if r.IntN(10) == 0 {
			e = Running
		}
		rate := float64(1+r.IntN(64)) * []float64{1, 0.5, 1.2}[r.IntN(3)]
		for _, j := range []*Jobs{&big, &few} {
			j.Start, j.End, j.Rate = append(j.Start, s), append(j.End, e), append(j.Rate, rate)
		}
		big.Assoc, few.Assoc = append(big.Assoc, a), append(few.Assoc, small[a])
	}
	to := start + 30*86400
	var snaps []int64
	for d := int64(1); d <= 30; d++ {
		snaps = append(snaps, start+d*86400-1)
	}
	run := func(nAssoc int, jobs Jobs, idx func(a int32) int32) ([][]float64, *State) {
		st := mustState(t, p, nAssoc, start)
		for k, a := range carried {
			st.Usage[idx(a)] = 1e6 * float64(k+1)
		}
		parent := make([]int32, nAssoc)
		for i := range parent {
			parent[i] = -1
		}
		var got [][]float64
		_, err := Advance(p, st, Window{Parent: parent, Jobs: jobs, To: to, Snapshots: snaps,
			OnSnapshot: func(_, _ int64, u []float64) error {
				row := make([]float64, len(both))
				for i, a := range both {
					row[i] = u[idx(a)]
				}
				got = append(got, row)
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		return got, st
	}
	gotBig, stBig := run(n, big, func(a int32) int32 { return a })
	gotFew, stFew := run(len(both), few, func(a int32) int32 { return small[a] })
	if len(gotBig) != len(snaps) || !reflect.DeepEqual(gotBig, gotFew) {
		t.Fatalf("snapshots of the 1,000 differ from those of the 15 alone:\n%v\n%v", gotBig, gotFew)
	}
	for a, x := range stBig.Usage {
		if i, ok := small[int32(a)]; ok {
			if math.Float64bits(x) != math.Float64bits(stFew.Usage[i]) {
				t.Errorf("association %d: final usage %v, alone %v", a, x, stFew.Usage[i])
			}
		} else if x != 0 || math.Signbit(x) {
			t.Errorf("idle association %d: final usage %v, want +0", a, x)
		}
	}
	if gotBig[29][len(both)-1] == 0 {
		t.Errorf("last snapshot: carried association %d at 0", both[len(both)-1])
	}
}

// TestTickPhase checks the phase of instants before and after the epoch
// on a 300 s grid: the phase is never negative, so 1969's ticks lie on
// the same grid as 1970's.
func TestTickPhase(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ t, period, want int64 }{
		{0, 300, 0}, {299, 300, 299}, {300, 300, 0}, {1_000_000_007, 300, 107},
		{-1, 300, 299}, {-300, 300, 0}, {-301, 300, 299}, {-7, 60, 53},
	} {
		if got := TickPhase(c.t, c.period); got != c.want {
			t.Errorf("TickPhase(%d, %d) = %d, want %d", c.t, c.period, got, c.want)
		}
	}
}
