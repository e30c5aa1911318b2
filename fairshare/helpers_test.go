package fairshare

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/internal/golden"
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

// test24_4 is the Fair Tree tree of Slurm's test24.4 with its usage, row for
// row: fairshare/testdata/test24_4.txt (docs/slurm-semantics.md §11.2).
func test24_4(tb testing.TB) []spec { return caseSpecs(golden.Load(tb, test24_4File)) }

// test24_1 is the classic tree of Slurm's test24.1 (root shares 1) with its
// usage: fairshare/testdata/test24_1.txt (docs/slurm-semantics.md §11.1).
func test24_1(tb testing.TB) []spec { return caseSpecs(golden.Load(tb, test24_1File)) }

// The golden cases of Slurm's test trees, as internal/golden.Load names them.
const (
	test24_4File = "fairshare/testdata/test24_4.txt"
	test24_1File = "fairshare/testdata/test24_1.txt"
)

// caseSpecs returns a golden case's associations as specs, in its order.
func caseSpecs(c *golden.Case) []spec {
	specs := make([]spec, len(c.Assocs))
	for i, a := range c.Assocs {
		kind := "account"
		switch {
		case a.IsRoot():
			kind = "root"
		case a.IsUser():
			kind = "user"
		}
		specs[i] = spec{name: a.Name(), kind: kind, parent: a.Parent(), shares: a.Share, usage: a.RawUsage}
	}
	return specs
}

// trimAccount removes the sshare indentation from the first field.
func trimAccount(line string) string { return strings.TrimLeft(line, " ") }
