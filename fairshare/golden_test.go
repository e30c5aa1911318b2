package fairshare

import (
	"strings"
	"testing"

	"github.com/fairledger/fairledger/internal/golden"
)

// TestFairTreeTest24_4 is Slurm's Fair Tree golden test (test24.4,
// docs/slurm-semantics.md §11.2): all 35 `sshare -a -l -p` lines of
// fairshare/testdata/test24_4.txt, every field at %f precision, in sshare's
// row order. Slurm's test greps the lines without their indentation, so the
// Account field is compared after trimming leading spaces;
// TestSshareIndentation checks the spaces.
func TestFairTreeTest24_4(t *testing.T) {
	t.Parallel()
	c := golden.Load(t, test24_4File)
	want := c.Lines(t, "sshare -a -l -p")[1:] // after the header
	b := buildSpec(t, c.Specs())
	if b.tree.Users != 21 {
		t.Errorf("Users = %d, want 21", b.tree.Users)
	}
	var r Result
	FairTree(b.tree, b.usage, &r)
	got := sshareLines(t, b, &r, SshareOptions{Long: true, TrailingSep: true})
	if len(got) != len(want) {
		t.Fatalf("sshare printed %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if g, w := trimAccount(got[i]), trimAccount(want[i]); g != w {
			t.Errorf("line %d = %q, want %q", i+1, g, w)
		}
	}

	// The ranking walk of §11.2 ("for reference"), as integer ranks.
	wantRank := map[string]int32{
		"root|u1": 21, "aE|aE1": 21, "aE|aE2": 21, "aF|uF1": 21, "aF|uF2": 21,
		"aBB|uBB1": 16, "aBA|uBA1": 15, "root|u2": 14, "aAA|uAA1": 13,
		"aAB|uAB2": 12, "aAB|uAB1": 11, "aD|uD1": 10, "aDA|uDA1": 10,
		"aDA|uDA2": 8, "aD|uD3": 7, "aDA|uDA3": 7, "aD|uD2": 5,
		"aG|uG1": 4, "aGA|uGA1": 4, "aGA|uGA2": 2, "aC|uC1": 1,
	}
	for k, w := range wantRank {
		if g := r.Rank[b.pos[k]]; g != w {
			t.Errorf("Rank(%s) = %d, want %d", k, g, w)
		}
	}
	// §7.2: uD2 and uD3 are both 22/17 mathematically but computed from
	// different operands and must not tie; uD3 and uDA3 share operands.
	// slurmctld compares its long doubles: as doubles both are
	// 1.2941176470588236, the rest (keyLo) orders them.
	d2, d3 := b.pos["aD|uD2"], b.pos["aD|uD3"]
	if k2, k3 := [2]float64{r.key[d2], r.keyLo[d2]}, [2]float64{r.key[d3], r.keyLo[d3]}; k2[0] > k3[0] || (k2[0] == k3[0] && k2[1] >= k3[1]) {
		t.Errorf("LevelFS(uD2) = %v, want < LevelFS(uD3) = %v (long double: hi, lo)", k2, k3)
	}
	if r.LevelFS[b.pos["aD|uD3"]] != r.LevelFS[b.pos["aDA|uDA3"]] {
		t.Errorf("LevelFS(uD3) = %v, want == LevelFS(uDA3) = %v", r.LevelFS[b.pos["aD|uD3"]], r.LevelFS[b.pos["aDA|uDA3"]])
	}
}

// TestClassicTest24_1 is Slurm's classic test (test24.1,
// docs/slurm-semantics.md §11.1), from fairshare/testdata/test24_1.txt: the
// full output table (current code: FairShare on user rows only), the
// official expected substrings, and the historic account FairShare values.
func TestClassicTest24_1(t *testing.T) {
	t.Parallel()
	c := golden.Load(t, test24_1File)
	b := buildSpec(t, c.Specs())
	var r Result
	Classic(b.tree, b.usage, 1, &r)

	// test24.1's full output table (§11.1), columns Account..FairShare,
	// then the blank GrpTRESMins and cpu=0 TRESRunMins of the -l layout.
	table := c.Lines(t, "sshare -a -l -p")[1:] // after the header
	got := sshareLines(t, b, &r, SshareOptions{Long: true, TrailingSep: true})
	if len(got) != len(table) {
		t.Fatalf("sshare printed %d lines, want %d:\n%s", len(got), len(table), strings.Join(got, "\n"))
	}
	for i, w := range table {
		if g, w := trimAccount(got[i]), trimAccount(w); g != w {
			t.Errorf("line %d = %q, want %q", i+1, g, w)
		}
	}
	// The test suite's own expected substrings (current, 25.11+).
	all := strings.Join(got, "\n")
	for _, w := range c.Lines(t, "expected substrings") {
		if !strings.Contains(all, w) {
			t.Errorf("sshare output lacks %q", w)
		}
	}
	// Historic account rows (until 25.05 accounts printed FairShare).
	old := sshareLines(t, b, &r, SshareOptions{Long: true, TrailingSep: true, AccountFairShare: true})
	for _, w := range c.Lines(t, "account rows before 25.11") {
		found := false
		for _, g := range old {
			if strings.HasPrefix(trimAccount(g), w) {
				found = true
			}
		}
		if !found {
			t.Errorf("AccountFairShare output lacks %q", w)
		}
	}
}
