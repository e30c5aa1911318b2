package ingest

import (
	"errors"
	"fmt"
	"math"

	"github.com/fairledger/fairledger/fairshare"
)

// Clusters returns the cluster names of a's rows, each once, in row order
// (byte order, since Rows are sorted by cluster). An input without a Cluster
// column gives the single name "".
func (a *Associations) Clusters() []string {
	var out []string
	for i := range a.Rows {
		if c := a.Rows[i].Cluster; len(out) == 0 || out[len(out)-1] != c {
			out = append(out, c)
		}
	}
	return out
}

// Nodes converts the rows of one cluster into fairshare.Nodes, the input of
// fairshare.NewTree, in row order: the root row becomes the node with Parent
// -1, an account row's Parent is the index of its ParentName account, and a
// user row's (per-partition ones included) the index of its Account; Shares
// are copied, and FairShare=parent becomes SharesParent with Shares 0.
//
// Rows from ParseAssoc, ParseAssocScript and ReadAssocFile are validated, so
// for them Nodes fails only for a cluster that has no rows. For hand-built
// Associations it also reports — all at once, with each row's file and line
// — a second root, a missing root, a duplicate account and a parent account
// that does not exist; the tree structure itself (cycles, duplicate users)
// is left to NewTree.
func (a *Associations) Nodes(cluster string) ([]fairshare.Node, error) {
	var rows []*Association
	for i := range a.Rows {
		if a.Rows[i].Cluster == cluster {
			rows = append(rows, &a.Rows[i])
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("association nodes of %s: no associations for cluster %q", a.File, cluster)
	}
	where := func(r *Association) string {
		if r.Line > 0 {
			return fmt.Sprintf("%s:%d", r.File, r.Line)
		}
		return r.File
	}
	var errs []error
	acct := make(map[string]int, len(rows))
	root := -1
	for i, r := range rows {
		switch {
		case r.IsUser():
		case r.IsRoot():
			if root >= 0 {
				errs = append(errs, fmt.Errorf("%s: second root account", where(r)))
				continue
			}
			root = i
			acct[r.Account] = i
		default:
			if j, ok := acct[r.Account]; ok {
				errs = append(errs, fmt.Errorf("%s: account %q again (first at %s)", where(r), r.Account, where(rows[j])))
				continue
			}
			acct[r.Account] = i
		}
	}
	if root < 0 {
		errs = append(errs, fmt.Errorf("cluster %q has no root account", cluster))
	}
	nodes := make([]fairshare.Node, len(rows))
	for i, r := range rows {
		nd := fairshare.Node{Account: r.Account, User: r.User, Partition: r.Partition, Parent: -1,
			Shares: r.Shares, SharesParent: r.SharesParent, GrpTRESMins: r.GrpTRESMins, Line: int32(min(r.Line, math.MaxInt32))}
		if r.SharesParent {
			nd.Shares = 0
		}
		if r.IsRoot() && i != root {
			continue // reported above
		}
		if i != root {
			parent := r.Parent
			if r.IsUser() {
				parent = r.Account
			}
			j, ok := acct[parent]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: parent account %q of %s not found", where(r), parent, assocRowName(r)))
				continue
			}
			nd.Parent = j
		}
		nodes[i] = nd
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("association nodes of %s, cluster %q: %w", a.File, cluster, errors.Join(errs...))
	}
	return nodes, nil
}

// assocRowName names a row in messages: account a, user u of account a.
func assocRowName(r *Association) string {
	if r.IsUser() {
		return fmt.Sprintf("user %q of account %q", r.User, r.Account)
	}
	return fmt.Sprintf("account %q", r.Account)
}
