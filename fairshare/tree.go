package fairshare

import (
	"errors"
	"fmt"
	"slices"
)

// NoVal is Slurm's NO_VAL sentinel (4294967294) as a float. Fair Tree gives a
// FairShare=parent account this LevelFS for sorting, and Fair Tree's root
// NormShares is shares/NoVal (docs/slurm-semantics.md §4.2, §7.2).
const NoVal = 4294967294.0

// Node is one association as read from `sacctmgr show assoc`: the input of
// NewTree. An account association has an empty User; a user association names
// the account it belongs to in Account and may be restricted to a Partition.
type Node struct {
	// Account is the account name (for a user association: its account).
	Account string
	// User is the user name; empty for account associations (and root).
	User string
	// Partition is set only for per-partition user associations.
	Partition string
	// Parent is the index in the NewTree input of the direct parent
	// association (always an account), or -1 for the root.
	Parent int
	// Shares is the raw share count (sacctmgr Share); ignored when
	// SharesParent is set.
	Shares int64
	// SharesParent marks FairShare=parent (sacctmgr Share "parent").
	SharesParent bool
	// GrpTRESMins is the association's GrpTRESMins limit as sacctmgr prints
	// it, "" for none. Fair share ignores it; sshare -l prints it.
	GrpTRESMins string
	// Line is the association's line in the sacctmgr dump (or script) it
	// was read from, 0 when not known: slurmdbd's order, in which sshare
	// of 22.05–23.02 prints one user's per-partition rows (NameOrder).
	Line int32
}

// Tree is an association tree as a struct of slices indexed by tree position.
// Positions are in sshare row order (lineage byte order), a depth-first
// pre-order: position 0 is the root and every parent precedes its children.
// A Tree is built once per association snapshot by NewTree and is read-only
// afterwards, so it may be shared by concurrent computations.
type Tree struct {
	// Account, User, Partition and Lineage are the names of each association;
	// Lineage is Slurm's `/acct/sub/` or `/acct/0-user/[part/]` path.
	Account, User, Partition, Lineage []string
	// GrpTRESMins is each association's GrpTRESMins limit ("" for none).
	GrpTRESMins []string
	// Line is each association's Node.Line (0: not known).
	Line []int32
	// Input maps a position to the index of the association in the
	// NewTree argument; Pos is the inverse.
	Input, Pos []int32
	// Parent is the direct parent position (-1 for root); usage flows up
	// this chain.
	Parent []int32
	// FSParent is the fair-share parent position (§4.1): the first ancestor
	// that is not FairShare=parent (-1 for root).
	FSParent []int32
	// Depth is 0 for root, 1 for its children, and so on (direct chain);
	// sshare indents the Account column by Depth spaces.
	Depth []int32
	// IsUser reports a user association.
	IsUser []bool
	// Shares is the raw share count; SharesParent marks FairShare=parent.
	Shares       []int64
	SharesParent []bool
	// LevelShares is Slurm's level_shares: the sum of Shares over the
	// association's fair-share siblings (itself included) that are not
	// FairShare=parent. Root has none (0; see §4.1).
	LevelShares []int64
	// FSChildren lists, for each position p, its fair-share children in
	// position order as FSChildren[FSChildStart[p]:FSChildStart[p+1]].
	FSChildren   []int32
	FSChildStart []int32
	// Users is the number of user associations (Fair Tree's N, §7.3).
	Users int

	// classicShares is S of §4.2 (root 1); treeShares is S of §4.2.
	classicShares []float64
	treeShares    []float64
}

// Len returns the number of associations in the tree.
func (t *Tree) Len() int { return len(t.Parent) }

// NewTree validates the association list and builds the Tree. It checks that
// there is exactly one root, that every parent index exists and is an account,
// that there are no cycles, no negative shares and no duplicate associations,
// and reports every problem found at once (errors.Join). It computes the
// position order, depth, fs parent (§4.1), fs children, level_shares, the
// normalized shares of both share models and the user count.
func NewTree(nodes []Node) (*Tree, error) {
	n := len(nodes)
	if n == 0 {
		return nil, errors.New("association tree: no associations")
	}
	if n > 1<<31-2 {
		return nil, fmt.Errorf("association tree: %d associations is too many", n)
	}
	root, errs := checkNodes(nodes)
	if len(errs) > 0 {
		return nil, fmt.Errorf("association tree: %w", errors.Join(errs...))
	}
	depth, errs := depths(nodes, root)
	if len(errs) > 0 {
		return nil, fmt.Errorf("association tree: %w", errors.Join(errs...))
	}
	lineage, comps, order := lineages(nodes, depth)
	if errs := checkOrder(nodes, order, comps, lineage); len(errs) > 0 {
		return nil, fmt.Errorf("association tree: %w", errors.Join(errs...))
	}
	t := newTree(nodes, order, lineage, depth)
	t.fillFSChildren()
	t.fillLevelShares()
	t.computeShares()
	return t, nil
}

// nodeName names association i of the NewTree input in error messages.
func nodeName(nodes []Node, i int) string {
	if nodes[i].User != "" {
		return fmt.Sprintf("association %d (account %q, user %q)", i, nodes[i].Account, nodes[i].User)
	}
	return fmt.Sprintf("association %d (account %q)", i, nodes[i].Account)
}

// checkNodes checks each association on its own and against its parent
// index: one root (an account, not FairShare=parent), parents in range and
// accounts, a non-empty account name, a partition only on a user
// association, shares in Slurm's range. It returns the root's index (-1
// without one) and every problem found.
func checkNodes(nodes []Node) (root int, errs []error) {
	n := len(nodes)
	root = -1
	for i, nd := range nodes {
		switch {
		case nd.Parent == -1:
			if root >= 0 {
				errs = append(errs, fmt.Errorf("%s: second root (first is association %d)", nodeName(nodes, i), root))
				continue
			}
			root = i
			if nd.User != "" {
				errs = append(errs, fmt.Errorf("%s: root must be an account", nodeName(nodes, i)))
			}
			if nd.SharesParent {
				errs = append(errs, fmt.Errorf("%s: root cannot have FairShare=parent", nodeName(nodes, i)))
			}
		case nd.Parent < 0 || nd.Parent >= n:
			errs = append(errs, fmt.Errorf("%s: parent index %d out of range [0,%d)", nodeName(nodes, i), nd.Parent, n))
		case nodes[nd.Parent].User != "":
			errs = append(errs, fmt.Errorf("%s: parent %s is a user", nodeName(nodes, i), nodeName(nodes, nd.Parent)))
		}
		if nd.Account == "" {
			errs = append(errs, fmt.Errorf("%s: empty account name", nodeName(nodes, i)))
		}
		if nd.Partition != "" && nd.User == "" {
			errs = append(errs, fmt.Errorf("%s: partition %q on an account association", nodeName(nodes, i), nd.Partition))
		}
		if !nd.SharesParent && (nd.Shares < 0 || nd.Shares > 0x7FFFFFFE) {
			errs = append(errs, fmt.Errorf("%s: shares %d out of range [0,2147483646]", nodeName(nodes, i), nd.Shares))
		}
	}
	if root < 0 {
		errs = append(errs, errors.New("association tree: no root (no association with parent -1)"))
	}
	return root, errs
}

// depths returns each association's depth along the direct chain, with
// cycle detection: every association on a parent chain that has a cycle
// is reported.
func depths(nodes []Node, root int) ([]int32, []error) {
	n := len(nodes)
	var errs []error
	// state 0 = unvisited, 1 = on the current path, 2 = done.
	depth := make([]int32, n)
	state := make([]uint8, n)
	state[root] = 2
	var path []int
	for i := range nodes {
		path = path[:0]
		j := i
		for state[j] == 0 {
			state[j] = 1
			path = append(path, j)
			j = nodes[j].Parent
		}
		if state[j] == 1 {
			errs = append(errs, fmt.Errorf("%s: parent chain has a cycle", nodeName(nodes, j)))
			for _, k := range path {
				state[k] = 2
				depth[k] = -1
			}
			continue
		}
		d := depth[j]
		for k := len(path) - 1; k >= 0; k-- {
			if d >= 0 {
				d++
			}
			depth[path[k]] = d
			state[path[k]] = 2
		}
	}
	return depth, errs
}

// lineages builds each association's lineage, in depth order so a
// parent's lineage exists first, and its components ("acct", "0-user",
// "part"), which the position order compares rather than the lineage
// string: a name may hold a '/' itself. It returns them with order, the
// input indexes in position order (sshare's row order, comparePaths).
func lineages(nodes []Node, depth []int32) (lineage []string, comps [][]string, order []int32) {
	n := len(nodes)
	byDepth := make([]int32, n)
	for i := range byDepth {
		byDepth[i] = int32(i)
	}
	slices.SortStableFunc(byDepth, func(a, b int32) int { return int(depth[a] - depth[b]) })
	lineage = make([]string, n)
	comps = make([][]string, n)
	for _, i := range byDepth {
		nd := nodes[i]
		switch {
		case nd.Parent == -1:
			lineage[i] = "/"
		case nd.User != "":
			l := lineage[nd.Parent] + "0-" + nd.User + "/"
			p := append(slices.Clip(comps[nd.Parent]), "0-"+nd.User)
			if nd.Partition != "" {
				l += nd.Partition + "/"
				p = append(p, nd.Partition)
			}
			lineage[i], comps[i] = l, p
		default:
			lineage[i] = lineage[nd.Parent] + nd.Account + "/"
			comps[i] = append(slices.Clip(comps[nd.Parent]), nd.Account)
		}
	}
	order = byDepth // reuse: becomes position -> input
	slices.SortFunc(order, func(a, b int32) int { return comparePaths(comps[a], comps[b]) })
	return lineage, comps, order
}

// checkOrder reports associations with the same lineage (neighbours in
// position order) and user associations whose account differs from their
// parent's.
func checkOrder(nodes []Node, order []int32, comps [][]string, lineage []string) []error {
	var errs []error
	for k := 1; k < len(order); k++ {
		if slices.Equal(comps[order[k]], comps[order[k-1]]) {
			errs = append(errs, fmt.Errorf("%s: duplicate of association %d (lineage %s)", nodeName(nodes, int(order[k])), order[k-1], lineage[order[k]]))
		}
	}
	for i, nd := range nodes {
		if nd.User != "" && nd.Account != nodes[nd.Parent].Account {
			errs = append(errs, fmt.Errorf("%s: account differs from parent account %q", nodeName(nodes, i), nodes[nd.Parent].Account))
		}
	}
	return errs
}

// newTree lays the validated associations out in position order: names,
// depth, shares, the direct parent and the fs parent (§4.1), and counts
// the users. order becomes the Tree's Input.
func newTree(nodes []Node, order []int32, lineage []string, depth []int32) *Tree {
	n := len(nodes)
	t := &Tree{
		Account:       make([]string, n),
		User:          make([]string, n),
		Partition:     make([]string, n),
		Lineage:       make([]string, n),
		GrpTRESMins:   make([]string, n),
		Line:          make([]int32, n),
		Input:         order,
		Pos:           make([]int32, n),
		Parent:        make([]int32, n),
		FSParent:      make([]int32, n),
		Depth:         make([]int32, n),
		IsUser:        make([]bool, n),
		Shares:        make([]int64, n),
		SharesParent:  make([]bool, n),
		LevelShares:   make([]int64, n),
		FSChildStart:  make([]int32, n+1),
		classicShares: make([]float64, n),
		treeShares:    make([]float64, n),
	}
	for p, i := range order {
		t.Pos[i] = int32(p)
	}
	for p, i := range order {
		nd := nodes[i]
		t.Account[p], t.User[p], t.Partition[p], t.Lineage[p] = nd.Account, nd.User, nd.Partition, lineage[i]
		t.GrpTRESMins[p] = nd.GrpTRESMins
		t.Line[p] = nd.Line
		t.Depth[p] = depth[i]
		t.IsUser[p] = nd.User != ""
		t.SharesParent[p] = nd.SharesParent
		if !nd.SharesParent {
			t.Shares[p] = nd.Shares
		}
		if nd.User != "" {
			t.Users++
		}
		if nd.Parent < 0 {
			t.Parent[p], t.FSParent[p] = -1, -1
			continue
		}
		par := t.Pos[nd.Parent]
		t.Parent[p] = par
		// fs parent: first ancestor that is not FairShare=parent. The
		// parent precedes p, so its own fs parent is already known.
		if t.SharesParent[par] {
			t.FSParent[p] = t.FSParent[par]
		} else {
			t.FSParent[p] = par
		}
	}
	return t
}

// fillFSChildren lists the fair-share children in CSR form, in position
// order (FSChildren, FSChildStart).
func (t *Tree) fillFSChildren() {
	n := t.Len()
	for p := 1; p < n; p++ {
		t.FSChildStart[t.FSParent[p]+1]++
	}
	for p := 0; p < n; p++ {
		t.FSChildStart[p+1] += t.FSChildStart[p]
	}
	t.FSChildren = make([]int32, n-1)
	fill := slices.Clone(t.FSChildStart[:n])
	for p := 1; p < n; p++ {
		f := t.FSParent[p]
		t.FSChildren[fill[f]] = int32(p)
		fill[f]++
	}
}

// fillLevelShares sets level_shares (§4.1): per fs parent, the sum of
// Shares over its children that are not FairShare=parent, given to each
// child.
func (t *Tree) fillLevelShares() {
	n := t.Len()
	for p := 0; p < n; p++ {
		var sum int64
		kids := t.FSChildren[t.FSChildStart[p]:t.FSChildStart[p+1]]
		for _, c := range kids {
			if !t.SharesParent[c] {
				sum += t.Shares[c]
			}
		}
		for _, c := range kids {
			t.LevelShares[c] = sum
		}
	}
}

// computeShares fills the static normalized shares of both models.
func (t *Tree) computeShares() {
	n := t.Len()
	// Classic (§4.2, AM _normalize_assoc_shares_traditional): multiply the
	// factors shares/level_shares walking up the direct chain from the
	// association itself, skipping FairShare=parent links, in that order.
	t.classicShares[0] = 1
	for p := 1; p < n; p++ {
		if t.SharesParent[p] {
			t.classicShares[p] = t.classicShares[t.FSParent[p]]
			continue
		}
		s := 1.0
		for a := int32(p); t.Parent[a] >= 0; a = t.Parent[a] {
			if t.SharesParent[a] {
				continue
			}
			if t.LevelShares[a] == 0 {
				s = 0
				break
			}
			s *= float64(t.Shares[a]) / float64(t.LevelShares[a])
		}
		t.classicShares[p] = s
	}
	// Fair Tree (§4.2): shares within the sibling level only; a
	// FairShare=parent association uses its fs parent's; root divides by
	// NO_VAL.
	t.treeShares[0] = float64(t.Shares[0]) / NoVal
	for p := 1; p < n; p++ {
		f := int32(p)
		if t.SharesParent[p] {
			f = t.FSParent[p]
		}
		switch {
		case f == 0:
			t.treeShares[p] = t.treeShares[0]
		case t.LevelShares[f] == 0:
			t.treeShares[p] = 0
		default:
			t.treeShares[p] = float64(t.Shares[f]) / float64(t.LevelShares[f])
		}
	}
}

// Accumulate sums usage up the direct parent chain: out[p] = own[p] plus the
// sum of out over p's direct children, so out[0] is the cluster total. own and
// out are indexed by tree position and must both have t.Len() elements; own
// normally holds usage only on user associations (and on accounts for jobs of
// deleted users). out may alias own. Summation runs children in reverse
// position order, so the result is deterministic.
func Accumulate(t *Tree, own, out []float64) {
	n := t.Len()
	if len(own) < n || len(out) < n {
		panic(fmt.Sprintf("fairshare: Accumulate: buffers of length %d and %d for a tree of %d", len(own), len(out), n))
	}
	copy(out[:n], own[:n])
	for p := n - 1; p > 0; p-- {
		out[t.Parent[p]] += out[p]
	}
}

// Permute reorders values given in NewTree input order into tree position
// order: dst[p] = src[t.Input[p]]. Both must have t.Len() elements and must
// not alias.
func (t *Tree) Permute(dst, src []float64) {
	n := t.Len()
	if len(src) < n || len(dst) < n {
		panic(fmt.Sprintf("fairshare: Permute: buffers of length %d and %d for a tree of %d", len(dst), len(src), n))
	}
	for p, i := range t.Input {
		dst[p] = src[i]
	}
}

// comparePaths orders two lineages given as components the way their
// lineage strings compare byte-wise (sshare's row order: each component
// followed by '/'), but component by component, so that a name holding a
// '/' still sorts as one name and every subtree stays contiguous.
func comparePaths(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		x, y := a[i], b[i]
		for j := 0; ; j++ {
			cx, cy := byte('/'), byte('/')
			if j < len(x) {
				cx = x[j]
			}
			if j < len(y) {
				cy = y[j]
			}
			if cx != cy {
				return int(cx) - int(cy)
			}
			if j >= len(x) || j >= len(y) {
				// One is a prefix of the other followed by '/': the
				// shorter ends its component first.
				return len(x) - len(y)
			}
		}
	}
	return len(a) - len(b)
}
