package fairshare

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// spec is one association of a hand-written test tree, in the shape of the
// tables of Slurm's test24.x trees (docs/slurm-semantics.md §11): name, kind ("root", "account", "user"),
// parent account name, shares ("parent" for FairShare=parent) and, for users,
// raw usage. Accounts' usage is the sum of their users' (Accumulate).
type spec struct {
	name, kind, parent, shares string
	usage                      float64
	partition                  string
}

// built is a test tree together with its position lookup.
type built struct {
	tree  *Tree
	usage []float64 // by position, descendant-inclusive
	pos   map[string]int
}

// key names an association in built.pos: "acct" for accounts and
// "acct|user" (or "acct|user|part") for users.
func specKey(s spec) string {
	switch s.kind {
	case "user":
		k := s.parent + "|" + s.name
		if s.partition != "" {
			k += "|" + s.partition
		}
		return k
	default:
		return s.name
	}
}

func buildSpec(tb testing.TB, specs []spec) built {
	tb.Helper()
	acctIdx := map[string]int{}
	for i, s := range specs {
		if s.kind != "user" {
			acctIdx[s.name] = i
		}
	}
	nodes := make([]Node, len(specs))
	for i, s := range specs {
		nd := Node{Parent: -1}
		if s.kind == "user" {
			nd.Account, nd.User, nd.Partition = s.parent, s.name, s.partition
		} else {
			nd.Account = s.name
		}
		if s.kind != "root" {
			p, ok := acctIdx[s.parent]
			if !ok {
				tb.Fatalf("spec %q: unknown parent %q", s.name, s.parent)
			}
			nd.Parent = p
		}
		if s.shares == "parent" {
			nd.SharesParent = true
		} else {
			v, err := strconv.ParseInt(s.shares, 10, 64)
			if err != nil {
				tb.Fatalf("spec %q: shares %q: %v", s.name, s.shares, err)
			}
			nd.Shares = v
		}
		nodes[i] = nd
	}
	tree, err := NewTree(nodes)
	if err != nil {
		tb.Fatalf("NewTree: %v", err)
	}
	own := make([]float64, tree.Len())
	pos := map[string]int{}
	for i, s := range specs {
		p := int(tree.Pos[i])
		own[p] = s.usage
		pos[specKey(s)] = p
	}
	usage := make([]float64, tree.Len())
	Accumulate(tree, own, usage)
	return built{tree: tree, usage: usage, pos: pos}
}

// sshareLines formats r and returns the data lines (header dropped).
func sshareLines(tb testing.TB, b built, r *Result, opt SshareOptions) []string {
	tb.Helper()
	var buf bytes.Buffer
	if err := WriteSshare(&buf, b.tree, r, opt); err != nil {
		tb.Fatalf("WriteSshare: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if !opt.NoHeader {
		lines = lines[1:]
	}
	return lines
}

// f6 formats like C's %f, for expected values worked out by hand.
func f6(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// test24_4 is the Fair Tree tree of docs/slurm-semantics.md §11.2, row for row.
var test24_4 = []spec{
	{name: "root", kind: "root", shares: "0"},
	{name: "aA", kind: "account", parent: "root", shares: "40"},
	{name: "aAA", kind: "account", parent: "aA", shares: "30"},
	{name: "uAA1", kind: "user", parent: "aAA", shares: "1", usage: 20},
	{name: "aAB", kind: "account", parent: "aA", shares: "10"},
	{name: "uAB1", kind: "user", parent: "aAB", shares: "1", usage: 25},
	{name: "uAB2", kind: "user", parent: "aAB", shares: "1", usage: 0},
	{name: "aB", kind: "account", parent: "root", shares: "60"},
	{name: "aBA", kind: "account", parent: "aB", shares: "25"},
	{name: "uBA1", kind: "user", parent: "aBA", shares: "1", usage: 25},
	{name: "aBB", kind: "account", parent: "aB", shares: "35"},
	{name: "uBB1", kind: "user", parent: "aBB", shares: "1", usage: 0},
	{name: "aC", kind: "account", parent: "root", shares: "0"},
	{name: "uC1", kind: "user", parent: "aC", shares: "0", usage: 30},
	{name: "aD", kind: "account", parent: "root", shares: "50"},
	{name: "aDA", kind: "account", parent: "aD", shares: "parent"},
	{name: "uDA1", kind: "user", parent: "aDA", shares: "parent", usage: 10},
	{name: "uDA2", kind: "user", parent: "aDA", shares: "30", usage: 10},
	{name: "uDA3", kind: "user", parent: "aDA", shares: "50", usage: 25},
	{name: "uD1", kind: "user", parent: "aD", shares: "parent", usage: 20},
	{name: "uD2", kind: "user", parent: "aD", shares: "40", usage: 20},
	{name: "uD3", kind: "user", parent: "aD", shares: "50", usage: 25},
	{name: "aE", kind: "account", parent: "root", shares: "10"},
	{name: "aE1", kind: "user", parent: "aE", shares: "10", usage: 0},
	{name: "aE2", kind: "user", parent: "aE", shares: "10", usage: 0},
	{name: "u1", kind: "user", parent: "root", shares: "10", usage: 0},
	{name: "aF", kind: "account", parent: "root", shares: "20"},
	{name: "uF1", kind: "user", parent: "aF", shares: "10", usage: 0},
	{name: "uF2", kind: "user", parent: "aF", shares: "20", usage: 0},
	{name: "aG", kind: "account", parent: "root", shares: "8"},
	{name: "uG1", kind: "user", parent: "aG", shares: "10", usage: 10},
	{name: "aGA", kind: "account", parent: "aG", shares: "10"},
	{name: "uGA1", kind: "user", parent: "aGA", shares: "20", usage: 4},
	{name: "uGA2", kind: "user", parent: "aGA", shares: "20", usage: 6},
	{name: "u2", kind: "user", parent: "root", shares: "10", usage: 10},
}

// test24_1 is the classic tree of docs/slurm-semantics.md §11.1 (root shares 1).
var test24_1 = []spec{
	{name: "root", kind: "root", shares: "1"},
	{name: "AccountA", kind: "account", parent: "root", shares: "40"},
	{name: "AccountB", kind: "account", parent: "AccountA", shares: "30"},
	{name: "User1", kind: "user", parent: "AccountB", shares: "1", usage: 20},
	{name: "AccountC", kind: "account", parent: "AccountA", shares: "10"},
	{name: "User2", kind: "user", parent: "AccountC", shares: "1", usage: 25},
	{name: "User3", kind: "user", parent: "AccountC", shares: "1", usage: 0},
	{name: "AccountD", kind: "account", parent: "root", shares: "60"},
	{name: "AccountE", kind: "account", parent: "AccountD", shares: "25"},
	{name: "User4", kind: "user", parent: "AccountE", shares: "1", usage: 25},
	{name: "AccountF", kind: "account", parent: "AccountD", shares: "35"},
	{name: "User5", kind: "user", parent: "AccountF", shares: "1", usage: 0},
	{name: "AccountG", kind: "account", parent: "root", shares: "0"},
	{name: "User6", kind: "user", parent: "AccountG", shares: "0", usage: 30},
}

// trimAccount removes the sshare indentation from the first field.
func trimAccount(line string) string { return strings.TrimLeft(line, " ") }
