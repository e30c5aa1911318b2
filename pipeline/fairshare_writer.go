package pipeline

import (
	"slices"
	"time"

	"github.com/fairledger/fairledger/export"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/schemas"
)

// fairshareWriter turns usage snapshots into fairshare and associations
// rows and writes them a month at a time as new segments, replacing the
// snapshots in (lo, to] and keeping the others.
type fairshareWriter struct {
	tx     *export.Txn // nil in a dry run
	m      *model
	lo, to int64
	dry    bool // a dry run: compute the snapshots, write nothing

	proj      []*fairshare.Projection   // per tree, built on first use
	assocRows [][]export.AssociationRow // per tree, its associations rows, built on first use
	raw       []float64
	res       fairshare.Result
	month     time.Time
	fs        []export.FairshareRow  // the month's rows, reused from month to month
	fsVals    export.FairshareValues // the numbers fs points to, reused likewise
	assoc     []export.AssociationRow
	run       *tresRun // TRESRunMins; nil without limits enforced

	snapshots, files int
}

// snapshot computes the snapshot at time at from own, every universe
// association's own usage as of the grid tick tick, and adds its rows.
func (w *fairshareWriter) snapshot(at, tick int64, own []float64) error {
	t := time.Unix(at, 0).UTC()
	mon := monthStart(at)
	if !mon.Equal(w.month) {
		if err := w.flush(); err != nil {
			return err
		}
		w.month = mon
	}
	i := w.m.treeAt(t)
	if w.proj == nil {
		w.proj = make([]*fairshare.Projection, len(w.m.trees))
		w.assocRows = make([][]export.AssociationRow, len(w.m.trees))
	}
	if w.proj[i] == nil {
		w.proj[i] = w.m.uni.Project(w.m.trees[i])
		w.assocRows[i] = export.AssociationRows(t, w.m.trees[i], w.m.sources[i])
	}
	tree := w.m.trees[i]
	w.raw = slices.Grow(w.raw[:0], tree.Len())[:tree.Len()]
	w.proj[i].RawUsage(own, w.raw)
	switch w.m.algo {
	case "classic":
		fairshare.Classic(tree, w.raw, w.m.damp, &w.res)
	case "depth_oblivious":
		fairshare.DepthOblivious(tree, w.raw, w.m.damp, &w.res)
	default:
		fairshare.FairTree(tree, w.raw, &w.res)
	}
	start := len(w.fs)
	w.fs = export.AppendFairshareRows(w.fs, &w.fsVals, t, tree, &w.res)
	if w.run != nil {
		cells, err := w.run.cells(w.snapshots, tick, w.proj[i], len(own))
		if err != nil {
			return err
		}
		for p := range cells {
			if cells[p] != "" {
				w.fs[start+p].TRESRunMins = &cells[p]
			}
		}
	}
	// A tree's associations rows differ from snapshot to snapshot only in
	// the snapshot time; the copies share the share counts they point to.
	first := len(w.assoc)
	w.assoc = append(w.assoc, w.assocRows[i]...)
	for k := range w.assoc[first:] {
		w.assoc[first+k].Snapshot = t
	}
	w.snapshots++
	return nil
}

// flush writes the current month's fairshare and associations rows as a
// new segment of each table. A segment of the month with snapshots after
// lo (a recompute) is replaced, its snapshots outside (lo, to] kept in the
// new one; a night reads nothing. A dry run only drops the month's rows.
func (w *fairshareWriter) flush() error {
	if len(w.fs) == 0 {
		return nil
	}
	if w.dry {
		w.fs, w.assoc = w.fs[:0], w.assoc[:0]
		w.fsVals.Reset()
		return nil
	}
	keep := func(s time.Time) bool { return s.Unix() <= w.lo || s.Unix() > w.to }
	var err error
	if w.fs, err = replaceSnapshots(w, schemas.TableFairshare, w.fs, func(r *export.FairshareRow) bool { return keep(r.Snapshot) }); err != nil {
		return err
	}
	if w.assoc, err = replaceSnapshots(w, schemas.TableAssociations, w.assoc, func(r *export.AssociationRow) bool { return keep(r.Snapshot) }); err != nil {
		return err
	}
	w.files += 2
	w.fs, w.assoc = w.fs[:0], w.assoc[:0]
	w.fsVals.Reset()
	return nil
}

// replaceSnapshots writes rows as a new segment of table for the current
// month, after moving into it the rows that keep keeps of the month's
// segments with snapshots after lo, which it removes. It returns rows
// (grown), for reuse.
func replaceSnapshots[T any](w *fairshareWriter, table string, rows []T, keep func(*T) bool) ([]T, error) {
	mk := monthKey(w.month)
	for _, p := range w.tx.Base().Files(table, w.m.cluster) {
		if p.Month != mk || p.MaxTime <= w.lo {
			continue
		}
		var old []T
		if err := w.tx.Read(p, &old); err != nil {
			return rows, err
		}
		for i := range old {
			if keep(&old[i]) {
				rows = append(rows, old[i])
			}
		}
		w.tx.Remove(p)
	}
	_, err := w.tx.Write(table, w.m.cluster, w.month, any(rows), false)
	return rows, err
}
