package decay

import (
	"fmt"
	"math"
	"testing"
)

// relClose reports whether got is within rel (relative) of want.
func relClose(got, want, rel float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= rel*math.Max(math.Abs(got), math.Abs(want))
}

// Expected values: docs/slurm-semantics.md §11.4, "Decay factors".
func TestFactorTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		H                   int64
		d, d300, dH, effHLf float64
	}{
		{604800, 0.99999885416666667, 0.99965630887839141, 0.50007339715273758, 604928.101918},
		{1209600, 0.99999942708333334, 0.99982813972043605, 0.50007349642524412, 1209856.550410},
		{86400, 0.99999197916666671, 0.99759663307196988, 0.50007220587828072, 86418.003211},
		{3600, 0.99980749999999996, 0.9438806422256244, 0.50004023699321476, 3600.417990},
		{60, 0.98845000000000005, 0.03064867639431517, 0.49806078039872287, 59.665498},
		{1, 0.30700000000000005, 1.3852005112150601e-154, 0.30700000000000005, 0.586961},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("H=%d", tt.H), func(t *testing.T) {
			if got := Factor(tt.H); !relClose(got, tt.d, 1e-15) {
				t.Errorf("Factor(%d) = %.17g, want %.17g", tt.H, got, tt.d)
			}
			if got := DecayOver(tt.H, 300); !relClose(got, tt.d300, 1e-9) {
				t.Errorf("DecayOver(%d, 300) = %.17g, want %.17g", tt.H, got, tt.d300)
			}
			if got := DecayOver(tt.H, tt.H); !relClose(got, tt.dH, 1e-9) {
				t.Errorf("DecayOver(%d, %d) = %.17g, want %.17g", tt.H, tt.H, got, tt.dH)
			}
			// The table gives 6 decimals of seconds.
			if got := EffectiveHalfLife(tt.H); math.Abs(got-tt.effHLf) > 1e-6 {
				t.Errorf("EffectiveHalfLife(%d) = %.6f, want %.6f", tt.H, got, tt.effHLf)
			}
		})
	}
}

// §2.2: H = 0 means d = 1, no decay at all.
func TestFactorNoDecay(t *testing.T) {
	t.Parallel()
	if got := Factor(0); got != 1 {
		t.Errorf("Factor(0) = %v, want 1", got)
	}
	if got := DecayOver(0, 1e9); got != 1 {
		t.Errorf("DecayOver(0, 1e9) = %v, want 1", got)
	}
	if got := EffectiveHalfLife(0); !math.IsInf(got, 1) {
		t.Errorf("EffectiveHalfLife(0) = %v, want +Inf", got)
	}
}

// §2.2: the tick factor is clamped to DBL_MIN. 0.307^1000 = 10^(1000·log10 0.307)
// = 10^-512.8, which underflows to 0, so the clamp gives DBL_MIN =
// 2.2250738585072014e-308.
func TestDecayOverClamp(t *testing.T) {
	t.Parallel()
	if got, want := DecayOver(1, 1000), 2.2250738585072014e-308; got != want {
		t.Errorf("DecayOver(1, 1000) = %v, want %v", got, want)
	}
}

// §11.4: 1000 units left alone for 7 days with H = 7-0 and P = 300 s, decayed
// tick by tick (2016 ticks of d^300): 500.073397152788; a one-shot
// pow(d, 604800) would give 500.073397152738 instead.
func TestSevenDaysOfTicks(t *testing.T) {
	t.Parallel()
	p := Params{HalfLifeSec: 604800, CalcPeriodSec: 300}
	st, err := NewState(p, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	st.Usage[0] = 1000
	stats, err := Advance(p, st, Window{Parent: []int32{-1}, To: 604800})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Ticks != 2016 {
		t.Errorf("Advance 7 days: Ticks = %d, want 2016", stats.Ticks)
	}
	const perTick, oneShot = 500.073397152788, 500.073397152738
	got := st.Usage[0]
	if !relClose(got, perTick, 1e-9) {
		t.Errorf("usage after 2016 ticks = %.12f, want %.12f", got, perTick)
	}
	if math.Abs(got-perTick) >= math.Abs(got-oneShot) {
		t.Errorf("usage after 2016 ticks = %.12f is nearer the one-shot %.12f than the per-tick %.12f", got, oneShot, perTick)
	}
}

// d1Jobs are the jobs of scenario D1 (§11.4): H = 3600 s, P = 300 s, ticks
// at 0, 300, …; one association; UsageFactor 1.
var d1Jobs = []struct {
	start, end int64
	rate       float64
}{
	{150, 1000, 4},    // J1
	{700, 800, 2},     // J2
	{1300, 2500, 1.5}, // J3
}

// d1Table is scenario D1's table (§11.4): t, then U and J1..J3 with limits, then U and
// J1..J3 without.
var d1Table = []struct {
	t                     int64
	lim, lim1, lim2, lim3 float64
	no, no1, no2, no3     float64
}{
	{300, 582.921119, 582.921119, 0, 0, 582.921119, 582.921119, 0, 0},
	{600, 1682.864731, 1682.864731, 0, 0, 1682.864731, 1682.864731, 0, 0},
	{900, 2906.256812, 2721.080214, 185.176598, 0, 2721.080214, 2721.080214, 0, 0},
	{1200, 3113.512742, 2938.728136, 174.784606, 0, 2568.374940, 2568.374940, 0, 0},
	{1500, 3227.452848, 2773.808600, 164.975807, 288.668442, 2712.907829, 2424.239388, 0, 288.668442},
	{1800, 3471.076556, 2618.144243, 155.717470, 697.214843, 2985.407473, 2288.192630, 0, 697.214843},
	{2100, 3701.028258, 2471.215670, 146.978706, 1082.833883, 3242.614612, 2159.780729, 0, 1082.833883},
	{2400, 3918.075218, 2332.532633, 138.730355, 1446.812230, 3485.387451, 2038.575222, 0, 1446.812230},
	{2700, 3837.077802, 2201.632400, 130.944897, 1504.500505, 3289.789746, 1924.171690, 0, 1365.618057},
}

// runD1 runs scenario D1 with the jobs selected by which (indices into
// d1Jobs) from the first tick t = 0 (nothing added there) to 2700, and returns
// the usage at each tick 300 … 2700.
func runD1(t *testing.T, limits bool, which ...int) []float64 {
	t.Helper()
	p := Params{HalfLifeSec: 3600, CalcPeriodSec: 300, LimitsEnforced: limits}
	st, err := NewState(p, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var jobs Jobs
	for _, i := range which {
		jobs.Start = append(jobs.Start, d1Jobs[i].start)
		jobs.End = append(jobs.End, d1Jobs[i].end)
		jobs.Rate = append(jobs.Rate, d1Jobs[i].rate)
		jobs.Assoc = append(jobs.Assoc, 0)
	}
	var snaps []int64
	for _, row := range d1Table {
		snaps = append(snaps, row.t)
	}
	var got []float64
	_, err = Advance(p, st, Window{
		Parent: []int32{-1}, Jobs: jobs, To: 2700, Snapshots: snaps,
		OnSnapshot: func(at, tick int64, usage []float64) error {
			if tick != at {
				t.Errorf("snapshot at %d reflects tick %d, want %d", at, tick, at)
			}
			got = append(got, usage[0])
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(d1Table) {
		t.Fatalf("got %d snapshots, want %d", len(got), len(d1Table))
	}
	return got
}

// The table prints 6 decimals, so the tolerance is 1e-9 relative or 5e-7
// absolute (for the entries near 0).
func d1Close(got, want float64) bool {
	return relClose(got, want, 1e-9) || math.Abs(got-want) <= 5e-7
}

func TestScenarioD1(t *testing.T) {
	t.Parallel()
	for _, limits := range []bool{true, false} {
		t.Run(fmt.Sprintf("limits=%v", limits), func(t *testing.T) {
			cols := []struct {
				name  string
				which []int
				want  func(i int) float64
			}{
				{"U", []int{0, 1, 2}, func(i int) float64 { return pick(limits, d1Table[i].lim, d1Table[i].no) }},
				{"J1", []int{0}, func(i int) float64 { return pick(limits, d1Table[i].lim1, d1Table[i].no1) }},
				{"J2", []int{1}, func(i int) float64 { return pick(limits, d1Table[i].lim2, d1Table[i].no2) }},
				{"J3", []int{2}, func(i int) float64 { return pick(limits, d1Table[i].lim3, d1Table[i].no3) }},
			}
			for _, c := range cols {
				t.Run(c.name, func(t *testing.T) {
					got := runD1(t, limits, c.which...)
					for i, row := range d1Table {
						if want := c.want(i); !d1Close(got[i], want) {
							t.Errorf("D1 limits=%v %s(t=%d) = %.6f, want %.6f", limits, c.name, row.t, got[i], want)
						}
					}
				})
			}
		})
	}
}

func pick(c bool, a, b float64) float64 {
	if c {
		return a
	}
	return b
}

// Hand check given in §11.4: t=300: 4 × 150 × d^150; t=600: that × d^300 +
// 4 × 300 × d^300, with d = 1 − 0.693/3600.
func TestScenarioD1HandCheck(t *testing.T) {
	t.Parallel()
	d := 1 - 0.693/3600
	u300 := 4 * 150 * math.Pow(d, 150)
	u600 := u300*math.Pow(d, 300) + 4*300*math.Pow(d, 300)
	got := runD1(t, false, 0)
	if !relClose(got[0], u300, 1e-12) {
		t.Errorf("D1 J1(300) = %.12f, want %.12f", got[0], u300)
	}
	if !relClose(got[1], u600, 1e-12) {
		t.Errorf("D1 J1(600) = %.12f, want %.12f", got[1], u600)
	}
}

// TestChunk: the job-end charge per unit of rate, δ·d^δ. By hand:
// without decay it is δ; with H = 3600 s, d = 1 − 0.693/3600 = 0.9998075
// and 40·d^40 = 40·0.99232883352 = 39.6931533409 (d^40 = e^(40·ln d),
// ln d = −1.925185e-4); 0 seconds charge nothing.
func TestChunk(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		H, sec int64
		want   float64
	}{
		{0, 40, 40},
		{0, 0, 0},
		{3600, 40, 39.6931533409},
		{3600, 0, 0},
	} {
		t.Run(fmt.Sprintf("H=%d δ=%ds", tt.H, tt.sec), func(t *testing.T) {
			if got := Chunk(tt.H, tt.sec); !relClose(got, tt.want, 1e-11) {
				t.Errorf("Chunk(%d, %d) = %.12g, want %.12g", tt.H, tt.sec, got, tt.want)
			}
		})
	}
}
