package fairshare

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/internal/golden"
)

// spec is one association of a hand-written test tree (golden.Spec).
// Accounts' usage is the sum of their users' (Accumulate).
type spec = golden.Spec

// built is a test tree together with its position lookup.
type built struct {
	tree  *Tree
	usage []float64 // by position, descendant-inclusive
	pos   map[string]int
}

// key names an association in built.pos: "acct" for accounts and
// "acct|user" (or "acct|user|part") for users.
func specKey(s spec) string {
	switch s.Kind {
	case "user":
		k := s.Parent + "|" + s.Name
		if s.Partition != "" {
			k += "|" + s.Partition
		}
		return k
	default:
		return s.Name
	}
}

func buildSpec(tb testing.TB, specs []spec) built {
	tb.Helper()
	nodes := specNodes(tb, specs)
	tree, err := NewTree(nodes)
	if err != nil {
		tb.Fatalf("NewTree: %v", err)
	}
	own := make([]float64, tree.Len())
	pos := map[string]int{}
	for i, s := range specs {
		p := int(tree.Pos[i])
		own[p] = s.Usage
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
func test24_4(tb testing.TB) []spec { return golden.Load(tb, test24_4File).Specs() }

// test24_1 is the classic tree of Slurm's test24.1 (root shares 1) with its
// usage: fairshare/testdata/test24_1.txt (docs/slurm-semantics.md §11.1).
func test24_1(tb testing.TB) []spec { return golden.Load(tb, test24_1File).Specs() }

// The golden cases of Slurm's test trees, as internal/golden.Load names them.
const (
	test24_4File = "fairshare/testdata/test24_4.txt"
	test24_1File = "fairshare/testdata/test24_1.txt"
)

// specNodes returns the nodes of specs, in their order (golden.Nodes).
func specNodes(tb testing.TB, specs []spec) []Node {
	tb.Helper()
	placed := golden.Nodes(tb, specs)
	nodes := make([]Node, len(placed))
	for i, n := range placed {
		nodes[i] = Node{Account: n.Account, User: n.User, Partition: n.Partition, Parent: n.Parent,
			Shares: n.Shares, SharesParent: n.SharesParent}
	}
	return nodes
}

// trimAccount removes the sshare indentation from the first field.
func trimAccount(line string) string { return strings.TrimLeft(line, " ") }
