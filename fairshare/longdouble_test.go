package fairshare

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// The live 26.05.5 case (docs/slurm-versions.md §2): fl_dave's shares
// 2/3 of theory's children, its raw usage 640 of theory's 2362.5 (the
// nodecay cluster: usage is exact). slurmctld's _ft_debug printed level_fs
// 2.46093749999999986339 (long double), which converted to double is
// 2.4609375 and sshare printed 2.460938; two double divisions give
// 2.4609374999999996, printed 2.460937.
func TestExtLevelFSLive(t *testing.T) {
	t.Parallel()
	s := 2.0 / 3
	if got, _ := extLevelFS(s, 640, 2362.5); got != 2.4609375 {
		t.Errorf("extLevelFS = %v, want 2.4609375", got)
	}
	if got := s / (640 / 2362.5); got != 2.4609374999999996 {
		t.Errorf("double arithmetic = %v, want 2.4609374999999996 (the case no longer shows the difference)", got)
	}
	if got := extQuo(640, 2362.5); got != 640/2362.5 {
		t.Errorf("extQuo(640, 2362.5) = %v, want %v", got, 640/2362.5)
	}
	// Signs and the values that fall back to double division.
	for _, c := range []struct{ s, raw, parent, want float64 }{
		{-s, 640, 2362.5, -2.4609375},
		{s, -640, 2362.5, -2.4609375},
		{s, -640, -2362.5, 2.4609375},
		{s, 640, math.Inf(1), math.Inf(1)},
	} {
		if got, _ := extLevelFS(c.s, c.raw, c.parent); got != c.want {
			t.Errorf("extLevelFS(%v, %v, %v) = %v, want %v", c.s, c.raw, c.parent, got, c.want)
		}
	}
}

// extDiv against math/big at 64 bits of precision, rounding to nearest
// even, which is what the x87 extended format does to each operation;
// then to a double, ties to even.
func TestExtDivBig(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	ref := func(a, b float64) float64 {
		x := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven).SetFloat64(a)
		y := new(big.Float).SetPrec(64).SetFloat64(b)
		q := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven).Quo(x, y)
		f, _ := q.Float64() // nearest, ties to even
		return f
	}
	refExt := func(s, raw, parent float64) *big.Float {
		u := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven).Quo(big.NewFloat(raw), big.NewFloat(parent))
		return new(big.Float).SetPrec(64).SetMode(big.ToNearestEven).Quo(big.NewFloat(s), u)
	}
	refLF := func(s, raw, parent float64) float64 {
		f, _ := refExt(s, raw, parent).Float64()
		return f
	}
	vals := func() float64 {
		switch rng.IntN(3) {
		case 0:
			return float64(rng.IntN(1_000_000) + 1) // integer usage, as without decay
		case 1:
			return float64(rng.IntN(1000)+1) / float64(rng.IntN(1000)+1)
		}
		return math.Ldexp(rng.Float64()+0.5, rng.IntN(80)-40)
	}
	for range 200_000 {
		a, b, c := vals(), vals(), vals()
		if got, want := extQuo(a, b), ref(a, b); got != want {
			t.Fatalf("extQuo(%v, %v) = %v, want %v", a, b, got, want)
		}
		hi, lo := extLevelFS(a, b, c)
		if got, want := hi, refLF(a, b, c); got != want {
			t.Fatalf("extLevelFS(%v, %v, %v) = %v, want %v", a, b, c, got, want)
		}
		// hi + lo is the extended value itself.
		sum := new(big.Float).SetPrec(200).Add(big.NewFloat(hi), big.NewFloat(lo))
		if sum.Cmp(refExt(a, b, c)) != 0 {
			t.Fatalf("extLevelFS(%v, %v, %v): %v + %v is not the extended value %v", a, b, c, hi, lo, refExt(a, b, c))
		}
	}
}
