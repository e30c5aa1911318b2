package encode

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/schemas"
)

// Snapshots writes the fairshare and associations files of one (cluster,
// month) snapshot by snapshot, straight from each snapshot's tree and
// fairshare.Result into the Parquet column writers: no row of
// either table is built, and what it holds does not grow with the month
// (a row group's encoded pages, a batch of values, a few copies of a
// Result, and per tree its row order and interned names). A month of a
// 100,000-association tree and 31 daily snapshots is 3.1 million rows of
// each table: as []record.FairshareRow and []record.AssociationRow (Table)
// they took some 1.5 GB, and most of a run's time went to the garbage
// collector scanning them.
//
// Each file is encoded by a goroutine of its own, beside the caller's
// (which computes the next snapshot meanwhile), and hands a chunk of rows
// to its column writers on two (columnGoroutines): AppendSnapshot copies
// the Result and returns. An error of either file shows at the next call
// or at Close.
//
// The files are byte for byte those Table writes for the same rows
// (record.AppendFairshareRows and record.AssociationRows of every
// snapshot, plus the rows given to AppendRows): TestSnapshotSegmentsBytes
// (package history, whose SnapshotSegments write them into a commit)
// checks it. Snapshots are
// appended in time order; rows of older segments kept by a recompute are
// added with AppendRows before the first snapshot after them and after the
// last one before them.
type Snapshots struct {
	st *SnapshotTrees

	fs      *tableWorker[record.FairshareRow]
	as      *tableWorker[record.AssociationRow]
	results chan *fairshare.Result // copies of Results not in use
	copies  int                    // Results allocated for results
	done    bool                   // Close or Abort was called
}

// snapshotCopies is how many copies of a Result may be queued for the
// fairshare file's goroutine or being written by it: one being written
// while the caller computes the next is all it takes to keep both busy
// (each copy is 52 bytes an association).
const snapshotCopies = 2

// SnapshotTrees are association trees prepared for Snapshots: the
// names of their dictionary-encoded columns interned, and, per tree once
// it is first used, its rows' order in the tables. One SnapshotTrees may
// serve the segments of several months, one after the other (not at
// once): a run whose months use the same trees prepares them once.
type SnapshotTrees struct {
	trees   []*fairshare.Tree
	sources []string
	strs    *internedStrings
	ids     map[string]int32 // the index in strs of each of its strings
	prep    []*snapshotTree  // per tree, built on first use
	algo    [3]int32         // ids in strs of the algorithm names, by Algorithm−1
}

// snapshotTree is a tree prepared for writing: its positions in table
// order and the ids in strs of each position's names. Read-only once built.
type snapshotTree struct {
	t                         *fairshare.Tree
	order                     []int32 // positions sorted by (account, user, partition)
	account, user, part, prnt []int32 // per position: ids in strs
	source                    int32   // id in strs of its source file
}

// NewSnapshotTrees prepares trees, read from the files sources, for
// Snapshots (which name a tree by its index in trees).
func NewSnapshotTrees(trees []*fairshare.Tree, sources []string) (*SnapshotTrees, error) {
	if len(trees) != len(sources) {
		return nil, fmt.Errorf("snapshot trees: %d trees, %d sources", len(trees), len(sources))
	}
	s := &SnapshotTrees{trees: trees, sources: sources, prep: make([]*snapshotTree, len(trees))}
	// The strings of the dictionary-encoded columns, interned once for
	// both files: the algorithm names, the sources and every tree's names
	// (a parent is an account).
	s.ids = map[string]int32{}
	var list []string
	add := func(v string) int32 {
		id, ok := s.ids[v]
		if !ok {
			id = int32(len(list))
			s.ids[v] = id
			list = append(list, v)
		}
		return id
	}
	for a := fairshare.FairTreeAlgo; a.Valid(); a++ {
		s.algo[a-1] = add(a.String())
	}
	add("")
	for _, src := range sources {
		add(src)
	}
	for _, tr := range trees {
		for p := range tr.Len() {
			add(tr.Account[p])
			add(tr.User[p])
			add(tr.Partition[p])
		}
	}
	s.strs = internStrings(list)
	return s, nil
}

// prepared returns tree i prepared for writing.
func (s *SnapshotTrees) prepared(i int) *snapshotTree {
	if p := s.prep[i]; p != nil {
		return p
	}
	t := s.trees[i]
	n := t.Len()
	p := &snapshotTree{t: t, order: identity(n), account: make([]int32, n), user: make([]int32, n),
		part: make([]int32, n), prnt: make([]int32, n), source: s.ids[s.sources[i]]}
	empty := s.ids[""]
	for q := range n {
		p.account[q], p.user[q], p.part[q] = s.ids[t.Account[q]], s.ids[t.User[q]], s.ids[t.Partition[q]]
		p.prnt[q] = empty
		if par := t.Parent[q]; par >= 0 {
			p.prnt[q] = p.account[par]
		}
	}
	// The table order within a snapshot: (account, user, partition), ties
	// (none in a valid tree) in position order.
	slices.SortStableFunc(p.order, func(a, b int32) int {
		return compareRowNames(rowNames{t.Account[a], t.User[a], t.Partition[a]}, rowNames{t.Account[b], t.User[b], t.Partition[b]})
	})
	s.prep[i] = p
	return p
}

// NewSnapshots starts the fairshare and associations files of snapshots
// of the trees of st, written to fs and as; fsName and asName name the
// files in errors. Close ends them; Abort stops writing them. One of the
// two must be called before st serves another month.
func NewSnapshots(st *SnapshotTrees, fs, as io.Writer, fsName, asName string) (*Snapshots, error) {
	s := &Snapshots{st: st, results: make(chan *fairshare.Result, snapshotCopies)}
	fc, err := newColumnStream[record.FairshareRow](fs, fsName, schemas.TableFairshare, fairshareColumns, st.strs)
	if err != nil {
		return nil, err
	}
	ac, err := newColumnStream[record.AssociationRow](as, asName, schemas.TableAssociations, associationColumns, st.strs)
	if err != nil {
		return nil, err
	}
	s.fs, s.as = startWorker(fc), startWorker(ac)
	return s, nil
}

// err returns the first error of the two goroutines so far.
func (s *Snapshots) err() error {
	if err := s.fs.failed(); err != nil {
		return err
	}
	return s.as.failed()
}

// AppendSnapshot writes the rows of the snapshot at time at: one row of
// each table per association of trees[tree], with the values of r (which
// must have been computed on that tree) as record.AppendFairshareRows and
// record.AssociationRows give them. tresRunMins is each position's TRESRunMins
// cell, "" for NULL; nil for none at all. AppendSnapshot keeps
// tresRunMins (not r) until the rows are written: the caller must not
// change it. Snapshots must come in time order, after the rows AppendRows
// wrote.
func (s *Snapshots) AppendSnapshot(at time.Time, tree int, r *fairshare.Result, tresRunMins []string) error {
	if s.done {
		return errors.New("snapshot segments: already closed")
	}
	if err := s.err(); err != nil {
		return err
	}
	if tree < 0 || tree >= len(s.st.trees) {
		return fmt.Errorf("snapshot segments: tree %d of %d", tree, len(s.st.trees))
	}
	n := s.st.trees[tree].Len()
	if len(r.NormShares) != n {
		return fmt.Errorf("snapshot segments: result holds %d associations, tree %d", len(r.NormShares), n)
	}
	if tresRunMins != nil && len(tresRunMins) != n {
		return fmt.Errorf("snapshot segments: %d TRESRunMins cells for a tree of %d", len(tresRunMins), n)
	}
	if !r.Algorithm.Valid() {
		return fmt.Errorf("snapshot segments: algorithm %v", r.Algorithm)
	}
	algo := s.st.algo[r.Algorithm-1]
	us := at.UnixMicro()
	for _, w := range []*workerClock{&s.fs.workerClock, &s.as.workerClock} {
		if w.any && us < w.last {
			return fmt.Errorf("snapshot segments: snapshot %s after snapshot %s", at.UTC().Format(time.RFC3339Nano),
				time.UnixMicro(w.last).UTC().Format(time.RFC3339Nano))
		}
	}
	s.fs.last, s.fs.any = us, true
	s.as.last, s.as.any = us, true
	p := s.st.prepared(tree)
	var res *fairshare.Result
	select {
	case res = <-s.results:
	default:
		if s.copies < snapshotCopies {
			res = new(fairshare.Result)
			s.copies++
		} else {
			res = <-s.results // wait for the fairshare goroutine
		}
	}
	copyResult(res, r)
	sec := at.Unix()
	s.fs.send(job[record.FairshareRow]{
		run: func(c *columnStream[record.FairshareRow]) error {
			return writeFairshareSnapshot(c, s.st.strs, p, us, sec, algo, res, tresRunMins)
		},
		done: func() { s.results <- res },
	})
	s.as.send(job[record.AssociationRow]{
		run: func(c *columnStream[record.AssociationRow]) error {
			return writeAssociationsSnapshot(c, s.st.strs, p, us, sec)
		},
	})
	return nil
}

// copyResult copies src into dst's memory.
func copyResult(dst, src *fairshare.Result) {
	dst.Algorithm = src.Algorithm
	dst.NormShares = append(dst.NormShares[:0], src.NormShares...)
	dst.RawUsage = append(dst.RawUsage[:0], src.RawUsage...)
	dst.NormUsage = append(dst.NormUsage[:0], src.NormUsage...)
	dst.EffectvUsage = append(dst.EffectvUsage[:0], src.EffectvUsage...)
	dst.FairShare = append(dst.FairShare[:0], src.FairShare...)
	dst.LevelFS = append(dst.LevelFS[:0], src.LevelFS...)
	dst.Rank = append(dst.Rank[:0], src.Rank...)
}

// writeFairshareSnapshot writes the fairshare rows of one snapshot of tree
// p, at us microseconds (sec seconds), a batch at a time, with the values
// fairshareValues gives the rows record.AppendFairshareRows builds.
func writeFairshareSnapshot(c *columnStream[record.FairshareRow], strs *internedStrings, p *snapshotTree, us, sec int64, algo int32, r *fairshare.Result, tresRunMins []string) error {
	t := p.t
	n := t.Len()
	c.note(sec, int64(n))
	fairTree := r.Algorithm == fairshare.FairTreeAlgo
	vals := strs.vals
	snap := parquet.Int64Value(us)
	v := c.vals
	for lo := 0; lo < n; {
		k0 := c.pending
		m := min(n-lo, c.room())
		for k, q := range p.order[lo : lo+m] {
			k += k0
			v[0][k] = snap
			v[1][k] = vals[algo]
			v[2][k] = vals[p.account[q]]
			v[3][k] = vals[p.user[q]]
			v[4][k] = vals[p.part[q]]
			v[5][k] = vals[p.prnt[q]]
			v[6][k] = parquet.Int32Value(t.Depth[q])
			v[7][k] = booleanValues[boolIndex(t.IsUser[q])]
			if q != 0 && !t.SharesParent[q] {
				setInt64(&v[8][k], t.Shares[q])
			} else {
				v[8][k] = parquet.Value{}
			}
			v[9][k] = booleanValues[boolIndex(t.SharesParent[q])]
			setDouble(&v[10][k], r.NormShares[q])
			setDouble(&v[11][k], r.RawUsage[q])
			setDouble(&v[12][k], r.NormUsage[q])
			setDouble(&v[13][k], r.EffectvUsage[q])
			if t.IsUser[q] {
				setDouble(&v[14][k], r.FairShare[q])
			} else {
				v[14][k] = parquet.Value{}
			}
			if fairTree {
				setDouble(&v[15][k], r.LevelFS[q])
			} else {
				v[15][k] = parquet.Value{}
			}
			if fairTree && t.IsUser[q] && r.Rank[q] != 0 {
				v[16][k] = parquet.Int32Value(r.Rank[q])
				v[16][k].SetDefinitionLevel(1)
			} else {
				v[16][k] = parquet.Value{}
			}
			setString(&v[17][k], t.GrpTRESMins[q])
			if tresRunMins != nil {
				setString(&v[18][k], tresRunMins[q])
			} else {
				v[18][k] = parquet.Value{}
			}
			if l := t.Line[q]; l > 0 {
				v[19][k] = parquet.Int32Value(l)
				v[19][k].SetDefinitionLevel(1)
			} else {
				v[19][k] = parquet.Value{}
			}
		}
		if err := c.added(m); err != nil {
			return err
		}
		lo += m
	}
	return nil
}

// writeAssociationsSnapshot writes the associations rows of one snapshot
// of tree p (associationValues of the rows record.AssociationRows builds).
func writeAssociationsSnapshot(c *columnStream[record.AssociationRow], strs *internedStrings, p *snapshotTree, us, sec int64) error {
	t := p.t
	n := t.Len()
	c.note(sec, int64(n))
	vals := strs.vals
	snap := parquet.Int64Value(us)
	v := c.vals
	for lo := 0; lo < n; {
		k0 := c.pending
		m := min(n-lo, c.room())
		for k, q := range p.order[lo : lo+m] {
			k += k0
			v[0][k] = snap
			v[1][k] = vals[p.account[q]]
			v[2][k] = vals[p.user[q]]
			v[3][k] = vals[p.part[q]]
			v[4][k] = vals[p.prnt[q]]
			if t.SharesParent[q] {
				v[5][k] = parquet.Value{}
			} else {
				setInt64(&v[5][k], t.Shares[q])
			}
			v[6][k] = booleanValues[boolIndex(t.SharesParent[q])]
			v[7][k] = stringValue(t.Lineage[q])
			v[8][k] = vals[p.source]
		}
		if err := c.added(m); err != nil {
			return err
		}
		lo += m
	}
	return nil
}

// AppendRows writes rows of older segments (a recompute keeps those
// outside its window): fs and as are each sorted into table order and
// must not go back before a snapshot already written, nor a later call's
// rows or snapshots before them. AppendRows keeps fs and as until they
// are written: the caller must not change them.
func (s *Snapshots) AppendRows(fs []record.FairshareRow, as []record.AssociationRow) error {
	if s.done {
		return errors.New("snapshot segments: already closed")
	}
	if err := s.err(); err != nil {
		return err
	}
	if len(fs) > 0 {
		order, strs := snapshotOrder(fs, record.CompareFairshare, fairshareKey)
		if err := s.fs.rowsAfter(order, fs, func(r *record.FairshareRow) time.Time { return r.Snapshot }); err != nil {
			return err
		}
		s.fs.send(job[record.FairshareRow]{run: func(c *columnStream[record.FairshareRow]) error {
			return appendOrdered(c, order, fs, func(r *record.FairshareRow) time.Time { return r.Snapshot },
				func(v [][]parquet.Value, batch []int32) { fairshareValues(v, fs, strs, batch) })
		}})
	}
	if len(as) > 0 {
		order, strs := snapshotOrder(as, record.CompareAssociations, associationKey)
		if err := s.as.rowsAfter(order, as, func(r *record.AssociationRow) time.Time { return r.Snapshot }); err != nil {
			return err
		}
		s.as.send(job[record.AssociationRow]{run: func(c *columnStream[record.AssociationRow]) error {
			return appendOrdered(c, order, as, func(r *record.AssociationRow) time.Time { return r.Snapshot },
				func(v [][]parquet.Value, batch []int32) { associationValues(v, as, strs, batch) })
		}})
	}
	return nil
}

// appendOrdered writes rows at the positions order to c, a batch at a
// time, values filled by fill (as writeSortedColumns does).
func appendOrdered[T any](c *columnStream[T], order []int32, rows []T, at func(*T) time.Time, fill func(v [][]parquet.Value, batch []int32)) error {
	for _, i := range order {
		c.note(at(&rows[i]).Unix(), 1)
	}
	tmp := make([][]parquet.Value, len(c.vals))
	for lo := 0; lo < len(order); {
		k0 := c.pending
		m := min(len(order)-lo, c.room())
		for col := range tmp {
			tmp[col] = c.vals[col][k0 : k0+m]
		}
		fill(tmp, order[lo:lo+m])
		if err := c.added(m); err != nil {
			return err
		}
		lo += m
	}
	return nil
}

// Close waits for both files to be encoded and ends them, returning what
// each holds; a file with no rows is not ended (its Stats are zero, and
// the caller drops it). On error neither file is complete.
func (s *Snapshots) Close() (fs, as Stats, err error) {
	if s.done {
		return Stats{}, Stats{}, errors.New("snapshot segments: already closed")
	}
	s.done = true
	if err := errors.Join(s.fs.wait(), s.as.wait()); err != nil {
		return Stats{}, Stats{}, err
	}
	if fs, err = s.fs.c.finish(); err != nil {
		return Stats{}, Stats{}, err
	}
	if as, err = s.as.c.finish(); err != nil {
		return Stats{}, Stats{}, err
	}
	return fs, as, nil
}

// Abort stops both goroutines; the files are left unfinished. A no-op
// after Close.
func (s *Snapshots) Abort() {
	if s.done {
		return
	}
	s.done = true
	s.fs.stop.Store(true)
	s.as.stop.Store(true)
	s.fs.wait()
	s.as.wait()
}

// job is a piece of one file's writing: run writes (skipped once the file
// failed) and done, if set, is called after it either way.
type job[T any] struct {
	run  func(c *columnStream[T]) error
	done func()
}

// tableWorker is the goroutine that writes one file's jobs in order.
type tableWorker[T any] struct {
	c        *columnStream[T]
	jobs     chan job[T]
	finished chan struct{}
	stop     atomic.Bool // set by Abort: skip the jobs left
	mu       sync.Mutex
	err      error // the first error of a job, read through failed
	workerClock
}

// workerClock is the latest snapshot sent to a file's goroutine, in Unix
// microseconds, and whether any was: the caller's goroutine's own.
type workerClock struct {
	last int64
	any  bool
}

// startWorker starts the goroutine writing c.
func startWorker[T any](c *columnStream[T]) *tableWorker[T] {
	w := &tableWorker[T]{c: c, jobs: make(chan job[T], snapshotCopies-1), finished: make(chan struct{})}
	go func() {
		defer close(w.finished)
		var err error
		for j := range w.jobs {
			if err == nil && !w.stop.Load() {
				if err = j.run(c); err != nil {
					w.mu.Lock()
					w.err = err
					w.mu.Unlock()
				}
			}
			if j.done != nil {
				j.done()
			}
		}
	}()
	return w
}

// send queues j, waiting while the queue is full.
func (w *tableWorker[T]) send(j job[T]) { w.jobs <- j }

// failed returns the error of a job, if one failed.
func (w *tableWorker[T]) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// wait ends the queue and waits for the goroutine; it returns failed().
func (w *tableWorker[T]) wait() error {
	close(w.jobs)
	<-w.finished
	return w.failed()
}

// rowsAfter checks that the rows at order may come next (none before the
// latest snapshot sent) and moves the latest snapshot to their last.
func (w *tableWorker[T]) rowsAfter(order []int32, rows []T, at func(*T) time.Time) error {
	first, last := at(&rows[order[0]]).UnixMicro(), at(&rows[order[len(order)-1]]).UnixMicro()
	if w.any && first < w.last {
		return fmt.Errorf("snapshot segments: kept rows of snapshot %s after snapshot %s",
			time.UnixMicro(first).UTC().Format(time.RFC3339Nano), time.UnixMicro(w.last).UTC().Format(time.RFC3339Nano))
	}
	w.last, w.any = max(w.last, last), true
	return nil
}

// setDouble sets *v to an optional DOUBLE value: null for NaN (as
// record.AppendFairshareRows stores NaN as nil).
func setDouble(v *parquet.Value, x float64) {
	if math.IsNaN(x) {
		*v = parquet.Value{}
		return
	}
	*v = parquet.DoubleValue(x)
	v.SetDefinitionLevel(1)
}

// setInt64 sets *v to a set optional INT64 value.
func setInt64(v *parquet.Value, x int64) {
	*v = parquet.Int64Value(x)
	v.SetDefinitionLevel(1)
}

// setString sets *v to an optional STRING value: null for "".
func setString(v *parquet.Value, x string) {
	if x == "" {
		*v = parquet.Value{}
		return
	}
	*v = stringValue(x)
	v.SetDefinitionLevel(1)
}

// Stats are what a file written by Snapshots holds: its rows, and the
// least and greatest of their snapshots in Unix seconds.
type Stats struct {
	// Rows is the number of rows written.
	Rows int64
	// MinTime and MaxTime are the least and greatest snapshot (Unix
	// seconds); zero without rows.
	MinTime, MaxTime int64
}

// columnStream writes one Parquet file of table T row batch by row batch
// to w, cutting pages and row groups where writeSortedColumns does (so
// where GenericWriter[T].Write does): a batch of writeBatch rows is
// handed to the column writers at once, a row group ends every
// RowGroupRows rows.
type columnStream[T any] struct {
	name    string // the file, in errors
	stats   Stats
	pw      *parquet.GenericWriter[T]
	cols    []*parquet.ColumnWriter
	leaves  []string
	vals    [][]parquet.Value
	pending int // rows in vals not yet handed to the column writers
	group   int // rows of the current row group handed to them
	par     int // goroutines handing a chunk's columns to their writers
	err     error
}

// newColumnStream starts a file of table, written to w.
func newColumnStream[T any](w io.Writer, name, table string, leaves []string, strs *internedStrings) (*columnStream[T], error) {
	def, err := schemas.TableByName(table)
	if err != nil {
		return nil, err
	}
	c := &columnStream[T]{name: name, leaves: leaves}
	c.pw = parquet.NewGenericWriter[T](w, append(writerOptions(def.SortBy), internedWriterSchema[T](strs))...)
	if cols := c.pw.Schema().Columns(); !slices.EqualFunc(cols, leaves, func(path []string, name string) bool {
		return len(path) == 1 && path[0] == name
	}) {
		return nil, fmt.Errorf("%T schema has the leaf columns %v, the encoder writes %v", *new(T), cols, leaves)
	}
	c.cols = c.pw.ColumnWriters()
	backing := make([]parquet.Value, len(leaves)*chunkRows)
	c.vals = make([][]parquet.Value, len(leaves))
	for col := range c.vals {
		c.vals[col] = backing[col*chunkRows : (col+1)*chunkRows : (col+1)*chunkRows]
	}
	c.par = min(columnGoroutines, runtime.GOMAXPROCS(0), len(leaves))
	return c, nil
}

// chunkRows is how many rows' values a columnStream gathers before handing
// them to the column writers, a multiple of writeBatch that divides
// RowGroupRows; columnGoroutines is how many goroutines then hand them,
// each taking the next column not yet taken. The column writers of one
// file are independent until the row group ends (each buffers its own
// pages), so the columns of a chunk may be written at once: the
// fairshare file of a 100,000-association tree was the one goroutine
// still running when the others had done, and the run took 5.8 s on two
// cores where its CPU time allowed 5.
const (
	chunkRows        = 4096
	columnGoroutines = 2
)

// room is how many rows may be filled in after the pending ones.
func (c *columnStream[T]) room() int { return chunkRows - c.pending }

// note counts n rows of time sec (Unix seconds) into the partition's
// statistics.
func (c *columnStream[T]) note(sec, n int64) {
	if n <= 0 {
		return
	}
	if c.stats.Rows == 0 {
		c.stats.MinTime, c.stats.MaxTime = sec, sec
	} else {
		c.stats.MinTime, c.stats.MaxTime = min(c.stats.MinTime, sec), max(c.stats.MaxTime, sec)
	}
	c.stats.Rows += n
}

// added takes the m rows filled in after the pending ones (m ≤ room()),
// handing a full chunk to the column writers and ending a full row group.
func (c *columnStream[T]) added(m int) error {
	if c.err != nil {
		return c.err
	}
	c.pending += m
	if c.pending < chunkRows {
		return nil
	}
	return c.write()
}

// write hands the pending rows to the column writers, writeBatch rows at
// a time (the last batch of the file may be shorter), columns on
// c.par goroutines, and ends the row group when it is full.
func (c *columnStream[T]) write() error {
	n := c.pending
	errs := make([]error, len(c.cols))
	var next atomic.Int32
	work := func() {
		for col := int(next.Add(1) - 1); col < len(c.cols); col = int(next.Add(1) - 1) {
			w, v := c.cols[col], c.vals[col]
			for b := 0; b < n; b += writeBatch {
				if _, err := w.WriteRowValues(v[b:min(b+writeBatch, n)]); err != nil {
					errs[col] = fmt.Errorf("write %s: column %s: %w", c.name, c.leaves[col], err)
					break
				}
			}
		}
	}
	var wg sync.WaitGroup
	for range c.par - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.err = err
		return c.err
	}
	c.group += n
	c.pending = 0
	if c.group >= RowGroupRows {
		c.group = 0
		if err := c.pw.Flush(); err != nil { // ends the row group
			c.err = fmt.Errorf("write %s: %w", c.name, err)
			return c.err
		}
	}
	return nil
}

// finish ends the file and returns what it holds; with no rows it ends
// nothing and returns zero Stats.
func (c *columnStream[T]) finish() (Stats, error) {
	if c.err != nil {
		return Stats{}, c.err
	}
	if c.stats.Rows == 0 {
		return Stats{}, nil
	}
	err := func() error {
		if c.pending > 0 {
			if err := c.write(); err != nil {
				return err
			}
		}
		if c.group > 0 {
			if err := c.pw.Flush(); err != nil {
				return err
			}
		}
		return c.pw.Close()
	}()
	if err != nil {
		return Stats{}, fmt.Errorf("write %s: %w", c.name, err)
	}
	return c.stats, nil
}
