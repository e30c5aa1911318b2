package fairshare

import (
	"strings"
	"testing"
)

// TestFairTreeTest24_4 is Slurm's Fair Tree golden test (test24.4) as written
// down in docs/slurm-semantics.md §11.2: all 35 `sshare -a -l -p` lines, every field
// at %f precision, in sshare's row order. The expected lines carry no
// indentation (the test suite greps them), so the Account field is compared
// after trimming leading spaces; TestSshareIndentation checks the spaces.
func TestFairTreeTest24_4(t *testing.T) {
	want := []string{
		"root|||0.000000|240||1.000000||||cpu=0|",
		"root|u1|10|0.048077|0|0.000000|0.000000|1.000000|inf||cpu=0|",
		"root|u2|10|0.048077|10|0.041667|0.041667|0.666667|1.153846||cpu=0|",
		"aA||40|0.192308|45|0.187500|0.187500||1.025641||cpu=0|",
		"aAA||30|0.750000|20|0.083333|0.444444||1.687500||cpu=0|",
		"aAA|uAA1|1|1.000000|20|0.083333|1.000000|0.619048|1.000000||cpu=0|",
		"aAB||10|0.250000|25|0.104167|0.555556||0.450000||cpu=0|",
		"aAB|uAB1|1|0.500000|25|0.104167|1.000000|0.523810|0.500000||cpu=0|",
		"aAB|uAB2|1|0.500000|0|0.000000|0.000000|0.571429|inf||cpu=0|",
		"aB||60|0.288462|25|0.104167|0.104167||2.769231||cpu=0|",
		"aBA||25|0.416667|25|0.104167|1.000000||0.416667||cpu=0|",
		"aBA|uBA1|1|1.000000|25|0.104167|1.000000|0.714286|1.000000||cpu=0|",
		"aBB||35|0.583333|0|0.000000|0.000000||inf||cpu=0|",
		"aBB|uBB1|1|1.000000|0|0.000000|0.000000|0.761905|inf||cpu=0|",
		"aC||0|0.000000|30|0.125000|0.125000||0.000000||cpu=0|",
		"aC|uC1|0|0.000000|30|0.125000|1.000000|0.047619|0.000000||cpu=0|",
		"aD||50|0.240385|110|0.458333|0.458333||0.524476||cpu=0|",
		"aD|uD1|parent|0.240385|20|0.083333|0.181818|0.476190|||cpu=0|",
		"aD|uD2|40|0.235294|20|0.083333|0.181818|0.238095|1.294118||cpu=0|",
		"aD|uD3|50|0.294118|25|0.104167|0.227273|0.333333|1.294118||cpu=0|",
		"aDA||parent|0.240385|45|0.187500|0.409091||||cpu=0|",
		"aDA|uDA1|parent|0.240385|10|0.041667|0.090909|0.476190|||cpu=0|",
		"aDA|uDA2|30|0.176471|10|0.041667|0.090909|0.380952|1.941176||cpu=0|",
		"aDA|uDA3|50|0.294118|25|0.104167|0.227273|0.333333|1.294118||cpu=0|",
		"aE||10|0.048077|0|0.000000|0.000000||inf||cpu=0|",
		"aE|aE1|10|0.500000|0|0.000000|0.000000|1.000000|inf||cpu=0|",
		"aE|aE2|10|0.500000|0|0.000000|0.000000|1.000000|inf||cpu=0|",
		"aF||20|0.096154|0|0.000000|0.000000||inf||cpu=0|",
		"aF|uF1|10|0.333333|0|0.000000|0.000000|1.000000|inf||cpu=0|",
		"aF|uF2|20|0.666667|0|0.000000|0.000000|1.000000|inf||cpu=0|",
		"aG||8|0.038462|20|0.083333|0.083333||0.461538||cpu=0|",
		"aG|uG1|10|0.500000|10|0.041667|0.500000|0.190476|1.000000||cpu=0|",
		"aGA||10|0.500000|10|0.041667|0.500000||1.000000||cpu=0|",
		"aGA|uGA1|20|0.500000|4|0.016667|0.400000|0.190476|1.250000||cpu=0|",
		"aGA|uGA2|20|0.500000|6|0.025000|0.600000|0.095238|0.833333||cpu=0|",
	}
	b := buildSpec(t, test24_4)
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
		if g := trimAccount(got[i]); g != want[i] {
			t.Errorf("line %d = %q, want %q", i+1, g, want[i])
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
	if r.LevelFS[b.pos["aD|uD2"]] >= r.LevelFS[b.pos["aD|uD3"]] {
		t.Errorf("LevelFS(uD2) = %v, want < LevelFS(uD3) = %v", r.LevelFS[b.pos["aD|uD2"]], r.LevelFS[b.pos["aD|uD3"]])
	}
	if r.LevelFS[b.pos["aD|uD3"]] != r.LevelFS[b.pos["aDA|uDA3"]] {
		t.Errorf("LevelFS(uD3) = %v, want == LevelFS(uDA3) = %v", r.LevelFS[b.pos["aD|uD3"]], r.LevelFS[b.pos["aDA|uDA3"]])
	}
}

// TestClassicTest24_1 is Slurm's classic test (test24.1,
// docs/slurm-semantics.md §11.1): the full output table (current code:
// FairShare on user rows only), the official expected substrings, and the
// historic account FairShare values.
func TestClassicTest24_1(t *testing.T) {
	b := buildSpec(t, test24_1)
	var r Result
	Classic(b.tree, b.usage, 1, &r)

	// test24.1's full output table (§11.1); columns Account..FairShare, then the
	// blank GrpTRESMins and cpu=0 TRESRunMins of the -l layout.
	table := []string{
		"root|||1.000000|100||1.000000|",
		"AccountA||40|0.400000|45|0.450000|0.450000|",
		"AccountB||30|0.300000|20|0.200000|0.387500|",
		"AccountB|User1|1|0.300000|20|0.200000|0.387500|0.408479",
		"AccountC||10|0.100000|25|0.250000|0.300000|",
		"AccountC|User2|1|0.050000|25|0.250000|0.275000|0.022097",
		"AccountC|User3|1|0.050000|0|0.000000|0.150000|0.125000",
		"AccountD||60|0.600000|25|0.250000|0.250000|",
		"AccountE||25|0.250000|25|0.250000|0.250000|",
		"AccountE|User4|1|0.250000|25|0.250000|0.250000|0.500000",
		"AccountF||35|0.350000|0|0.000000|0.145833|",
		"AccountF|User5|1|0.350000|0|0.000000|0.145833|0.749154",
		"AccountG||0|0.000000|30|0.300000|0.300000|",
		"AccountG|User6|0|0.000000|30|0.300000|0.300000|0.000000",
	}
	got := sshareLines(t, b, &r, SshareOptions{Long: true, TrailingSep: true})
	if len(got) != len(table) {
		t.Fatalf("sshare printed %d lines, want %d:\n%s", len(got), len(table), strings.Join(got, "\n"))
	}
	for i, w := range table {
		if g, w := trimAccount(got[i]), w+"||cpu=0|"; g != w {
			t.Errorf("line %d = %q, want %q", i+1, g, w)
		}
	}
	// The test suite's own expected substrings (current, 25.11+).
	official := []string{
		"AccountB|User1|1|0.300000|20|0.200000|0.387500|0.408479|",
		"AccountC|User2|1|0.050000|25|0.250000|0.275000|0.022097|",
		"AccountC|User3|1|0.050000|0|0.000000|0.150000|0.125000|",
		"AccountE|User4|1|0.250000|25|0.250000|0.250000|0.500000|",
		"AccountF|User5|1|0.350000|0|0.000000|0.145833|0.749154|",
		"AccountG|User6|0|",
	}
	all := strings.Join(got, "\n")
	for _, w := range official {
		if !strings.Contains(all, w) {
			t.Errorf("sshare output lacks %q", w)
		}
	}
	// Historic account rows (until 25.05 accounts printed FairShare).
	historic := []string{
		"AccountA||40|0.400000|45|0.450000|0.450000|0.458502|",
		"AccountB||30|0.300000|20|0.200000|0.387500|0.408479|",
		"AccountC||10|0.100000|25|0.250000|0.300000|0.125000|",
		"AccountD||60|0.600000|25|0.250000|0.250000|0.749154|",
		"AccountE||25|0.250000|25|0.250000|0.250000|0.500000|",
		"AccountF||35|0.350000|0|0.000000|0.145833|0.749154|",
		"AccountG||0|0.000000|30|0.300000|0.300000|0.000000|",
	}
	old := sshareLines(t, b, &r, SshareOptions{Long: true, TrailingSep: true, AccountFairShare: true})
	for _, w := range historic {
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
