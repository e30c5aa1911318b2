package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/internal/spill"
	"github.com/fairledger/fairledger/schemas"
)

// PieceRecords is the most jobs records the jobs writer holds in one table
// (about 120 MB of them). A month with more records to merge — the
// segments it loads and the records spilled for it — is merged and
// written in pieces (monthInPieces), so that a night of millions of jobs,
// or a backfill of tens of millions, does not hold its month whole.
const PieceRecords = 1 << 19

// pieceSize is w's PieceRecords (smaller in tests).
func (w *jobsWriter) pieceSize() int {
	if w.piece > 0 {
		return w.piece
	}
	return PieceRecords
}

// monthRecords returns how many records prepare would put into the table
// of month mk (fresh: it has input records): the rows of the segments it
// loads and the records spilled for it. The segments loadHolders and
// usage add are rare and left out.
func (w *jobsWriter) monthRecords(mk string, fresh bool, segs []history.Partition) (loaded, spilled int) {
	if fresh {
		spilled = w.spill.Count(mk)
	}
	for _, p := range segs {
		if w.loads(p, fresh) {
			loaded += int(p.Rows)
		}
	}
	return loaded, spilled
}

// inPieces reports whether month mk is merged and written in pieces.
func (w *jobsWriter) inPieces(mk string, fresh bool, segs []history.Partition) bool {
	loaded, spilled := w.monthRecords(mk, fresh, segs)
	return loaded+spilled > w.pieceSize()
}

// spilledWinner is an input record (its position in the spill's order)
// that replaces the history's record of its key (prev, a position in the
// month's table) unless the history's is finished and the input's
// running, which only the records can tell.
type spilledWinner struct{ in, prev int32 }

// monthInPieces does for a month too large for one table what prepare,
// usage and encode do together, holding at most the segments it loads
// (the history's records of the month that the run rewrites, in t), a
// key of 24 bytes for each record, and pieces of PieceRecords/2 records:
//
//  1. It reads the month's spilled records a piece at a time, keeping
//     their keys, and decides the merge of every key as merge does; a
//     key the history holds too needs both records, and waits.
//  2. It reads the spilled records again, keeps those the merge chose,
//     sorts each piece into the table's order and writes it to the spill
//     as a sorted run.
//  3. It merges the runs and the history's records kept (sorted) into
//     the table's order and hands each record on in that order to the
//     month's usage sums, the carry into the next month and two pieces,
//     settled and hot, each written as a jobs segment when it is full.
//
// The usage sums the records in the order one table gives them, so the
// usage is the same bit for bit; only the month's jobs segments are cut
// into pieces of at most PieceRecords/2 rows. It returns the carry into
// the next month.
func (w *jobsWriter) monthInPieces(ctx context.Context, m time.Time, fresh bool, segs map[string][]history.Partition, t *record.JobTable, carry []record.JobRec, sum *Summary) ([]record.JobRec, error) {
	mk := monthKey(m)
	mj := monthJobs{m: m, changeAt: math.MaxInt64, table: t}
	t.Dict = w.dict
	t.Reset()
	loaded := func(p history.Partition) error {
		w.rewritten[p.Path] = true
		mj.segs = append(mj.segs, p)
		return w.readSegment(p, t)
	}
	for _, p := range segs[mk] {
		if w.loads(p, fresh) {
			if err := loaded(p); err != nil {
				return nil, err
			}
		}
	}
	n := 0
	if fresh {
		n = w.spill.Count(mk)
	}
	half := max(1, w.pieceSize()/2)
	settled, piece := w.pieceTables(half)

	// 1. The input's keys: a spilled record's position is its place in
	// the spill, the history's records come after them.
	refs := slices.Grow(w.refs[:0], n)
	var late []jobKey // keys of records left for a later run
	pos := int32(0)
	if n > 0 {
		err := w.spill.Scan(mk, piece, half, func() error {
			for i := range piece.Recs {
				r := &piece.Recs[i]
				start := unixSec(r.Start)
				if afterTo(r, start, w.to) {
					mj.afterTo++
					late = append(late, jobKey{r.JobIDRaw, start})
				} else {
					refs = append(refs, mergeRef{r.JobIDRaw, start, pos})
				}
				pos++
			}
			return ctx.Err()
		})
		if err != nil {
			return nil, err
		}
	}
	if n > 0 && slices.ContainsFunc(segs[mk], func(p history.Partition) bool { return !w.rewritten[p.Path] }) {
		missing := missingKeys(t.Recs, len(refs)+len(late), func(i int) jobKey {
			if i < len(refs) {
				return jobKey{refs[i].id, refs[i].start}
			}
			return late[i-len(refs)]
		})
		if err := w.loadHolders(segs[mk], t, missing, &mj, loaded); err != nil {
			return nil, err
		}
	}
	old := int32(len(t.Recs))
	refs = slices.Grow(refs, int(old))
	for i := range t.Recs {
		refs = append(refs, mergeRef{t.Recs[i].JobIDRaw, unixSec(t.Recs[i].Start), int32(n) + int32(i)})
	}
	sortRefs(refs)
	keep := slices.Grow(w.keep[:0], int(old))[:old] // the history's records kept
	clear(keep)
	wins := make([]uint64, (n+63)/64) // the spilled records kept, unless waiting decides otherwise
	var waiting []spilledWinner
	spilled := func(pos int32) bool { return pos < int32(n) }
	for group := range keyGroups(refs) {
		win, prev := keyWinner(group, spilled)
		switch {
		case win < 0:
			for _, r := range group {
				keep[r.pos-int32(n)] = true
				w.keepStored(&t.Recs[r.pos-int32(n)], r.start, &mj)
			}
		case prev < 0:
			wins[win/64] |= 1 << (win % 64)
			mj.newJob(group[0].start)
		default:
			wins[win/64] |= 1 << (win % 64)
			waiting = append(waiting, spilledWinner{win, prev - int32(n)}) // prev: a position in t
		}
	}
	w.refs, w.keep = refs[:0], keep
	slices.SortFunc(waiting, func(a, b spilledWinner) int { return int(a.in - b.in) })

	// 2. The sorted runs.
	var runs []*spill.Run
	if n > 0 {
		pos, next := int32(0), 0
		err := w.spill.Scan(mk, piece, half, func() error {
			out := piece.Recs[:0]
			for i := range piece.Recs {
				r := piece.Recs[i]
				at := pos
				pos++
				if wins[at/64]&(1<<(at%64)) == 0 {
					continue
				}
				if next < len(waiting) && waiting[next].in == at {
					prev := waiting[next].prev
					next++
					if !w.replace(&r, &t.Recs[prev], unixSec(r.Start), &mj) {
						keep[prev] = true
						continue
					}
				}
				r.ChargedSec = w.charged(&r, unixSec(r.Start))
				out = append(out, r)
			}
			piece.Recs = out
			if len(out) > 0 {
				piece.Sort()
				run, err := w.spill.WriteRun(piece)
				if err != nil {
					return err
				}
				runs = append(runs, run)
			}
			return ctx.Err()
		})
		if err != nil {
			return nil, err
		}
		if err := w.spill.Drop(mk); err != nil {
			return nil, err
		}
	}
	kept := t.Recs[:0]
	for i := range t.Recs {
		if keep[i] {
			r := t.Recs[i]
			r.ChargedSec = w.charged(&r, unixSec(r.Start))
			kept = append(kept, r)
		}
	}
	t.Recs = kept
	mj.rewrite = len(mj.segs) > 0 || n > 0
	sum.AfterTo += mj.afterTo
	sum.JobsWritten += mj.written
	sum.Unrecharged += mj.unrecharged

	// 3. The month in the table's order.
	from, usageOn, _, err := w.startUsage(&mj, segs, carry)
	if err != nil {
		return nil, err
	}
	t.Sort()
	if mj.rewrite {
		// Removed first: a new segment equal to an old one has its name,
		// and stays.
		for _, p := range mj.segs {
			w.tx.Remove(p)
		}
	}
	settled.Reset()
	piece.Reset()
	hot := piece
	flush := func(p *record.JobTable, isHot bool) error {
		if len(p.Recs) == 0 || !mj.rewrite {
			p.Reset()
			return nil
		}
		if _, err := w.tx.Write(schemas.TableJobs, w.cluster, m, p, isHot); err != nil {
			return err
		}
		w.files++
		p.Reset()
		return nil
	}
	next := m.AddDate(0, 1, 0).Unix()
	carry = runningOn(carry, next, w.to)
	merged, err := newRunMerge(w.dict, t, runs)
	if err != nil {
		return nil, err
	}
	defer merged.close()
	for merged.next() {
		p := settled
		if w.hot(merged.rec) {
			p = hot
		}
		p.Append(*merged.rec, merged.id)
		r := p.Recs[len(p.Recs)-1:]
		if usageOn {
			w.sums.add(r, from, next, w.to)
		}
		carry = appendRunning(carry, r, next, w.to)
		if len(p.Recs) >= half {
			if err := flush(p, p == hot); err != nil {
				return nil, err
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	if err := merged.err; err != nil {
		return nil, err
	}
	if err := flush(settled, false); err != nil {
		return nil, err
	}
	if err := flush(hot, true); err != nil {
		return nil, err
	}
	if usageOn {
		if err := w.writeUsage(m, from); err != nil {
			return nil, err
		}
	}
	return carry, nil
}

// pieceTables returns monthInPieces' two tables of n records, made on
// first use and kept for the run's later months.
func (w *jobsWriter) pieceTables(n int) (a, b *record.JobTable) {
	if w.pieces[0] == nil {
		w.pieces = [2]*record.JobTable{record.NewJobTable(w.dict, n), record.NewJobTable(w.dict, n)}
	}
	for _, t := range w.pieces {
		t.Dict = w.dict
	}
	return w.pieces[0], w.pieces[1]
}

// runMerge merges a sorted table and sorted runs into the table's order,
// a record at a time: a binary heap of the sources by their current
// record (ties, which a merged month does not have, go to the earlier
// source, the table first).
type runMerge struct {
	dict    *record.JobDict
	table   *record.JobTable
	at      int // the table's current record
	readers []*spill.RunReader
	heap    []int // sources: 0 the table, i > 0 readers[i-1]
	started bool

	rec *record.JobRec // the current record and its job id
	id  []byte
	err error
}

func newRunMerge(d *record.JobDict, t *record.JobTable, runs []*spill.Run) (*runMerge, error) {
	m := &runMerge{dict: d, table: t}
	for _, r := range runs {
		rr, err := r.Reader()
		if err != nil {
			m.close()
			return nil, fmt.Errorf("merge the month's runs: %w", err)
		}
		m.readers = append(m.readers, rr)
	}
	return m, nil
}

// current returns source s's current record and job id.
func (m *runMerge) current(s int) (*record.JobRec, []byte) {
	if s == 0 {
		r := &m.table.Recs[m.at]
		return r, m.table.JobID(r)
	}
	rr := m.readers[s-1]
	return rr.Rec(), rr.JobID()
}

// advance moves source s to its next record and reports whether it has
// one.
func (m *runMerge) advance(s int) bool {
	if s == 0 {
		m.at++
		return m.at < len(m.table.Recs)
	}
	rr := m.readers[s-1]
	if rr.Next() {
		return true
	}
	if err := rr.Err(); err != nil && m.err == nil {
		m.err = fmt.Errorf("merge the month's runs: %w", err)
	}
	return false
}

func (m *runMerge) less(a, b int) bool {
	ra, ia := m.current(a)
	rb, ib := m.current(b)
	if c := m.dict.Compare(ra, ia, rb, ib); c != 0 {
		return c < 0
	}
	return a < b
}

func (m *runMerge) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			c = r
		}
		if !m.less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// next moves to the next record in order and reports whether there is
// one; m.err tells an end from a failure.
func (m *runMerge) next() bool {
	if !m.started {
		m.started = true
		m.at = -1
		for s := 0; s <= len(m.readers); s++ {
			if m.advance(s) {
				m.heap = append(m.heap, s)
			}
		}
		for i := len(m.heap)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	} else if len(m.heap) > 0 {
		if m.advance(m.heap[0]) {
			m.down(0)
		} else {
			m.heap[0] = m.heap[len(m.heap)-1]
			m.heap = m.heap[:len(m.heap)-1]
			m.down(0)
		}
	}
	if m.err != nil || len(m.heap) == 0 {
		return false
	}
	m.rec, m.id = m.current(m.heap[0])
	return true
}

// close closes the runs, removing their files.
func (m *runMerge) close() {
	for _, rr := range m.readers {
		rr.Close()
	}
	m.readers = nil
}
