package fairshare

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Key identifies an association of one cluster across dumps of its tree, the
// way Slurm identifies it: an account association by its Account (account
// names are unique on a cluster; root is Account "root"), a user association
// by Account, User and Partition ("" when not per-partition). A user who
// moves to another account is a different association, and so is a user's
// per-partition association.
type Key struct {
	Account, User, Partition string
}

// String returns the key in sshare's Account|User|Partition style.
func (k Key) String() string {
	if k.User == "" {
		return k.Account
	}
	if k.Partition == "" {
		return k.Account + "|" + k.User
	}
	return k.Account + "|" + k.User + "|" + k.Partition
}

// keyAt returns the Key of tree position p.
func keyAt(t *Tree, p int) Key {
	return Key{Account: t.Account[p], User: t.User[p], Partition: t.Partition[p]}
}

// Universe is the union of the associations of a sequence of association
// trees of one cluster (its dated sacctmgr dumps): every association that
// appears in any of them, deleted ones included. decay computes usage per
// universe index, so an association's usage survives its deletion, and a
// Projection carries that usage onto each snapshot's Tree.
//
// Each association's parent in the universe is its direct parent in the
// newest tree that contains it: an account that moved between dumps hangs
// under its latest parent (a key whose parent changed keeps one universe
// index; only its parent is updated). These parents are acyclic whenever
// every tree is (the parent of X comes from the newest tree holding X, which
// also holds the parent, so walking up never goes back to an older tree and
// a cycle would have to lie within one tree).
//
// Keys are ordered like the rows of sshare for the universe tree: byte-wise
// by the lineage the universe parents give them (`/a/b/`, `/a/0-user/`,
// `/a/0-user/part/`), ties (possible only with '/' in names) broken by
// Account, User and Partition. The order therefore does not depend on the
// order of the trees' input nodes, and it is parents-before-children (a
// parent's lineage is a proper prefix of its child's), with the root at
// index 0. A Universe is read-only after NewUniverse and may be shared.
type Universe struct {
	keys   []Key
	parent []int32
	index  map[Key]int32
}

// NewUniverse builds the union of trees, which must all be trees of one
// cluster ordered oldest first (the order of ingest.ReadAssocDir): for a key
// found in several trees, the newest one decides its parent.
//
// It returns an error when trees is empty or holds a nil tree, when the
// trees' roots are different associations (Slurm's root is always the
// account "root"), or when a tree holds the same key twice (an account name
// under two parents; NewTree accepts that because the lineages differ, but
// Slurm's account names are unique per cluster). All problems are reported
// at once (errors.Join).
func NewUniverse(trees []*Tree) (*Universe, error) {
	if len(trees) == 0 {
		return nil, errors.New("association universe: no trees")
	}
	var errs []error
	for i, t := range trees {
		if t == nil || t.Len() == 0 {
			errs = append(errs, fmt.Errorf("tree %d: empty", i))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("association universe: %w", errors.Join(errs...))
	}
	root := keyAt(trees[len(trees)-1], 0)
	for i, t := range trees {
		if k := keyAt(t, 0); k != root {
			errs = append(errs, fmt.Errorf("tree %d: root %q differs from the newest tree's root %q", i, k, root))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("association universe: %w", errors.Join(errs...))
	}

	// Keys numbered by first appearance; parent overwritten by every newer
	// tree, so the newest one wins. seen[k] is the last tree holding key k,
	// to catch a key twice in one tree.
	var (
		keys   []Key
		parent []int32
		seen   []int32
		slot   []int32 // tree position -> first-appearance number
		first  = make(map[Key]int32, trees[len(trees)-1].Len())
	)
	for ti, t := range trees {
		n := t.Len()
		slot = slices.Grow(slot[:0], n)[:n]
		for p := 0; p < n; p++ {
			k := keyAt(t, p)
			j, ok := first[k]
			if !ok {
				j = int32(len(keys))
				first[k] = j
				keys = append(keys, k)
				parent = append(parent, -1)
				seen = append(seen, -1)
			}
			if seen[j] == int32(ti) {
				errs = append(errs, fmt.Errorf("tree %d: association %s appears twice (lineage %s)", ti, k, t.Lineage[p]))
				continue
			}
			seen[j] = int32(ti)
			slot[p] = j
			if par := t.Parent[p]; par >= 0 {
				parent[j] = slot[par]
			} else {
				parent[j] = -1
			}
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("association universe: %w", errors.Join(errs...))
	}

	// Lineages along the universe parents. Walk up to the first key whose
	// lineage is known, then fill the path top-down.
	n := len(keys)
	lineage := make([]string, n)
	var path []int32
	for i := range keys {
		path = path[:0]
		j := int32(i)
		for lineage[j] == "" {
			path = append(path, j)
			if parent[j] < 0 || len(path) > n {
				break
			}
			j = parent[j]
		}
		if len(path) > n {
			return nil, fmt.Errorf("association universe: parent chain of %s has a cycle", keys[i])
		}
		for m := len(path) - 1; m >= 0; m-- {
			q := path[m]
			k := keys[q]
			switch {
			case parent[q] < 0:
				lineage[q] = "/"
			case k.User == "":
				lineage[q] = lineage[parent[q]] + k.Account + "/"
			default:
				l := lineage[parent[q]] + "0-" + k.User + "/"
				if k.Partition != "" {
					l += k.Partition + "/"
				}
				lineage[q] = l
			}
		}
	}

	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(
			strings.Compare(lineage[a], lineage[b]),
			strings.Compare(keys[a].Account, keys[b].Account),
			strings.Compare(keys[a].User, keys[b].User),
			strings.Compare(keys[a].Partition, keys[b].Partition),
		)
	})
	rank := make([]int32, n) // first-appearance number -> universe index
	for u, j := range order {
		rank[j] = int32(u)
	}
	un := &Universe{
		keys:   make([]Key, n),
		parent: make([]int32, n),
		index:  make(map[Key]int32, n),
	}
	for u, j := range order {
		un.keys[u] = keys[j]
		un.index[keys[j]] = int32(u)
		if parent[j] < 0 {
			un.parent[u] = -1
		} else {
			un.parent[u] = rank[parent[j]]
		}
	}
	return un, nil
}

// Len returns the number of associations in the universe.
func (u *Universe) Len() int { return len(u.keys) }

// Keys returns the associations by universe index. The slice is the
// Universe's own and must not be modified.
func (u *Universe) Keys() []Key { return u.keys }

// Parents returns each association's universe parent index (-1 for the
// root); Parents()[i] < i. This is the parent slice decay takes when the
// caller wants usage propagated up the universe tree; to get each
// association's own usage (what Projection.RawUsage takes) run decay with
// every parent -1 instead. The slice is the Universe's own and must not be
// modified.
func (u *Universe) Parents() []int32 { return u.parent }

// Index returns the universe index of k and whether the universe has it.
func (u *Universe) Index(k Key) (int32, bool) {
	i, ok := u.index[k]
	return i, ok
}

// Projection maps a Universe onto one snapshot Tree. Build it once per
// association snapshot with Universe.Project and call RawUsage for every
// usage snapshot that uses that tree. It is read-only after Project.
type Projection struct {
	// Tree is the snapshot tree the projection credits usage to.
	Tree *Tree
	// Credit[i] is the tree position that receives the own usage of
	// universe association i: its own position when the tree has the
	// association, else the position of its nearest universe ancestor
	// that the tree has — the root at worst. This is Slurm's rule that
	// the usage of a deleted association stays with its account
	// (docs/slurm-semantics.md §4.4).
	Credit []int32
	// Index[p] is the universe index of tree position p, or -1 when the
	// universe does not know the association (it then receives only the
	// usage of its tree descendants).
	Index []int32
	// Folded is the number of universe associations the tree does not
	// have, whose usage is credited to an ancestor.
	Folded int
}

// Project precomputes where each universe association's usage goes in t.
// Presence is decided by Key; the tree's own parent chain (not the
// universe's) is what RawUsage accumulates along, so an account that moved
// takes its whole subtree's usage to its parent in t. When t has the same key
// twice, the first position wins.
func (u *Universe) Project(t *Tree) *Projection {
	n := t.Len()
	pr := &Projection{
		Tree:   t,
		Credit: make([]int32, len(u.keys)),
		Index:  make([]int32, n),
	}
	for i := range pr.Credit {
		pr.Credit[i] = -1
	}
	for p := 0; p < n; p++ {
		i, ok := u.index[keyAt(t, p)]
		if !ok {
			pr.Index[p] = -1
			continue
		}
		pr.Index[p] = i
		if pr.Credit[i] < 0 {
			pr.Credit[i] = int32(p)
		}
	}
	// Parents come first, so an absent key's parent is already resolved.
	for i, c := range pr.Credit {
		if c >= 0 {
			continue
		}
		pr.Folded++
		if par := u.parent[i]; par >= 0 {
			pr.Credit[i] = pr.Credit[par]
		} else {
			pr.Credit[i] = 0
		}
	}
	return pr
}

// RawUsage turns own usage by universe index (each association's own jobs,
// not summed up any tree) into the raw usage FairTree, Classic and
// DepthOblivious take, by tree position: every universe association's usage
// is added at its Credit position, in universe order, and the result is
// summed up the tree's direct parent chain (Accumulate), so an account holds
// its subtree's usage and the root the cluster total. The total of own is
// preserved whatever the tree lacks.
//
// own must have the Universe's length and out the tree's; they must not
// alias. RawUsage does not allocate, and the summation order is fixed, so
// the result is bit-for-bit reproducible.
func (p *Projection) RawUsage(own, out []float64) {
	n := p.Tree.Len()
	if len(own) != len(p.Credit) || len(out) != n {
		panic(fmt.Sprintf("fairshare: RawUsage: own of length %d for a universe of %d, out of length %d for a tree of %d",
			len(own), len(p.Credit), len(out), n))
	}
	clear(out)
	for i, c := range p.Credit {
		out[c] += own[i]
	}
	Accumulate(p.Tree, out, out)
}
