package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
)

// refRatio is the projection as it was before fairshare.EffectvUsageOf:
// the lab's subtree decayed by f, its ancestors adjusted, and the whole
// tree recomputed by fairshare.Compute. It is the reference the fast
// projection must match bit for bit.
func refRatio(s *snapTree, algo fairshare.Algorithm, damp float64, lab int32, watch []int32, f float64) float64 {
	u := slices.Clone(s.usage)
	a0 := s.usage[lab]
	for q := lab; q < s.end(lab); q++ {
		u[q] *= f
	}
	for a := s.t.Parent[lab]; a >= 0; a = s.t.Parent[a] {
		rest := s.usage[a] - a0
		if rest < 1e-9*s.usage[a] {
			rest = 0
		}
		u[a] = rest + a0*f
	}
	var res fairshare.Result
	fairshare.Compute(algo, s.t, u, damp, &res)
	worst := math.Inf(-1)
	for _, q := range watch {
		r := math.Inf(1)
		if ns := res.NormShares[q]; ns > 0 {
			r = res.EffectvUsage[q] / ns
		}
		worst = max(worst, r)
	}
	return worst
}

// refRecover is snapTree.recover as it was with refRatio: every bisection
// step a whole-tree recomputation.
func refRecover(s *snapTree, lab int32, halfLifeSec int64, damp float64) Recovery {
	algo := s.res.Algorithm
	ns := s.res.NormShares[lab]
	rec := Recovery{Ratio: s.res.EffectvUsage[lab] / ns}
	watch := []int32{lab}
	fairTree := algo != fairshare.ClassicAlgo && algo != fairshare.DepthObliviousAlgo
	if fairTree && ns > 0 && !math.IsNaN(rec.Ratio) {
		watch = watch[:0]
		rec.Limit, rec.LimitLevelFS = s.keys[lab].Account, 1/rec.Ratio
		for _, q := range s.path(lab) {
			r := s.res.EffectvUsage[q] / s.res.NormShares[q]
			if lf := s.res.NormShares[q] / s.res.EffectvUsage[q]; lf < rec.LimitLevelFS {
				rec.Limit, rec.LimitLevelFS = s.keys[q].Account, lf
			}
			if r > 1 || s.res.NormShares[q] <= 0 {
				watch = append(watch, q)
				if q != lab {
					rec.Above = append(rec.Above, s.keys[q].Account)
				}
			}
		}
	}
	switch {
	case !(ns > 0):
		rec.Ratio = math.NaN()
		rec.State = RecoveryNoShares
		return rec
	case math.IsNaN(rec.Ratio):
		return rec
	case !fairTree && rec.Ratio <= 1, fairTree && len(watch) == 0:
		rec.State = RecoveryWithin
		return rec
	case halfLifeSec <= 0:
		rec.State = RecoveryNoDecay
		return rec
	}
	hi := 200 * halfLifeSec
	if fl := refRatio(s, algo, damp, lab, watch, decay.DecayOver(halfLifeSec, hi)); fl >= 1 {
		rec.State, rec.Floor = RecoveryNever, fl
		return rec
	}
	lo := int64(0)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if refRatio(s, algo, damp, lab, watch, decay.DecayOver(halfLifeSec, mid)) <= 1 {
			hi = mid
		} else {
			lo = mid
		}
	}
	rec.State, rec.Seconds = RecoveryAfter, hi
	return rec
}

// randomRows is the fairshare rows of a random tree computed by algo:
// accounts nested up to maxDepth levels, some FairShare=parent (accounts
// and users), some with no shares, labs with one to four users, user
// usage often zero and sometimes a few units apart (ties), now and then
// usage charged to an account itself; zero marks a tree with no usage.
func randomRows(rng *rand.Rand, algo fairshare.Algorithm, maxDepth int, zero bool) []record.FairshareRow {
	nodes := []fairshare.Node{{Account: "root", Parent: -1, Shares: 1}}
	type acct struct{ idx, depth int }
	accts := []acct{{0, 0}}
	nAccts := 2 + rng.IntN(25)
	for i := range nAccts {
		par := accts[rng.IntN(len(accts))]
		for par.depth >= maxDepth {
			par = accts[rng.IntN(len(accts))]
		}
		n := fairshare.Node{Account: fmt.Sprintf("a%02d", i), Parent: par.idx, Shares: int64(1 + rng.IntN(4))}
		switch rng.IntN(8) {
		case 0:
			n.SharesParent, n.Shares = true, 0
		case 1:
			n.Shares = 0
		case 2:
			n.Shares = int64(1 + rng.IntN(1000))
		}
		accts = append(accts, acct{len(nodes), par.depth + 1})
		nodes = append(nodes, n)
	}
	user := 0
	for _, a := range accts {
		if a.idx == 0 && rng.IntN(2) == 0 {
			continue
		}
		for range rng.IntN(5) {
			n := fairshare.Node{Account: nodes[a.idx].Account, User: fmt.Sprintf("u%03d", user), Parent: a.idx, Shares: int64(1 + rng.IntN(3))}
			if rng.IntN(10) == 0 {
				n.SharesParent, n.Shares = true, 0
			}
			if rng.IntN(12) == 0 {
				n.Shares = 0
			}
			user++
			nodes = append(nodes, n)
		}
	}
	t, err := fairshare.NewTree(nodes)
	if err != nil {
		panic(err)
	}
	own := make([]float64, t.Len())
	for p := range own {
		switch {
		case zero:
		case t.IsUser[p] && rng.IntN(3) > 0:
			own[p] = math.Ldexp(rng.Float64(), rng.IntN(40))
			if rng.IntN(4) == 0 {
				own[p] = float64(1 + rng.IntN(3)) // ties
			}
		case !t.IsUser[p] && p > 0 && rng.IntN(10) == 0:
			own[p] = rng.Float64() * 1e6
		}
	}
	usage := make([]float64, t.Len())
	fairshare.Accumulate(t, own, usage)
	var res fairshare.Result
	fairshare.Compute(algo, t, usage, 1, &res)
	return record.FairshareRows(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), t, &res)
}

// sameFloat is bit-for-bit equality, NaN included.
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func sameRecovery(a, b Recovery) bool {
	return sameFloat(a.Ratio, b.Ratio) && a.Limit == b.Limit && sameFloat(a.LimitLevelFS, b.LimitLevelFS) &&
		slices.Equal(a.Above, b.Above) && a.State == b.State && a.Seconds == b.Seconds && sameFloat(a.Floor, b.Floor)
}

// TestRecoveryMatchesWholeTree: the recovery of every lab of many random
// trees — every algorithm, deep trees, FairShare=parent accounts and
// users, labs with no shares, no usage at all, no decay, dampening —
// is bit for bit the one of whole-tree recomputations (refRecover), by
// LabRecovery and by LabRecoveries alike.
func TestRecoveryMatchesWholeTree(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(40, 2))
	algos := []fairshare.Algorithm{fairshare.FairTreeAlgo, fairshare.ClassicAlgo, fairshare.DepthObliviousAlgo}
	states := map[fairshare.Algorithm]map[RecoveryState]int{}
	for i := range 300 {
		algo := algos[i%len(algos)]
		rows := randomRows(rng, algo, 1+rng.IntN(7), i%25 == 0)
		half := []int64{0, 3600, 7 * 86400, 14 * 86400}[rng.IntN(4)]
		damp := float64(1 + rng.IntN(3))
		s, err := newSnapTree(rows)
		if err != nil {
			t.Fatal(err)
		}
		all, err := LabRecoveries(rows, half)
		if err != nil {
			t.Fatal(err)
		}
		labs := s.labs()
		if len(all) != len(labs) {
			t.Errorf("tree %d: LabRecoveries has %d labs, want %d", i, len(all), len(labs))
		}
		if states[algo] == nil {
			states[algo] = map[RecoveryState]int{}
		}
		for _, lab := range labs {
			p, _ := s.account(lab)
			want := refRecover(s, p, half, damp)
			states[algo][want.State]++
			got, err := LabRecovery(rows, lab, half, damp)
			if err != nil {
				t.Fatal(err)
			}
			if !sameRecovery(got, want) {
				t.Errorf("tree %d (%s, half-life %d s), lab %s: LabRecovery %+v, whole-tree %+v", i, algo, half, lab, got, want)
			}
			if g := all[lab]; !sameRecovery(g, want) {
				t.Errorf("tree %d (%s, half-life %d s), lab %s: LabRecoveries %+v, whole-tree %+v", i, algo, half, lab, g, want)
			}
		}
	}
	// The trees must reach every outcome, or the comparison proves little.
	for _, algo := range algos {
		for _, st := range []RecoveryState{RecoveryWithin, RecoveryAfter, RecoveryNever, RecoveryNoDecay, RecoveryNoShares} {
			if states[algo][st] == 0 {
				t.Errorf("%s: no lab in state %v among the random trees", algo, st)
			}
		}
	}
	t.Logf("states: %v", states)
}

// yearRows is the fairshare rows of a tree shaped like the 5 M-job
// year's (1,455 associations, 202 labs: root, 20 departments with a group
// each, labs under the departments and a third of them under the groups,
// five to seven users per lab), a quarter of the users without usage,
// under algo: the input the metrics export gives LabRecoveries at every
// snapshot.
func yearRows(algo fairshare.Algorithm) []record.FairshareRow {
	rng := rand.New(rand.NewPCG(5, 2025))
	nodes := []fairshare.Node{{Account: "root", Parent: -1, Shares: 1}}
	for d := range 20 {
		nodes = append(nodes, fairshare.Node{Account: fmt.Sprintf("dept%02d", d), Parent: 0, Shares: int64(1 + rng.IntN(10))})
	}
	for d := range 20 {
		nodes = append(nodes, fairshare.Node{Account: fmt.Sprintf("grp%02d", d), Parent: 1 + d, Shares: int64(1 + rng.IntN(10))})
	}
	for lab := range 202 {
		par := 1 + lab%20 // its department
		if lab%3 == 0 {
			par += 20 // the department's group
		}
		nodes = append(nodes, fairshare.Node{Account: fmt.Sprintf("lab%03d", lab), Parent: par, Shares: int64(1 + rng.IntN(5))})
		l := len(nodes) - 1
		for u := range 5 + lab%3 {
			nodes = append(nodes, fairshare.Node{Account: nodes[l].Account, User: fmt.Sprintf("u%03d_%d", lab, u), Parent: l, Shares: 1})
		}
	}
	t, err := fairshare.NewTree(nodes)
	if err != nil {
		panic(err)
	}
	own := make([]float64, t.Len())
	for p := range own {
		if t.IsUser[p] && rng.IntN(4) > 0 {
			own[p] = math.Ldexp(rng.Float64(), 20+rng.IntN(20))
		}
	}
	usage := make([]float64, t.Len())
	fairshare.Accumulate(t, own, usage)
	var res fairshare.Result
	fairshare.Compute(algo, t, usage, 1, &res)
	return record.FairshareRows(time.Date(2025, 12, 30, 0, 0, 0, 0, time.UTC), t, &res)
}

// BenchmarkLabRecoveries works out every lab's recovery of one snapshot
// of a tree shaped like the 5 M-job year's, under each algorithm: by
// LabRecoveries, and (whole-tree) as it was done before, every bisection
// step a recomputation of the whole tree (refRecover).
//
//	go test ./export/report -run '^$' -bench LabRecoveries -benchmem
func BenchmarkLabRecoveries(b *testing.B) {
	for _, algo := range []fairshare.Algorithm{fairshare.FairTreeAlgo, fairshare.ClassicAlgo, fairshare.DepthObliviousAlgo} {
		rows := yearRows(algo)
		s, err := newSnapTree(rows)
		if err != nil {
			b.Fatal(err)
		}
		labs := s.labs()
		b.Run(algo.String(), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := LabRecoveries(rows, 7*86400); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(labs)*b.N)/b.Elapsed().Seconds(), "labs/s")
		})
		b.Run(algo.String()+"/whole-tree", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				for _, lab := range labs {
					p, _ := s.account(lab)
					refRecover(s, p, 7*86400, 1)
				}
			}
			b.ReportMetric(float64(len(labs)*b.N)/b.Elapsed().Seconds(), "labs/s")
		})
	}
}
