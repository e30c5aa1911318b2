package decay

import (
	"math"
	"math/rand/v2"
	"testing"
)

// advanceTicks runs one window with explicit tick times and returns the
// snapshots.
func advanceTicks(t *testing.T, p Params, st *State, js []job, ticks []int64, after map[int32]bool, to int64, at ...int64) []snap {
	t.Helper()
	var out []snap
	parent := make([]int32, len(st.Usage))
	for i := range parent {
		parent[i] = -1
	}
	_, err := Advance(p, st, Window{
		Parent: parent, Jobs: columns(js), To: to, Ticks: ticks, EndsAfterTick: after,
		Snapshots: at,
		OnSnapshot: func(at, tick int64, usage []float64) error {
			out = append(out, snap{at, tick, append([]float64(nil), usage...)})
			return nil
		},
	})
	if err != nil {
		t.Fatalf("Advance: %v", err)
	}
	return out
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }

// Ticks 61 s and then 59 s apart, as a late wake-up of slurmctld's decay
// thread makes them: each decays over its real distance. H = 3600 s,
// d = 1 − 0.693/3600; one job of rate 4 running from 0. By hand:
// U(61) = 4·61·d^61 = 241.151313889; U(120) = U(61)·d^59 + 4·59·d^59 =
// 471.762210430. On the regular grid U(120) would be 471.762705 (the
// docs' case of a job end after the tick).
func TestIrregularTicks(t *testing.T) {
	t.Parallel()
	p := Params{HalfLifeSec: 3600, CalcPeriodSec: 60}
	st := mustState(t, p, 1, 0)
	js := []job{{0, Running, 4, 0}}
	snaps := advanceTicks(t, p, st, js, []int64{61, 120}, nil, 130, 100, 130)
	if snaps[0].tick != 61 || !near(snaps[0].usage[0], 241.151313889) {
		t.Errorf("at 100: tick %d usage %.9f, want tick 61 usage 241.151313889", snaps[0].tick, snaps[0].usage[0])
	}
	if snaps[1].tick != 120 || !near(snaps[1].usage[0], 471.762210430) {
		t.Errorf("at 130: tick %d usage %.9f, want tick 120 usage 471.762210430", snaps[1].tick, snaps[1].usage[0])
	}
	if st.Tick != 120 || st.OriginUnix != 0 {
		t.Errorf("state tick %d origin %d, want 120 and 0 (120 mod 60)", st.Tick, st.OriginUnix)
	}
}

// A job ending in the very second of a tick (limits; H = 3600 s, P = 60 s,
// ticks at 60 and 120, rate 4 from 0 to 120, c = 4·60·d^60): ended before
// the tick, its last chunk is charged at its end and decayed by the tick,
// U(120) = (c + c)·d^60 = 469.038043; ended after it (slurmctld's log says
// so), the tick charges it as running, U(120) = c·d^60 + c = 471.762705.
// Both by hand (docs/slurm-versions.md §10's case).
func TestEndAfterTick(t *testing.T) {
	t.Parallel()
	p := Params{HalfLifeSec: 3600, CalcPeriodSec: 60, LimitsEnforced: true}
	js := []job{{0, 120, 4, 0}}
	for _, c := range []struct {
		name  string
		ticks []int64
		after map[int32]bool
		want  float64
	}{
		{"grid, before", nil, nil, 469.038043},
		{"grid, after", nil, map[int32]bool{0: true}, 471.762705},
		{"log ticks, before", []int64{60, 120}, nil, 469.038043},
		{"log ticks, after", []int64{60, 120}, map[int32]bool{0: true}, 471.762705},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := mustState(t, p, 1, 0)
			snaps := advanceTicks(t, p, st, js, c.ticks, c.after, 200, 150, 200)
			if got := snaps[0].usage[0]; math.Abs(got-c.want) > 5e-7 {
				t.Errorf("%s: U(120) = %.6f, want %.6f", c.name, got, c.want)
			}
			// Nothing more is charged after the end: the next tick only decays.
			if got, want := snaps[1].usage[0], snaps[0].usage[0]*DecayOver(3600, 60); !near(got, want) {
				t.Errorf("%s: U(180) = %.9f, want U(120)·d^60 = %.9f", c.name, got, want)
			}
		})
	}
}

// Before the log's first tick the ticks fall every period from the state's
// tick up to a period before it, after its last one every period from it:
// state at 0, P = 60, log ticks 150 and 205 → ticks 60, 150, 205, 265, 325
// (not 120: slurmctld's ticks are a period apart, but for a restart). No
// decay, a job of rate 1 from 0: usage at each tick is the tick's time.
func TestTicksAroundTheLog(t *testing.T) {
	t.Parallel()
	p := Params{CalcPeriodSec: 60}
	st := mustState(t, p, 1, 0)
	at := []int64{59, 60, 121, 149, 150, 204, 205, 264, 265, 330}
	snaps := advanceTicks(t, p, st, []job{{0, Running, 1, 0}}, []int64{150, 205}, nil, 330, at...)
	want := []int64{0, 60, 60, 60, 150, 150, 205, 205, 265, 325}
	for i, s := range snaps {
		if s.tick != want[i] || s.usage[0] != float64(want[i]) {
			t.Errorf("snapshot at %d: tick %d usage %v, want %d", s.at, s.tick, s.usage[0], want[i])
		}
	}
	if st.Tick != 325 || st.OriginUnix != 25 {
		t.Errorf("state tick %d origin %d, want 325 and 25", st.Tick, st.OriginUnix)
	}
}

// Explicit ticks that fall on the regular grid give the grid's result to
// the bit, on random jobs with and without limits.
func TestTicksOnTheGridSameBits(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	for c := range 20 {
		p := Params{HalfLifeSec: 1800, CalcPeriodSec: 60, LimitsEnforced: c%2 == 0}
		var js []job
		for range 200 {
			s := r.Int64N(3000)
			e := s + r.Int64N(900)
			if r.IntN(5) == 0 {
				e = Running
			}
			js = append(js, job{s, e, float64(r.IntN(64)) + 0.5, int32(r.IntN(3))})
		}
		var ticks []int64
		for T := int64(60); T <= 3600; T += 60 {
			ticks = append(ticks, T)
		}
		a, b := mustState(t, p, 3, 0), mustState(t, p, 3, 0)
		sa := advanceTicks(t, p, a, js, nil, nil, 3600, 1000, 3600)
		sb := advanceTicks(t, p, b, js, ticks, nil, 3600, 1000, 3600)
		for i := range sa {
			for k := range sa[i].usage {
				if math.Float64bits(sa[i].usage[k]) != math.Float64bits(sb[i].usage[k]) {
					t.Fatalf("case %d snapshot %d assoc %d: grid %v, explicit %v", c, i, k, sa[i].usage[k], sb[i].usage[k])
				}
			}
		}
	}
}

// Explicit ticks must increase.
func TestTicksRefused(t *testing.T) {
	t.Parallel()
	p := Params{CalcPeriodSec: 60}
	st := mustState(t, p, 1, 0)
	_, err := Advance(p, st, Window{Parent: []int32{-1}, To: 300, Ticks: []int64{120, 120}})
	if err == nil {
		t.Fatal("Advance took ticks 120, 120")
	}
}

// A Schedule answers where Advance ticks: the TestTicksAroundTheLog case.
func TestSchedule(t *testing.T) {
	t.Parallel()
	s, err := NewSchedule(0, 60, []int64{150, 205})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ t, last, next int64 }{
		{-1, -60, 0}, {0, 0, 60}, {59, 0, 60}, {60, 60, 150}, {149, 60, 150},
		{150, 150, 205}, {204, 150, 205}, {205, 205, 265}, {300, 265, 325},
	} {
		if l, n := s.Last(c.t), s.Next(c.t); l != c.last || n != c.next {
			t.Errorf("at %d: last %d next %d, want %d and %d", c.t, l, n, c.last, c.next)
		}
	}
	// A first explicit tick less than a period after the anchor follows it.
	s, err = NewSchedule(0, 60, []int64{30, 90})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ t, last, next int64 }{{0, 0, 30}, {29, 0, 30}, {30, 30, 90}, {100, 90, 150}} {
		if l, n := s.Last(c.t), s.Next(c.t); l != c.last || n != c.next {
			t.Errorf("anchor 0, ticks 30, 90: at %d: last %d next %d, want %d and %d", c.t, l, n, c.last, c.next)
		}
	}
	if _, err := NewSchedule(0, 0, nil); err == nil {
		t.Error("NewSchedule took a period of 0")
	}
}

// A job starting between the grid's last tick and the log's first is
// charged from its start at the log's first tick: ticks 60, 150; no decay,
// rate 1 from 100 → U(150) = 50, U(205) = 105.
func TestStartBeforeTheLog(t *testing.T) {
	t.Parallel()
	p := Params{CalcPeriodSec: 60}
	st := mustState(t, p, 1, 0)
	snaps := advanceTicks(t, p, st, []job{{100, Running, 1, 0}}, []int64{150, 205}, nil, 205, 149, 150, 205)
	for i, want := range []float64{0, 50, 105} {
		if snaps[i].usage[0] != want {
			t.Errorf("at %d: usage %v, want %v", snaps[i].at, snaps[i].usage[0], want)
		}
	}
}

// A slurmctld start between two ticks reads usage back from its state
// file, every association's own usage_raw rounded to six decimals
// ("%Lf", packlongdouble in src/common/pack.c; load_assoc_usage adds each
// to its ancestors), before its first tick decays it. Limits; H = 3600 s,
// P = 60 s, d = 1 − 0.693/3600; ticks at 60 and 90 (the new process's
// first, slurmctld started at 85), then 150. Root 0 with associations 1
// and 2; job a on 1, rate 1, from 0 and still running; job b on 2, rate
// 0.5, from 0 to 75 (its end charges 0.5·15·d^15 before the start). By
// hand, at 50 digits:
//
//	U1(60) = 60·d^60 = 59.3109207677     U2(60) = 30·d^60 = 29.6554603838
//	reloaded: U1 = 59.310921             U2 = r6(29.6554603838 + 7.5·d^15 = 37.1338325…) = 37.133833
//	U1(90) = 59.310921·d^30 + 30·d^30 = 88.796587492621
//	U2(90) = 37.133833·d^30           = 36.919982618037
//	root   = 125.716570110658
//
// Without the reload: 88.796587261649, 36.919982907673, 125.716570169323.
// A flat forest (fairledger run's: own usage per association) rounds the
// same own values.
func TestReloadAtStart(t *testing.T) {
	t.Parallel()
	p := Params{HalfLifeSec: 3600, CalcPeriodSec: 60, LimitsEnforced: true}
	js := []job{{0, Running, 1, 1}, {0, 75, 0.5, 2}}
	for _, c := range []struct {
		name   string
		parent []int32
		want   []float64
	}{
		{"tree", []int32{-1, 0, 0}, []float64{125.716570110658, 88.796587492621, 36.919982618037}},
		{"flat", []int32{-1, -1, -1}, []float64{0, 88.796587492621, 36.919982618037}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := mustState(t, p, 3, 0)
			var got []float64
			_, err := Advance(p, st, Window{
				Parent: c.parent, Jobs: columns(js), To: 100, Ticks: []int64{60, 90, 150}, Reloads: []int64{85},
				Snapshots: []int64{95},
				OnSnapshot: func(at, tick int64, usage []float64) error {
					got = append([]float64(nil), usage...)
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			for a, w := range c.want {
				if math.Abs(got[a]-w) > 1e-9 {
					t.Errorf("U%d(90) = %.12f, want %.12f", a, got[a], w)
				}
			}
		})
	}
}

// Reload rounds to six decimals as printf's "%Lf" does: to nearest, on
// the number's exact binary value.
func TestReload(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want float64 }{
		{86.6013715, 86.601371}, // 86.60137149999999… in binary: down
		{86.60137151, 86.601372},
		{0.0000004, 0},
		{0.0000005000001, 0.000001},
		{123, 123},
	} {
		if got := Reload(c.in); got != c.want {
			t.Errorf("Reload(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// The double charge (docs/slurm-versions.md §10's case): limits; H = 3600
// s, P = 60 s, ticks at 60, 120, 180; one job of rate 4 from 0 to 120,
// its end after the tick at 120 and after that tick's pass had charged it,
// so its end charges (60, 120] again: c = 4·60·d^60 = 237.243683071, and
// the tick at 120 holds c·d^60 + c = 471.762704558 (the end's charge comes
// after it: decayed at 180 with everything else, as any end's charge).
// U(180) = (c·d^60 + 2c)·d^60 = 700.863694674 against 466.344673187
// charged once. By hand at 40 digits.
func TestEndChargedTwice(t *testing.T) {
	t.Parallel()
	p := Params{HalfLifeSec: 3600, CalcPeriodSec: 60, LimitsEnforced: true}
	for _, c := range []struct {
		name   string
		charge map[int32]int64
		want   float64
	}{
		{"once", nil, 466.344673187},
		{"twice", map[int32]int64{0: 60}, 700.863694674},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := mustState(t, p, 1, 0)
			var got []snap
			_, err := Advance(p, st, Window{
				Parent: []int32{-1}, Jobs: columns([]job{{0, 120, 4, 0}}), To: 200, Ticks: []int64{60, 120, 180},
				EndsAfterTick: map[int32]bool{0: true}, EndCharge: c.charge, Snapshots: []int64{150, 190},
				OnSnapshot: func(at, tick int64, usage []float64) error {
					got = append(got, snap{at, tick, append([]float64(nil), usage...)})
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if !near(got[0].usage[0], 471.762704558) {
				t.Errorf("U(120) = %.9f, want 471.762704558", got[0].usage[0])
			}
			if !near(got[1].usage[0], c.want) {
				t.Errorf("U(180) = %.9f, want %.9f", got[1].usage[0], c.want)
			}
		})
	}
}

// The double charge before the tick's fair-share step (Window.
// EndChargeInPass, docs/slurm-versions.md §10): TestEndChargedTwice's
// job, its end charged again before Fair Tree's _apply_priority_fs of the
// tick at 120, is in that tick's usage: with c = 4·60·d^60 =
// 237.243683071 (d = 1 − 0.693/3600), U(120) = c·d^60 + c + c =
// 709.006387629, and U(180) = U(120)·d^60 = 700.863694674, what the
// charge after the step gives too (it is the same charge, decayed by the
// same tick). A job ending at 121, its end charged (60, 121] again (δ = 61)
// before the step of the tick at 120: U(120) = c·d^60 + c + 4·61·d^61 =
// 712.914018448, U(180) = 704.726447705. Resumed from a state at 120 that
// holds the charge (709.006387629), the end adds nothing: U(180) =
// 700.863694674. By hand at 40 digits.
func TestEndChargedInPass(t *testing.T) {
	t.Parallel()
	p := Params{HalfLifeSec: 3600, CalcPeriodSec: 60, LimitsEnforced: true}
	for _, c := range []struct {
		name       string
		end, from  int64
		start      float64
		sec        int64
		want120, w float64
	}{
		{"same second", 120, 0, 0, 60, 709.006387629, 700.863694674},
		{"next second", 121, 0, 0, 61, 712.914018448, 704.726447705},
		{"resumed", 120, 120, 709.006387629, 60, 709.006387629, 700.863694674},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := mustState(t, p, 1, 0)
			if c.from > 0 {
				st.Tick, st.Usage[0] = c.from, c.start
			}
			var got []snap
			_, err := Advance(p, st, Window{
				Parent: []int32{-1}, Jobs: columns([]job{{0, c.end, 4, 0}}), To: 200, Ticks: []int64{60, 120, 180},
				EndsAfterTick: map[int32]bool{0: c.end == 120}, EndCharge: map[int32]int64{0: c.sec},
				EndChargeInPass: map[int32]bool{0: true}, Snapshots: []int64{150, 190},
				OnSnapshot: func(at, tick int64, usage []float64) error {
					got = append(got, snap{at, tick, append([]float64(nil), usage...)})
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if !near(got[0].usage[0], c.want120) {
				t.Errorf("U(120) = %.9f, want %.9f", got[0].usage[0], c.want120)
			}
			if !near(got[1].usage[0], c.w) {
				t.Errorf("U(180) = %.9f, want %.9f", got[1].usage[0], c.w)
			}
		})
	}
}
