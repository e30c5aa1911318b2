package decay

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Assoc is one association of the caller's tree, given in decay's index
// order: parents before children, so Parent < its own index.
type Assoc struct {
	// Account is the account name. For an account association it is the
	// account itself; for a user association, the account the user
	// belongs to (the name of its parent association).
	Account string
	// User is the user name; empty for an account association (and root).
	User string
	// Partition is set only on per-partition user associations.
	Partition string
	// Parent is the index of the direct parent association (an account
	// association), or −1 for the root.
	Parent int32
}

// Resolver maps the (cluster, account, user, partition) of a job to the
// index of the association it is charged to (docs/slurm-semantics.md §4.4):
//
//   - the per-partition user association (account, user, partition) when
//     one exists for the job's partition;
//   - else the user association (account, user, "");
//   - else, when the account is in the tree (the user's association was
//     deleted, or never existed), the account's association, counted as
//     ReasonUserToAccount;
//   - else the job is not charged (ReasonUnknownAccount).
//
// A Resolver is immutable after NewResolver and safe for concurrent use.
type Resolver struct {
	cluster string
	parent  []int32
	// accountID numbers the account associations densely in tree order;
	// accountAssoc[id] is the association index of account id.
	accountID    map[string]int32
	accountAssoc []int32
	// userID numbers the users densely; partID numbers the partitions of
	// per-partition associations from 1 (0 stands for "no partition").
	userID map[string]int32
	partID map[string]int32
	// The user associations grouped by user (CSR): user u's are
	// userKey[userFirst[u]:userFirst[u+1]], sorted, with
	// key = accountID<<32 | partID and userAssoc holding their indices.
	userFirst []int32
	userKey   []uint64
	userAssoc []int32
}

// userKeyOf packs an account id and a partition id into a sort key.
func userKeyOf(account, part int32) uint64 { return uint64(uint32(account))<<32 | uint64(uint32(part)) }

// NewResolver checks the association tree of cluster and indexes it. It
// reports every problem at once: an empty cluster, account or (for an
// account association with a partition) misplaced partition; a parent that
// is neither −1 nor an earlier index; a user association whose parent is
// not its own account's association, or that has no parent; an account
// association under a user association; and duplicate associations.
func NewResolver(cluster string, assocs []Assoc) (*Resolver, error) {
	var errs []error
	if cluster == "" {
		errs = append(errs, errors.New("empty cluster name"))
	}
	if len(assocs) > math.MaxInt32 {
		return nil, fmt.Errorf("association tree of cluster %q: %d associations is too many", cluster, len(assocs))
	}
	r := &Resolver{
		cluster:   cluster,
		parent:    make([]int32, len(assocs)),
		accountID: make(map[string]int32),
		userID:    make(map[string]int32),
		partID:    make(map[string]int32),
	}
	type userEntry struct {
		user  int32
		key   uint64
		assoc int32
	}
	var users []userEntry
	seenUser := make(map[Assoc]int) // key with Parent zeroed → first index
	for i, a := range assocs {
		r.parent[i] = a.Parent
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("association %d (%s): %s", i, a.describe(), fmt.Sprintf(format, args...)))
		}
		if a.Account == "" {
			bad("empty account name")
		}
		if a.User == "" && a.Partition != "" {
			bad("partition on an account association (only user associations have one)")
		}
		p := a.Parent
		validParent := p >= 0 && int(p) < i
		switch {
		case p == -1 && a.User != "":
			bad("user association without a parent account")
		case p != -1 && !validParent:
			bad("parent %d is neither −1 nor an earlier index", p)
		case validParent && assocs[p].User != "":
			bad("parent %d is a user association", p)
		case validParent && a.User != "" && assocs[p].Account != a.Account:
			bad("parent %d is account %q, want the user's account %q", p, assocs[p].Account, a.Account)
		}
		if a.User == "" {
			if j, dup := r.accountID[a.Account]; dup {
				bad("duplicate of association %d", r.accountAssoc[j])
				continue
			}
			r.accountID[a.Account] = int32(len(r.accountAssoc))
			r.accountAssoc = append(r.accountAssoc, int32(i))
			continue
		}
		k := Assoc{Account: a.Account, User: a.User, Partition: a.Partition}
		if j, dup := seenUser[k]; dup {
			bad("duplicate of association %d", j)
			continue
		}
		seenUser[k] = i
		users = append(users, userEntry{user: intern(r.userID, a.User, 0), assoc: int32(i)})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("association tree of cluster %q: %w", cluster, errors.Join(errs...))
	}
	// Every user association's account is known now (its parent).
	for n := range users {
		a := assocs[users[n].assoc]
		part := int32(0)
		if a.Partition != "" {
			part = intern(r.partID, a.Partition, 1)
		}
		users[n].key = userKeyOf(r.accountID[a.Account], part)
	}
	slices.SortFunc(users, func(x, y userEntry) int {
		if x.user != y.user {
			return int(x.user) - int(y.user)
		}
		if x.key != y.key {
			if x.key < y.key {
				return -1
			}
			return 1
		}
		return 0
	})
	r.userFirst = make([]int32, len(r.userID)+1)
	r.userKey = make([]uint64, len(users))
	r.userAssoc = make([]int32, len(users))
	for n, e := range users {
		r.userFirst[e.user+1]++
		r.userKey[n] = e.key
		r.userAssoc[n] = e.assoc
	}
	for u := range len(r.userID) {
		r.userFirst[u+1] += r.userFirst[u]
	}
	return r, nil
}

// intern returns name's id in ids, adding it as base+len(ids) if new.
func intern(ids map[string]int32, name string, base int32) int32 {
	if id, ok := ids[name]; ok {
		return id
	}
	id := base + int32(len(ids))
	ids[name] = id
	return id
}

// describe names an association for error messages.
func (a Assoc) describe() string {
	s := fmt.Sprintf("account %q", a.Account)
	if a.User != "" {
		s += fmt.Sprintf(", user %q", a.User)
	}
	if a.Partition != "" {
		s += fmt.Sprintf(", partition %q", a.Partition)
	}
	return s
}

// Cluster returns the cluster whose jobs the resolver charges.
func (r *Resolver) Cluster() string { return r.cluster }

// Len returns the number of associations.
func (r *Resolver) Len() int { return len(r.parent) }

// Parents returns a copy of the direct parent index of every association
// (−1 for the root), for Window.Parent.
func (r *Resolver) Parents() []int32 { return slices.Clone(r.parent) }

// Lookup returns the association a job of the resolver's cluster with the
// given account, user and partition is charged to, and why, when it is not
// the user's own association: ReasonUserToAccount with the account's
// association, ReasonNoAccount or ReasonUnknownAccount with −1. The reason
// is "" when the job is charged to its user association.
func (r *Resolver) Lookup(account, user, partition string) (int32, string) {
	if account == "" {
		return -1, ReasonNoAccount
	}
	a, ok := r.accountID[account]
	if !ok {
		return -1, ReasonUnknownAccount
	}
	u, ok := r.userID[user]
	if !ok {
		u = -1
	}
	p := r.partID[partition] // 0 when absent or ""
	if i := r.find(u, a, p); i >= 0 {
		return i, ""
	}
	return r.accountAssoc[a], ReasonUserToAccount
}

// find returns the user association of user u (−1: none) under account a
// for partition p (0: none): the per-partition one if it exists, else the
// plain one, else −1.
func (r *Resolver) find(u, a, p int32) int32 {
	if u < 0 {
		return -1
	}
	lo, hi := r.userFirst[u], r.userFirst[u+1]
	keys := r.userKey[lo:hi]
	if p > 0 {
		if n, ok := slices.BinarySearch(keys, userKeyOf(a, p)); ok {
			return r.userAssoc[int(lo)+n]
		}
	}
	if n, ok := slices.BinarySearch(keys, userKeyOf(a, 0)); ok {
		return r.userAssoc[int(lo)+n]
	}
	return -1
}
