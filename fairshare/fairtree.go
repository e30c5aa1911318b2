package fairshare

import (
	"cmp"
	"math"
	"slices"
)

// sortItem is one fair-share sibling in a sorted group.
type sortItem struct {
	key  float64 // LevelFS used for ordering (§7.2)
	lo   float64 // the rest of slurmctld's long double LevelFS (longdouble.go)
	pos  int32
	user bool
}

// frame is one level of the depth-first ranking walk.
type frame struct {
	first, i, end int32   // the sibling group items[first:end], next i
	prev, prevLo  float64 // LevelFS of the previous sibling (sortItem's key, lo)
	tied          bool    // the account owning this group was tied
}

// cmpItem orders siblings as FT _cmp_level_fs does: LevelFS descending, users
// before accounts on equal LevelFS, and then — where Slurm leaves the order to
// qsort — association list (position) order, as docs/slurm-semantics.md §7.3
// proposes.
func cmpItem(a, b sortItem) int {
	if a.key != b.key || a.lo != b.lo {
		if a.key > b.key || (a.key == b.key && a.lo > b.lo) {
			return -1
		}
		return 1
	}
	if a.user != b.user {
		if a.user {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.pos, b.pos)
}

// FairTree computes Slurm's Fair Tree values (docs/slurm-semantics.md §7, FT
// _apply_priority_fs) for one usage snapshot into r. usage holds the raw usage
// of every association by tree position, each including its descendants (root
// = cluster total, see Accumulate); values must be finite and non-negative.
//
//   - NormShares S = shares/level_shares of the association, or of its fs
//     parent for FairShare=parent (§4.2); root shares/NO_VAL.
//   - EffectvUsage U = U_raw/U_raw(fs parent), 0 when the fs parent has no
//     usage (§7.1); root 1.
//   - LevelFS LF = S/U: 0 when S = 0, +Inf when U = 0; FairShare=parent users
//     sort as +Inf and accounts as NO_VAL but both print blank (NaN).
//   - FairShare F = rank/N for user associations, N = Tree.Users, with the
//     competition ranking and the tie rules Slurm's code implements (§7.3):
//     a user tied with the previous sibling keeps its rank, an account tied
//     with the previous sibling passes the tie to its first child, and tied
//     accounts are never merged. Equal-LF siblings keep position order (§7.3).
//
// FairShareDampeningFactor does not apply. FairTree does not allocate once r
// has grown to the tree's size.
func FairTree(t *Tree, usage []float64, r *Result) {
	checkUsage(t, usage, "FairTree")
	n := t.Len()
	r.reset(n, FairTreeAlgo)
	r.normUsage(usage)
	copy(r.NormShares, t.treeShares)
	r.key = grow(r.key, n)
	r.keyLo = grow(r.keyLo, n)

	r.EffectvUsage[0] = 1
	r.LevelFS[0] = blank
	r.FairShare[0] = blank
	for p := 1; p < n; p++ {
		pu := usage[t.FSParent[p]]
		u := fairTreeEffectvUsage(usage[p], pu)
		r.EffectvUsage[p] = u
		r.FairShare[p] = blank
		var lf, lo float64
		switch s := t.treeShares[p]; {
		case t.SharesParent[p]:
			lf = NoVal
			if t.IsUser[p] {
				lf = math.Inf(1)
			}
			r.LevelFS[p] = blank
		case s == 0:
			lf = 0
			r.LevelFS[p] = 0
		case u == 0:
			lf = s / u // +Inf
			r.LevelFS[p] = lf
		default:
			lf, lo = extLevelFS(s, usage[p], pu)
			if lf != lf {
				lf, lo = 0, 0 // NaN only from invalid usage; keep the order total
			}
			r.LevelFS[p] = lf
		}
		r.key[p], r.keyLo[p] = lf, lo
	}

	// Sort every sibling group once; the groups share one buffer laid out
	// like Tree.FSChildren.
	if cap(r.items) < len(t.FSChildren) {
		r.items = make([]sortItem, len(t.FSChildren))
	}
	items := r.items[:len(t.FSChildren)]
	for k, c := range t.FSChildren {
		items[k] = sortItem{key: r.key[c], lo: r.keyLo[c], pos: c, user: t.IsUser[c]}
	}
	for p := 0; p < n; p++ {
		if lo, hi := t.FSChildStart[p], t.FSChildStart[p+1]; hi-lo > 1 {
			slices.SortFunc(items[lo:hi], cmpItem)
		}
	}

	// Depth-first ranking walk (FT _calc_tree_fs without recursion).
	users := int32(t.Users)
	rank, rnt := users, users
	stack := append(r.stack[:0], frame{first: t.FSChildStart[0], i: t.FSChildStart[0], end: t.FSChildStart[1], prev: NoVal})
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.i == f.end {
			stack = stack[:len(stack)-1]
			continue
		}
		it := items[f.i]
		tied := f.prev == it.key && f.prevLo == it.lo
		if f.i == f.first && f.tied {
			tied = true
		}
		f.prev, f.prevLo = it.key, it.lo
		f.i++
		if it.user {
			if !tied {
				rank = rnt
			}
			r.Rank[it.pos] = rank
			r.FairShare[it.pos] = float64(rank) / float64(users)
			rnt--
			continue
		}
		if lo, hi := t.FSChildStart[it.pos], t.FSChildStart[it.pos+1]; hi > lo {
			stack = append(stack, frame{first: lo, i: lo, end: hi, prev: NoVal, tied: tied})
		}
	}
	r.stack = stack[:0]
}

// fairTreeEffectvUsage is Fair Tree's EffectvUsage of an association with
// raw usage raw under a fair-share parent with raw usage parent (§7.1):
// raw/parent in slurmctld's long double (longdouble.go), 0 when the parent
// has no usage.
func fairTreeEffectvUsage(raw, parent float64) float64 {
	if parent == 0 {
		return 0
	}
	return extQuo(raw, parent)
}
