package fairshare

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestNewTreeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes []Node
		want  []string // substrings of the error
	}{
		{"empty", nil, []string{"no associations"}},
		{"no root", []Node{{Account: "a", Parent: 1}, {Account: "b", Parent: 0}}, []string{"no root"}},
		{"two roots", []Node{{Account: "root", Parent: -1}, {Account: "x", Parent: -1}}, []string{"second root"}},
		{"parent out of range", []Node{{Account: "root", Parent: -1}, {Account: "a", Parent: 7}}, []string{"parent index 7 out of range"}},
		{"user as parent", []Node{{Account: "root", Parent: -1}, {Account: "root", User: "u", Parent: 0}, {Account: "root", User: "v", Parent: 1}}, []string{"is a user"}},
		{"cycle", []Node{{Account: "root", Parent: -1}, {Account: "a", Parent: 2}, {Account: "b", Parent: 1}}, []string{"cycle"}},
		{"negative shares", []Node{{Account: "root", Parent: -1}, {Account: "a", Parent: 0, Shares: -1}}, []string{"shares -1 out of range"}},
		{"duplicate", []Node{{Account: "root", Parent: -1}, {Account: "a", Parent: 0}, {Account: "a", Parent: 0}}, []string{"duplicate", "/a/"}},
		{"user account mismatch", []Node{{Account: "root", Parent: -1}, {Account: "a", Parent: 0}, {Account: "b", User: "u", Parent: 1}}, []string{"differs from parent account"}},
		{"root is user", []Node{{Account: "root", User: "u", Parent: -1}}, []string{"root must be an account"}},
		{"root parent shares", []Node{{Account: "root", Parent: -1, SharesParent: true}}, []string{"root cannot have FairShare=parent"}},
		{"partition on account", []Node{{Account: "root", Parent: -1}, {Account: "a", Partition: "p", Parent: 0}}, []string{"partition \"p\" on an account"}},
		// All problems are reported at once.
		{"several", []Node{{Account: "root", Parent: -1}, {Account: "a", Parent: 9}, {Account: "", Parent: 0}}, []string{"parent index 9", "empty account name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTree(tc.nodes)
			if err == nil {
				t.Errorf("NewTree(%s) = nil error, want %q", tc.name, tc.want)
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("NewTree(%s) error = %q, want it to contain %q", tc.name, err, w)
				}
			}
		})
	}
}

// TestNewTreeStructure checks order, depth, fs parents and level_shares on
// the test24.4 tree (§4.1, §8).
func TestNewTreeStructure(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, test24_4(t))
	tr := b.tree
	// Row order is lineage byte order: "/", "/0-u1/", "/0-u2/", "/aA/", ...
	if !slices.IsSorted(tr.Lineage) {
		t.Errorf("Lineage not sorted: %q", tr.Lineage)
	}
	for p := 1; p < tr.Len(); p++ {
		if tr.Parent[p] >= int32(p) {
			t.Errorf("Parent(%d) = %d, want a position before it", p, tr.Parent[p])
		}
	}
	tests := []struct {
		key         string
		lineage     string
		depth       int32
		parent      string
		fsParent    string
		levelShares int64
	}{
		{"root", "/", 0, "", "", 0},
		{"root|u1", "/0-u1/", 1, "root", "root", 208}, // 40+60+0+50+10+10+20+8+10
		{"aA", "/aA/", 1, "root", "root", 208},
		{"aAA|uAA1", "/aA/aAA/0-uAA1/", 3, "aAA", "aAA", 1},
		{"aDA", "/aD/aDA/", 2, "aD", "aD", 170},              // uD2 40 + uD3 50 + uDA2 30 + uDA3 50
		{"aDA|uDA2", "/aD/aDA/0-uDA2/", 3, "aDA", "aD", 170}, // re-parented
		{"aDA|uDA1", "/aD/aDA/0-uDA1/", 3, "aDA", "aD", 170},
		{"aD|uD1", "/aD/0-uD1/", 2, "aD", "aD", 170},
		{"aGA|uGA1", "/aG/aGA/0-uGA1/", 3, "aGA", "aGA", 40},
	}
	name := func(p int32) string {
		if p < 0 {
			return ""
		}
		return tr.Account[p]
	}
	for _, tc := range tests {
		p := b.pos[tc.key]
		if tr.Lineage[p] != tc.lineage {
			t.Errorf("Lineage(%s) = %q, want %q", tc.key, tr.Lineage[p], tc.lineage)
		}
		if tr.Depth[p] != tc.depth {
			t.Errorf("Depth(%s) = %d, want %d", tc.key, tr.Depth[p], tc.depth)
		}
		if g := name(tr.Parent[p]); g != tc.parent {
			t.Errorf("Parent(%s) = %q, want %q", tc.key, g, tc.parent)
		}
		if g := name(tr.FSParent[p]); g != tc.fsParent {
			t.Errorf("FSParent(%s) = %q, want %q", tc.key, g, tc.fsParent)
		}
		if tr.LevelShares[p] != tc.levelShares {
			t.Errorf("LevelShares(%s) = %d, want %d", tc.key, tr.LevelShares[p], tc.levelShares)
		}
	}
	// aDA (FairShare=parent) keeps no fs children; aD has its own users,
	// aDA and aDA's users, in position order.
	kids := func(key string) []string {
		p := b.pos[key]
		var out []string
		for _, c := range tr.FSChildren[tr.FSChildStart[p]:tr.FSChildStart[p+1]] {
			out = append(out, tr.Account[c]+"|"+tr.User[c])
		}
		return out
	}
	if g, w := kids("aDA"), []string(nil); !slices.Equal(g, w) {
		t.Errorf("FSChildren(aDA) = %q, want %q", g, w)
	}
	if g, w := kids("aD"), []string{"aD|uD1", "aD|uD2", "aD|uD3", "aDA|", "aDA|uDA1", "aDA|uDA2", "aDA|uDA3"}; !slices.Equal(g, w) {
		t.Errorf("FSChildren(aD) = %q, want %q", g, w)
	}
	// Pos and Input are inverse permutations.
	for p, i := range tr.Input {
		if tr.Pos[i] != int32(p) {
			t.Errorf("Pos(Input(%d)) = %d", p, tr.Pos[i])
		}
	}
}

// TestLineageByteOrder: lineage order is byte order, not component order:
// "/a-b/" sorts before "/a/" ('-' < '/'), users ("0-") before most
// sub-accounts, and a user's plain association before its per-partition ones.
func TestLineageByteOrder(t *testing.T) {
	t.Parallel()
	nodes := []Node{
		{Account: "root", Parent: -1},
		{Account: "a", Parent: 0, Shares: 1},
		{Account: "a-b", Parent: 0, Shares: 1},
		{Account: "a", User: "zed", Parent: 1, Shares: 1, Partition: "gpu"},
		{Account: "a", User: "zed", Parent: 1, Shares: 1},
		{Account: "Z", Parent: 1, Shares: 1},
		{Account: "root", User: "root", Parent: 0, Shares: 1},
	}
	tr, err := NewTree(nodes)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/", "/0-root/", "/a-b/", "/a/", "/a/0-zed/", "/a/0-zed/gpu/", "/a/Z/"}
	if !slices.Equal(tr.Lineage, want) {
		t.Errorf("Lineage = %q, want %q", tr.Lineage, want)
	}
}

func TestAccumulate(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, test24_4(t))
	// §11.2 RawUsage column: root 240, aA 45, aD 110 (aDA 45 + uD1..3 65),
	// aDA 45, aG 20, aGA 10, aE 0.
	want := map[string]float64{"root": 240, "aA": 45, "aAA": 20, "aAB": 25, "aB": 25,
		"aC": 30, "aD": 110, "aDA": 45, "aE": 0, "aF": 0, "aG": 20, "aGA": 10, "root|u2": 10}
	for k, w := range want {
		if g := b.usage[b.pos[k]]; g != w {
			t.Errorf("Accumulate usage(%s) = %v, want %v", k, g, w)
		}
	}
	// In place: out may alias own.
	own := make([]float64, b.tree.Len())
	own[b.pos["aGA|uGA1"]] = 4
	own[b.pos["aG"]] = 1 // usage of a deleted user, kept by the account
	Accumulate(b.tree, own, own)
	if g := own[b.pos["aG"]]; g != 5 {
		t.Errorf("Accumulate in place usage(aG) = %v, want 5", g)
	}
	if g := own[0]; g != 5 {
		t.Errorf("Accumulate in place usage(root) = %v, want 5", g)
	}
}

// TestPureImports enforces STYLE.md: the math packages import neither os nor
// a logger, Arrow or ingest (test files excepted). Besides the standard
// library fairshare may import internal/treslist, the TRES-list formatter it
// shares with billing, internal/safetext, the name escaping sshare
// prints through, both pure string functions, and internal/release, the
// Slurm release series its sshare rules compare (pure too).
func TestPureImports(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"cmp": true, "errors": true, "fmt": true, "io": true, "math": true, "math/bits": true,
		"slices": true, "strconv": true, "strings": true,
		"github.com/fairledger/fairledger/internal/treslist": true,
		"github.com/fairledger/fairledger/internal/safetext": true,
		"github.com/fairledger/fairledger/internal/release":  true}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if !allowed[path] {
				t.Errorf("%s imports %q, want only %v", f, path, allowed)
			}
		}
	}
}

func TestPermute(t *testing.T) {
	t.Parallel()
	nodes := []Node{
		{Account: "b", Parent: 2, Shares: 1},            // input 0 → "/b/" position 2
		{Account: "b", User: "u", Parent: 0, Shares: 1}, // input 1 → "/b/0-u/" position 3
		{Account: "root", Parent: -1},                   // input 2 → "/" position 0
		{Account: "a", Parent: 2, Shares: 1},            // input 3 → "/a/" position 1
	}
	tr, err := NewTree(nodes)
	if err != nil {
		t.Fatal(err)
	}
	src := []float64{10, 11, 12, 13} // by input index
	dst := make([]float64, 4)
	tr.Permute(dst, src)
	if want := []float64{12, 13, 10, 11}; !slices.Equal(dst, want) {
		t.Errorf("Permute(%v) = %v, want %v", src, dst, want)
	}
}

// A name holding '/' (the issue: sshare's tree order was wrong for them)
// is one name: account "a/b", a sibling of "a", comes after the whole
// subtree of "a", not inside it as its lineage string "/a/b/" sorts.
// Names without '/' keep the lineage byte order: "lab-a" ('-' sorts
// before '/') before "lab" and its subtree.
func TestTreeOrderSlashInName(t *testing.T) {
	t.Parallel()
	nodes := []Node{
		{Account: "root", Parent: -1, Shares: 1},
		{Account: "a/b", Parent: 0, Shares: 1},
		{Account: "a/b", User: "u", Parent: 1, Shares: 1},
		{Account: "a", Parent: 0, Shares: 1},
		{Account: "x", Parent: 3, Shares: 1},
		{Account: "a", User: "v", Parent: 3, Shares: 1},
		{Account: "lab", Parent: 0, Shares: 1},
		{Account: "lab", User: "w", Parent: 6, Shares: 1},
		{Account: "lab-a", Parent: 0, Shares: 1},
	}
	tr, err := NewTree(nodes)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p := range tr.Account {
		got = append(got, tr.Account[p]+":"+tr.User[p])
	}
	want := []string{"root:", "a:", "a:v", "x:", "a/b:", "a/b:u", "lab-a:", "lab:", "lab:w"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("order %q, want %q", got, want)
	}
}
