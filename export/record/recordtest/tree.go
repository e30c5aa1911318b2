package recordtest

import (
	"testing"

	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/internal/golden"
)

// Tree builds the fair-share tree of specs (a hand-written tree, or a
// golden case's Specs) and its descendant-inclusive usage by position,
// for the tests outside fairshare that turn trees into rows. (fairshare's
// own tests build theirs from golden.Nodes: they cannot import this
// package, which imports fairshare.)
func Tree(tb testing.TB, specs []golden.Spec) (*fairshare.Tree, []float64) {
	tb.Helper()
	placed := golden.Nodes(tb, specs)
	nodes := make([]fairshare.Node, len(placed))
	for i, n := range placed {
		nodes[i] = fairshare.Node{Account: n.Account, User: n.User, Partition: n.Partition, Parent: n.Parent,
			Shares: n.Shares, SharesParent: n.SharesParent}
	}
	t, err := fairshare.NewTree(nodes)
	if err != nil {
		tb.Fatalf("NewTree: %v", err)
	}
	own := make([]float64, t.Len())
	for i, s := range specs {
		own[t.Pos[i]] = s.Usage
	}
	usage := make([]float64, t.Len())
	fairshare.Accumulate(t, own, usage)
	return t, usage
}
