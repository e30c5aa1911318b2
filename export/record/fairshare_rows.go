package record

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fairledger/fairledger/fairshare"
)

// FairshareRows converts one snapshot's tree and result into rows, one per
// association in tree position order (the writer sorts). NaN values become
// NULL (nil) and +Inf stays +Inf (sshare prints "inf"). Following sshare
// (docs/slurm-semantics.md §8): raw_shares is NULL for root and FairShare=parent
// rows; fair_share is NULL for accounts and root under every algorithm
// (sshare ≥ 25.11 prints it on user rows only, so a classic account's
// factor is not kept); level_fs is NULL for root, FairShare=parent rows and
// algorithms other than Fair Tree; rank is NULL except on Fair Tree user
// rows. r must have been computed on t.
func FairshareRows(snapshot time.Time, t *fairshare.Tree, r *fairshare.Result) []FairshareRow {
	return AppendFairshareRows(nil, nil, snapshot, t, r)
}

// FairshareValues is memory for the numbers that fairshare rows point to
// (their nullable columns), for a caller that appends snapshot after
// snapshot (AppendFairshareRows) and writes the rows out now and then:
// after Reset the memory holds the values of the rows appended next, so
// the rows appended before must no longer be used. The zero value is
// ready to use.
type FairshareValues struct {
	floats arena[float64]
	shares arena[int64]
	ranks  arena[int32]
}

// Reset makes the memory of the values handed out so far free for the
// next rows, and keeps it in one block when it took several, so that as
// many rows again need no allocation.
func (v *FairshareValues) Reset() {
	v.floats.reset()
	v.shares.reset()
	v.ranks.reset()
}

// arena hands out memory from blocks that never move, so that pointers
// into it stay valid until reset.
type arena[E any] struct {
	blocks [][]E // the last one is being filled; a block's length is what is taken
}

// free returns the room, of at least n values, after what has been taken
// (length 0); take(k) then takes its first k values.
func (a *arena[E]) free(n int) []E {
	size := n
	if k := len(a.blocks); k > 0 {
		b := a.blocks[k-1]
		if cap(b)-len(b) >= n {
			return b[len(b):len(b):cap(b)]
		}
		size = max(n, 2*cap(b))
	}
	a.blocks = append(a.blocks, make([]E, 0, size))
	return a.blocks[len(a.blocks)-1]
}

// take takes the first k values of the room free returned.
func (a *arena[E]) take(k int) {
	b := &a.blocks[len(a.blocks)-1]
	*b = (*b)[:len(*b)+k]
}

// reset frees all the values taken, merging several blocks into one.
func (a *arena[E]) reset() {
	switch len(a.blocks) {
	case 0:
	case 1:
		a.blocks[0] = a.blocks[0][:0]
	default:
		total := 0
		for _, b := range a.blocks {
			total += cap(b)
		}
		a.blocks = append(a.blocks[:0], make([]E, 0, total))
		clear(a.blocks[1:cap(a.blocks)])
	}
}

// AppendFairshareRows appends the rows FairshareRows returns to dst and
// returns the extended slice, so that a caller collecting many snapshots
// fills one buffer instead of copying each snapshot's rows into it. The
// rows already in dst are left as they are; whatever lies in dst's
// capacity beyond its length is overwritten. The rows' numbers are kept in
// vals, or in memory of their own when vals is nil.
func AppendFairshareRows(dst []FairshareRow, vals *FairshareValues, snapshot time.Time, t *fairshare.Tree, r *fairshare.Result) []FairshareRow {
	n := t.Len()
	if len(r.NormShares) != n {
		panic(fmt.Sprintf("record: FairshareRows: result holds %d associations, tree %d", len(r.NormShares), n))
	}
	if vals == nil {
		vals = new(FairshareValues)
	}
	algo := r.Algorithm.String()
	fairTree := r.Algorithm == fairshare.FairTreeAlgo
	dst = slices.Grow(dst, n)
	rows := dst[len(dst) : len(dst)+n]
	// One block of memory per column type keeps the allocations per call
	// constant (none with a reused vals) instead of one per cell. floats
	// has room for six values a row, so append never reallocates and the
	// pointers stay valid.
	floats := vals.floats.free(6 * n)
	num := func(v float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		floats = append(floats, v)
		return &floats[len(floats)-1]
	}
	shares := vals.shares.free(n)[:n]
	ranks := vals.ranks.free(n)[:n]
	for p := range n {
		row := &rows[p]
		*row = FairshareRow{Snapshot: snapshot, Algorithm: algo,
			Account: t.Account[p], User: t.User[p], Partition: t.Partition[p],
			Depth: t.Depth[p], IsUser: t.IsUser[p], SharesParent: t.SharesParent[p]}
		if par := t.Parent[p]; par >= 0 {
			row.Parent = t.Account[par]
		}
		if p != 0 && !t.SharesParent[p] {
			shares[p] = t.Shares[p]
			row.RawShares = &shares[p]
		}
		row.NormShares = num(r.NormShares[p])
		row.RawUsage = num(r.RawUsage[p])
		row.NormUsage = num(r.NormUsage[p])
		row.EffectvUsage = num(r.EffectvUsage[p])
		if t.IsUser[p] {
			row.FairShare = num(r.FairShare[p])
		}
		if t.GrpTRESMins[p] != "" {
			row.GrpTRESMins = &t.GrpTRESMins[p]
		}
		if t.Line[p] > 0 {
			row.AssocLine = &t.Line[p]
		}
		if fairTree {
			row.LevelFS = num(r.LevelFS[p])
			if t.IsUser[p] && r.Rank[p] != 0 {
				ranks[p] = r.Rank[p]
				row.Rank = &ranks[p]
			}
		}
	}
	vals.floats.take(len(floats))
	vals.shares.take(n)
	vals.ranks.take(n)
	return dst[:len(dst)+n]
}

// AssociationRows converts the tree in force from snapshot on into rows of
// the associations table, one per association in tree position order (the
// writer sorts); source is the input file the tree was read from. shares is
// NULL for FairShare=parent only: root keeps its share count.
func AssociationRows(snapshot time.Time, t *fairshare.Tree, source string) []AssociationRow {
	n := t.Len()
	rows := make([]AssociationRow, n)
	shares := make([]int64, n)
	for p := range n {
		row := &rows[p]
		row.Snapshot = snapshot
		row.Account, row.User, row.Partition = t.Account[p], t.User[p], t.Partition[p]
		if par := t.Parent[p]; par >= 0 {
			row.Parent = t.Account[par]
		}
		row.SharesParent = t.SharesParent[p]
		if !t.SharesParent[p] {
			shares[p] = t.Shares[p]
			row.Shares = &shares[p]
		}
		row.Lineage = t.Lineage[p]
		row.SourceFile = source
	}
	return rows
}

// FairshareFromRows rebuilds the Tree and the Result of one snapshot from its
// fairshare rows, given in any order, so that fairshare.WriteSshare prints
// what it printed when the rows were computed. All rows must share one
// snapshot and one algorithm; the rows must form one tree (one root, every
// parent an account row, account names unique). NULL cells become NaN (rank:
// 0). Root's share count is not stored (raw_shares is NULL), so the rebuilt
// tree gives root 0 shares; sshare does not print it and the Result carries
// the stored NormShares. Classic account FairShare values are not stored
// either: fairshare.AccountFairShares computes them from the stored
// NormShares and EffectvUsage where sshare printed them (before 25.11).
func FairshareFromRows(rows []FairshareRow) (*fairshare.Tree, *fairshare.Result, error) {
	if len(rows) == 0 {
		return nil, nil, errors.New("rebuild fair share: no rows")
	}
	snap, algoName := rows[0].Snapshot, rows[0].Algorithm
	algo, err := fairshare.ParseAlgorithm(algoName)
	if err != nil {
		return nil, nil, fmt.Errorf("rebuild fair share at %s: %w", snap.UTC().Format(time.RFC3339), err)
	}
	wrap := func(err error) error {
		return fmt.Errorf("rebuild fair share at %s: %w", snap.UTC().Format(time.RFC3339), err)
	}
	name := func(i int) string {
		r := &rows[i]
		switch {
		case r.User != "" && r.Partition != "":
			return fmt.Sprintf("row %d (account %q, user %q, partition %q)", i, r.Account, r.User, r.Partition)
		case r.User != "":
			return fmt.Sprintf("row %d (account %q, user %q)", i, r.Account, r.User)
		}
		return fmt.Sprintf("row %d (account %q)", i, r.Account)
	}

	var errs []error
	accounts := make(map[string]int, len(rows))
	for i := range rows {
		r := &rows[i]
		if !r.Snapshot.Equal(snap) {
			errs = append(errs, fmt.Errorf("%s: snapshot %s differs from row 0", name(i), r.Snapshot.UTC().Format(time.RFC3339)))
		}
		if r.Algorithm != algoName {
			errs = append(errs, fmt.Errorf("%s: algorithm %q differs from row 0 (%q)", name(i), r.Algorithm, algoName))
		}
		if r.IsUser != (r.User != "") {
			errs = append(errs, fmt.Errorf("%s: is_user=%v with user %q", name(i), r.IsUser, r.User))
		}
		if r.IsUser {
			continue
		}
		if j, dup := accounts[r.Account]; dup {
			errs = append(errs, fmt.Errorf("%s: duplicate of account row %d", name(i), j))
			continue
		}
		accounts[r.Account] = i
	}
	if len(errs) > 0 {
		return nil, nil, wrap(errors.Join(errs...))
	}

	nodes := make([]fairshare.Node, len(rows))
	for i := range rows {
		r := &rows[i]
		nd := fairshare.Node{Account: r.Account, User: r.User, Partition: r.Partition, Parent: -1, SharesParent: r.SharesParent}
		if r.GrpTRESMins != nil {
			nd.GrpTRESMins = *r.GrpTRESMins
		}
		if r.AssocLine != nil {
			nd.Line = *r.AssocLine
		}
		if r.Parent != "" {
			j, ok := accounts[r.Parent]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: parent account %q has no row", name(i), r.Parent))
			}
			nd.Parent = j
		}
		switch {
		case r.RawShares != nil:
			nd.Shares = *r.RawShares
		case r.Parent != "" && !r.SharesParent:
			errs = append(errs, fmt.Errorf("%s: raw_shares is NULL but shares_parent is false", name(i)))
		}
		nodes[i] = nd
	}
	if len(errs) > 0 {
		return nil, nil, wrap(errors.Join(errs...))
	}
	t, err := fairshare.NewTree(nodes)
	if err != nil {
		return nil, nil, wrap(err)
	}

	n := t.Len()
	res := &fairshare.Result{
		Algorithm:    algo,
		NormShares:   make([]float64, n),
		RawUsage:     make([]float64, n),
		NormUsage:    make([]float64, n),
		EffectvUsage: make([]float64, n),
		FairShare:    make([]float64, n),
		LevelFS:      make([]float64, n),
		Rank:         make([]int32, n),
	}
	val := func(v *float64) float64 {
		if v == nil {
			return math.NaN()
		}
		return *v
	}
	for i := range rows {
		r := &rows[i]
		p := t.Pos[i]
		if t.Depth[p] != r.Depth {
			errs = append(errs, fmt.Errorf("%s: depth %d, but the rebuilt tree puts it at depth %d", name(i), r.Depth, t.Depth[p]))
		}
		res.NormShares[p] = val(r.NormShares)
		res.RawUsage[p] = val(r.RawUsage)
		res.NormUsage[p] = val(r.NormUsage)
		res.EffectvUsage[p] = val(r.EffectvUsage)
		res.FairShare[p] = val(r.FairShare)
		res.LevelFS[p] = val(r.LevelFS)
		if r.Rank != nil {
			res.Rank[p] = *r.Rank
		}
	}
	if len(errs) > 0 {
		return nil, nil, wrap(errors.Join(errs...))
	}
	return t, res, nil
}

// TRESRunMinsFromRows returns the tres_run_mins cell of each row in the
// tree position order of t, which FairshareFromRows rebuilt from the same
// rows, for fairshare.SshareOptions.TRESRunMins: "" where the cell is NULL
// (limits not enforced, or a snapshot written before the column existed),
// which sshare prints as zeros. It returns nil when every cell is NULL.
func TRESRunMinsFromRows(rows []FairshareRow, t *fairshare.Tree) []string {
	var out []string
	for i := range rows {
		if rows[i].TRESRunMins == nil {
			continue
		}
		if out == nil {
			out = make([]string, t.Len())
		}
		out[t.Pos[i]] = *rows[i].TRESRunMins
	}
	return out
}
