package pipeline

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fairledger/fairledger/export"
	"github.com/fairledger/fairledger/schemas"
)

// jobsWriter merges the spilled jobs into the jobs table and recomputes the
// usage table, month by month in ascending order.
type jobsWriter struct {
	h       *export.History
	cluster string
	to      int64
	lo      int64 // the window's start, for merge's count of Unrecharged
	spill   *spill
	dict    *export.JobDict // the run's: the spill's records refer to it
	extent  map[string]int64
	files   int

	sums usageSums  // usage's, reused from month to month
	refs []mergeRef // merge's scratch, reused from month to month
	keep []bool
}

// unixSec converts Unix microseconds to seconds, rounding down (as
// time.Time.Unix does).
func unixSec(us int64) int64 {
	s := us / 1e6
	if us%1e6 < 0 {
		s--
	}
	return s
}

// effEnd is the time up to which a jobs record is charged: its end, or to
// for a running job, never after to.
func effEnd(r *export.JobRec, to int64) int64 {
	if r.Running() {
		return to
	}
	return min(unixSec(r.End), to)
}

func (w *jobsWriter) write(ctx context.Context, lo int64, carriedMonths []string, sum *Summary) error {
	jobMonths := map[string]bool{}
	for _, mk := range w.spill.monthKeys() {
		jobMonths[mk] = true
	}
	for _, mk := range carriedMonths {
		jobMonths[mk] = true
	}
	first := monthStart(lo)
	for mk := range jobMonths {
		m, err := time.Parse("2006-01", mk)
		if err != nil {
			return err
		}
		if m.Before(first) {
			first = m
		}
	}
	last := monthStart(w.to)
	// Every record of a month after to's starts after to: left for a later
	// run, and not merged, so merge does not count it in AfterTo.
	for mk := range jobMonths {
		if m, err := time.Parse("2006-01", mk); err == nil && m.After(last) {
			if sf := w.spill.months[mk]; sf != nil {
				sum.AfterTo += int64(sf.n)
			}
		}
	}

	// Jobs of earlier months that run into the first month.
	var carry []export.JobRec
	for _, mk := range slices.Sorted(maps.Keys(w.extent)) {
		m, err := time.Parse("2006-01", mk)
		if err != nil || !m.Before(first) || w.extent[mk] <= first.Unix() {
			continue
		}
		t, err := w.readTable(m, nil)
		if err != nil {
			return err
		}
		for _, r := range t.Recs {
			if effEnd(&r, w.to) > first.Unix() {
				carry = append(carry, r)
			}
		}
	}

	var months []time.Time
	for m := first; !m.After(last); m = m.AddDate(0, 1, 0) {
		months = append(months, m)
	}
	return w.months(ctx, months, jobMonths, carry, sum)
}

// readTable reads month m's jobs partition, if any, into t (emptied
// first) and returns t; a nil t is a new table. The table adds the
// partition's names and TRES sets to w.dict.
func (w *jobsWriter) readTable(m time.Time, t *export.JobTable) (*export.JobTable, error) {
	var rows []export.JobRow
	if err := readIfExists(w.h, schemas.TableJobs, w.cluster, m, &rows); err != nil {
		return nil, err
	}
	if t == nil {
		t = export.NewJobTable(w.dict, len(rows))
	}
	t.Dict = w.dict // a reused table has the snapshot of its last month
	t.Reset()
	for i := range rows {
		t.AppendRow(&rows[i])
	}
	return t, nil
}

// monthJobs is a month's jobs table, in the table's order, as prepare
// leaves it for the month's jobs partition and usage.
type monthJobs struct {
	m                time.Time
	table            *export.JobTable
	names            []string // the dictionary's names when the month was prepared
	fresh            bool
	afterTo, written int64
	unrecharged      int64 // see Summary.Unrecharged
	err              error
}

// encodedJobs is what encoding a month's jobs partition gives back: the
// table, free for another month, and whether the partition was written.
type encodedJobs struct {
	table *export.JobTable
	wrote bool
	err   error
}

// jobTables is the number of jobs tables months uses: one being prepared,
// one being encoded.
const jobTables = 2

// months writes the jobs and usage partitions of months (ascending). A
// month's usage depends on the jobs of earlier months running into it, so
// the calling goroutine prepares the months' tables and computes their
// usage in month order, while another goroutine encodes and writes each
// month's jobs partition (row groups in parallel) as the next month is
// prepared. (Encoding in the goroutine that prepared the table left a
// core idle for part of every month once decay was done; a third stage
// needed a third table, which under the run's memory limit cost more in
// garbage collection than it saved.) At most two months of jobs records
// are in memory, in two tables that are reused from month to month (a new
// table for every month spent 0.7 CPU-s of a 5 M-job year zeroing
// memory). (Merging several months at once used more CPU and memory for
// the same wall time.)
//
// Only the calling goroutine adds to w.dict; prepare hands each table on
// with a snapshot of the dictionary (JobDict.Snapshot), which the encoder
// reads while the next month adds to w.dict.
func (w *jobsWriter) months(ctx context.Context, months []time.Time, jobMonths map[string]bool, carry []export.JobRec, sum *Summary) error {
	toEncode := make(chan monthJobs)
	done := make(chan encodedJobs, jobTables) // never blocks: one per table
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for mj := range toEncode {
			wrote, err := w.encode(ctx, &mj)
			done <- encodedJobs{mj.table, wrote, err}
		}
	})
	collect := func(e encodedJobs) error {
		if e.wrote {
			w.files++
		}
		return e.err
	}
	err := func() error {
		room := w.spill.maxMonth() // so that a table is not outgrown by a later month
		made := 0
		for _, m := range months {
			var t *export.JobTable
			if made < jobTables {
				t, made = export.NewJobTable(w.dict, room), made+1
			} else {
				e := <-done
				if err := collect(e); err != nil {
					return err
				}
				t = e.table
			}
			mj := w.prepare(ctx, m, jobMonths[monthKey(m)], t)
			if mj.err != nil {
				return mj.err
			}
			sum.AfterTo += mj.afterTo
			sum.JobsWritten += mj.written
			sum.Unrecharged += mj.unrecharged
			var err error
			if carry, err = w.usage(m, mj.table.Recs, mj.names, carry); err != nil {
				return err
			}
			toEncode <- mj // usage copied what it keeps; encoding only reads the table
		}
		return nil
	}()
	close(toEncode)
	for e := range done {
		if cerr := collect(e); err == nil {
			err = cerr
		}
	}
	wg.Wait()
	return err
}

// prepare reads month m's jobs partition into t and, when the run has jobs
// of that month (fresh), merges the spilled records into it; it leaves the
// table sorted, using a snapshot of w.dict (for the encoder). The
// goroutine that runs prepare is the only one adding to w.dict.
func (w *jobsWriter) prepare(ctx context.Context, m time.Time, fresh bool, t *export.JobTable) monthJobs {
	mj := monthJobs{m: m, fresh: fresh}
	if mj.err = ctx.Err(); mj.err != nil {
		return mj
	}
	t, err := w.readTable(m, t)
	if err != nil {
		mj.err = err
		return mj
	}
	if fresh {
		old := len(t.Recs)
		if mj.err = w.spill.read(monthKey(m), t); mj.err != nil {
			return mj
		}
		w.merge(t, old, &mj)
	}
	t.Sort()
	t.Dict = w.dict.Snapshot()
	mj.table, mj.names = t, t.Dict.Names()
	return mj
}

// encode rewrites the jobs partition of a fresh month prepared as mj, when
// it has records or had a partition, and reports whether it wrote one. It
// reads only mj's table and the dictionary snapshot the table holds.
func (w *jobsWriter) encode(ctx context.Context, mj *monthJobs) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if !mj.fresh || (len(mj.table.Recs) == 0 && !w.h.HasPartition(schemas.TableJobs, w.cluster, mj.m)) {
		return false, nil
	}
	if err := w.h.WritePartition(schemas.TableJobs, w.cluster, mj.m, mj.table); err != nil {
		return false, err
	}
	return true, nil
}

// usage records how far month m's jobs reach and writes the month's usage
// partition from the jobs carried in from earlier months and recs (in the
// table's order, so that usage sums in the same order whichever run
// computes it); names are the dictionary's. It returns the jobs that run
// into the next month.
func (w *jobsWriter) usage(m time.Time, recs []export.JobRec, names []string, carry []export.JobRec) ([]export.JobRec, error) {
	next := m.AddDate(0, 1, 0)
	var ext int64
	for i := range recs {
		ext = max(ext, effEnd(&recs[i], w.to))
	}
	if len(recs) > 0 {
		w.extent[monthKey(m)] = ext
	}
	u := &w.sums
	u.reset(names)
	u.add(carry, m.Unix(), next.Unix(), w.to)
	u.add(recs, m.Unix(), next.Unix(), w.to)
	if len(u.rows) > 0 || w.h.HasPartition(schemas.TableUsage, w.cluster, m) {
		if err := w.h.WritePartition(schemas.TableUsage, w.cluster, m, u.rows); err != nil {
			return nil, err
		}
		w.files++
	}
	// Keep copies of the records that run into the next month, so this
	// month's table can be reused. The carried records that still run on
	// are kept in carry's own array (each moves to a position at or before
	// its own), so that the carry is not reallocated every month.
	kept := carry[:0]
	for _, part := range [][]export.JobRec{carry, recs} {
		for i := range part {
			if effEnd(&part[i], w.to) > next.Unix() {
				kept = append(kept, part[i])
			}
		}
	}
	return kept, nil
}

// merge merges the records t holds from the spill (from position old on)
// into the table's records before them: a spilled record replaces the
// table's records of the same (job_id_raw, start), except that a finished
// record is never replaced by a running one; of spilled records with the
// same key the later wins. It drops the spilled records a later run
// writes (see afterTo), and sets every kept record's charged time up to
// to. The records
// keep their relative order (not significant: the full sort key is
// unique once the keys are merged, and the caller sorts).
func (w *jobsWriter) merge(t *export.JobTable, old int, mj *monthJobs) {
	recs := t.Recs
	refs := slices.Grow(w.refs[:0], len(recs))
	for i := range recs {
		if start := unixSec(recs[i].Start); i < old || !afterTo(&recs[i], start, w.to) {
			refs = append(refs, mergeRef{recs[i].JobIDRaw, start, int32(i)})
		} else {
			mj.afterTo++
		}
	}
	w.refs = refs
	slices.SortFunc(refs, func(a, b mergeRef) int {
		if a.id != b.id {
			return cmp.Compare(a.id, b.id)
		}
		if a.start != b.start {
			return cmp.Compare(a.start, b.start)
		}
		return cmp.Compare(a.pos, b.pos)
	})
	keep := slices.Grow(w.keep[:0], len(recs))[:len(recs)]
	clear(keep)
	w.keep = keep
	for lo := 0; lo < len(refs); {
		hi := lo + 1
		for hi < len(refs) && refs[hi].id == refs[lo].id && refs[hi].start == refs[lo].start {
			hi++
		}
		group := refs[lo:hi]
		lo = hi
		win := int32(-1)
		for _, r := range group {
			if int(r.pos) >= old {
				win = r.pos // the same run twice in the input: the later record wins
			}
		}
		if win < 0 { // not in the input: the table's records stay
			for _, r := range group {
				keep[r.pos] = true
				if w.recharged(&recs[r.pos], r.start) {
					mj.unrecharged++
				}
			}
			continue
		}
		mj.written++
		if recs[win].Running() {
			for _, r := range group {
				if int(r.pos) < old && !recs[r.pos].Running() {
					win = r.pos // a finished record outlives a running one
					break
				}
			}
		}
		keep[win] = true
	}
	out := recs[:0]
	for i := range recs {
		if keep[i] {
			r := recs[i]
			r.ChargedSec = max(0, effEnd(&r, w.to)-unixSec(r.Start))
			out = append(out, r)
		}
	}
	t.Recs = out
}

// recharged reports whether a record that starts at start, kept in the
// table though not in the run's input, lies in the window the run charges
// afresh: it started at or after the window's start and charges time in
// it. (A record of an earlier run starts at or before that run's --to,
// the window's start when the run resumes; one starting there is written
// by the earlier run only when it has no length.)
func (w *jobsWriter) recharged(r *export.JobRec, start int64) bool {
	return start >= w.lo && start <= w.to && effEnd(r, w.to) > start
}

// afterTo reports whether a record that starts at start is left for a
// later run: it starts after to, or at to unless it also ended there (a
// zero-length job at to belongs to the run that ends at to, the only run
// whose window holds it when to is the default, the latest end).
func afterTo(r *export.JobRec, start, to int64) bool {
	return leftForLater(start, !r.Running() && unixSec(r.End) == start, to)
}

// leftForLater is afterTo's rule for a record that starts at start and,
// when zeroLength, also ended there.
func leftForLater(start int64, zeroLength bool, to int64) bool {
	return start > to || (start == to && !zeroLength)
}

// mergeRef is a record's key for merge: its job_id_raw, its start in
// seconds and its position in the table.
type mergeRef struct {
	id, start int64
	pos       int32
}

type usageKey struct {
	account, user, partition uint32
	day                      int64
}

// usageNames is the (account, user, partition) of a usage row, as
// dictionary indexes.
type usageNames struct{ account, user, partition uint32 }

// usageSums splits the charged time of jobs records over the UTC days of a
// month, summing in the order the records are added.
//
// A row is found by its names' slot (a map lookup only when the names
// differ from the record before's) and, for the days of the first add's
// span (the month), its day's entry in the slot's run of dayRow; the
// map from the full key, which took two thirds of add's time, is left for
// days outside that span.
type usageSums struct {
	acc   map[usageKey]int // rows of days outside the span
	names []string
	rows  []export.UsageRow

	slots    map[usageNames]int32
	dayRow   []int32 // slot*days + day index → row + 1 (0: none yet)
	firstDay int64   // the span: days firstDay, firstDay+86400, ... (days of them)
	days     int
	spanSet  bool

	// The last key and its row: records in the table's order mostly fall
	// on the row of the record before (same user, partition and day).
	last    usageKey
	lastRow int
	// The names of the last slot looked up, and that slot (-1: none).
	lastNames usageNames
	lastSlot  int32
}

// reset empties u for a month whose records refer to names, keeping its
// memory: the rows of the month before have been written by then.
func (u *usageSums) reset(names []string) {
	if u.acc == nil {
		u.acc = map[usageKey]int{}
		u.slots = map[usageNames]int32{}
	}
	clear(u.acc)
	clear(u.slots)
	u.names, u.rows = names, u.rows[:0]
	u.dayRow, u.spanSet = u.dayRow[:0], false
	u.last, u.lastRow = usageKey{}, 0
	u.lastSlot = -1
}

// utcDay returns the start of the UTC day of s, as add splits days.
func utcDay(s int64) int64 { return s - s%86400 }

// add adds the part of recs' charged time that falls in [from, next).
func (u *usageSums) add(recs []export.JobRec, from, next, to int64) {
	if !u.spanSet {
		u.firstDay, u.days, u.spanSet = utcDay(from), 0, true
		if next > from {
			u.days = int((utcDay(next-1)-u.firstDay)/86400) + 1
		}
	}
	for i := range recs {
		r := &recs[i]
		s, e := max(unixSec(r.Start), from), min(effEnd(r, to), next)
		for s < e {
			day := utcDay(s)
			end := min(e, day+86400)
			sec := float64(end - s)
			k := usageKey{r.Account, r.User, r.Partition, day}
			i := u.lastRow
			if k != u.last || len(u.rows) == 0 {
				i = u.row(k)
				u.last, u.lastRow = k, i
			}
			x := &u.rows[i]
			x.BillingSec += r.Billing * r.UsageFactor * sec
			x.CPUSec += float64(r.AllocCPUs) * sec
			x.MemMBSec += r.MemMB * sec
			x.GPUSec += r.GPU * sec
			s = end
		}
	}
}

// row returns the position of k's row in u.rows, appending a zero row
// for a new key.
func (u *usageSums) row(k usageKey) int {
	if d := (k.day - u.firstDay) / 86400; k.day >= u.firstDay && d < int64(u.days) {
		e := &u.dayRow[int(u.slot(usageNames{k.account, k.user, k.partition}))*u.days+int(d)]
		if *e == 0 {
			u.rows = append(u.rows, u.newRow(k))
			*e = int32(len(u.rows))
		}
		return int(*e - 1)
	}
	i, ok := u.acc[k]
	if !ok {
		i = len(u.rows)
		u.acc[k] = i
		u.rows = append(u.rows, u.newRow(k))
	}
	return i
}

// slot returns the slot of names, giving new names a slot of empty days.
func (u *usageSums) slot(names usageNames) int32 {
	if u.lastSlot >= 0 && names == u.lastNames {
		return u.lastSlot
	}
	id, ok := u.slots[names]
	if !ok {
		id = int32(len(u.slots))
		u.slots[names] = id
		n := len(u.dayRow)
		u.dayRow = slices.Grow(u.dayRow, u.days)[:n+u.days]
		clear(u.dayRow[n:])
	}
	u.lastNames, u.lastSlot = names, id
	return id
}

// newRow returns the empty row of k.
func (u *usageSums) newRow(k usageKey) export.UsageRow {
	return export.UsageRow{Account: u.names[k.account], User: u.names[k.user],
		Partition: u.names[k.partition], PeriodStart: time.Unix(k.day, 0).UTC()}
}
