package fairshare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// univTree builds a Tree from specs (the table shape of helpers_test.go),
// handing NewTree the nodes in the order perm (nil: as listed).
func univTree(tb testing.TB, specs []spec, perm []int) *Tree {
	tb.Helper()
	if perm == nil {
		perm = make([]int, len(specs))
		for i := range perm {
			perm[i] = i
		}
	}
	at := make([]int, len(specs)) // spec index -> input index
	for k, i := range perm {
		at[i] = k
	}
	placed := specNodes(tb, specs)
	nodes := make([]Node, len(specs))
	for k, i := range perm {
		nd := placed[i]
		if nd.Parent >= 0 {
			nd.Parent = at[nd.Parent]
		}
		nodes[k] = nd
	}
	tree, err := NewTree(nodes)
	if err != nil {
		tb.Fatalf("NewTree: %v", err)
	}
	return tree
}

// univWithout returns specs without the associations named by keys
// ("acct" or "acct|user[|part]", as specKey).
func univWithout(specs []spec, keys ...string) []spec {
	return slices.DeleteFunc(slices.Clone(specs), func(s spec) bool { return slices.Contains(keys, specKey(s)) })
}

// univMoved returns specs with account acct moved under parent.
func univMoved(specs []spec, acct, parent string) []spec {
	out := slices.Clone(specs)
	for i := range out {
		if out[i].Kind == "account" && out[i].Name == acct {
			out[i].Parent = parent
		}
	}
	return out
}

// univOwn lays out own usage given by key (Key.String, which is specKey's
// format) by universe index.
func univOwn(tb testing.TB, u *Universe, byKey map[string]float64) []float64 {
	tb.Helper()
	own := make([]float64, u.Len())
	idx := map[string]int{}
	for i, k := range u.Keys() {
		idx[k.String()] = i
	}
	for k, v := range byKey {
		i, ok := idx[k]
		if !ok {
			tb.Fatalf("own usage for %q: not in the universe", k)
		}
		own[i] = v
	}
	return own
}

// univBase is a small tree:
//
//	root ─ A ─ a1, a2
//	     ─ B ─ b1
//	     ─ C ─ C1 ─ c1
var univBase = []spec{
	{Name: "root", Kind: "root", Shares: "1"},
	{Name: "A", Kind: "account", Parent: "root", Shares: "1"},
	{Name: "a1", Kind: "user", Parent: "A", Shares: "1"},
	{Name: "a2", Kind: "user", Parent: "A", Shares: "1"},
	{Name: "B", Kind: "account", Parent: "root", Shares: "1"},
	{Name: "b1", Kind: "user", Parent: "B", Shares: "1"},
	{Name: "C", Kind: "account", Parent: "root", Shares: "1"},
	{Name: "C1", Kind: "account", Parent: "C", Shares: "1"},
	{Name: "c1", Kind: "user", Parent: "C1", Shares: "1"},
}

// univUserOwn is the own usage of univBase's users: total 10+20+5+7 = 42.
var univUserOwn = map[string]float64{"A|a1": 10, "A|a2": 20, "B|b1": 5, "C1|c1": 7}

func TestProjectionRawUsage(t *testing.T) {
	t.Parallel()
	withB2 := append(slices.Clone(univBase), spec{Name: "b2", Kind: "user", Parent: "B", Shares: "1"})
	withGPU := append(slices.Clone(univBase), spec{Name: "a1", Kind: "user", Parent: "A", Shares: "1", Partition: "gpu"})
	// Accounts' own usage: jobs of users deleted before the first dump.
	acctOwn := map[string]float64{"A|a1": 10, "A|a2": 20, "B|b1": 5, "C1|c1": 7, "C1": 2, "C": 1}
	tests := []struct {
		name   string
		trees  [][]spec // oldest first
		own    map[string]float64
		snap   int // which tree to project onto
		want   map[string]float64
		folded int
	}{
		{
			// Identity: the newest tree has everything.
			// A = 10+20, C1 = C = 7, root = 30+5+7 = 42.
			name: "same tree", trees: [][]spec{univBase}, own: univUserOwn,
			want: map[string]float64{"root": 42, "A": 30, "A|a1": 10, "A|a2": 20, "B": 5, "B|b1": 5, "C": 7, "C1": 7, "C1|c1": 7},
		},
		{
			// a2 deleted in the second dump: its 20 stay with A.
			// A = 0 + 10 + 20 = 30; root = 30+5+7 = 42, as before.
			name: "user deleted, later snapshot", trees: [][]spec{univBase, univWithout(univBase, "A|a2")}, own: univUserOwn, snap: 1,
			want:   map[string]float64{"root": 42, "A": 30, "A|a1": 10, "B": 5, "B|b1": 5, "C": 7, "C1": 7, "C1|c1": 7},
			folded: 1,
		},
		{
			// The earlier snapshot still has a2 at its own position.
			name: "user deleted, earlier snapshot", trees: [][]spec{univBase, univWithout(univBase, "A|a2")}, own: univUserOwn, snap: 0,
			want: map[string]float64{"root": 42, "A": 30, "A|a1": 10, "A|a2": 20, "B": 5, "C": 7},
		},
		{
			// b2 added in the second dump; before it existed its own
			// usage is 0 and the first tree does not have it.
			// B = 5, root = 42.
			name: "user added, earlier snapshot", trees: [][]spec{univBase, withB2},
			own: map[string]float64{"A|a1": 10, "A|a2": 20, "B|b1": 5, "C1|c1": 7, "B|b2": 0}, snap: 0,
			want:   map[string]float64{"root": 42, "B": 5, "B|b1": 5},
			folded: 1,
		},
		{
			// Later b2 has jobs: B|b2 = 3, B = 5+3 = 8, root = 42+3 = 45.
			name: "user added, later snapshot", trees: [][]spec{univBase, withB2},
			own: map[string]float64{"A|a1": 10, "A|a2": 20, "B|b1": 5, "C1|c1": 7, "B|b2": 3}, snap: 1,
			want: map[string]float64{"root": 45, "B": 8, "B|b1": 5, "B|b2": 3},
		},
		{
			// C1 moved from C to A: in the second tree A = 10+20+7 =
			// 37 and C = 0; root = 42 either way.
			name: "account moved, later snapshot", trees: [][]spec{univBase, univMoved(univBase, "C1", "A")}, own: univUserOwn, snap: 1,
			want: map[string]float64{"root": 42, "A": 37, "C": 0, "C1": 7, "C1|c1": 7, "B": 5},
		},
		{
			// The first tree keeps C1 under C: C = 7, A = 30.
			name: "account moved, earlier snapshot", trees: [][]spec{univBase, univMoved(univBase, "C1", "A")}, own: univUserOwn, snap: 0,
			want: map[string]float64{"root": 42, "A": 30, "C": 7, "C1": 7},
		},
		{
			// C1 moved under A and c1 deleted: c1's 7 go to C1 (its
			// account, present), and with C1 to A: C1 = 7, A = 37.
			name: "account moved and its user deleted", trees: [][]spec{univBase, univWithout(univMoved(univBase, "C1", "A"), "C1|c1")}, own: univUserOwn, snap: 1,
			want:   map[string]float64{"root": 42, "A": 37, "C1": 7, "C": 0},
			folded: 1,
		},
		{
			// C1 and its user c1 deleted: both fold into C, the nearest
			// surviving ancestor: C = 1 (own) + 2 (C1) + 7 (c1) = 10;
			// root = 30+5+10 = 45 = the sum of all own usage.
			name: "sub-account deleted", trees: [][]spec{univBase, univWithout(univBase, "C1", "C1|c1")}, own: acctOwn, snap: 1,
			want:   map[string]float64{"root": 45, "A": 30, "B": 5, "C": 10},
			folded: 2,
		},
		{
			// The whole C subtree deleted: 1+2+7 = 10 go to root,
			// whose raw usage is 10 + A 30 + B 5 = 45.
			name: "account subtree deleted", trees: [][]spec{univBase, univWithout(univBase, "C", "C1", "C1|c1")}, own: acctOwn, snap: 1,
			want:   map[string]float64{"root": 45, "A": 30, "A|a1": 10, "B": 5},
			folded: 3,
		},
		{
			// a1's per-partition association deleted: its 4 go to
			// account A (its parent), not to a1's plain association:
			// A|a1 = 10, A = 10+20+4 = 34, root = 46.
			name: "per-partition association deleted", trees: [][]spec{withGPU, univBase},
			own: map[string]float64{"A|a1": 10, "A|a1|gpu": 4, "A|a2": 20, "B|b1": 5, "C1|c1": 7}, snap: 1,
			want:   map[string]float64{"root": 46, "A": 34, "A|a1": 10, "A|a2": 20},
			folded: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			trees := make([]*Tree, len(tc.trees))
			for i, s := range tc.trees {
				trees[i] = univTree(t, s, nil)
			}
			u, err := NewUniverse(trees)
			if err != nil {
				t.Fatalf("%s: NewUniverse: %v", tc.name, err)
			}
			own := univOwn(t, u, tc.own)
			pr := u.Project(trees[tc.snap])
			out := make([]float64, pr.Tree.Len())
			pr.RawUsage(own, out)
			got := map[string]float64{}
			for p := range out {
				got[keyAt(pr.Tree, p).String()] = out[p]
			}
			for k, w := range tc.want {
				g, ok := got[k]
				if !ok {
					t.Errorf("%s: RawUsage(%s): not in the snapshot tree", tc.name, k)
					continue
				}
				if g != w {
					t.Errorf("%s: RawUsage(%s) = %v, want %v", tc.name, k, g, w)
				}
			}
			if pr.Folded != tc.folded {
				t.Errorf("%s: Folded = %d, want %d", tc.name, pr.Folded, tc.folded)
			}
			// The total is conserved: root = Σ own.
			var sum float64
			for _, v := range own {
				sum += v
			}
			if out[0] != sum {
				t.Errorf("%s: RawUsage(root) = %v, want Σ own = %v", tc.name, out[0], sum)
			}
		})
	}
}

func TestUniverseStructure(t *testing.T) {
	t.Parallel()
	// Universe of univBase and the same tree with C1 moved under A and b1
	// deleted. Keys in universe-lineage byte order ('0' < 'C'):
	//   /            root        parent -1
	//   /A/          A           0
	//   /A/0-a1/     A|a1        1
	//   /A/0-a2/     A|a2        1
	//   /A/C1/       C1          1  (the newest tree's parent)
	//   /A/C1/0-c1/  C1|c1       4
	//   /B/          B           0
	//   /B/0-b1/     B|b1        6  (only in the older tree)
	//   /C/          C           0
	trees := []*Tree{univTree(t, univBase, nil), univTree(t, univWithout(univMoved(univBase, "C1", "A"), "B|b1"), nil)}
	u, err := NewUniverse(trees)
	if err != nil {
		t.Fatalf("NewUniverse: %v", err)
	}
	wantKeys := []string{"root", "A", "A|a1", "A|a2", "C1", "C1|c1", "B", "B|b1", "C"}
	wantParents := []int32{-1, 0, 1, 1, 1, 4, 0, 6, 0}
	if u.Len() != len(wantKeys) {
		t.Fatalf("Len() = %d, want %d", u.Len(), len(wantKeys))
	}
	for i, k := range u.Keys() {
		if k.String() != wantKeys[i] {
			t.Errorf("Keys()[%d] = %v, want %v", i, k, wantKeys[i])
		}
		if got, ok := u.Index(k); !ok || got != int32(i) {
			t.Errorf("Index(%v) = %d, %v, want %d, true", k, got, ok, i)
		}
	}
	if !slices.Equal(u.Parents(), wantParents) {
		t.Errorf("Parents() = %v, want %v", u.Parents(), wantParents)
	}
	if i, ok := u.Index(Key{Account: "A", User: "zz"}); ok {
		t.Errorf("Index(A|zz) = %d, true, want false", i)
	}
	// Projection onto the newer tree: b1 folds into B. The newer tree's
	// positions are lineage order: root 0, A 1, a1 2, a2 3, C1 4, c1 5,
	// B 6, C 7.
	pr := u.Project(trees[1])
	wantCredit := []int32{0, 1, 2, 3, 4, 5, 6, 6, 7}
	if !slices.Equal(pr.Credit, wantCredit) {
		t.Errorf("Credit = %v, want %v", pr.Credit, wantCredit)
	}
	wantIndex := []int32{0, 1, 2, 3, 4, 5, 6, 8}
	if !slices.Equal(pr.Index, wantIndex) {
		t.Errorf("Index = %v, want %v", pr.Index, wantIndex)
	}
}

func TestNewUniverseErrors(t *testing.T) {
	t.Parallel()
	base := univTree(t, univBase, nil)
	otherRoot := univTree(t, []spec{
		{Name: "top", Kind: "root", Shares: "1"},
		{Name: "A", Kind: "account", Parent: "top", Shares: "1"},
	}, nil)
	// Account X under both A and B: NewTree accepts it (lineages /A/X/
	// and /B/X/ differ), but it is one key twice.
	dupAcct, err := NewTree([]Node{
		{Account: "root", Parent: -1},
		{Account: "A", Parent: 0},
		{Account: "B", Parent: 0},
		{Account: "X", Parent: 1},
		{Account: "X", Parent: 2},
	})
	if err != nil {
		t.Fatalf("NewTree: %v", err)
	}
	tests := []struct {
		name  string
		trees []*Tree
		want  []string
	}{
		{"none", nil, []string{"no trees"}},
		{"nil tree", []*Tree{base, nil}, []string{"tree 1: empty"}},
		{"roots differ", []*Tree{otherRoot, base}, []string{`tree 0: root "top" differs from the newest tree's root "root"`}},
		{"duplicate key", []*Tree{base, dupAcct}, []string{"tree 1: association X appears twice (lineage /B/X/)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := NewUniverse(tc.trees)
			if err == nil {
				t.Errorf("NewUniverse(%s) = %v, nil, want error %q", tc.name, u, tc.want)
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("NewUniverse(%s) error = %q, want it to contain %q", tc.name, err, w)
				}
			}
		})
	}
}

// TestFairTreeUserDeleted runs Fair Tree on the §11.2 (test24.4) tree after
// uGA2 (usage 6) is deleted from account aGA.
//
// By hand: uGA2's 6 stay with aGA, so every account's raw usage is unchanged
// (aGA 4+6 = 10, aG 10+10 = 20, root 240) and so is every account's S and U:
// aGA keeps LevelFS S/U = (10/20)/(10/20) = 1.0, aG (8/208)/(20/240) =
// 0.461538. uGA1 is now alone in aGA: S = 20/20 = 1, U = 4/10 = 0.4, LevelFS
// 2.5 (was 1.25). N drops from 21 to 20.
//
// Ranking walk with rank = rnt = 20 (the order of §11.2's walk, in which no
// sibling order changes): u1 20; aE1, aE2, uF1, uF2 tied 20 (rnt 15);
// uBB1 15, uBA1 14, u2 13, uAA1 12, uAB2 11, uAB1 10; uD1 9, uDA1 9 (tie),
// uDA2 7, uD3 6, uDA3 6 (tie), uD2 4; uG1 3 (rnt 2); aGA ties with uG1
// (1.0 = 1.0), so uGA1 keeps rank 3 (rnt 1); uC1 1. F = rank/20.
func TestFairTreeUserDeleted(t *testing.T) {
	t.Parallel()
	full := univTree(t, test24_4(t), nil)
	cut := univTree(t, univWithout(test24_4(t), "aGA|uGA2"), nil)
	u, err := NewUniverse([]*Tree{full, cut})
	if err != nil {
		t.Fatalf("NewUniverse: %v", err)
	}
	byKey := map[string]float64{}
	for _, s := range test24_4(t) {
		if s.Usage != 0 {
			byKey[specKey(s)] = s.Usage
		}
	}
	own := univOwn(t, u, byKey)

	if full.Users != 21 || cut.Users != 20 {
		t.Errorf("Users = %d, %d, want 21, 20", full.Users, cut.Users)
	}

	// The older tree reproduces §11.2: F = rank/21.
	var r Result
	run := func(tr *Tree) map[string]int {
		pr := u.Project(tr)
		usage := make([]float64, tr.Len())
		pr.RawUsage(own, usage)
		FairTree(tr, usage, &r)
		pos := map[string]int{}
		for p := range usage {
			pos[keyAt(tr, p).String()] = p
		}
		return pos
	}
	pos := run(full)
	for _, c := range []struct {
		key  string
		rank float64
	}{{"aGA|uGA2", 2}, {"aGA|uGA1", 4}, {"aC|uC1", 1}, {"aAA|uAA1", 13}} {
		if got, want := r.FairShare[pos[c.key]], c.rank/21; got != want {
			t.Errorf("full tree: FairShare(%s) = %v, want %v", c.key, got, want)
		}
	}

	pos = run(cut)
	for _, c := range []struct {
		key  string
		want float64
	}{{"root", 240}, {"aG", 20}, {"aGA", 10}, {"aGA|uGA1", 4}} {
		if got := r.RawUsage[pos[c.key]]; got != c.want {
			t.Errorf("RawUsage(%s) = %v, want %v", c.key, got, c.want)
		}
	}
	for _, c := range []struct {
		key  string
		want float64
	}{{"aGA", 1.0}, {"aGA|uGA1", 2.5}, {"aG", (8.0 / 208) / (20.0 / 240)}, {"aG|uG1", 1.0}} {
		if got := r.LevelFS[pos[c.key]]; math.Abs(got-c.want) > 1e-12 {
			t.Errorf("LevelFS(%s) = %v, want %v", c.key, got, c.want)
		}
	}
	ranks := map[string]float64{
		"root|u1": 20, "aE|aE1": 20, "aE|aE2": 20, "aF|uF1": 20, "aF|uF2": 20,
		"aBB|uBB1": 15, "aBA|uBA1": 14, "root|u2": 13, "aAA|uAA1": 12, "aAB|uAB2": 11, "aAB|uAB1": 10,
		"aD|uD1": 9, "aDA|uDA1": 9, "aDA|uDA2": 7, "aD|uD3": 6, "aDA|uDA3": 6, "aD|uD2": 4,
		"aG|uG1": 3, "aGA|uGA1": 3, "aC|uC1": 1,
	}
	if len(ranks) != cut.Users {
		t.Fatalf("test table has %d users, the tree %d", len(ranks), cut.Users)
	}
	for k, rank := range ranks {
		p, ok := pos[k]
		if !ok {
			t.Errorf("user %s not in the tree", k)
			continue
		}
		if got, want := r.FairShare[p], rank/20; got != want {
			t.Errorf("FairShare(%s) = %v, want %v (rank %v/20)", k, got, want, rank)
		}
	}
}

// TestProjectionDeterministic: shuffling the input order of every tree's
// nodes changes neither the universe nor a single bit of RawUsage.
func TestProjectionDeterministic(t *testing.T) {
	t.Parallel()
	older := append(slices.Clone(test24_4(t)), spec{Name: "uGone", Kind: "user", Parent: "aBA", Shares: "1"})
	newer := univWithout(univMoved(test24_4(t), "aGA", "aB"), "aAB|uAB1", "aC", "aC|uC1")
	// Usages with many significant bits, so a change in summation order
	// would show.
	byKey := map[string]float64{"aBA|uGone": 1.0 / 3, "aC": 0.1, "aB": 1e-7}
	for i, s := range test24_4(t) {
		if s.Kind == "user" {
			byKey[specKey(s)] = s.Usage + float64(i)/7 + 1e6/float64(i+3)
		}
	}
	build := func(rng *rand.Rand) (*Universe, *Tree, []float64) {
		var trees []*Tree
		for _, specs := range [][]spec{older, newer} {
			var perm []int
			if rng != nil {
				perm = rng.Perm(len(specs))
			}
			trees = append(trees, univTree(t, specs, perm))
		}
		u, err := NewUniverse(trees)
		if err != nil {
			t.Fatalf("NewUniverse: %v", err)
		}
		own := univOwn(t, u, byKey)
		out := make([]float64, trees[1].Len())
		u.Project(trees[1]).RawUsage(own, out)
		return u, trees[1], out
	}
	u0, t0, want := build(nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 20; round++ {
		u, tr, got := build(rng)
		if !slices.Equal(u.Keys(), u0.Keys()) || !slices.Equal(u.Parents(), u0.Parents()) {
			t.Fatalf("round %d: universe differs: %v vs %v", round, u.Keys(), u0.Keys())
		}
		if !slices.Equal(tr.Lineage, t0.Lineage) {
			t.Fatalf("round %d: tree order differs", round)
		}
		for p := range got {
			if math.Float64bits(got[p]) != math.Float64bits(want[p]) {
				t.Errorf("round %d: RawUsage(%s) = %v, want %v (bit-identical)", round, tr.Lineage[p], got[p], want[p])
			}
		}
	}
}

func TestRawUsageAllocs(t *testing.T) {
	trees := []*Tree{univTree(t, test24_4(t), nil), univTree(t, univWithout(test24_4(t), "aGA|uGA2"), nil)}
	u, err := NewUniverse(trees)
	if err != nil {
		t.Fatalf("NewUniverse: %v", err)
	}
	pr := u.Project(trees[1])
	own := make([]float64, u.Len())
	out := make([]float64, trees[1].Len())
	if n := testing.AllocsPerRun(100, func() { pr.RawUsage(own, out) }); n != 0 {
		t.Errorf("RawUsage allocates %v times per call, want 0", n)
	}
}

// univBenchTrees derives two dumps from the 100,000-association synthetic
// tree of bench_test.go: the older is the tree itself; the newer deletes
// every 20th user (4,000), moves every 50th third-level account (with its
// subtree) under another second-level account and adds 1,000 users. The
// universe has 101,000 keys.
func univBenchTrees(tb testing.TB) []*Tree {
	tb.Helper()
	base, _ := synthTree(tb, 1)
	n := base.Len()
	nodes := make([]Node, 0, n+1000)
	keep := make([]int, n) // position -> new index, -1 when deleted
	var depth2 []int32
	users, moved := 0, 0
	for p := 0; p < n; p++ {
		if base.IsUser[p] {
			users++
			if users%20 == 0 {
				keep[p] = -1
				continue
			}
		}
		keep[p] = len(nodes)
		par := -1
		if base.Parent[p] >= 0 {
			par = keep[base.Parent[p]]
		}
		if !base.IsUser[p] && base.Depth[p] == 2 {
			depth2 = append(depth2, int32(p))
		}
		if !base.IsUser[p] && base.Depth[p] == 3 {
			if moved++; moved%50 == 0 {
				par = keep[depth2[(moved*7919)%len(depth2)]]
			}
		}
		nodes = append(nodes, Node{Account: base.Account[p], User: base.User[p], Partition: base.Partition[p],
			Parent: par, Shares: base.Shares[p], SharesParent: base.SharesParent[p]})
	}
	for i := 0; i < 1000; i++ {
		p := (i * 7919) % len(nodes)
		for nodes[p].User != "" {
			p = int(nodes[p].Parent)
		}
		nodes = append(nodes, Node{Account: nodes[p].Account, User: fmt.Sprintf("new%04d", i), Parent: p, Shares: 1})
	}
	newer, err := NewTree(nodes)
	if err != nil {
		tb.Fatal(err)
	}
	return []*Tree{base, newer}
}

// BenchmarkUniverseProject: projecting a 101,000-key universe onto both
// 100,000-association snapshot trees (once per association snapshot).
// Reproduce: go test ./fairshare -run x -bench Universe -benchtime 10x
func BenchmarkUniverseProject(b *testing.B) {
	trees := univBenchTrees(b)
	u, err := NewUniverse(trees)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for _, tr := range trees {
			u.Project(tr)
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*len(trees)*u.Len()), "ns/assoc")
}

// BenchmarkUniverseRawUsage: RawUsage of a 101,000-key universe onto the
// newer 100,000-association tree, 365 usage snapshots per op.
// Reproduce: go test ./fairshare -run x -bench Universe -benchtime 10x
func BenchmarkUniverseRawUsage(b *testing.B) {
	trees := univBenchTrees(b)
	u, err := NewUniverse(trees)
	if err != nil {
		b.Fatal(err)
	}
	pr := u.Project(trees[1])
	rng := rand.New(rand.NewPCG(3, 4))
	own := make([]float64, u.Len())
	for i := range own {
		if u.Keys()[i].User != "" && rng.IntN(2) == 0 {
			own[i] = rng.ExpFloat64() * 1e6
		}
	}
	out := make([]float64, trees[1].Len())
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for s := 0; s < benchSnapshots; s++ {
			pr.RawUsage(own, out)
		}
	}
	elapsed := time.Since(start)
	items := float64(b.N) * benchSnapshots * float64(u.Len())
	b.ReportMetric(float64(elapsed.Nanoseconds())/items, "ns/assoc-snapshot")
	b.ReportMetric(items/elapsed.Seconds(), "assoc-snapshots/s")
}

// BenchmarkNewUniverse: the union of the two 100,000-association trees
// (once per run).
// Reproduce: go test ./fairshare -run x -bench Universe -benchtime 10x
func BenchmarkNewUniverse(b *testing.B) {
	trees := univBenchTrees(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var keys int
	for i := 0; i < b.N; i++ {
		u, err := NewUniverse(trees)
		if err != nil {
			b.Fatal(err)
		}
		keys = u.Len()
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*keys), "ns/assoc")
}
