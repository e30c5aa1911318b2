package ingest

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
)

// assocTestdata is where the association fixtures live.
var assocTestdata = filepath.Join("..", "testdata", "assoc")

// assocLeafErrors flattens an errors.Join tree into its leaves.
func assocLeafErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, assocLeafErrors(e)...)
		}
		return out
	}
	return []error{err}
}

// assocErrorLines returns the Error() text of every leaf error, failing the
// test if a leaf is not a *ParseError.
func assocErrorLines(t testing.TB, err error) []string {
	t.Helper()
	var out []string
	for _, e := range assocLeafErrors(err) {
		if _, ok := e.(*ParseError); !ok {
			t.Errorf("error %v is a %T, want *ParseError", e, e)
		}
		out = append(out, e.Error())
	}
	return out
}

// assocPairs renders rows as "account|user" (plus "|partition" when set).
func assocPairs(rows []Association) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Account + "|" + r.User
		if r.Partition != "" {
			out[i] += "|" + r.Partition
		}
	}
	return out
}

// assocFind returns the row with the given key, or nil.
func assocFind(rows []Association, cluster, account, user, partition string) *Association {
	for i := range rows {
		r := &rows[i]
		if r.Cluster == cluster && r.Account == account && r.User == user && r.Partition == partition {
			return r
		}
	}
	return nil
}

func assocCheckStats(t *testing.T, st Stats, read, ingested, rejected int64) {
	t.Helper()
	if st.Read != read || st.Ingested != ingested || st.Rejected != rejected {
		t.Errorf("stats = %s, want read=%d ingested=%d rejected=%d", st.String(), read, ingested, rejected)
	}
	if !st.Balanced() {
		t.Errorf("stats %s are not balanced", st.String())
	}
}

func assocSameStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d items, want %d\ngot:  %q\nwant: %q", what, len(got), len(want), got, want)
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s[%d] = %q, want %q", what, i, got[i], want[i])
		}
	}
}

// TestParseAssocTest24_4 reads the §11.2 tree written as a full sacctmgr
// dump (with Lineage and the ignored ParentID/ID columns) in test24.4's table
// order, and expects the row order of the §11.2 sshare listing (which is
// sorted by lineage).
func TestParseAssocTest24_4(t *testing.T) {
	t.Parallel()
	as, st, err := ReadAssoc(filepath.Join(assocTestdata, "test24_4.psv"))
	if err != nil {
		t.Fatalf("ReadAssoc: %v", err)
	}
	assocCheckStats(t, st, 35, 35, 0)
	if len(st.Warnings) != 0 {
		t.Errorf("warnings = %q, want none", st.Warnings)
	}
	// docs/slurm-semantics.md §11.2 expected sshare lines, Account|User columns.
	want := []string{
		"root|", "root|u1", "root|u2",
		"aA|", "aAA|", "aAA|uAA1", "aAB|", "aAB|uAB1", "aAB|uAB2",
		"aB|", "aBA|", "aBA|uBA1", "aBB|", "aBB|uBB1",
		"aC|", "aC|uC1",
		"aD|", "aD|uD1", "aD|uD2", "aD|uD3", "aDA|", "aDA|uDA1", "aDA|uDA2", "aDA|uDA3",
		"aE|", "aE|aE1", "aE|aE2",
		"aF|", "aF|uF1", "aF|uF2",
		"aG|", "aG|uG1", "aGA|", "aGA|uGA1", "aGA|uGA2",
	}
	assocSameStrings(t, "rows", assocPairs(as.Rows), want)

	// Shares from test24.4's table; lineages in Slurm's form (§4.4).
	tests := []struct {
		account, user string
		parent        string
		shares        int64
		sharesParent  bool
		lineage       string
		line          int
	}{
		{"root", "", "", 0, false, "/", 2},
		{"aA", "", "root", 40, false, "/aA/", 3},
		{"aDA", "", "aD", 0, true, "/aD/aDA/", 17},
		{"aDA", "uDA1", "aDA", 0, true, "/aD/aDA/0-uDA1/", 18},
		{"aD", "uD2", "aD", 40, false, "/aD/0-uD2/", 22},
		{"aC", "uC1", "aC", 0, false, "/aC/0-uC1/", 15},
		{"root", "u2", "root", 10, false, "/0-u2/", 36},
		{"aGA", "uGA2", "aGA", 20, false, "/aG/aGA/0-uGA2/", 35},
	}
	for _, tt := range tests {
		r := assocFind(as.Rows, "test24_4", tt.account, tt.user, "")
		if r == nil {
			t.Errorf("row %s|%s missing", tt.account, tt.user)
			continue
		}
		if r.Parent != tt.parent || r.SharesParent != tt.sharesParent || r.Lineage != tt.lineage || r.Line != tt.line {
			t.Errorf("row %s|%s = parent %q shares-parent %v lineage %q line %d, want %q %v %q %d",
				tt.account, tt.user, r.Parent, r.SharesParent, r.Lineage, r.Line, tt.parent, tt.sharesParent, tt.lineage, tt.line)
		}
		if !tt.sharesParent && r.Shares != tt.shares {
			t.Errorf("row %s|%s Shares = %d, want %d", tt.account, tt.user, r.Shares, tt.shares)
		}
		if tt.sharesParent && r.Shares != 0x7FFFFFFF {
			t.Errorf("row %s|%s Shares = %#x, want Slurm's 0x7FFFFFFF", tt.account, tt.user, r.Shares)
		}
		if r.IsUser() != (tt.user != "") {
			t.Errorf("row %s|%s IsUser() = %v", tt.account, tt.user, r.IsUser())
		}
	}
}

// TestParseAssocTest24_1 reads the §11.1 tree from a `sacctmgr -p` dump with
// old-style titles (Par Name, Fairshare), a trailing '|', an extra column and
// no Cluster or Lineage column.
func TestParseAssocTest24_1(t *testing.T) {
	t.Parallel()
	as, st, err := ReadAssoc(filepath.Join(assocTestdata, "test24_1.psv"))
	if err != nil {
		t.Fatalf("ReadAssoc: %v", err)
	}
	assocCheckStats(t, st, 14, 14, 0)
	// Order of test24.1's "full output" table.
	want := []string{
		"root|", "AccountA|", "AccountB|", "AccountB|User1", "AccountC|", "AccountC|User2", "AccountC|User3",
		"AccountD|", "AccountE|", "AccountE|User4", "AccountF|", "AccountF|User5", "AccountG|", "AccountG|User6",
	}
	assocSameStrings(t, "rows", assocPairs(as.Rows), want)
	for _, r := range as.Rows {
		if r.Cluster != "" {
			t.Errorf("row %s|%s cluster = %q, want \"\" (no Cluster column)", r.Account, r.User, r.Cluster)
		}
	}
	// Lineage computed in Slurm's form.
	lineages := map[string]string{
		"root|":          "/",
		"AccountA|":      "/AccountA/",
		"AccountB|User1": "/AccountA/AccountB/0-User1/",
		"AccountF|":      "/AccountD/AccountF/",
		"AccountG|User6": "/AccountG/0-User6/",
		"AccountC|User3": "/AccountA/AccountC/0-User3/",
		"AccountE|User4": "/AccountD/AccountE/0-User4/",
		"AccountD|":      "/AccountD/",
		"AccountC|User2": "/AccountA/AccountC/0-User2/",
		"AccountF|User5": "/AccountD/AccountF/0-User5/",
		"AccountB|":      "/AccountA/AccountB/",
		"AccountG|":      "/AccountG/",
		"AccountE|":      "/AccountD/AccountE/",
		"AccountC|":      "/AccountA/AccountC/",
	}
	// Shares from test24.1's table.
	shares := map[string]int64{
		"root|": 1, "AccountA|": 40, "AccountB|": 30, "AccountB|User1": 1, "AccountC|": 10, "AccountC|User2": 1,
		"AccountC|User3": 1, "AccountD|": 60, "AccountE|": 25, "AccountE|User4": 1, "AccountF|": 35,
		"AccountF|User5": 1, "AccountG|": 0, "AccountG|User6": 0,
	}
	for _, r := range as.Rows {
		k := r.Account + "|" + r.User
		if r.Lineage != lineages[k] {
			t.Errorf("Lineage(%s) = %q, want %q", k, r.Lineage, lineages[k])
		}
		if r.Shares != shares[k] || r.SharesParent {
			t.Errorf("Shares(%s) = %d (parent %v), want %d", k, r.Shares, r.SharesParent, shares[k])
		}
	}
}

// TestParseAssocBad checks every validation error of bad.psv, by exact
// text, and that the good rows survive.
func TestParseAssocBad(t *testing.T) {
	t.Parallel()
	as, st, err := ReadAssoc(filepath.Join(assocTestdata, "bad.psv"))
	if as == nil {
		t.Fatalf("ReadAssoc returned no associations (err %v)", err)
	}
	// 21 data lines (2–22): 7 good (lines 2, 3, 10, 15, 16, 21, 22) and 14
	// rejected, one error each.
	assocCheckStats(t, st, 21, 7, 14)
	want := []string{
		`ingest bad.psv:4: Share="abc": bad share (want a non-negative integer or parent)`,
		`ingest bad.psv:5: ParentName="chem": unknown parent account (the parent was rejected)`,
		`ingest bad.psv:6: ParentName="nosuch": unknown parent account`,
		`ingest bad.psv:7: ParentName="y": cycle in account parents: x -> y -> x`,
		`ingest bad.psv:8: ParentName="x": cycle in account parents: x -> y -> x`,
		`ingest bad.psv:9: ParentName="x": unknown parent account (the parent was rejected)`,
		`ingest bad.psv:11: User="alice": duplicate association (first at line 10)`,
		`ingest bad.psv:12: Account="": user row without account`,
		`ingest bad.psv:13: Lineage="/wrong/math/": contradicts ParentName "phys": the parent chain gives "/phys/math/"`,
		`ingest bad.psv:14: Account="math": unknown parent account (the account was rejected)`,
		`ingest bad.psv:17: Share="-3": bad share (want a non-negative integer or parent)`,
		`ingest bad.psv:18: ParentName="chem": user row: ParentName differs from Account "phys"`,
		`ingest bad.psv:19: Account="phys": duplicate association (first at line 3)`,
		`ingest bad.psv:20: 5 fields, the header has 7`,
	}
	assocSameStrings(t, "errors", assocErrorLines(t, err), want)

	wantRows := []string{
		"c1 / root| line 2",
		"c1 /phys/ phys| line 3",
		"c1 /phys/0-alice/ phys|alice line 10",
		"c1 /phys/0-dave/ phys|dave line 15",
		"c1 /phys/0-erin/gpu/ phys|erin|gpu line 16",
		"c2 / root| line 0",
		"c2 /ops/ ops| line 21",
		"c2 /ops/0-hank/ ops|hank line 22",
	}
	var got []string
	for i, r := range as.Rows {
		got = append(got, fmt.Sprintf("%s %s %s line %d", r.Cluster, r.Lineage, assocPairs(as.Rows[i : i+1])[0], r.Line))
	}
	assocSameStrings(t, "rows", got, wantRows)
	wantWarn := []string{`bad.psv: cluster "c2" has no root association; synthesized one with Share=1`}
	assocSameStrings(t, "warnings", st.Warnings, wantWarn)
	if r := assocFind(as.Rows, "c1", "phys", "erin", "gpu"); r == nil || !r.SharesParent {
		t.Errorf("erin's per-partition association = %+v, want Share=parent", r)
	}
	if r := assocFind(as.Rows, "c2", "root", "", ""); r == nil || r.Shares != 1 || r.File != "bad.psv" {
		t.Errorf("synthesized root = %+v, want Shares 1 in bad.psv", r)
	}
}

// TestParseAssocRivosinc: a real headerless `-n -P` dump without the tree
// columns must fail with one file-level error.
func TestParseAssocRivosinc(t *testing.T) {
	t.Parallel()
	as, st, err := ReadAssoc(filepath.Join(assocTestdata, "sacctmgr_assoc_grp_limits_rivosinc_fixture.psv"))
	if as != nil {
		t.Errorf("ReadAssoc returned %d rows, want none", len(as.Rows))
	}
	const want = "ingest sacctmgr_assoc_grp_limits_rivosinc_fixture.psv: no header: the first line is not a header naming Account (dump with sacctmgr -P, without -n)"
	if err == nil || err.Error() != want {
		t.Fatalf("ReadAssoc(rivosinc) error = %v, want %s", err, want)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 0 {
		t.Errorf("error %#v, want a file-level *ParseError", err)
	}
	if !st.Balanced() {
		t.Errorf("stats %s not balanced", st.String())
	}
}

func TestParseAssocHeader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		wantErr  string // "" = parses
		wantRows []string
	}{
		{"empty", "", "ingest t.psv: no header: the file is empty", nil},
		{"blank lines only", "\n\n", "ingest t.psv: no header: the file is empty", nil},
		{"missing columns", "Account|Partition\nroot|\n",
			"ingest t.psv: missing column(s) User, ParentName, Share: dump with sacctmgr -P show assoc format=Cluster,Account,User,Partition,ParentName,Share,Lineage", nil},
		{"duplicate share column", "Account|User|ParentName|Share|FairShare\n",
			"ingest t.psv: duplicate column(s) FairShare", nil},
		{"any order, any case, CRLF, blank lines", "\r\nSHARE|parentname|USER|account\r\n\r\n5|root||a\r\n1|||root\r\n", "",
			[]string{"root|", "a|"}},
		{"header only", "Account|User|ParentName|Share\n", "", nil},
		{"user ParentName equal to account is fine; per-partition rows", "Account|User|ParentName|Share|Partition\n" +
			"root|||1|\na||root|1|\na|u|a|1|\na|u||2|p1\na|u||parent|p0\n", "",
			[]string{"root|", "a|", "a|u", "a|u|p0", "a|u|p1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as, st, err := ParseAssoc("t.psv", strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseAssoc(%q) error = %v, want %s", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAssoc(%q) error = %v", tt.in, err)
			}
			assocSameStrings(t, "rows", assocPairs(as.Rows), tt.wantRows)
			if !st.Balanced() {
				t.Errorf("stats %s not balanced", st.String())
			}
		})
	}
}

func TestParseAssocRowErrors(t *testing.T) {
	t.Parallel()
	const hdr = "Cluster|Account|User|Partition|ParentName|Share\n"
	tests := []struct {
		name, rows string
		want       string
	}{
		{"root with parent", "c|root||||1\nc|root|||x|1\n", `ingest t.psv:3: ParentName="x": the root account has no parent`},
		{"root parent share", "c|root||||parent\n", `ingest t.psv:2: Share="parent": the root account cannot be FairShare=parent`},
		{"account without parent", "c|a||||1\n", `ingest t.psv:2: ParentName="": account row without parent account`},
		{"partition on account", "c|a||p|root|1\n", `ingest t.psv:2: Partition="p": partition on an account row (only user associations have one)`},
		{"no account no user", "c|||||1\n", `ingest t.psv:2: Account="": row without account or user`},
		{"empty share", "c|a|||root|\n", `ingest t.psv:2: Share="": empty share (want a non-negative integer or parent)`},
		{"share too big", "c|a|||root|2147483647\n", `ingest t.psv:2: Share="2147483647": share out of range (max 2147483646)`},
		{"self parent", "c|a|||a|1\n", `ingest t.psv:2: ParentName="a": cycle in account parents: a -> a`},
		{"duplicate root", "c|root||||1\nc|root||||1\n", `ingest t.psv:3: Account="root": duplicate association (first at line 2)`},
		{"valid rows, no errors", "c|a|||root|1\nc|a|u|||1\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, st, err := ParseAssoc("t.psv", strings.NewReader(hdr+tt.rows))
			got := strings.Join(assocErrorLines(t, err), "\n")
			if got != tt.want {
				t.Errorf("ParseAssoc(%q) errors = %q, want %q", tt.rows, got, tt.want)
			}
			if !st.Balanced() {
				t.Errorf("stats %s not balanced", st.String())
			}
		})
	}
}

func TestParseAssocUserLineage(t *testing.T) {
	t.Parallel()
	in := "Account|User|Partition|ParentName|Share|Lineage\n" +
		"a|||root|1|/a/\n" +
		"a|u|p||1|/a/0-u/p/\n" + // Slurm's per-partition form: accepted
		"a|v|||1|/a/v/\n" // not Slurm's user form: rejected
	_, st, err := ParseAssoc("t.psv", strings.NewReader(in))
	want := []string{`ingest t.psv:4: Lineage="/a/v/": contradicts Account "a": the parent chain gives "/a/0-v/"`}
	assocSameStrings(t, "errors", assocErrorLines(t, err), want)
	assocCheckStats(t, st, 3, 2, 1)
}

func TestAssocParseShares(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in         string
		want       int64
		wantParent bool
		wantErr    bool
	}{
		{"0", 0, false, false},
		{"1", 1, false, false},
		{"2147483646", 2147483646, false, false},
		{"2147483647", 0, false, true}, // SLURMDB_FS_USE_PARENT itself
		{"parent", 0x7FFFFFFF, true, false},
		{"Parent", 0x7FFFFFFF, true, false},
		{"-1", 0, false, true},
		{"+1", 0, false, true},
		{"1.5", 0, false, true},
		{"", 0, false, true},
		{"99999999999999999999", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, gotParent, err := assocParseShares(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want || gotParent != tt.wantParent {
				t.Errorf("assocParseShares(%q) = %d, %v, %v; want %d, %v, error %v", tt.in, got, gotParent, err, tt.want, tt.wantParent, tt.wantErr)
			}
		})
	}
}

// assocBenchDump builds a dump of nAcct accounts with nUser users each.
func assocBenchDump(nAcct, nUser int) (string, int) {
	var b strings.Builder
	b.WriteString("Cluster|Account|User|Partition|ParentName|Share|Lineage\nc|root|||||/\n")
	rows := 1
	for a := nAcct - 1; a >= 0; a-- { // reverse order: the reader must sort
		fmt.Fprintf(&b, "c|acct%04d|||root|%d|/acct%04d/\n", a, a+1, a)
		rows++
		for u := 0; u < nUser; u++ {
			fmt.Fprintf(&b, "c|acct%04d|user%04d_%03d|||1|/acct%04d/0-user%04d_%03d/\n", a, a, u, a, a, u)
			rows++
		}
	}
	return b.String(), rows
}

// BenchmarkParseAssoc parses a 20,001-row dump (400 accounts × 49 users).
//
//	go test ./ingest -run '^$' -bench BenchmarkParseAssoc$ -benchmem
func BenchmarkParseAssoc(b *testing.B) {
	in, rows := assocBenchDump(400, 49)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		as, _, err := ParseAssoc("bench.psv", strings.NewReader(in))
		if err != nil || len(as.Rows) != rows {
			b.Fatalf("ParseAssoc: %d rows, %v", len(as.Rows), err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestParseAssocGrpTRESMins checks that a GrpTRESMins column (sacctmgr's
// default `show assoc` layout has one) is kept verbatim per association
// (memory with sacctmgr's units and decimals, mem=2.50G, accepted),
// blank where none is set, and that a malformed limit is rejected with its
// line, field and value.
func TestParseAssocGrpTRESMins(t *testing.T) {
	t.Parallel()
	const in = "Cluster|Account|User|Partition|Share|GrpTRESMins|ParentName\n" +
		"c|root|||||\n" +
		"c|a|||10|cpu=1000,gres/gpu=50|root\n" +
		"c|a|u||1||\n" +
		"c|b|||5| mem=20G |root\n" +
		"c|b|v||1|cpu=|\n" +
		"c|b|w||1|cpu=-5|\n" +
		"c|b|x||1|cpu|\n" +
		"c|b|y||1|mem=2.50G,cpu=5|\n" +
		"c|b|z||1|mem=2,5G|\n"
	as, st, err := ParseAssoc("t.psv", strings.NewReader(in))
	wantErrs := []string{
		`ingest t.psv:6: GrpTRESMins="cpu=": item "cpu=": want type=count`,
		`ingest t.psv:7: GrpTRESMins="cpu=-5": item "cpu=-5": count is not a non-negative integer`,
		`ingest t.psv:8: GrpTRESMins="cpu": item "cpu": want type=count`,
		`ingest t.psv:10: GrpTRESMins="mem=2,5G": item "5G": want type=count`,
	}
	assocSameStrings(t, "errors", assocErrorLines(t, err), wantErrs)
	if st.Read != 9 || st.Rejected != 4 || !st.Balanced() {
		t.Errorf("stats %s, want 9 read, 4 rejected, balanced", st.String())
	}
	if as == nil {
		t.Fatal("no associations")
	}
	got := map[string]string{}
	for _, a := range as.Rows {
		got[a.Account+"|"+a.User] = a.GrpTRESMins
	}
	want := map[string]string{"root|": "", "a|": "cpu=1000,gres/gpu=50", "a|u": "", "b|": "mem=20G", "b|y": "mem=2.50G,cpu=5"}
	if !maps.Equal(got, want) {
		t.Errorf("GrpTRESMins = %v, want %v", got, want)
	}
}
