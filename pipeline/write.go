package pipeline

import (
	"context"
	"maps"
	"slices"
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

	for m := first; !m.After(last); m = m.AddDate(0, 1, 0) {
		if err := ctx.Err(); err != nil {
			return err
		}
		mk := monthKey(m)
		var rows []export.JobRow
		if err := readIfExists(w.h, schemas.TableJobs, w.cluster, m, &rows); err != nil {
			return err
		}
		if jobMonths[mk] {
			fresh, err := w.spill.read(mk)
			if err != nil {
				return err
			}
			rows = w.merge(rows, fresh, sum)
			if len(rows) > 0 || w.h.HasPartition(schemas.TableJobs, w.cluster, m) {
				if err := w.h.WritePartition(schemas.TableJobs, w.cluster, m, rows); err != nil {
					return err
				}
				w.files++
			}
		}
		// The table's order, so that usage sums in the same order
		// whichever run computes it.
		order := make([]*export.JobRow, len(rows))
		for i := range rows {
			order[i] = &rows[i]
		}
		slices.SortFunc(order, export.CompareJobRows)
		next := m.AddDate(0, 1, 0)
		var ext int64
		for _, r := range order {
			ext = max(ext, effEnd(r, w.to))
			carry = append(carry, r)
		}
		if len(rows) > 0 {
			w.extent[mk] = ext
		}
		usage := usageRows(carry, m.Unix(), next.Unix(), w.to)
		if len(usage) > 0 || w.h.HasPartition(schemas.TableUsage, w.cluster, m) {
			if err := w.h.WritePartition(schemas.TableUsage, w.cluster, m, usage); err != nil {
				return err
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
		carry = kept
	}
	return nil
}

// merge replaces the rows of old whose (job_id_raw, start) fresh has, except
// that a finished row is never replaced by a running one, drops fresh rows
// starting at or after to, and sets every row's charged time up to to.
func (w *jobsWriter) merge(old, fresh []export.JobRow, sum *Summary) []export.JobRow {
	idx := make(map[jobKey]int, len(fresh))
	out := make([]export.JobRow, 0, len(old)+len(fresh))
	for _, r := range fresh {
		if r.Start.Unix() >= w.to {
			sum.AfterTo++
			continue
		}
		k := jobKey{r.JobIDRaw, r.Start.Unix()}
		if i, ok := idx[k]; ok { // the same run twice in the input: the later row wins
			out[i] = r
			continue
		}
		idx[k] = len(out)
		out = append(out, r)
		sum.JobsWritten++
	}
	for _, r := range old {
		k := jobKey{r.JobIDRaw, r.Start.Unix()}
		i, ok := idx[k]
		if !ok {
			out = append(out, r)
			continue
		}
		if r.End != nil && out[i].End == nil {
			out[i] = r // a finished record outlives a running one
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
