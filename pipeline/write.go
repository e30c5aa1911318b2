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
	spill   *spill
	extent  map[string]int64
	files   int
}

// effEnd is the time up to which a jobs row is charged: its end, or to for a
// running job, never after to.
func effEnd(r *export.JobRow, to int64) int64 {
	if r.End == nil {
		return to
	}
	return min(r.End.Unix(), to)
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

	// Jobs of earlier months that run into the first month.
	var carry []*export.JobRow
	for _, mk := range slices.Sorted(maps.Keys(w.extent)) {
		m, err := time.Parse("2006-01", mk)
		if err != nil || !m.Before(first) || w.extent[mk] <= first.Unix() {
			continue
		}
		var rows []export.JobRow
		if err := readIfExists(w.h, schemas.TableJobs, w.cluster, m, &rows); err != nil {
			return err
		}
		for i := range rows {
			if effEnd(&rows[i], w.to) > first.Unix() {
				r := rows[i]
				carry = append(carry, &r)
			}
		}
	}

	var months []time.Time
	for m := first; !m.After(last); m = m.AddDate(0, 1, 0) {
		months = append(months, m)
	}
	return w.months(ctx, months, jobMonths, carry, sum)
}

// monthJobs is a month's jobs table, in the table's order, as prepare
// leaves it for the month's usage.
type monthJobs struct {
	rows             []export.JobRow
	wrote            bool
	afterTo, written int64
	err              error
}

// months writes the jobs and usage partitions of months (ascending). A
// month's usage depends on the jobs of earlier months running into it, so
// the usage partitions are computed in month order; each overlaps with the
// merge and write of the next month's jobs partition. At most two months
// of jobs rows are in memory. (Merging several months at once used more
// CPU and memory for the same wall time: the jobs encoder already writes
// row groups in parallel.)
func (w *jobsWriter) months(ctx context.Context, months []time.Time, jobMonths map[string]bool, carry []*export.JobRow, sum *Summary) error {
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel: an early return stops the preparing goroutine
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prepared := make(chan monthJobs)
	wg.Go(func() {
		defer close(prepared)
		for _, m := range months {
			mj := w.prepare(ctx, m, jobMonths[monthKey(m)])
			select {
			case prepared <- mj:
			case <-ctx.Done():
				return
			}
			if mj.err != nil {
				return
			}
		}
	})
	for _, m := range months {
		mj, ok := <-prepared
		if !ok {
			return ctx.Err()
		}
		if mj.err != nil {
			return mj.err
		}
		sum.AfterTo += mj.afterTo
		sum.JobsWritten += mj.written
		if mj.wrote {
			w.files++
		}
		var err error
		if carry, err = w.usage(m, mj.rows, carry); err != nil {
			return err
		}
	}
	return nil
}

// prepare reads month m's jobs partition and, when the run has jobs of
// that month (fresh), merges the spilled rows into it and rewrites it.
func (w *jobsWriter) prepare(ctx context.Context, m time.Time, fresh bool) monthJobs {
	var mj monthJobs
	if mj.err = ctx.Err(); mj.err != nil {
		return mj
	}
	var rows []export.JobRow
	if mj.err = readIfExists(w.h, schemas.TableJobs, w.cluster, m, &rows); mj.err != nil {
		return mj
	}
	if fresh {
		spilled, err := w.spill.read(monthKey(m))
		if err != nil {
			mj.err = err
			return mj
		}
		rows = w.merge(rows, spilled, &mj)
	}
	export.SortJobRows(rows)
	mj.rows = rows
	if fresh && (len(rows) > 0 || w.h.HasPartition(schemas.TableJobs, w.cluster, m)) {
		if mj.err = w.h.WritePartition(schemas.TableJobs, w.cluster, m, mj.rows); mj.err != nil {
			return mj
		}
		mj.wrote = true
	}
	return mj
}

// usage records how far month m's jobs reach and writes the month's usage
// partition from the jobs carried in from earlier months and rows (in the
// table's order, so that usage sums in the same order whichever run
// computes it). It returns the jobs that run into the next month.
func (w *jobsWriter) usage(m time.Time, rows []export.JobRow, carry []*export.JobRow) ([]*export.JobRow, error) {
	next := m.AddDate(0, 1, 0)
	var ext int64
	for i := range rows {
		ext = max(ext, effEnd(&rows[i], w.to))
		carry = append(carry, &rows[i])
	}
	if len(rows) > 0 {
		w.extent[monthKey(m)] = ext
	}
	usage := usageRows(carry, m.Unix(), next.Unix(), w.to)
	if len(usage) > 0 || w.h.HasPartition(schemas.TableUsage, w.cluster, m) {
		if err := w.h.WritePartition(schemas.TableUsage, w.cluster, m, usage); err != nil {
			return nil, err
		}
		w.files++
	}
	// Keep copies of the rows that run into the next month, so this
	// month's rows can be freed.
	var kept []*export.JobRow
	for _, r := range carry {
		if effEnd(r, w.to) > next.Unix() {
			c := *r
			kept = append(kept, &c)
		}
	}
	return kept, nil
}

// merge replaces the rows of old whose (job_id_raw, start) fresh has, except
// that a finished row is never replaced by a running one; of fresh rows
// with the same key the later wins. It drops fresh rows starting at or
// after to, and sets every row's charged time up to to. It reuses fresh's
// memory; the order of the rows it returns is not significant (the caller
// sorts them).
func (w *jobsWriter) merge(old, fresh []export.JobRow, mj *monthJobs) []export.JobRow {
	type ref struct {
		id, start int64
		pos       int // fresh rows first, then old rows
	}
	nf := len(fresh)
	refs := make([]ref, 0, nf+len(old))
	for i := range fresh {
		if start := fresh[i].Start.Unix(); start < w.to {
			refs = append(refs, ref{fresh[i].JobIDRaw, start, i})
		} else {
			mj.afterTo++
		}
	}
	for i := range old {
		refs = append(refs, ref{old[i].JobIDRaw, old[i].Start.Unix(), nf + i})
	}
	slices.SortFunc(refs, func(a, b ref) int {
		if a.id != b.id {
			return cmp.Compare(a.id, b.id)
		}
		if a.start != b.start {
			return cmp.Compare(a.start, b.start)
		}
		return cmp.Compare(a.pos, b.pos)
	})
	keep := make([]bool, nf+len(old))
	row := func(pos int) *export.JobRow {
		if pos < nf {
			return &fresh[pos]
		}
		return &old[pos-nf]
	}
	for lo := 0; lo < len(refs); {
		hi := lo + 1
		for hi < len(refs) && refs[hi].id == refs[lo].id && refs[hi].start == refs[lo].start {
			hi++
		}
		group := refs[lo:hi]
		lo = hi
		win := -1
		for _, r := range group {
			if r.pos < nf {
				win = r.pos // the same run twice in the input: the later row wins
			}
		}
		if win < 0 { // not in the input: the table's rows stay
			for _, r := range group {
				keep[r.pos] = true
			}
			continue
		}
		mj.written++
		for _, r := range group {
			if r.pos >= nf && row(r.pos).End != nil && row(win).End == nil {
				win = r.pos // a finished record outlives a running one
			}
		}
		keep[win] = true
	}
	out := fresh[:0]
	for i := range fresh {
		if keep[i] {
			out = append(out, fresh[i])
		}
	}
	for i := range old {
		if keep[nf+i] {
			out = append(out, old[i])
		}
	}
	for i := range out {
		out[i].ChargedSec = max(0, effEnd(&out[i], w.to)-out[i].Start.Unix())
	}
	return out
}

type usageKey struct {
	account, user, partition string
	day                      int64
}

// usageRows splits the charged time of rows over the UTC days of the month
// [from, next), summing in rows' order.
func usageRows(rows []*export.JobRow, from, next, to int64) []export.UsageRow {
	acc := map[usageKey]int{}
	var out []export.UsageRow
	for _, r := range rows {
		s, e := max(r.Start.Unix(), from), min(effEnd(r, to), next)
		for s < e {
			day := s - s%86400
			end := min(e, day+86400)
			sec := float64(end - s)
			k := usageKey{r.Account, r.User, r.Partition, day}
			i, ok := acc[k]
			if !ok {
				i = len(out)
				acc[k] = i
				out = append(out, export.UsageRow{Account: r.Account, User: r.User, Partition: r.Partition,
					PeriodStart: time.Unix(day, 0).UTC()})
			}
			u := &out[i]
			u.BillingSec += r.Billing * r.UsageFactor * sec
			u.CPUSec += float64(r.AllocCPUs) * sec
			u.MemMBSec += r.MemMB * sec
			u.GPUSec += r.GPU * sec
			s = end
		}
	}
	return out
}
