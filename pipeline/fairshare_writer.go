package pipeline

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/fairledger/fairledger/export/encode"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/fairshare/live"
	"github.com/fairledger/fairledger/priority/queue"
	"github.com/fairledger/fairledger/schemas"
)

// fairshareWriter turns usage snapshots into fairshare and associations
// rows and writes them a month at a time as new segments, replacing the
// snapshots in (lo, to] and keeping the others. Each snapshot goes
// straight into the month's Parquet files (history.SnapshotSegments), so
// what it holds does not grow with the tree times the snapshots of a
// month.
type fairshareWriter struct {
	tx     *history.Txn // nil in a dry run
	m      *model
	lo, to int64
	dry    bool    // a dry run: compute the snapshots, write nothing
	snaps  []int64 // the run's snapshot times: which trees a month uses

	proj  []*fairshare.Projection // per tree, built on first use
	raw   []float64
	res   fairshare.Result
	month time.Time
	run   *live.TRESRun   // TRESRunMins; nil without limits enforced
	live  *live.Ends      // RawUsage's job-end charges; nil without limits enforced
	dict  *record.JobDict // the snapshot of the run's dictionary that run reads

	seg      *history.SnapshotSegments // the month's files; nil in a dry run and between months
	trees    *encode.SnapshotTrees     // the trees of seg's month, kept for the next month if it has the same
	used     []bool                    // per tree of the model: whether trees holds it
	segTree  []int                     // per tree of the model: its index in trees, or -1
	afterFS  []record.FairshareRow     // rows of older segments of the month after to, kept
	afterAsc []record.AssociationRow

	prio *queue.Writer // the priority table's rows; nil without job priority
	// beforePrio and afterPrio are the rows of older segments of the
	// month up to lo and after to, kept.
	beforePrio, afterPrio []record.PriorityRow

	snapshots, files int

	// keep, when set, receives each snapshot's values instead of the
	// segments (a dry run's; Moment takes its one snapshot so): the tree,
	// its result and TRESRunMins cells are only valid during the call.
	keep func(at, tick int64, tree *fairshare.Tree, r *fairshare.Result, cells []string) error
}

// snapshot computes the snapshot at time at from own, every universe
// association's own usage as of the grid tick tick, and writes its rows.
// The fair-share values are those of the tick, under every algorithm;
// with limits enforced RawUsage also holds the charges of the jobs that
// ended after the tick, up to at (live.Ends), as sshare prints it between
// two ticks. (For classic and depth-oblivious slurmctld computes user
// rows' NormUsage and EffectvUsage when first asked after the tick, from
// the usage of that moment: fairledger keeps the tick's, like Fair
// Tree's.)
func (w *fairshareWriter) snapshot(at, tick int64, own []float64) error {
	t := time.Unix(at, 0).UTC()
	mon := monthStart(at)
	if w.prio != nil {
		// The submissions and starts before the snapshot, of the months
		// before its, then of its own month.
		w.prio.Emit(min(at, mon.Unix()), w.month.Unix())
	}
	if !mon.Equal(w.month) {
		if err := w.flush(); err != nil {
			return err
		}
		w.month = mon
		if !w.dry {
			if err := w.open(); err != nil {
				return err
			}
		}
	}
	i := w.m.treeAt(t)
	if w.proj == nil {
		w.proj = make([]*fairshare.Projection, len(w.m.trees))
	}
	if w.proj[i] == nil {
		w.proj[i] = w.m.uni.Project(w.m.trees[i])
	}
	tree := w.m.trees[i]
	w.raw = slices.Grow(w.raw[:0], tree.Len())[:tree.Len()]
	w.proj[i].RawUsage(own, w.raw)
	fairshare.Compute(w.m.algo, tree, w.raw, w.m.damp, &w.res)
	if w.prio != nil {
		w.prio.Emit(at, mon.Unix())
		w.prio.Add(at, tick, i, tree, &w.res)
	}
	if w.live != nil {
		live, err := w.live.Usage(w.snapshots, at, tick, own)
		if err != nil {
			return err
		}
		if live != nil {
			w.proj[i].RawUsage(live, w.res.RawUsage)
		}
	}
	var cells []string
	if w.run != nil {
		var err error
		if cells, err = w.run.Cells(w.snapshots, at, w.proj[i], len(own)); err != nil {
			return err
		}
	}
	w.snapshots++
	if w.keep != nil {
		if err := w.keep(at, tick, tree, &w.res, cells); err != nil {
			return err
		}
	}
	if w.seg == nil {
		return nil // a dry run
	}
	k := w.segTree[i]
	if k < 0 {
		return fmt.Errorf("snapshot %s: association tree %s is not one of the month's", t.Format(time.RFC3339), w.m.sources[i])
	}
	return w.seg.AppendSnapshot(t, k, &w.res, cells)
}

// open starts the segments of w.month. A segment of the month with
// snapshots after lo (a recompute) is replaced: its snapshots outside (lo,
// to] are kept in the new one, those up to lo written first, those after
// to at flush; a night reads nothing.
func (w *fairshareWriter) open() error {
	// The trees the month's snapshots use, in model order: prepared again
	// only when they differ from the month before's.
	next := w.month.AddDate(0, 1, 0)
	used := make([]bool, len(w.m.trees))
	for _, s := range w.snaps {
		if s >= w.month.Unix() && s < next.Unix() {
			used[w.m.treeAt(time.Unix(s, 0))] = true
		}
	}
	if w.trees == nil || !slices.Equal(used, w.used) {
		w.segTree = slices.Grow(w.segTree[:0], len(w.m.trees))[:len(w.m.trees)]
		var trees []*fairshare.Tree
		var sources []string
		for i, u := range used {
			w.segTree[i] = -1
			if u {
				w.segTree[i] = len(trees)
				trees = append(trees, w.m.trees[i])
				sources = append(sources, w.m.sources[i])
			}
		}
		st, err := encode.NewSnapshotTrees(trees, sources)
		if err != nil {
			return err
		}
		w.trees, w.used = st, used
	}
	beforeFS, afterFS, err := keptSnapshots[record.FairshareRow](w, schemas.TableFairshare, func(r *record.FairshareRow) int64 { return r.Snapshot.Unix() })
	if err != nil {
		return err
	}
	beforeAsc, afterAsc, err := keptSnapshots[record.AssociationRow](w, schemas.TableAssociations, func(r *record.AssociationRow) int64 { return r.Snapshot.Unix() })
	if err != nil {
		return err
	}
	if w.prio != nil {
		before, after, err := keptSnapshots[record.PriorityRow](w, schemas.TablePriority, func(r *record.PriorityRow) int64 { return r.At.Unix() })
		if err != nil {
			return err
		}
		w.beforePrio, w.afterPrio = before, after
	}
	seg, err := w.tx.NewSnapshotSegments(w.m.cluster, w.month, w.trees)
	if err != nil {
		return err
	}
	if err := seg.AppendRows(beforeFS, beforeAsc); err != nil {
		seg.Abort()
		return err
	}
	w.seg, w.afterFS, w.afterAsc = seg, afterFS, afterAsc
	return nil
}

// keptSnapshots reads the rows of the month's segments of table with
// snapshots after lo, which the new segment replaces (it removes them),
// and returns those it keeps: the snapshots up to lo and after to.
func keptSnapshots[T any](w *fairshareWriter, table string, at func(*T) int64) (before, after []T, err error) {
	mk := monthKey(w.month)
	for _, p := range w.tx.Base().Files(table, w.m.cluster) {
		if p.Month != mk || p.MaxTime <= w.lo {
			continue
		}
		var old []T
		if err := w.tx.Read(p, &old); err != nil {
			return nil, nil, err
		}
		for i := range old {
			switch s := at(&old[i]); {
			case s <= w.lo:
				before = append(before, old[i])
			case s > w.to:
				after = append(after, old[i])
			}
		}
		w.tx.Remove(p)
	}
	return before, after, nil
}

// flush ends the current month's segments and adds them to the commit. A
// dry run has none.
func (w *fairshareWriter) flush() error {
	if err := w.flushPriority(); err != nil {
		return err
	}
	seg := w.seg
	if seg == nil {
		return nil
	}
	w.seg = nil
	if err := seg.AppendRows(w.afterFS, w.afterAsc); err != nil {
		seg.Abort()
		return err
	}
	w.afterFS, w.afterAsc = nil, nil
	fs, as, err := seg.Close()
	if err != nil {
		return err
	}
	for _, p := range []history.Partition{fs, as} {
		if p.Rows > 0 {
			w.files++
		}
	}
	return nil
}

// flushPriority writes the month's priority rows, those it keeps of older
// segments included, as one segment. A dry run writes none.
func (w *fairshareWriter) flushPriority() error {
	if w.prio == nil {
		return nil
	}
	rows := append(w.m.prio.AppendRecords(w.beforePrio, &w.prio.Out), w.afterPrio...)
	w.prio.Out.Reset()
	w.beforePrio, w.afterPrio = nil, nil
	if w.seg == nil || len(rows) == 0 {
		return nil
	}
	if _, err := w.tx.Write(schemas.TablePriority, w.m.cluster, w.month, rows, false); err != nil {
		return err
	}
	w.files++
	return nil
}

// finish writes what is left at the end of the window: the current
// month's segments, and with job priority the submit and start rows after
// the last snapshot and those of months without a snapshot.
func (w *fairshareWriter) finish() error {
	if w.prio != nil {
		w.prio.Emit(math.MaxInt64, w.month.Unix())
	}
	if err := w.flush(); err != nil {
		return err
	}
	if w.prio == nil || w.tx == nil || w.dry {
		return nil
	}
	months := slices.Sorted(maps.Keys(w.prio.Other))
	for _, mon := range months {
		// A month without a snapshot of the run: its priority file alone,
		// the rows outside the window kept.
		w.month = time.Unix(mon, 0).UTC()
		before, after, err := keptSnapshots[record.PriorityRow](w, schemas.TablePriority, func(r *record.PriorityRow) int64 { return r.At.Unix() })
		if err != nil {
			return err
		}
		rows := append(w.m.prio.AppendRecords(before, w.prio.Other[mon]), after...)
		if _, err := w.tx.Write(schemas.TablePriority, w.m.cluster, w.month, rows, false); err != nil {
			return err
		}
		w.files++
	}
	w.prio.Other = nil
	return nil
}

// abort drops the current month's segments (a failed run).
func (w *fairshareWriter) abort() {
	if w.seg != nil {
		w.seg.Abort()
		w.seg = nil
	}
}
