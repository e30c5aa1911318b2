package golden

import (
	"strconv"
	"testing"
)

// Spec is one association of a test tree, in the shape of the tables of
// Slurm's test24.x trees (docs/slurm-semantics.md §11): the tests of
// fairshare, export/record and cmd/fairledger write their trees as specs
// by hand or read them from a case (Case.Specs), and build them with
// Nodes.
type Spec struct {
	// Name is the account's name, or the user's for a user association.
	Name string
	// Kind is KindRoot, KindAccount or KindUser.
	Kind string
	// Parent is the name of the parent account ("" for root; a user
	// association's account).
	Parent string
	// Shares is the raw shares as sacctmgr writes them: an integer or
	// "parent" (FairShare=parent).
	Shares string
	// Usage is a user association's own raw usage (an account's is the
	// sum of its users').
	Usage float64
	// Partition is a user association's partition ("" for none).
	Partition string
}

// The kinds of a Spec.
const (
	KindRoot    = "root"
	KindAccount = "account"
	KindUser    = "user"
)

// Specs returns the case's associations as specs, in its order.
func (c *Case) Specs() []Spec {
	specs := make([]Spec, len(c.Assocs))
	for i, a := range c.Assocs {
		kind := KindAccount
		switch {
		case a.IsRoot():
			kind = KindRoot
		case a.IsUser():
			kind = KindUser
		}
		specs[i] = Spec{Name: a.Name(), Kind: kind, Parent: a.Parent(), Shares: a.Share, Usage: a.RawUsage}
	}
	return specs
}

// Node is a spec placed in its tree: the fields of a fairshare.Node
// (which golden cannot import: fairshare's own tests use golden), to copy
// into one.
type Node struct {
	// Account, User and Partition name the association (User "" for an
	// account).
	Account, User, Partition string
	// Parent is the index in the specs of the parent account, -1 for
	// root.
	Parent int
	// Shares is the raw shares, 0 when SharesParent.
	Shares int64
	// SharesParent is FairShare=parent.
	SharesParent bool
}

// Nodes places each of specs in its tree, in order: its parent's index
// among the accounts of specs and its shares. It fails tb on a parent that
// is not an account of specs or shares that are neither an integer nor
// "parent".
func Nodes(tb testing.TB, specs []Spec) []Node {
	tb.Helper()
	accounts := map[string]int{}
	for i, s := range specs {
		if s.Kind != KindUser {
			accounts[s.Name] = i
		}
	}
	nodes := make([]Node, len(specs))
	for i, s := range specs {
		nd := Node{Account: s.Name, Parent: -1}
		if s.Kind == KindUser {
			nd.Account, nd.User, nd.Partition = s.Parent, s.Name, s.Partition
		}
		if s.Kind != KindRoot {
			p, ok := accounts[s.Parent]
			if !ok {
				tb.Fatalf("spec %q: unknown parent %q", s.Name, s.Parent)
			}
			nd.Parent = p
		}
		if s.Shares == "parent" {
			nd.SharesParent = true
		} else {
			v, err := strconv.ParseInt(s.Shares, 10, 64)
			if err != nil {
				tb.Fatalf("spec %q: shares %q: %v", s.Name, s.Shares, err)
			}
			nd.Shares = v
		}
		nodes[i] = nd
	}
	return nodes
}
