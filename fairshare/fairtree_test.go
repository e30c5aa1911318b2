package fairshare

import (
	"strings"
	"testing"
)

// ftCase is a small Fair Tree tree with the user factors worked out by hand.
type ftCase struct {
	name  string
	specs []spec
	want  map[string]string // FairShare (%f) by "acct|user[|part]"
}

func TestFairTreeHandWorked(t *testing.T) {
	t.Parallel()
	tests := []ftCase{
		{
			// FairShare=parent under Fair Tree (§4.2, §7). Root level:
			// ls = 3+1 (r1 excluded); A S .75 U .6 LF 1.25; B S .25
			// U .4 LF .625; r1 (parent user) LF +Inf. N = 5.
			// Order r1, A, B. r1 rank 5 → 1.0. In A (fs children a1,
			// AP, p1, p2; ls 2): p2 +Inf, AP NO_VAL (no fs children),
			// a1 S .5 U 10/60 → 3, p1 S .5 U 30/60 → 1: p2 4 → .8,
			// a1 3 → .6, p1 2 → .4. In B: b1 S 1 U 1 → 1: rank 1 → .2.
			name:  "fairshare=parent",
			specs: fsParentTree,
			want: map[string]string{"root|r1": "1.000000", "AP|p2": "0.800000",
				"A|a1": "0.600000", "AP|p1": "0.400000", "B|b1": "0.200000"},
		},
		{
			// Sibling users tied (doc rule 1) and competition ranking.
			// Root: A S 1/3 U 20/30 → .5; z S 2/3 U 10/30 → 2. N = 5.
			// In A (ls 5): s3 S .4 U 0 → +Inf; s1 = s2 = .2/.25 = .8
			// (same operands, exact tie); s4 .2/.5 = .4.
			// z 5 → 1.0; s3 4 → .8; s1 3 → .6; s2 tied 3 → .6;
			// s4 rank = rnt = 1 → .2 (rank 2 is skipped).
			name: "sibling users tied",
			specs: []spec{
				{Name: "root", Kind: "root", Shares: "1"},
				{Name: "A", Kind: "account", Parent: "root", Shares: "1"},
				{Name: "s1", Kind: "user", Parent: "A", Shares: "1", Usage: 5},
				{Name: "s2", Kind: "user", Parent: "A", Shares: "1", Usage: 5},
				{Name: "s3", Kind: "user", Parent: "A", Shares: "2", Usage: 0},
				{Name: "s4", Kind: "user", Parent: "A", Shares: "1", Usage: 10},
				{Name: "z", Kind: "user", Parent: "root", Shares: "2", Usage: 10},
			},
			want: map[string]string{"root|z": "1.000000", "A|s3": "0.800000",
				"A|s1": "0.600000", "A|s2": "0.600000", "A|s4": "0.200000"},
		},
		{
			// Tie probe "u0 and a1 both 3/5" (§7.3, doc rule 3): a user
			// tied with a sibling account sorts first and the account's
			// highest user inherits its rank. Root ls = 4+3+3 = 10,
			// usage 10: x S .4 U 0 → +Inf; u0 S .3 U .5 → .6; a1 S .3
			// U .5 → .6 (same operands). N = 4. x 4 → 1.0; u0 3 → .75;
			// a1 tied → its first child p (S .5 U .2 → 2.5) keeps rank
			// 3 → .75 (untied it would get 2 → .5); q (.5/.8 = .625)
			// gets rnt = 1 → .25.
			name: "user tied with account",
			specs: []spec{
				{Name: "root", Kind: "root", Shares: "1"},
				{Name: "x", Kind: "user", Parent: "root", Shares: "4", Usage: 0},
				{Name: "u0", Kind: "user", Parent: "root", Shares: "3", Usage: 5},
				{Name: "a1", Kind: "account", Parent: "root", Shares: "3"},
				{Name: "p", Kind: "user", Parent: "a1", Shares: "1", Usage: 1},
				{Name: "q", Kind: "user", Parent: "a1", Shares: "1", Usage: 4},
			},
			want: map[string]string{"root|x": "1.000000", "root|u0": "0.750000",
				"a1|p": "0.750000", "a1|q": "0.250000"},
		},
		{
			// Tie probe "a2=1.0, a1=0.75, b1=0.75, b2=0.75" (§7.3): two
			// tied accounts are not merged. A and B each S .5 U 10/20 =
			// .5 → LF 1, an exact tie; A goes first (position order,
			// §7.3). In A: a2 .5/.4 = 1.25, a1 .5/.6 = .8333:
			// a2 4 → 1.0, a1 3 → .75. B is tied, so its first child b1
			// (.5/.5 = 1) keeps the current rank 3 → .75 and b2 ties
			// with b1 → .75. A merge would sort a2, b1, b2, a1 and give
			// a1 = 1/4 = .25.
			name: "tied accounts",
			specs: []spec{
				{Name: "root", Kind: "root", Shares: "1"},
				{Name: "A", Kind: "account", Parent: "root", Shares: "1"},
				{Name: "a1", Kind: "user", Parent: "A", Shares: "1", Usage: 6},
				{Name: "a2", Kind: "user", Parent: "A", Shares: "1", Usage: 4},
				{Name: "B", Kind: "account", Parent: "root", Shares: "1"},
				{Name: "b1", Kind: "user", Parent: "B", Shares: "1", Usage: 5},
				{Name: "b2", Kind: "user", Parent: "B", Shares: "1", Usage: 5},
			},
			want: map[string]string{"A|a2": "1.000000", "A|a1": "0.750000",
				"B|b1": "0.750000", "B|b2": "0.750000"},
		},
		{
			// Nobody has usage (§7.3): every U is 0, every LF +Inf,
			// everything ties and every user gets N/N = 1.0.
			name: "no usage",
			specs: []spec{
				{Name: "root", Kind: "root", Shares: "1"},
				{Name: "A", Kind: "account", Parent: "root", Shares: "1"},
				{Name: "x", Kind: "user", Parent: "A", Shares: "1"},
				{Name: "y", Kind: "user", Parent: "A", Shares: "2"},
				{Name: "B", Kind: "account", Parent: "A", Shares: "5"},
				{Name: "w", Kind: "user", Parent: "B", Shares: "1"},
				{Name: "z", Kind: "user", Parent: "root", Shares: "1"},
			},
			want: map[string]string{"A|x": "1.000000", "A|y": "1.000000",
				"B|w": "1.000000", "root|z": "1.000000"},
		},
		{
			// Shares 0 (§7.2: S = 0 gives LF 0 before U is looked at).
			// Root ls = 1: A S 1 U 1 → 1; Z S 0 → 0. N = 4. In A (ls 1):
			// s1 S 1 U .5 → 2; s0 (S 0, usage 5) and sz (S 0, usage 0)
			// both LF 0 and tie. s1 4 → 1.0; s0 3 → .75; sz 3 → .75.
			// Z (LF 0 ≠ A's 1, not tied): its only user zz sits in a
			// level with no shares (S 0, LF 0): rank = rnt = 1 → .25.
			name: "shares 0",
			specs: []spec{
				{Name: "root", Kind: "root", Shares: "1"},
				{Name: "A", Kind: "account", Parent: "root", Shares: "1"},
				{Name: "s0", Kind: "user", Parent: "A", Shares: "0", Usage: 5},
				{Name: "s1", Kind: "user", Parent: "A", Shares: "1", Usage: 5},
				{Name: "sz", Kind: "user", Parent: "A", Shares: "0", Usage: 0},
				{Name: "Z", Kind: "account", Parent: "root", Shares: "0"},
				{Name: "zz", Kind: "user", Parent: "Z", Shares: "0", Usage: 0},
			},
			want: map[string]string{"A|s1": "1.000000", "A|s0": "0.750000",
				"A|sz": "0.750000", "Z|zz": "0.250000"},
		},
		{
			// Per-partition user associations count in N (§7.3) and are
			// siblings of the user's plain association. A is root's only
			// child. In A (ls 4, usage 40): bob S .5 U 0 → +Inf; alice
			// S .25 U .25 → 1; alice/gpu S .25 U .75 → 1/3. N = 3:
			// bob 1.0, alice 2/3, alice/gpu 1/3.
			name:  "per-partition users",
			specs: partitionTree,
			want: map[string]string{"A|bob": "1.000000", "A|alice": "0.666667",
				"A|alice|gpu": "0.333333"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := buildSpec(t, tc.specs)
			var r Result
			FairTree(b.tree, b.usage, &r)
			users := 0
			for _, s := range tc.specs {
				if s.Kind == "user" {
					users++
				}
			}
			if b.tree.Users != users {
				t.Errorf("Users = %d, want %d", b.tree.Users, users)
			}
			for k, w := range tc.want {
				p, ok := b.pos[k]
				if !ok {
					t.Fatalf("no association %q", k)
				}
				if g := f6(r.FairShare[p]); g != w {
					t.Errorf("FairShare(%s) = %v, want %v", k, g, w)
				}
			}
			for p := range r.FairShare {
				if !b.tree.IsUser[p] && !IsBlank(r.FairShare[p]) {
					t.Errorf("FairShare(account %s) = %v, want blank", b.tree.Account[p], r.FairShare[p])
				}
			}
		})
	}
}

// partitionTree has a user with a plain and a per-partition association.
var partitionTree = []spec{
	{Name: "root", Kind: "root", Shares: "1"},
	{Name: "A", Kind: "account", Parent: "root", Shares: "1"},
	{Name: "bob", Kind: "user", Parent: "A", Shares: "2", Usage: 0},
	{Name: "alice", Kind: "user", Parent: "A", Shares: "1", Usage: 30, Partition: "gpu"},
	{Name: "alice", Kind: "user", Parent: "A", Shares: "1", Usage: 10},
}

// TestFairTreeFairShareParentCells checks the printed cells of
// FairShare=parent rows under Fair Tree on fsParentTree: S is the fs
// parent's (§4.2), U = U_raw/U_raw(fs parent) (§7.1), LevelFS blank, and r1
// (under root) takes root's S = 1/NO_VAL → 0.000000.
func TestFairTreeFairShareParentCells(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, fsParentTree)
	var r Result
	FairTree(b.tree, b.usage, &r)
	// AP: S(A) = .75, U = 50/60; p2: S(A), U = 20/60; p1: S 1/2, U 30/60,
	// LF 1; a1: S 1/2, U 10/60, LF 3; r1: U 0/100.
	want := []string{
		"root|||0.000000|100||1.000000||||cpu=0",
		"root|r1|parent|0.000000|0|0.000000|0.000000|1.000000|||cpu=0",
		"A||3|0.750000|60|0.600000|0.600000||1.250000||cpu=0",
		"A|a1|1|0.500000|10|0.100000|0.166667|0.600000|3.000000||cpu=0",
		"AP||parent|0.750000|50|0.500000|0.833333||||cpu=0",
		"AP|p1|1|0.500000|30|0.300000|0.500000|0.400000|1.000000||cpu=0",
		"AP|p2|parent|0.750000|20|0.200000|0.333333|0.800000|||cpu=0",
		"B||1|0.250000|40|0.400000|0.400000||0.625000||cpu=0",
		"B|b1|1|1.000000|40|0.400000|1.000000|0.200000|1.000000||cpu=0",
	}
	got := sshareLines(t, b, &r, SshareOptions{Long: true})
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if g := trimAccount(got[i]); g != want[i] {
			t.Errorf("line %d = %q, want %q", i+1, g, want[i])
		}
	}
}

// TestFairTreeReuse runs two different snapshots through one Result: the
// second must not see anything of the first, and once grown the Result is
// reused without allocating.
func TestFairTreeReuse(t *testing.T) {
	b := buildSpec(t, test24_4(t))
	var r Result
	zero := make([]float64, b.tree.Len())
	FairTree(b.tree, b.usage, &r)
	FairTree(b.tree, zero, &r)
	// With no usage every LF is +Inf except in aC, whose shares are 0
	// (LF 0): the 20 other users tie at 21/21, uC1 gets rnt = 1 → 1/21.
	for p := range r.FairShare {
		if !b.tree.IsUser[p] {
			continue
		}
		want := 1.0
		if b.tree.User[p] == "uC1" {
			want = 1.0 / 21
		}
		if r.FairShare[p] != want {
			t.Errorf("FairShare(%s|%s) after a zero snapshot = %v, want %v", b.tree.Account[p], b.tree.User[p], r.FairShare[p], want)
		}
	}
	for _, run := range []struct {
		name string
		fn   func()
	}{
		{"FairTree", func() { FairTree(b.tree, b.usage, &r) }},
		{"Classic", func() { Classic(b.tree, b.usage, 1, &r) }},
		{"DepthOblivious", func() { DepthOblivious(b.tree, b.usage, 1, &r) }},
	} {
		t.Run(run.name, func(t *testing.T) {
			run.fn()
			if a := testing.AllocsPerRun(10, run.fn); a != 0 {
				t.Errorf("%s allocations per run with a reused Result = %v, want 0", run.name, a)
			}
		})
	}
}
