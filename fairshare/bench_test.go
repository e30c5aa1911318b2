package fairshare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// benchSnapshots is the number of usage snapshots per benchmark iteration:
// one year of daily snapshots.
const benchSnapshots = 365

// synthTree builds a deterministic cluster of 100,000 associations: root, 100
// top-level accounts, 1,900 second-level and 17,999 third-level accounts
// (20,000 accounts in all) and 80,000 users at depth 2–4 (5% under top-level,
// 15% under second-level, 80% under third-level accounts). Shares are
// Pareto-skewed; 1% of associations have shares 0 and 2% FairShare=parent.
// It returns the tree and usageSets usage snapshots (descendant-inclusive,
// by position) in which about half the users have heavy-tailed usage.
func synthTree(tb testing.TB, usageSets int) (*Tree, [][]float64) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(2026, 8))
	shares := func() (int64, bool) {
		switch x := rng.Float64(); {
		case x < 0.01:
			return 0, false
		case x < 0.03:
			return 0, true
		}
		s := 1 / math.Pow(1-rng.Float64(), 1.5)
		if s > 1e6 {
			s = 1e6
		}
		return int64(s), false
	}
	nodes := []Node{{Account: "root", Parent: -1}}
	level := func(count, lo, hi int) (int, int) {
		start := len(nodes)
		for i := 0; i < count; i++ {
			p := lo + rng.IntN(hi-lo)
			s, par := shares()
			nodes = append(nodes, Node{Account: fmt.Sprintf("a%05d", len(nodes)), Parent: p, Shares: s, SharesParent: par})
		}
		return start, len(nodes)
	}
	l1lo, l1hi := level(100, 0, 1)
	l2lo, l2hi := level(1900, l1lo, l1hi)
	l3lo, l3hi := level(17999, l2lo, l2hi)
	for u := 0; u < 80000; u++ {
		var p int
		switch x := rng.Float64(); {
		case x < 0.05:
			p = l1lo + rng.IntN(l1hi-l1lo)
		case x < 0.20:
			p = l2lo + rng.IntN(l2hi-l2lo)
		default:
			p = l3lo + rng.IntN(l3hi-l3lo)
		}
		s, par := shares()
		nodes = append(nodes, Node{Account: nodes[p].Account, User: fmt.Sprintf("u%05d", u), Parent: p, Shares: s, SharesParent: par})
	}
	tree, err := NewTree(nodes)
	if err != nil {
		tb.Fatal(err)
	}
	base := make([]float64, tree.Len())
	for p := range base {
		if tree.IsUser[p] && rng.IntN(2) == 0 {
			base[p] = rng.ExpFloat64() * rng.ExpFloat64() * 1e6
		}
	}
	sets := make([][]float64, usageSets)
	for k := range sets {
		own := make([]float64, tree.Len())
		for p, v := range base {
			if v != 0 {
				own[p] = v * (0.5 + rng.Float64())
			}
		}
		Accumulate(tree, own, own)
		sets[k] = own
	}
	return tree, sets
}

func benchAlgo(b *testing.B, run func(*Tree, []float64, *Result)) {
	tree, sets := synthTree(b, 8)
	var r Result
	run(tree, sets[0], &r) // grow the buffers once
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for s := 0; s < benchSnapshots; s++ {
			run(tree, sets[s%len(sets)], &r)
		}
	}
	elapsed := time.Since(start)
	items := float64(b.N) * benchSnapshots * float64(tree.Len())
	b.ReportMetric(float64(elapsed.Nanoseconds())/items, "ns/assoc-snapshot")
	b.ReportMetric(items/elapsed.Seconds(), "assoc-snapshots/s")
}

// BenchmarkFairTree: 100,000 associations × 365 snapshots per op.
// Reproduce: go test ./fairshare -run x -bench . -benchtime 1x
func BenchmarkFairTree(b *testing.B) {
	benchAlgo(b, FairTree)
}

// BenchmarkClassic: 100,000 associations × 365 snapshots per op.
// Reproduce: go test ./fairshare -run x -bench . -benchtime 1x
func BenchmarkClassic(b *testing.B) {
	benchAlgo(b, func(t *Tree, u []float64, r *Result) { Classic(t, u, 1, r) })
}

// BenchmarkDepthOblivious: 100,000 associations × 365 snapshots per op.
// Reproduce: go test ./fairshare -run x -bench . -benchtime 1x
func BenchmarkDepthOblivious(b *testing.B) {
	benchAlgo(b, func(t *Tree, u []float64, r *Result) { DepthOblivious(t, u, 1, r) })
}

// BenchmarkNewTree: building the 100,000-association tree (once per
// association snapshot, not per usage snapshot).
// Reproduce: go test ./fairshare -run x -bench NewTree -benchtime 1x
func BenchmarkNewTree(b *testing.B) {
	tree, _ := synthTree(b, 1)
	nodes := make([]Node, tree.Len())
	for p, i := range tree.Input {
		par := -1
		if tree.Parent[p] >= 0 {
			par = int(tree.Input[tree.Parent[p]])
		}
		nodes[i] = Node{Account: tree.Account[p], User: tree.User[p], Parent: par, Shares: tree.Shares[p], SharesParent: tree.SharesParent[p]}
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := NewTree(nodes); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*len(nodes)), "ns/assoc")
}
