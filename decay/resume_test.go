package decay

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// reference is a literal, job-by-job transcription of §2.8 (and of
// slurmctld's decay thread): at each tick T after L, job-end tails of jobs
// ending in (L, T] are added first (limits only), then the reset check zeroes
// everything, then every association decays by max(pow(d, P), DBL_MIN), then
// every job running at T (S < T < E) adds B·q·δ·d^δ, δ = T − max(L, S), to
// its association and each ancestor separately. It shares no code with the
// engine except NextReset (tested on its own) and uses math.Pow, so results
// agree to rounding only.
func reference(p Params, parent []int32, js []job, start, to int64) []float64 {
	P := p.CalcPeriodSec
	d := 1.0
	if p.HalfLifeSec > 0 {
		d = 1 - 0.693/float64(p.HalfLifeSec)
	}
	f := math.Max(math.Pow(d, float64(P)), 0x1p-1022)
	run := func(sec int64) float64 { return float64(sec) * math.Pow(d, float64(sec)) }
	period, _ := ParseResetPeriod(p.ResetPeriod)
	loc := p.Location
	if loc == nil {
		loc = time.UTC
	}
	k := (start - p.OriginUnix) / P
	if (start-p.OriginUnix)%P != 0 && start < p.OriginUnix {
		k--
	}
	L := p.OriginUnix + k*P
	next := int64(math.MaxInt64)
	if period >= ResetDaily {
		next = NextReset(period, time.Unix(L, 0), time.Unix(L, 0), loc).Unix()
	}
	u := make([]float64, len(parent))
	add := func(a int32, v float64) {
		for ; a >= 0; a = parent[a] {
			u[a] += v
		}
	}
	for T := L + P; T <= to; T += P {
		if p.LimitsEnforced {
			for _, j := range js {
				if j.end != Running && j.end > L && j.end <= T && j.end > j.start {
					add(j.assoc, j.rate*run(j.end-max(L, j.start)))
				}
			}
		}
		if T >= next {
			clear(u)
			next = NextReset(period, time.Unix(next, 0), time.Unix(T, 0), loc).Unix()
		}
		for i := range u {
			u[i] *= f
		}
		for _, j := range js {
			if j.start < T && (j.end == Running || j.end > T) {
				add(j.assoc, j.rate*run(T-max(L, j.start)))
			}
		}
		L = T
	}
	return u
}

// scenario is a random tree, job list and parameter set.
type scenario struct {
	p         Params
	parent    []int32
	jobs      []job
	start, to int64
}

func (s scenario) String() string {
	return fmt.Sprintf("H=%d P=%d origin=%d reset=%s limits=%v assocs=%d jobs=%d window=[%d,%d]",
		s.p.HalfLifeSec, s.p.CalcPeriodSec, s.p.OriginUnix, s.p.ResetPeriod, s.p.LimitsEnforced,
		len(s.parent), len(s.jobs), s.start, s.to)
}

func randomScenario(r *rand.Rand, loc *time.Location) scenario {
	var s scenario
	s.p.HalfLifeSec = []int64{0, 60, 3600, 86400, 604800}[r.IntN(5)]
	s.p.CalcPeriodSec = []int64{60, 300, 420}[r.IntN(3)]
	s.p.OriginUnix = r.Int64N(s.p.CalcPeriodSec)
	s.p.ResetPeriod = []string{"NONE", "DAILY", "WEEKLY", "MONTHLY"}[r.IntN(4)]
	s.p.Location = []*time.Location{time.UTC, loc}[r.IntN(2)]
	s.p.LimitsEnforced = r.IntN(2) == 0
	n := 1 + r.IntN(12)
	s.parent = make([]int32, n)
	s.parent[0] = -1
	for i := 1; i < n; i++ {
		s.parent[i] = int32(r.IntN(i))
	}
	// Around the Berlin fall-back day and a month end, so resets happen.
	s.start = time.Date(2024, 10, 26, 20, 0, 0, 0, time.UTC).Unix() + r.Int64N(86400)
	s.to = s.start + 3600 + r.Int64N(3*86400)
	nj := r.IntN(60)
	for range nj {
		st := s.start - 3000 + r.Int64N(s.to-s.start+3500)
		var dur int64
		switch r.IntN(5) {
		case 0:
			dur = r.Int64N(s.p.CalcPeriodSec + 1) // often between two ticks
		case 1:
			dur = s.p.CalcPeriodSec * r.Int64N(20) // often tick to tick
		default:
			dur = r.Int64N(40000)
		}
		e := st + dur
		if e > s.to {
			e = Running // still running at the end of the whole window
		}
		if r.IntN(4) == 0 {
			st -= st % s.p.CalcPeriodSec // start on a tick (origin permitting)
		}
		rate := []float64{1, 2, 0.5, 1.5, 64, 0.1, 1e-3, r.Float64() * 100}[r.IntN(8)]
		s.jobs = append(s.jobs, job{st, e, rate, int32(r.IntN(n))})
	}
	return s
}

// Engine against the literal reference on random scenarios.
func TestAgainstReference(t *testing.T) {
	t.Parallel()
	loc := berlin(t)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		s := randomScenario(r, loc)
		st := mustState(t, s.p, len(s.parent), s.start)
		runWindow(t, s.p, st, s.parent, s.jobs, s.to)
		want := reference(s.p, s.parent, s.jobs, s.start, s.to)
		scale := 1.0
		for _, w := range want {
			scale = math.Max(scale, w)
		}
		for a := range want {
			if math.Abs(st.Usage[a]-want[a]) > 1e-10*scale {
				t.Errorf("case %d (%v): usage[%d] = %.15g, reference %.15g", i, s, a, st.Usage[a], want[a])
				break
			}
		}
	}
}

// splitJobs returns what sacct shows at time ts (jobs started by ts, those
// still running marked Running) and what it shows afterwards for the window
// (ts, to] (jobs that end after ts or still run).
func splitJobs(js []job, ts int64) (night1, night2 []job) {
	for _, j := range js {
		if j.start <= ts {
			n := j
			if j.end == Running || j.end > ts {
				n.end = Running
			}
			night1 = append(night1, n)
		}
		if j.end == Running || j.end > ts {
			night2 = append(night2, j)
		}
	}
	return night1, night2
}

// Splitting a window at any tick and resuming from the marshalled checkpoint
// gives bit-identical usage and snapshots to one run over the whole window;
// so does shuffling the jobs.
func TestResumeBitIdentical(t *testing.T) {
	t.Parallel()
	loc := berlin(t)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		s := randomScenario(r, loc)
		var snaps []int64
		for range 5 {
			snaps = append(snaps, s.start+r.Int64N(s.to-s.start+1))
		}
		slices.Sort(snaps)

		one := mustState(t, s.p, len(s.parent), s.start)
		want, _ := runWindow(t, s.p, one, s.parent, s.jobs, s.to, snaps...)

		st := mustState(t, s.p, len(s.parent), s.start)
		P := s.p.CalcPeriodSec
		ts := st.Tick + P*r.Int64N((one.Tick-st.Tick)/P+1) // a tick of the window
		n1, n2 := splitJobs(s.jobs, ts)
		cut, _ := slices.BinarySearch(snaps, ts+1) // snapshots ≤ ts go to night 1
		got1, _ := runWindow(t, s.p, st, s.parent, n1, ts, snaps[:cut]...)
		blob, err := st.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var resumed State
		if err := resumed.UnmarshalBinary(blob); err != nil {
			t.Fatal(err)
		}
		got2, _ := runWindow(t, s.p, &resumed, s.parent, n2, s.to, snaps[cut:]...)
		got := append(got1, got2...)
		for a := range one.Usage {
			if math.Float64bits(resumed.Usage[a]) != math.Float64bits(one.Usage[a]) {
				t.Errorf("case %d (%v) split at %d: usage[%d] = %v, one run %v", i, s, ts, a, resumed.Usage[a], one.Usage[a])
				break
			}
		}
		for k := range want {
			if got[k].tick != want[k].tick || !slices.Equal(got[k].usage, want[k].usage) {
				t.Errorf("case %d (%v) split at %d: snapshot %d at %d = %v (tick %d), one run %v (tick %d)",
					i, s, ts, k, want[k].at, got[k].usage, got[k].tick, want[k].usage, want[k].tick)
				break
			}
		}
		if resumed.LastReset != one.LastReset || resumed.NextReset != one.NextReset || resumed.Tick != one.Tick {
			t.Errorf("case %d: resumed reset state (%d, %d, %d), one run (%d, %d, %d)", i,
				resumed.Tick, resumed.LastReset, resumed.NextReset, one.Tick, one.LastReset, one.NextReset)
		}

		shuffled := slices.Clone(s.jobs)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		sh := mustState(t, s.p, len(s.parent), s.start)
		runWindow(t, s.p, sh, s.parent, shuffled, s.to)
		if !slices.Equal(sh.Usage, one.Usage) {
			t.Errorf("case %d (%v): shuffled jobs give %v, in order %v", i, s, sh.Usage, one.Usage)
		}
	}
}

// Associations created after the checkpoint are appended with zero usage;
// the result equals one run over the grown tree.
func TestResumeGrowingTree(t *testing.T) {
	t.Parallel()
	p := Params{HalfLifeSec: 3600, CalcPeriodSec: 300, LimitsEnforced: true}
	small := []int32{-1, 0, 1}
	grown := []int32{-1, 0, 1, 0, 3, 1}
	js := []job{{0, 5000, 1.5, 2}, {700, Running, 2, 2}}
	late := []job{{3100, 4000, 3, 4}, {3000, Running, 1, 5}} // on associations 4 and 5, after the split
	all := append(slices.Clone(js), late...)

	one := mustState(t, p, len(grown), 0)
	runWindow(t, p, one, grown, all, 6000)

	st := mustState(t, p, len(small), 0)
	n1, _ := splitJobs(js, 3000)
	runWindow(t, p, st, small, n1, 3000)
	_, n2 := splitJobs(all, 3000)
	runWindow(t, p, st, grown, n2, 6000)
	if !slices.Equal(st.Usage, one.Usage) {
		t.Errorf("grown resume = %v, one run %v", st.Usage, one.Usage)
	}
	if st.Usage[4] == 0 || st.Usage[5] == 0 {
		t.Errorf("new associations got no usage: %v", st.Usage)
	}
}
