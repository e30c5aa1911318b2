package fairshare

import (
	"math"
	"slices"
	"testing"
)

// TestAlgorithmName checks the history spelling and the PriorityFlags
// spelling of each algorithm and that ParseAlgorithm inverts String.
func TestAlgorithmName(t *testing.T) {
	t.Parallel()
	for _, w := range []struct {
		a          Algorithm
		name, flag string
	}{{FairTreeAlgo, "fair_tree", "FAIR_TREE"}, {ClassicAlgo, "classic", "NO_FAIR_TREE"},
		{DepthObliviousAlgo, "depth_oblivious", "DEPTH_OBLIVIOUS"}} {
		t.Run(w.name, func(t *testing.T) {
			if got := w.a.String(); got != w.name {
				t.Errorf("%d.String() = %q, want %q", w.a, got, w.name)
			}
			if got := w.a.Flag(); got != w.flag {
				t.Errorf("%v.Flag() = %q, want %q", w.a, got, w.flag)
			}
			if got, err := ParseAlgorithm(w.name); err != nil || got != w.a {
				t.Errorf("ParseAlgorithm(%q) = %v, %v; want %v", w.name, got, err, w.a)
			}
			if !w.a.Valid() {
				t.Errorf("%v.Valid() = false", w.a)
			}
		})
	}
	for _, s := range []string{"", "FAIR_TREE", "NO_FAIR_TREE", "Classic", "unknown"} {
		if a, err := ParseAlgorithm(s); err == nil {
			t.Errorf("ParseAlgorithm(%q) = %v, want an error", s, a)
		}
	}
	for _, a := range []Algorithm{0, DepthObliviousAlgo + 1} {
		if a.Valid() || a.String() != "unknown" || a.Flag() != "unknown" {
			t.Errorf("Algorithm(%d): Valid %v, String %q, Flag %q", uint8(a), a.Valid(), a.String(), a.Flag())
		}
	}
}

// TestCompute checks that Compute dispatches to the algorithm's function,
// and to Fair Tree for an unknown value.
func TestCompute(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, test24_4(t))
	for _, tc := range []struct {
		a    Algorithm
		want func(*Result)
	}{
		{FairTreeAlgo, func(r *Result) { FairTree(b.tree, b.usage, r) }},
		{ClassicAlgo, func(r *Result) { Classic(b.tree, b.usage, 2, r) }},
		{DepthObliviousAlgo, func(r *Result) { DepthOblivious(b.tree, b.usage, 2, r) }},
		{0, func(r *Result) { FairTree(b.tree, b.usage, r) }},
	} {
		t.Run(tc.a.String(), func(t *testing.T) {
			var got, want Result
			Compute(tc.a, b.tree, b.usage, 2, &got)
			tc.want(&want)
			same := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
			if got.Algorithm != want.Algorithm || !slices.EqualFunc(got.NormShares, want.NormShares, same) ||
				!slices.EqualFunc(got.EffectvUsage, want.EffectvUsage, same) || !slices.EqualFunc(got.FairShare, want.FairShare, same) ||
				!slices.EqualFunc(got.LevelFS, want.LevelFS, same) || !slices.Equal(got.Rank, want.Rank) {
				t.Errorf("Compute(%v) differs from the algorithm's function", tc.a)
			}
		})
	}
}
