package pipeline

import (
	"cmp"
	"context"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/internal/spill"
	"github.com/fairledger/fairledger/schemas"
)

// HotWindow is how far back from a run's --to a jobs row stays in a hot
// segment: the rows of jobs charged up to less than HotWindow before --to
// (running ones among them), which the next nights' overlapping sacct
// windows give again and whose usage days they recompute. A night rewrites
// the hot segments only; a row given again after it left them is found
// through the segments' statistics and its segment rewritten (correct,
// slower).
const HotWindow = 3 * 24 * time.Hour

// jobsWriter merges the spilled jobs into the jobs table and recomputes
// the usage days they change, month by month in ascending order, writing
// new segments into the run's commit. It reads only the segments a run
// can change: the hot ones, those holding a key of the input, and those
// charging time in the window (see doc.go).
type jobsWriter struct {
	tx      *history.Txn
	cluster string
	to      int64
	lo      int64 // the window's start, for merge's count of Unrecharged
	hotFrom int64 // rows charged up to after this go to hot segments
	spill   *spill.Jobs
	dict    *record.JobDict // the run's: the spill's records refer to it
	files   int

	rewritten map[string]bool // base jobs segments this run replaces
	changeAt  int64           // the earliest time whose usage changed, in the months done so far

	sums usageSums  // usage's, reused from month to month
	refs []mergeRef // merge's scratch, reused from month to month
	keep []bool

	piece  int                 // PieceRecords, or less in tests
	pieces [2]*record.JobTable // monthInPieces' tables
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
func effEnd(r *record.JobRec, to int64) int64 {
	if r.Running() {
		return to
	}
	return min(unixSec(r.End), to)
}

// segments returns the base's jobs segments of the cluster by month.
func (w *jobsWriter) segments() map[string][]history.Partition {
	out := map[string][]history.Partition{}
	for _, p := range w.tx.Base().Files(schemas.TableJobs, w.cluster) {
		out[p.Month] = append(out[p.Month], p)
	}
	return out
}

func (w *jobsWriter) write(ctx context.Context, lo int64, carriedMonths []string, sum *Summary) error {
	// Usage is recomputed at least from the window's first UTC day: on a
	// night only hot rows charge time there, and a recompute (--from)
	// rebuilds the usage of its window even where no job changed (a usage
	// file that verify --repair removed).
	w.rewritten, w.changeAt = map[string]bool{}, lo
	segs := w.segments()
	jobMonths := map[string]bool{}
	for _, mk := range w.spill.Months() {
		jobMonths[mk] = true
	}
	for _, mk := range carriedMonths {
		jobMonths[mk] = true
	}
	for mk, ps := range segs {
		for _, p := range ps {
			if p.Hot {
				jobMonths[mk] = true
			}
		}
	}
	first := monthStart(lo)
	for mk := range jobMonths {
		m, err := schemas.ParseMonth(mk)
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
		if m, err := schemas.ParseMonth(mk); err == nil && m.After(last) {
			sum.AfterTo += int64(w.spill.Count(mk))
		}
	}
	var months []time.Time
	for m := first; !m.After(last); m = m.AddDate(0, 1, 0) {
		months = append(months, m)
	}
	return w.months(ctx, months, jobMonths, segs, sum)
}

// readSegment appends the rows of base jobs segment p to t.
func (w *jobsWriter) readSegment(p history.Partition, t *record.JobTable) error {
	return w.tx.ReadJobs(p, t)
}

// monthJobs is a month's jobs table, in the table's order, as prepare
// leaves it for the month's jobs segments and usage.
type monthJobs struct {
	m                time.Time
	table            *record.JobTable
	names            []string // the dictionary's names when the month was prepared
	rewrite          bool     // the month's segments (segs) are replaced by table
	segs             []history.Partition
	afterTo, written int64
	unrecharged      int64 // see Summary.Unrecharged
	changeAt         int64 // the earliest time a record of the month changes usage
	err              error
}

// encodedJobs is what encoding a month's jobs segments gives back: the
// table, free for another month, and the number of files written.
type encodedJobs struct {
	table *record.JobTable
	files int
	err   error
}

// jobTables is the number of jobs tables months uses: one being prepared,
// one being encoded.
const jobTables = 2

// months writes the jobs segments and usage of months (ascending). A
// month's usage depends on the jobs of earlier months running into it, so
// the calling goroutine prepares the months' tables and computes their
// usage in month order, while another goroutine encodes and writes each
// month's jobs segments (row groups in parallel) as the next month is
// prepared. At most two months of jobs records are in memory, in two
// tables that are reused from month to month (a new table for every month
// spent 0.7 CPU-s of a 5 M-job year zeroing memory).
//
// Only the calling goroutine adds to w.dict; prepare hands each table on
// with a snapshot of the dictionary (JobDict.Snapshot), which the encoder
// reads while the next month adds to w.dict.
func (w *jobsWriter) months(ctx context.Context, months []time.Time, jobMonths map[string]bool, segs map[string][]history.Partition, sum *Summary) error {
	toEncode := make(chan monthJobs)
	done := make(chan encodedJobs, jobTables) // never blocks: one per table
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for mj := range toEncode {
			n, err := w.encode(ctx, &mj)
			done <- encodedJobs{mj.table, n, err}
		}
	})
	collect := func(e encodedJobs) error {
		w.files += e.files
		return e.err
	}
	err := func() error {
		room := w.room(months, jobMonths, segs) // so that no month outgrows a table
		made := 0
		var carry []record.JobRec
		for _, m := range months {
			var t *record.JobTable
			if made < jobTables {
				t, made = record.NewJobTable(w.dict, room), made+1
			} else {
				e := <-done
				if err := collect(e); err != nil {
					return err
				}
				t = e.table
			}
			mk := monthKey(m)
			if w.inPieces(mk, jobMonths[mk], segs[mk]) {
				var err error
				if carry, err = w.monthInPieces(ctx, m, jobMonths[mk], segs, t, carry, sum); err != nil {
					return err
				}
				done <- encodedJobs{table: t} // free again; done has room for every table
				continue
			}
			mj := w.prepare(ctx, m, jobMonths[mk], segs[mk], t)
			if mj.err != nil {
				return mj.err
			}
			sum.AfterTo += mj.afterTo
			sum.JobsWritten += mj.written
			sum.Unrecharged += mj.unrecharged
			var err error
			if carry, err = w.usage(&mj, segs, carry); err != nil {
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

// loads reports whether prepare loads segment p of a month: the hot
// segments, and in a month with input records (fresh) those charging time
// in the window.
func (w *jobsWriter) loads(p history.Partition, fresh bool) bool {
	return p.Hot || (fresh && p.MaxEnd > w.lo)
}

// room returns the most records prepare or monthInPieces puts into a
// table for one of months: the rows of the segments it loads and the
// records spilled for it (for a month in pieces, the loaded rows only). A
// table made with less room grows on the month that outgrows it by half
// its size again, and for a night's December of 2 M flood jobs that copy
// and its overshoot took 547 MB of a 1.29 GB heap (BenchmarkFloodNight2M).
func (w *jobsWriter) room(months []time.Time, jobMonths map[string]bool, segs map[string][]history.Partition) int {
	room := 0
	for _, m := range months {
		mk := monthKey(m)
		loaded, spilled := w.monthRecords(mk, jobMonths[mk], segs[mk])
		if loaded+spilled > w.pieceSize() {
			spilled = 0
		}
		room = max(room, loaded+spilled)
	}
	return room
}

// prepare loads into t the month's segments the run rewrites — the hot
// ones; in a month with input records (fresh) those charging time in the
// window and those holding a key of the input — and merges the spilled
// records into them. It leaves the table sorted, using a snapshot of
// w.dict (for the encoder). The goroutine that runs prepare is the only
// one adding to w.dict.
func (w *jobsWriter) prepare(ctx context.Context, m time.Time, fresh bool, segs []history.Partition, t *record.JobTable) monthJobs {
	mj := monthJobs{m: m, changeAt: math.MaxInt64}
	if mj.err = ctx.Err(); mj.err != nil {
		return mj
	}
	t.Dict = w.dict // a reused table has the snapshot of its last month
	t.Reset()
	loaded := func(p history.Partition) error {
		w.rewritten[p.Path] = true
		mj.segs = append(mj.segs, p)
		return w.readSegment(p, t)
	}
	for _, p := range segs {
		if w.loads(p, fresh) {
			if mj.err = loaded(p); mj.err != nil {
				return mj
			}
		}
	}
	old := len(t.Recs)
	if fresh {
		if mj.err = w.spill.Read(monthKey(m), t); mj.err != nil {
			return mj
		}
	}
	spilled := len(t.Recs)
	if spilled > old && slices.ContainsFunc(segs, func(p history.Partition) bool { return !w.rewritten[p.Path] }) {
		missing := missingKeys(t.Recs[:old], spilled-old, func(i int) jobKey {
			r := &t.Recs[old+i]
			return jobKey{r.JobIDRaw, unixSec(r.Start)}
		})
		if mj.err = w.loadHolders(segs, t, missing, &mj, loaded); mj.err != nil {
			return mj
		}
	}
	mj.rewrite = len(mj.segs) > 0 || spilled > old
	w.merge(t, old, spilled, &mj)
	t.Sort()
	t.Dict = w.dict.Snapshot()
	mj.table, mj.names = t, t.Dict.Names()
	return mj
}

// missingKeys returns the keys of input records, key(0) .. key(n-1), that
// none of stored's records has: keys a segment not loaded may hold.
func missingKeys(stored []record.JobRec, n int, key func(int) jobKey) []jobKey {
	have := make(map[jobKey]bool, len(stored))
	for i := range stored {
		have[jobKey{stored[i].JobIDRaw, unixSec(stored[i].Start)}] = true
	}
	var missing []jobKey
	for i := range n {
		if k := key(i); !have[k] {
			missing = append(missing, k)
		}
	}
	return missing
}

// loadHolders appends to t the settled segments not loaded yet that hold
// a key of missing (keys of input records found in no loaded segment): a
// job given again after it left the hot segments. The segments'
// statistics (ranges of job_id_raw and start) rule most out unread.
func (w *jobsWriter) loadHolders(segs []history.Partition, t *record.JobTable, missing []jobKey, mj *monthJobs, load func(history.Partition) error) error {
	want := map[jobKey]bool{}
	for _, k := range missing {
		want[k] = true
	}
	for _, p := range segs {
		if w.rewritten[p.Path] || !slices.ContainsFunc(missing, func(k jobKey) bool {
			return k.id >= p.MinID && k.id <= p.MaxID && k.start >= p.MinTime && k.start <= p.MaxTime
		}) {
			continue
		}
		scratch := record.NewJobTable(w.dict, int(p.Rows))
		if err := w.readSegment(p, scratch); err != nil {
			return err
		}
		if !slices.ContainsFunc(scratch.Recs, func(r record.JobRec) bool { return want[jobKey{r.JobIDRaw, unixSec(r.Start)}] }) {
			continue
		}
		w.rewritten[p.Path] = true
		mj.segs = append(mj.segs, p)
		for i := range scratch.Recs {
			t.Append(scratch.Recs[i], scratch.JobID(&scratch.Recs[i]))
		}
	}
	return nil
}

// encode writes the month's jobs segments from mj's table — the rows
// charged up to hotFrom or earlier as one segment, the later ones (hot)
// as another — and removes the segments they replace. It reads only mj's
// table and the dictionary snapshot the table holds, and returns the
// number of files written.
func (w *jobsWriter) encode(ctx context.Context, mj *monthJobs) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if !mj.rewrite {
		return 0, nil
	}
	t := mj.table
	// Stable partition: the settled records first, then the hot ones; both
	// stay in the table's order. Records move only from the first hot one
	// on (a backfill's months but the last have none).
	k := t.Partition(w.hot)
	// Removed first: a new segment equal to an old one has its name, and
	// stays.
	for _, p := range mj.segs {
		w.tx.Remove(p)
	}
	files := 0
	for _, part := range []struct {
		t   *record.JobTable
		hot bool
	}{{t.Slice(0, k), false}, {t.Slice(k, len(t.Recs)), true}} {
		if len(part.t.Recs) == 0 {
			continue
		}
		if _, err := w.tx.Write(schemas.TableJobs, w.cluster, mj.m, part.t, part.hot); err != nil {
			return files, err
		}
		files++
	}
	return files, nil
}

// hot reports whether a merged record goes to a hot segment: it is
// charged up to after hotFrom, or still running.
func (w *jobsWriter) hot(r *record.JobRec) bool {
	return unixSec(r.Start)+r.ChargedSec > w.hotFrom || r.Running()
}

// usage recomputes the month's usage from the earliest day whose usage
// changed (by a record of this month or an earlier one) on, from the jobs
// carried in from earlier months and the month's records (in the table's
// order, so that usage sums in the same order whichever run computes
// it), and replaces the usage rows of those days. It returns the jobs
// that run into the next month.
func (w *jobsWriter) usage(mj *monthJobs, segs map[string][]history.Partition, carry []record.JobRec) ([]record.JobRec, error) {
	next := mj.m.AddDate(0, 1, 0).Unix()
	from, on, resort, err := w.startUsage(mj, segs, carry)
	if err != nil {
		return nil, err
	}
	if on {
		if resort {
			mj.table.Sort()
			mj.table.Dict = w.dict.Snapshot()
			mj.names = mj.table.Dict.Names()
		}
		w.sums.add(mj.table.Recs, from, next, w.to)
		if err := w.writeUsage(mj.m, from); err != nil {
			return nil, err
		}
	}
	// Keep copies of the records that run into the next month, so this
	// month's table can be reused.
	return appendRunning(runningOn(carry, next, w.to), mj.table.Recs, next, w.to), nil
}

// startUsage begins the month's usage when it changes (on): from the
// earliest day whose usage changed, by a record of this month or an
// earlier one. It appends to mj's table the month's segments the run did
// not load that charge time from then on (resort: the table has records
// out of order, or names the snapshot lacks) and sums the usage of the
// carried jobs and of the earlier months' records reaching into it.
// w.sums then takes the month's records in the table's order.
func (w *jobsWriter) startUsage(mj *monthJobs, segs map[string][]history.Partition, carry []record.JobRec) (from int64, on, resort bool, err error) {
	m := mj.m
	next := m.AddDate(0, 1, 0)
	w.changeAt = min(w.changeAt, mj.changeAt)
	if w.changeAt >= next.Unix() {
		return 0, false, false, nil
	}
	from = max(m.Unix(), utcDay(w.changeAt))
	// Rows that reach into the recomputed days from segments the run
	// does not rewrite (a late or changed job before the hot segments):
	// the month's own are rewritten with it, earlier months' join the
	// carry for this month.
	for _, p := range segs[monthKey(m)] {
		if !w.rewritten[p.Path] && p.MaxEnd > from {
			w.rewritten[p.Path] = true
			mj.segs, mj.rewrite, resort = append(mj.segs, p), true, true
			mj.table.Dict = w.dict // a snapshot prepare left is read-only
			if err := w.readSegment(p, mj.table); err != nil {
				return 0, false, false, err
			}
		}
	}
	extra, err := w.reaching(segs, m, from)
	if err != nil {
		return 0, false, false, err
	}
	names := w.dict.Names()
	sums := carry
	if extra != nil {
		resort = true
		sums = canonicalCarry(append(slices.Clone(carry), extra.Recs...), names)
	}
	w.sums.reset(names)
	w.sums.add(sums, from, next.Unix(), w.to)
	return from, true, resort, nil
}

// runningOn keeps the carried records that run past next, in carry's own
// array (each moves to a position at or before its own), so that the
// carry is not reallocated every month.
func runningOn(carry []record.JobRec, next, to int64) []record.JobRec {
	kept := carry[:0]
	for i := range carry {
		if effEnd(&carry[i], to) > next {
			kept = append(kept, carry[i])
		}
	}
	return kept
}

// appendRunning appends to carry copies of the records of recs that run
// past next.
func appendRunning(carry, recs []record.JobRec, next, to int64) []record.JobRec {
	for i := range recs {
		if effEnd(&recs[i], to) > next {
			carry = append(carry, recs[i])
		}
	}
	return carry
}

// reaching reads the records of earlier months' segments the run does not
// rewrite that are charged past from (nil when there are none).
func (w *jobsWriter) reaching(segs map[string][]history.Partition, m time.Time, from int64) (*record.JobTable, error) {
	var out *record.JobTable
	for mk, ps := range segs {
		if mk >= monthKey(m) {
			continue
		}
		for _, p := range ps {
			if w.rewritten[p.Path] || p.MaxEnd <= from {
				continue
			}
			t := record.NewJobTable(w.dict, int(p.Rows))
			if err := w.readSegment(p, t); err != nil {
				return nil, err
			}
			if out == nil {
				out = record.NewJobTable(w.dict, 0)
			}
			for i := range t.Recs {
				if effEnd(&t.Recs[i], w.to) > from {
					out.Recs = append(out.Recs, t.Recs[i]) // usage needs no job id
				}
			}
		}
	}
	return out, nil
}

// canonicalCarry sorts carried records as the months' carry holds them:
// by start month, then in the jobs table's order (account, user, start,
// job_id_raw; a key is unique once merged).
func canonicalCarry(recs []record.JobRec, names []string) []record.JobRec {
	slices.SortStableFunc(recs, func(a, b record.JobRec) int {
		ma, mb := monthStart(unixSec(a.Start)), monthStart(unixSec(b.Start))
		if c := ma.Compare(mb); c != 0 {
			return c
		}
		if c := strings.Compare(names[a.Account], names[b.Account]); c != 0 {
			return c
		}
		if c := strings.Compare(names[a.User], names[b.User]); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.JobIDRaw, b.JobIDRaw)
	})
	return recs
}

// writeUsage replaces the month's usage rows of the days from from on by
// w.sums' rows: the month's usage segments wholly before from stay,
// those wholly after are removed, one across from keeps its earlier days
// in the new settled segment. Days from to's UTC day on go to a hot
// segment, which the next night replaces without reading.
func (w *jobsWriter) writeUsage(m time.Time, from int64) error {
	mk := monthKey(m)
	var settled []record.UsageRow
	for _, p := range w.tx.Base().Files(schemas.TableUsage, w.cluster) {
		if p.Month != mk || p.MaxTime < from {
			continue
		}
		if p.MinTime < from {
			var rows []record.UsageRow
			if err := w.tx.Read(p, &rows); err != nil {
				return err
			}
			for _, r := range rows {
				if r.PeriodStart.Unix() < from {
					settled = append(settled, r)
				}
			}
		}
		w.tx.Remove(p)
	}
	hotDay := utcDay(w.to)
	var hot []record.UsageRow
	for _, r := range w.sums.rows {
		if r.PeriodStart.Unix() >= hotDay {
			hot = append(hot, r)
		} else {
			settled = append(settled, r)
		}
	}
	for _, part := range []struct {
		rows []record.UsageRow
		hot  bool
	}{{settled, false}, {hot, true}} {
		if len(part.rows) == 0 {
			continue
		}
		if _, err := w.tx.Write(schemas.TableUsage, w.cluster, m, part.rows, part.hot); err != nil {
			return err
		}
		w.files++
	}
	return nil
}

// merge merges the records t holds from the spill (positions lo..hi) into
// the table's other records (from the history's segments): a spilled
// record replaces the table's records of the same (job_id_raw, start),
// except that a finished record is never replaced by a running one; of
// spilled records with the same key the later wins. It drops the spilled
// records a later run writes (see afterTo), sets every kept record's
// charged time up to to, and notes in mj.changeAt the earliest time from
// which the month's usage changes. The records keep their relative order
// (not significant: the full sort key is unique once the keys are merged,
// and the caller sorts).
func (w *jobsWriter) merge(t *record.JobTable, lo, hi int, mj *monthJobs) {
	recs := t.Recs
	spilled := func(pos int32) bool { return int(pos) >= lo && int(pos) < hi }
	refs := slices.Grow(w.refs[:0], len(recs))
	for i := range recs {
		if start := unixSec(recs[i].Start); !spilled(int32(i)) || !afterTo(&recs[i], start, w.to) {
			refs = append(refs, mergeRef{recs[i].JobIDRaw, start, int32(i)})
		} else {
			mj.afterTo++
		}
	}
	w.refs = refs
	sortRefs(refs)
	keep := slices.Grow(w.keep[:0], len(recs))[:len(recs)]
	clear(keep)
	w.keep = keep
	for group := range keyGroups(refs) {
		start := group[0].start
		win, prev := keyWinner(group, spilled)
		switch {
		case win < 0: // not in the input: the table's records stay
			for _, r := range group {
				keep[r.pos] = true
				w.keepStored(&recs[r.pos], r.start, mj)
			}
		case prev < 0:
			keep[win] = true
			mj.newJob(start)
		case w.replace(&recs[win], &recs[prev], start, mj):
			keep[win] = true
		default:
			keep[prev] = true
		}
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

// sortRefs sorts merge's keys by job_id_raw, start and position, so that
// the records of a key lie together in the order they were read.
func sortRefs(refs []mergeRef) {
	slices.SortFunc(refs, func(a, b mergeRef) int {
		if a.id != b.id {
			return cmp.Compare(a.id, b.id)
		}
		if a.start != b.start {
			return cmp.Compare(a.start, b.start)
		}
		return cmp.Compare(a.pos, b.pos)
	})
}

// keyGroups yields the runs of sorted refs that share a key.
func keyGroups(refs []mergeRef) iter.Seq[[]mergeRef] {
	return func(yield func([]mergeRef) bool) {
		for k := 0; k < len(refs); {
			h := k + 1
			for h < len(refs) && refs[h].id == refs[k].id && refs[h].start == refs[k].start {
				h++
			}
			if !yield(refs[k:h]) {
				return
			}
			k = h
		}
	}
}

// keyWinner returns the position of a key's input record that merge keeps
// (the last of the group's spilled ones: the same run twice in the input,
// the later record wins) and of the history's record it may replace (the
// first of the others); -1 for none.
func keyWinner(group []mergeRef, spilled func(pos int32) bool) (win, prev int32) {
	win, prev = -1, -1
	for _, r := range group {
		if spilled(r.pos) {
			win = r.pos
		} else if prev < 0 {
			prev = r.pos
		}
	}
	return win, prev
}

// charged is the time a record that starts at start charges up to to.
func (w *jobsWriter) charged(r *record.JobRec, start int64) int64 {
	return max(0, effEnd(r, w.to)-start)
}

// change notes that the month's usage changes from at on.
func (mj *monthJobs) change(at int64) { mj.changeAt = min(mj.changeAt, at) }

// keepStored accounts for a record of the history, starting at start,
// that no input record replaces: merge keeps it, charged up to to.
func (w *jobsWriter) keepStored(r *record.JobRec, start int64, mj *monthJobs) {
	if w.recharged(r, start) {
		mj.unrecharged++
	}
	if c := w.charged(r, start); c != r.ChargedSec {
		mj.change(start + min(c, r.ChargedSec))
	}
}

// newJob accounts for an input record whose key, starting at start, the
// history does not hold.
func (mj *monthJobs) newJob(start int64) {
	mj.written++
	mj.change(start)
}

// replace decides between the input's record of a key (in) and the
// history's (prev), both starting at start, and reports whether in is
// kept; else prev is: a finished record outlives a running one.
func (w *jobsWriter) replace(in, prev *record.JobRec, start int64, mj *monthJobs) bool {
	mj.written++
	if in.Running() && !prev.Running() {
		if c := w.charged(prev, start); c != prev.ChargedSec {
			mj.change(start + min(c, prev.ChargedSec))
		}
		return false
	}
	switch c := w.charged(in, start); {
	case !sameUsage(in, prev):
		mj.change(start)
	case c != prev.ChargedSec:
		mj.change(start + min(c, prev.ChargedSec))
	}
	return true
}

// sameUsage reports whether two records of a job charge usage alike per
// second: the same association, partition, billing and allocation.
func sameUsage(a, b *record.JobRec) bool {
	return a.Account == b.Account && a.User == b.User && a.Partition == b.Partition &&
		a.Billing == b.Billing && a.UsageFactor == b.UsageFactor && a.AllocCPUs == b.AllocCPUs &&
		a.MemMB == b.MemMB && a.GPU == b.GPU
}

// recharged reports whether a record that starts at start, kept in the
// table though not in the run's input, lies in the window the run charges
// afresh: it started at or after the window's start and charges time in
// it. (A record of an earlier run starts at or before that run's --to,
// the window's start when the run resumes; one starting there is written
// by the earlier run only when it has no length.)
func (w *jobsWriter) recharged(r *record.JobRec, start int64) bool {
	return start >= w.lo && start <= w.to && effEnd(r, w.to) > start
}

// afterTo reports whether a record that starts at start is left for a
// later run: it starts after to, or at to unless it also ended there (a
// zero-length job at to belongs to the run that ends at to, the only run
// whose window holds it when to is the default, the latest end).
func afterTo(r *record.JobRec, start, to int64) bool {
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
	rows  []record.UsageRow

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
func (u *usageSums) add(recs []record.JobRec, from, next, to int64) {
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
func (u *usageSums) newRow(k usageKey) record.UsageRow {
	return record.UsageRow{Account: u.names[k.account], User: u.names[k.user],
		Partition: u.names[k.partition], PeriodStart: time.Unix(k.day, 0).UTC()}
}
