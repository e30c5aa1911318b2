package ingest

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/internal/golden"
)

// nodesTree reads an association file and builds the fairshare.Tree of its
// only cluster, which must be named cluster.
func nodesTree(t *testing.T, file, cluster string) *fairshare.Tree {
	t.Helper()
	as, _, err := ReadAssocFile(filepath.Join(assocTestdata, file))
	if err != nil {
		t.Fatalf("ReadAssocFile(%s): %v", file, err)
	}
	if got := as.Clusters(); !slices.Equal(got, []string{cluster}) {
		t.Fatalf("%s: Clusters() = %q, want [%q]", file, got, cluster)
	}
	nodes, err := as.Nodes(cluster)
	if err != nil {
		t.Fatalf("%s: Nodes(%q): %v", file, cluster, err)
	}
	tree, err := fairshare.NewTree(nodes)
	if err != nil {
		t.Fatalf("%s: NewTree: %v", file, err)
	}
	return tree
}

// nodesUsage lays out user usage given as "account|user" by tree position
// and accumulates it (accounts = sum of their users, §11).
func nodesUsage(t *testing.T, tree *fairshare.Tree, byUser map[string]float64) []float64 {
	t.Helper()
	own := make([]float64, tree.Len())
	found := 0
	for p := range own {
		if v, ok := byUser[tree.Account[p]+"|"+tree.User[p]]; ok && tree.IsUser[p] {
			own[p] = v
			found++
		}
	}
	if found != len(byUser) {
		t.Fatalf("usage for %d users, %d found in the tree", len(byUser), found)
	}
	fairshare.Accumulate(tree, own, own)
	return own
}

// goldenUsage returns the raw usage of a golden case's users that have
// some, by "account|user".
func goldenUsage(c *golden.Case) map[string]float64 {
	out := map[string]float64{}
	for _, a := range c.Assocs {
		if a.IsUser() && a.RawUsage != 0 {
			out[a.Account+"|"+a.User] = a.RawUsage
		}
	}
	return out
}

// goldenFairShare returns the FairShare cell of every user line of a golden
// case's `sshare -a -l -p` section, by "account|user".
func goldenFairShare(t *testing.T, c *golden.Case) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range c.Lines(t, "sshare -a -l -p")[1:] {
		f := strings.Split(strings.TrimLeft(l, " "), "|")
		if len(f) < 8 {
			t.Fatalf("%s: sshare line %q has no FairShare", c.Name, l)
		}
		if f[1] != "" {
			out[f[0]+"|"+f[1]] = f[7]
		}
	}
	return out
}

// fairShareOf returns the FairShare (%f) of every user by "account|user".
func fairShareOf(tree *fairshare.Tree, r *fairshare.Result) map[string]string {
	out := map[string]string{}
	for p := range tree.Len() {
		if tree.IsUser[p] {
			out[tree.Account[p]+"|"+tree.User[p]] = strconv.FormatFloat(r.FairShare[p], 'f', 6, 64)
		}
	}
	return out
}

// TestNodesTest24_4: the §11.2 dump gives the §11.2 tree, and Fair Tree on
// the §11.2 usage gives the FairShare column of docs/slurm-semantics.md §11.2.
func TestNodesTest24_4(t *testing.T) {
	t.Parallel()
	tree := nodesTree(t, "test24_4.psv", "test24_4")
	// §11.2: 35 associations, 21 of them users.
	if tree.Len() != 35 || tree.Users != 21 {
		t.Fatalf("tree has %d associations and %d users, want 35 and 21", tree.Len(), tree.Users)
	}
	pos := map[string]int{}
	for p := range tree.Len() {
		pos[tree.Account[p]+"|"+tree.User[p]] = p
	}
	structure := []struct {
		key, parent  string
		shares       int64
		sharesParent bool
	}{
		{"aAA|", "aA|", 30, false},
		{"aAA|uAA1", "aAA|", 1, false},
		{"aDA|", "aD|", 0, true},
		{"aDA|uDA1", "aDA|", 0, true},
		{"aDA|uDA3", "aDA|", 50, false},
		{"root|u1", "root|", 10, false},
		{"aGA|", "aG|", 10, false},
	}
	for _, s := range structure {
		p, ok := pos[s.key]
		if !ok {
			t.Errorf("association %s missing", s.key)
			continue
		}
		if got := tree.Parent[p]; got < 0 || got != int32(pos[s.parent]) {
			t.Errorf("Parent(%s) = %d, want %s (%d)", s.key, got, s.parent, pos[s.parent])
		}
		if tree.Shares[p] != s.shares || tree.SharesParent[p] != s.sharesParent {
			t.Errorf("Shares(%s) = %d parent %v, want %d parent %v", s.key, tree.Shares[p], tree.SharesParent[p], s.shares, s.sharesParent)
		}
	}

	c := golden.Load(t, "fairshare/testdata/test24_4.txt")
	usage := nodesUsage(t, tree, goldenUsage(c))
	if usage[0] != 240 {
		t.Errorf("RawUsage(root) = %v, want 240 (§11.2)", usage[0])
	}
	var r fairshare.Result
	fairshare.FairTree(tree, usage, &r)
	want := goldenFairShare(t, c) // §11.2, FairShare column
	got := fairShareOf(tree, &r)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("FairShare(%s) = %s, want %s", k, got[k], w)
		}
	}
}

// TestNodesTest24_1: the §11.1 dump (no Cluster column: cluster "") gives
// the §11.1 classic FairShare values with FairShareDampeningFactor=1.
func TestNodesTest24_1(t *testing.T) {
	t.Parallel()
	tree := nodesTree(t, "test24_1.psv", "")
	if tree.Len() != 14 || tree.Users != 6 {
		t.Fatalf("tree has %d associations and %d users, want 14 and 6", tree.Len(), tree.Users)
	}
	c := golden.Load(t, "fairshare/testdata/test24_1.txt")
	usage := nodesUsage(t, tree, goldenUsage(c))
	var r fairshare.Result
	fairshare.Classic(tree, usage, 1, &r)
	want := goldenFairShare(t, c) // §11.1, Slurm test suite test24.1
	got := fairShareOf(tree, &r)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("FairShare(%s) = %s, want %s", k, got[k], w)
		}
	}
}

// TestNodesUBCCR: the UB CCR script (through ReadAssocFile) builds a tree.
// Expected counts are those of TestParseAssocScriptUBCCR, from reading the
// script: root, 62 accounts and 97 user associations (96 users + root's
// user) = 160; user001 is Fairshare=parent (line 80).
func TestNodesUBCCR(t *testing.T) {
	t.Parallel()
	tree := nodesTree(t, "sacctmgr_script_ubccr_medium_cluster.txt", "ubhpc")
	if tree.Len() != 160 || tree.Users != 97 {
		t.Fatalf("tree has %d associations and %d users, want 160 and 97", tree.Len(), tree.Users)
	}
	sawUser001 := false
	for p := range tree.Len() {
		switch {
		case p == 0:
			if tree.Account[p] != "root" || tree.Parent[p] != -1 {
				t.Errorf("position 0 = %s parent %d, want root -1", tree.Account[p], tree.Parent[p])
			}
		case !tree.IsUser[p]:
			// Every account is directly under root with Fairshare=100.
			if tree.Parent[p] != 0 || tree.Shares[p] != 100 {
				t.Errorf("account %s: parent %d shares %d, want 0 and 100", tree.Account[p], tree.Parent[p], tree.Shares[p])
			}
		default:
			if par := tree.Parent[p]; tree.Account[par] != tree.Account[p] || tree.IsUser[par] {
				t.Errorf("user %s|%s: parent %s|%s, want account %s", tree.Account[p], tree.User[p], tree.Account[par], tree.User[par], tree.Account[p])
			}
			if tree.Account[p] == "account001" && tree.User[p] == "user001" {
				sawUser001 = true
				if !tree.SharesParent[p] {
					t.Errorf("user account001|user001: SharesParent = false, want true (Fairshare=parent)")
				}
			}
		}
	}
	if !sawUser001 {
		t.Errorf("user account001|user001 missing")
	}
}

// TestNodesClusters: a two-cluster dump with a per-partition user
// association.
func TestNodesClusters(t *testing.T) {
	t.Parallel()
	dump := `Cluster|Account|User|Partition|ParentName|Share
c2|root||||1
c2|phys|||root|10
c2|phys|ann|gpu||3
c2|phys|ann|||parent
c1|root||||1
c1|chem|||root|5
c1|chem|bob|||2
`
	as, _, err := ParseAssoc("two.psv", strings.NewReader(dump))
	if err != nil {
		t.Fatalf("ParseAssoc: %v", err)
	}
	if got, want := as.Clusters(), []string{"c1", "c2"}; !slices.Equal(got, want) {
		t.Errorf("Clusters() = %q, want %q", got, want)
	}
	// c2 rows in lineage order: / , /phys/, /phys/0-ann/, /phys/0-ann/gpu/,
	// each with its line in the dump (the header is line 1).
	nodes, err := as.Nodes("c2")
	if err != nil {
		t.Fatalf("Nodes(c2): %v", err)
	}
	want := []fairshare.Node{
		{Account: "root", Parent: -1, Shares: 1, Line: 2},
		{Account: "phys", Parent: 0, Shares: 10, Line: 3},
		{Account: "phys", User: "ann", Parent: 1, SharesParent: true, Line: 5},
		{Account: "phys", User: "ann", Partition: "gpu", Parent: 1, Shares: 3, Line: 4},
	}
	if !slices.Equal(nodes, want) {
		t.Errorf("Nodes(c2) = %+v, want %+v", nodes, want)
	}
	tree, err := fairshare.NewTree(nodes)
	if err != nil {
		t.Fatalf("NewTree: %v", err)
	}
	if tree.Users != 2 {
		t.Errorf("Users = %d, want 2 (per-partition associations count)", tree.Users)
	}
}

func TestNodesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		as      Associations
		cluster string
		want    []string
	}{
		{"unknown cluster", Associations{File: "a.psv", Rows: []Association{{Cluster: "c", Account: "root"}}}, "d",
			[]string{`association nodes of a.psv: no associations for cluster "d"`}},
		{"missing parent", Associations{File: "a.psv", Rows: []Association{
			{Account: "root", File: "a.psv", Line: 2},
			{Account: "x", Parent: "nowhere", File: "a.psv", Line: 3},
			{Account: "y", User: "u", File: "a.psv", Line: 4},
		}}, "", []string{`a.psv:3: parent account "nowhere" of account "x" not found`,
			`a.psv:4: parent account "y" of user "u" of account "y" not found`}},
		{"no root", Associations{File: "a.psv", Rows: []Association{{Account: "x", Parent: "root", File: "a.psv", Line: 2}}}, "",
			[]string{`cluster "" has no root account`}},
		{"two roots and a duplicate", Associations{File: "a.psv", Rows: []Association{
			{Account: "root", File: "a.psv", Line: 2},
			{Account: "root", File: "a.psv", Line: 3},
			{Account: "x", Parent: "root", File: "a.psv", Line: 4},
			{Account: "x", Parent: "root", File: "a.psv", Line: 5},
		}}, "", []string{"a.psv:3: second root account", `a.psv:5: account "x" again (first at a.psv:4)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.as.Nodes(tc.cluster)
			if err == nil {
				t.Errorf("Nodes(%s) = nil error, want %q", tc.name, tc.want)
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Nodes(%s) error = %q, want it to contain %q", tc.name, err, w)
				}
			}
		})
	}
}

// TestNodesDatedUniverse runs the whole path on a directory of two dated
// dumps: ReadAssocDir, Nodes, NewTree per dump, NewUniverse, and a snapshot
// per dump chosen with AssocAt. Between the dumps user ann of phys is
// deleted and account bio moves from phys to root.
//
// Own usage: ann 6, bob 4, cat 5. Before 2025-06-01: phys = 6+4+5 = 15.
// After: ann's 6 stay with phys and bio left it: phys = 6+4 = 10, bio = 5,
// root = 15 both times.
func TestNodesDatedUniverse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"assoc-2025-03-01.psv": "Account|User|ParentName|Share\nroot|||1\nphys||root|10\nphys|ann||1\nphys|bob||1\nbio||phys|2\nbio|cat||1\n",
		"assoc-2025-06-01.psv": "Account|User|ParentName|Share\nroot|||1\nphys||root|10\nphys|bob||1\nbio||root|2\nbio|cat||1\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dumps, _, err := ReadAssocDir(dir, time.UTC)
	if err != nil {
		t.Fatalf("ReadAssocDir: %v", err)
	}
	trees := make([]*fairshare.Tree, len(dumps))
	byAssoc := map[*Associations]*fairshare.Tree{}
	for i, d := range dumps {
		nodes, err := d.Assoc.Nodes("")
		if err != nil {
			t.Fatalf("Nodes: %v", err)
		}
		if trees[i], err = fairshare.NewTree(nodes); err != nil {
			t.Fatalf("NewTree: %v", err)
		}
		byAssoc[d.Assoc] = trees[i]
	}
	u, err := fairshare.NewUniverse(trees)
	if err != nil {
		t.Fatalf("NewUniverse: %v", err)
	}
	// root, phys, phys|ann, phys|bob, bio, bio|cat.
	if u.Len() != 6 {
		t.Fatalf("universe has %d keys, want 6", u.Len())
	}
	own := make([]float64, u.Len())
	for k, v := range map[fairshare.Key]float64{{Account: "phys", User: "ann"}: 6, {Account: "phys", User: "bob"}: 4, {Account: "bio", User: "cat"}: 5} {
		i, ok := u.Index(k)
		if !ok {
			t.Fatalf("Index(%v) not found", k)
		}
		own[i] = v
	}
	tests := []struct {
		at   string
		want map[string]float64 // raw usage by "account|user"
	}{
		{"2025-05-31", map[string]float64{"root|": 15, "phys|": 15, "bio|": 5, "phys|ann": 6}},
		{"2025-06-01", map[string]float64{"root|": 15, "phys|": 10, "bio|": 5, "phys|bob": 4}},
	}
	for _, tc := range tests {
		t.Run("at "+tc.at, func(t *testing.T) {
			at, _ := time.Parse(time.DateOnly, tc.at)
			as, ok := AssocAt(dumps, at)
			if !ok {
				t.Fatalf("AssocAt(%s): no dump", tc.at)
			}
			tree := byAssoc[as]
			usage := make([]float64, tree.Len())
			u.Project(tree).RawUsage(own, usage)
			got := map[string]float64{}
			for p := range usage {
				got[tree.Account[p]+"|"+tree.User[p]] = usage[p]
			}
			for k, w := range tc.want {
				if got[k] != w {
					t.Errorf("%s: RawUsage(%s) = %v, want %v", tc.at, k, got[k], w)
				}
			}
		})
	}
}
