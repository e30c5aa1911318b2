package fairshare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestEffectvUsageOf: at every position of random trees (nested
// accounts, FairShare=parent accounts and users, no shares, zero and
// tied usage), EffectvUsageOf and NormSharesOf give bit for bit what
// Compute stores, under each algorithm.
func TestEffectvUsageOf(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(40, 1))
	for i := range 200 {
		nodes := []Node{{Account: "root", Parent: -1, Shares: 1}}
		for a := range 1 + rng.IntN(20) {
			par := 0
			if a > 0 {
				par = rng.IntN(len(nodes))
				for nodes[par].User != "" {
					par = rng.IntN(len(nodes))
				}
			}
			n := Node{Account: fmt.Sprintf("a%02d", a), Parent: par, Shares: int64(rng.IntN(4))}
			n.SharesParent = rng.IntN(6) == 0
			nodes = append(nodes, n)
			for u := range rng.IntN(4) {
				nodes = append(nodes, Node{Account: n.Account, User: fmt.Sprintf("u%d", u), Parent: len(nodes) - 1 - u,
					Shares: int64(rng.IntN(3)), SharesParent: rng.IntN(8) == 0})
			}
		}
		tr, err := NewTree(nodes)
		if err != nil {
			t.Fatal(err)
		}
		own := make([]float64, tr.Len())
		for p := range own {
			if i%20 != 0 && rng.IntN(3) > 0 {
				own[p] = math.Ldexp(rng.Float64(), rng.IntN(30))
				if rng.IntN(4) == 0 {
					own[p] = float64(rng.IntN(3))
				}
			}
		}
		usage := make([]float64, tr.Len())
		Accumulate(tr, own, usage)
		for _, a := range []Algorithm{FairTreeAlgo, ClassicAlgo, DepthObliviousAlgo} {
			var r Result
			Compute(a, tr, usage, 2, &r)
			for p := range int32(tr.Len()) {
				if got, want := EffectvUsageOf(a, tr, usage, p), r.EffectvUsage[p]; math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("tree %d, %s: EffectvUsageOf(%s) = %v, Compute's %v", i, a, tr.Lineage[p], got, want)
				}
				if got, want := tr.NormSharesOf(a, p), r.NormShares[p]; math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("tree %d, %s: NormSharesOf(%s) = %v, Compute's %v", i, a, tr.Lineage[p], got, want)
				}
			}
		}
	}
}
