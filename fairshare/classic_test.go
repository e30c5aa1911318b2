package fairshare

import (
	"fmt"
	"math"
	"testing"
)

// fsParentTree exercises FairShare=parent (§4.1): AP is a FairShare=parent
// account under A, p2 a FairShare=parent user under AP, r1 a FairShare=parent
// user directly under root.
//
// fs children: root → {A, B, r1}; A → {a1, AP, p1, p2} (AP is transparent);
// B → {b1}. level_shares: A and B 3+1 = 4 (r1 excluded); a1 and p1 1+1 = 2
// (AP and p2 excluded). Raw usage: a1 10, p1 30, p2 20, b1 40, r1 0, so
// AP 50, A 60, B 40, root 100.
var fsParentTree = []spec{
	{Name: "root", Kind: "root", Shares: "1"},
	{Name: "A", Kind: "account", Parent: "root", Shares: "3"},
	{Name: "a1", Kind: "user", Parent: "A", Shares: "1", Usage: 10},
	{Name: "AP", Kind: "account", Parent: "A", Shares: "parent"},
	{Name: "p1", Kind: "user", Parent: "AP", Shares: "1", Usage: 30},
	{Name: "p2", Kind: "user", Parent: "AP", Shares: "parent", Usage: 20},
	{Name: "B", Kind: "account", Parent: "root", Shares: "1"},
	{Name: "b1", Kind: "user", Parent: "B", Shares: "1", Usage: 40},
	{Name: "r1", Kind: "user", Parent: "root", Shares: "parent", Usage: 0},
}

type want3 struct {
	key                   string
	norm, efctv, fairShar string // %f strings; "" = blank
}

func checkCols(t *testing.T, name string, b built, r *Result, rows []want3) {
	t.Helper()
	fmtv := func(v float64) string {
		if IsBlank(v) {
			return ""
		}
		return f6(v)
	}
	for _, w := range rows {
		p, ok := b.pos[w.key]
		if !ok {
			t.Fatalf("%s: no association %q", name, w.key)
		}
		if g := fmtv(r.NormShares[p]); g != w.norm {
			t.Errorf("%s NormShares(%s) = %v, want %v", name, w.key, g, w.norm)
		}
		if g := fmtv(r.EffectvUsage[p]); g != w.efctv {
			t.Errorf("%s EffectvUsage(%s) = %v, want %v", name, w.key, g, w.efctv)
		}
		if g := fmtv(r.FairShare[p]); g != w.fairShar {
			t.Errorf("%s FairShare(%s) = %v, want %v", name, w.key, g, w.fairShar)
		}
	}
}

// TestClassicFairShareParent works fsParentTree by hand (§4.2, §5, damp 1).
func TestClassicFairShareParent(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, fsParentTree)
	var r Result
	Classic(b.tree, b.usage, 1, &r)
	// S: A 3/4, B 1/4; a1 = 1/2·3/4 = .375; p1 = 1/2·(AP skipped)·3/4 =
	// .375; AP and p2 take S(A) = .75; r1 takes S(root) = 1; b1 = 1·1/4.
	// UN: A .6, B .4, a1 .1, AP .5, p1 .3, p2 .2, b1 .4, r1 0.
	// UE: A, B, r1 (children of root) = UN; AP, p2 = UE(A) = .6;
	// a1 = .1 + (.6−.1)·1/2 = .35; p1 = .3 + (.6−.3)·1/2 = .45;
	// b1 = .4 + (.4−.4)·1 = .4.
	// F = 2^(−UE/S): A, AP, p2 (uses A's UE and S) 2^(−.8) = 0.574349;
	// B, b1 2^(−1.6) = 0.329877; a1 2^(−.35/.375) = 0.523647;
	// p1 2^(−1.2) = 0.435275; r1 uses root's UE = S = 1: 2^(−1) = 0.5.
	checkCols(t, "Classic", b, &r, []want3{
		{"root", "1.000000", "1.000000", ""},
		{"A", "0.750000", "0.600000", "0.574349"},
		{"A|a1", "0.375000", "0.350000", "0.523647"},
		{"AP", "0.750000", "0.600000", "0.574349"},
		{"AP|p1", "0.375000", "0.450000", "0.435275"},
		{"AP|p2", "0.750000", "0.600000", "0.574349"},
		{"B", "0.250000", "0.400000", "0.329877"},
		{"B|b1", "0.250000", "0.400000", "0.329877"},
		{"root|r1", "1.000000", "0.000000", "0.500000"},
	})
	for p := range r.LevelFS {
		if !IsBlank(r.LevelFS[p]) || r.Rank[p] != 0 {
			t.Errorf("Classic LevelFS/Rank(%d) = %v/%d, want blank/0", p, r.LevelFS[p], r.Rank[p])
		}
	}
}

// TestClassicDampening checks F = 2^(−(UE/S)/damp) on the test24.1 tree
// (§5), UE and S from §11.1.
func TestClassicDampening(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, test24_1(t))
	// User1 UE/S = .3875/.3 = 1.291667: 2^(−.645833) = 0.639124,
	// 2^(−.258333) = 0.836053. User2 .275/.05 = 5.5: 2^(−2.75) = 0.148651,
	// 2^(−1.1) = 0.466516. User3 .15/.05 = 3: 2^(−1.5) = 0.353553,
	// 2^(−.6) = 0.659754. User4 1: 2^(−.5) = 0.707107, 2^(−.2) = 0.870551.
	// User5 (.145833/.35)/2: 0.865537. User6 S = 0: 0.
	tests := []struct {
		damp float64
		want map[string]string
	}{
		{2, map[string]string{"AccountB|User1": "0.639124", "AccountC|User2": "0.148651", "AccountC|User3": "0.353553", "AccountE|User4": "0.707107", "AccountF|User5": "0.865537", "AccountG|User6": "0.000000"}},
		{5, map[string]string{"AccountB|User1": "0.836053", "AccountC|User2": "0.466516", "AccountC|User3": "0.659754", "AccountE|User4": "0.870551", "AccountG|User6": "0.000000"}},
		// damp 0 is not a valid FairShareDampeningFactor: treated as 1.
		{0, map[string]string{"AccountB|User1": "0.408479", "AccountE|User4": "0.500000"}},
	}
	var r Result
	for _, tc := range tests {
		t.Run(fmt.Sprintf("damp=%v", tc.damp), func(t *testing.T) {
			Classic(b.tree, b.usage, tc.damp, &r)
			for k, w := range tc.want {
				if g := f6(r.FairShare[b.pos[k]]); g != w {
					t.Errorf("Classic(damp=%v) FairShare(%s) = %v, want %v", tc.damp, k, g, w)
				}
			}
		})
	}
}

// TestDepthOblivious works §6's converged formula on the test24.1 tree.
//
// S (classic): A .4, B .3, C .1, D .6, E .25, F .35, G 0; User1 .3,
// User2 = User3 = .05, User4 .25, User5 .35, User6 0 (level without shares).
// UN: A .45, B .2, C .25, D .25, E .25, F 0, G .3; User1 .2, User2 .25,
// User3 0, User4 .25, User5 0, User6 .3.
//
//   - A, D, G are children of root: UE = UN; F(A) = 2^(−.45/.4) = 0.458502,
//     F(D) = 2^(−.25/.6) = 0.749154, F(G) = 0 (S = 0).
//   - B: R_p = .45/.4 = 1.125, r_s = (.2+.25)/.4 = 1.125,
//     r_l = (.2/.3)/1.125 = 16/27 = 0.592593; ln R_p > 0 > ln r_l so
//     k = 1/(1+(5·ln 1.125)²) = 0.742489 (k ≠ 1);
//     R_B = 1.125·(16/27)^k = 0.762828, UE = R_B·.3 = 0.228848,
//     F = 2^(−R_B) = 0.589340.
//   - User1: R_p = R_B, r_s = .2/.3, r_l = 1, k = 1: same R, F 0.589340,
//     UE 0.228848.
//   - C: r_l = (.25/.1)/1.125 = 20/9, both logs > 0 so k = 1:
//     R = 1.125·20/9 = 2.5, UE .25, F = 2^(−2.5) = 0.176777.
//   - User2: R_p = 2.5, r_s = (.25+0)/.1 = 2.5, r_l = (.25/.05)/2.5 = 2,
//     k = 1: R = 5, UE = 5·.05 = .25, F = 2^(−5) = 0.031250.
//   - User3, F, User5: UN = 0 → UE = 0 → F = 1.
//   - E: R_p = .25/.6 = 5/12, r_s = (.25+0)/.6, r_l = 1/(5/12) = 2.4;
//     ln R_p < 0 < ln r_l so k = 1/(1+(5·ln(5/12))²) = 0.049600;
//     R_E = 5/12·2.4^k = 0.435158, UE = R_E·.25 = 0.108790,
//     F = 2^(−R_E) = 0.739613. User4: r_l = 1, k = 1, same R and F.
//   - User6: S = 0 → UE = UN = .3, F = 0.
func TestDepthOblivious(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, test24_1(t))
	var r Result
	DepthOblivious(b.tree, b.usage, 1, &r)
	if r.Algorithm != DepthObliviousAlgo {
		t.Errorf("Algorithm = %v, want %v", r.Algorithm, DepthObliviousAlgo)
	}
	checkCols(t, "DepthOblivious", b, &r, []want3{
		{"root", "1.000000", "1.000000", ""},
		{"AccountA", "0.400000", "0.450000", "0.458502"},
		{"AccountB", "0.300000", "0.228848", "0.589340"},
		{"AccountB|User1", "0.300000", "0.228848", "0.589340"},
		{"AccountC", "0.100000", "0.250000", "0.176777"},
		{"AccountC|User2", "0.050000", "0.250000", "0.031250"},
		{"AccountC|User3", "0.050000", "0.000000", "1.000000"},
		{"AccountD", "0.600000", "0.250000", "0.749154"},
		{"AccountE", "0.250000", "0.108790", "0.739613"},
		{"AccountE|User4", "0.250000", "0.108790", "0.739613"},
		{"AccountF", "0.350000", "0.000000", "1.000000"},
		{"AccountF|User5", "0.350000", "0.000000", "1.000000"},
		{"AccountG", "0.000000", "0.300000", "0.000000"},
		{"AccountG|User6", "0.000000", "0.300000", "0.000000"},
	})
}

// TestFactor checks the factor's edge cases (§5).
func TestFactor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		ue, s, damp, want float64
	}{
		{"no usage: 2^0", 0, 1, 1, 1},
		{"on target", 1, 1, 1, 0.5},
		{"dampening 2: 2^(−2/2)", 2, 1, 2, 0.5},
		{"no shares", 1, 0, 1, 0},
		{"negative shares", 1, -1, 1, 0},
		{"three times the shares: 2^−3", 0.3, 0.1, 1, 0.125},
		{"infinite usage: 2^−∞", math.Inf(1), 1, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if g := Factor(tc.ue, tc.s, tc.damp); math.Abs(g-tc.want) > 1e-15 {
				t.Errorf("Factor(%v, %v, %v) = %v, want %v", tc.ue, tc.s, tc.damp, g, tc.want)
			}
		})
	}
}

// AccountFairShares against a classic `sshare -a` of Slurm before 25.11
// (SchedMD/slurm pull request #114): root 0.500000; account cae, Norm
// Shares 0.741526 and Effectv Usage 1.000000, 0.392681; its sub-account
// e104725, 0.247175 and 0.333333, 0.392681 as well (the same ratio UE/S).
// A user row keeps its own factor.
func TestAccountFairSharesPR114(t *testing.T) {
	t.Parallel()
	tr, err := NewTree([]Node{
		{Account: "root", Parent: -1, Shares: 1},
		{Account: "cae", Parent: 0, Shares: 7416},
		{Account: "e104725", Parent: 1, Shares: 1},
		{Account: "e104725", User: "e104725", Parent: 2, Shares: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	pos := func(i int) int32 { return tr.Pos[i] }
	r := &Result{
		NormShares:   make([]float64, 4),
		EffectvUsage: make([]float64, 4),
		FairShare:    make([]float64, 4),
	}
	r.NormShares[pos(1)], r.EffectvUsage[pos(1)] = 0.741526, 1
	r.NormShares[pos(2)], r.EffectvUsage[pos(2)] = 0.247175, 0.333333
	r.FairShare[pos(3)] = 0.25
	AccountFairShares(tr, r, 1)
	for _, c := range []struct {
		name string
		node int
		want string
	}{
		{"root", 0, "0.500000"},
		{"account cae", 1, "0.392681"},
		{"sub-account e104725", 2, "0.392681"},
		{"user e104725 keeps its own", 3, "0.250000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := fmt.Sprintf("%f", r.FairShare[pos(c.node)]); got != c.want {
				t.Errorf("node %d: FairShare %s, want %s", c.node, got, c.want)
			}
		})
	}
}
