package pipeline

import (
	"errors"
	"io/fs"
	"slices"
	"time"

	"github.com/fairledger/fairledger/export"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/schemas"
)

// fairshareWriter turns usage snapshots into fairshare and associations
// rows and writes them a month at a time, replacing the snapshots in
// (lo, to] and keeping the others.
type fairshareWriter struct {
	h      *export.History
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

// flush writes the current month's fairshare and associations partitions,
// keeping the snapshots of the existing files outside (lo, to]; a dry run
// only drops the month's rows.
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
	var oldFS []export.FairshareRow
	if err := readIfExists(w.h, schemas.TableFairshare, w.m.cluster, w.month, &oldFS); err != nil {
		return err
	}
	for _, r := range oldFS {
		if keep(r.Snapshot) {
			w.fs = append(w.fs, r)
		}
	}
	if err := w.h.WritePartition(schemas.TableFairshare, w.m.cluster, w.month, w.fs); err != nil {
		return err
	}
	var oldAssoc []export.AssociationRow
	if err := readIfExists(w.h, schemas.TableAssociations, w.m.cluster, w.month, &oldAssoc); err != nil {
		return err
	}
	for _, r := range oldAssoc {
		if keep(r.Snapshot) {
			w.assoc = append(w.assoc, r)
		}
	}
	if err := w.h.WritePartition(schemas.TableAssociations, w.m.cluster, w.month, w.assoc); err != nil {
		return err
	}
	w.files += 2
	w.fs, w.assoc = w.fs[:0], w.assoc[:0]
	w.fsVals.Reset()
	return nil
}

// readIfExists reads a partition; a missing one reads as no rows.
func readIfExists(h *export.History, table, cluster string, month time.Time, dst any) error {
	err := h.ReadPartition(table, cluster, month, dst)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
