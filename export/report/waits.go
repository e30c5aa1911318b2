package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fairledger/fairledger/export/query"
	"github.com/fairledger/fairledger/schemas"
)

// The section "Why did our jobs wait", from the priority table (written by
// run --priority, schemas/priority.md): how long the lab's jobs waited
// each month against the rest of the cluster, how their weighted priority
// factors compared with those of the other jobs waiting with them, and
// the lab's longest waits one by one.

// Factor is one term of a job's multifactor priority, in priority points
// (the weighted factor, as sprio -l prints it).
type Factor int

// The factors in the order the section lists them; a tie between two
// factors goes to the one listed first.
const (
	FactorAge Factor = iota
	FactorAssoc
	FactorFairShare
	FactorJobSize
	FactorPartition
	FactorQOS
	FactorTRES
	FactorSite
	// FactorNice is −nice: nice is subtracted from the priority, so a
	// nice of 100 is −100 points.
	FactorNice
	numFactors
)

// factorNames are the factors as the section names them.
var factorNames = [numFactors]string{"Age", "Association", "Fair share", "Job size", "Partition", "QOS", "TRES",
	"Site", "Nice"}

// String is the factor's name in the report.
func (f Factor) String() string {
	if f < 0 || f >= numFactors {
		return fmt.Sprintf("Factor(%d)", int(f))
	}
	return factorNames[f]
}

// Factors are the weighted priority factors of a job (or a mean or median
// of them), in priority points, indexed by Factor.
type Factors [numFactors]float64

// Waits is the section "Why did our jobs wait".
type Waits struct {
	// Recorded is false when the history holds no pending or start row of
	// the cluster in the period (no run --priority): the section is then
	// one sentence.
	Recorded bool
	// LabRows is false when none of the lab's jobs waited at a snapshot
	// or started in the period (the section is then one sentence too).
	LabRows bool
	// Months are the waits of the jobs that started in each UTC month of
	// the period (by the start row's time), then the whole period
	// (Month "period"). Empty when no job of the lab started in the period.
	Months []WaitMonth
	// Compare sets the lab's factors against the other jobs waiting at
	// the same snapshots.
	Compare FactorComparison
	// Longest are the lab's longest waits, longest first (at most
	// Options.LongestWaits).
	Longest []LongWait
}

// WaitMonth is one row of the waits-per-month table.
type WaitMonth struct {
	// Month is YYYY-MM, or "period" for the whole period.
	Month string
	// Lab are the lab's jobs; Rest the rest of the cluster's.
	Lab, Rest WaitStats
}

// WaitStats are the waits of the jobs that started in a month: the start
// rows of the priority table, each a job (or array task) started in the
// partition it ran in.
type WaitStats struct {
	// Jobs is the number of jobs started; FirstInLine of them started with
	// rank 1 (no job waiting in their partition had a higher priority).
	Jobs, FirstInLine int64
	// MedianSec and P90Sec are the nearest-rank median and 90th
	// percentile of the waits (start − eligible) in seconds: the waits
	// sorted, the ⌈p·n⌉-th of the n (the lower middle one for the median
	// of an even number). Meaningless when Jobs is 0.
	MedianSec, P90Sec int64
}

// FactorComparison sets the lab's weighted factors against those of the
// other jobs waiting at the same snapshots: over the pending rows (a job
// waiting in a partition) of every snapshot in the period at which at
// least one of the lab's jobs waited, the mean of each factor over the
// lab's rows and over the others' rows.
type FactorComparison struct {
	// Snapshots is the number of snapshots the means are taken over.
	Snapshots int
	// LabRows and OtherRows are the pending rows averaged.
	LabRows, OtherRows int64
	// Lab and Others are the mean factors; LabPriority and
	// OthersPriority the mean priority (sprio's PRIORITY).
	Lab, Others                 Factors
	LabPriority, OthersPriority float64
}

// Shortfall is how far the lab's mean factor is below the others' (others
// − lab, in priority points; negative when the lab is ahead).
func (c FactorComparison) Shortfall(f Factor) float64 { return c.Others[f] - c.Lab[f] }

// Dominant is the factor with the largest shortfall, the first listed
// among equal ones; ok is false when the lab is behind on no factor (or
// there is nothing to compare with).
func (c FactorComparison) Dominant() (f Factor, ok bool) {
	if c.LabRows == 0 || c.OtherRows == 0 {
		return 0, false
	}
	best := 0.0
	for i := range numFactors {
		if s := c.Shortfall(i); s > best {
			f, best, ok = i, s, true
		}
	}
	return f, ok
}

// LongWait is one of the lab's longest waits, with the jobs that waited
// in the same partition at the last snapshot before it started.
type LongWait struct {
	JobID                    int64
	User, Account, Partition string
	// Submit is nil when unknown; Start is the start row's time.
	Submit *time.Time
	Start  time.Time
	// WaitSec is start − eligible; Rank and Waiting are the start row's.
	WaitSec, Rank, Waiting int64
	// Priority and Factors are the job's at its start.
	Priority int64
	Factors  Factors
	// Snapshot is the last snapshot at or before the start (nil: none).
	Snapshot *time.Time
	// Others is the number of other jobs waiting in the partition at
	// Snapshot; OthersPriority and OthersFactors are their nearest-rank
	// medians (each factor's own median). Meaningless when Others is 0.
	Others         int64
	OthersPriority int64
	OthersFactors  Factors
}

// Gaps are the factors on which the job was behind the median of the
// others (their median − its factor, positive), largest first, the first
// listed among equal ones.
func (w LongWait) Gaps() []Factor {
	if w.Others == 0 {
		return nil
	}
	var out []Factor
	for f := range numFactors {
		if w.OthersFactors[f]-w.Factors[f] > 0 {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Factor) int {
		return cmp.Compare(w.OthersFactors[b]-w.Factors[b], w.OthersFactors[a]-w.Factors[a])
	})
	return out
}

// nearestRank returns the ⌈num/den·n⌉-th smallest of the sorted values
// (at least the first): the nearest-rank percentile num/den.
func nearestRank(sorted []int64, num, den int) int64 {
	n := len(sorted)
	k := max(1, (num*n+den-1)/den)
	return sorted[k-1]
}

// restNearestRank is nearestRank over the values of all that are not in
// sub (a sub-multiset of all; both sorted), without building the
// difference: the smallest all[i] with at least k values of the
// difference at or below it.
func restNearestRank(all, sub []int64, num, den int) int64 {
	n := len(all) - len(sub)
	k := max(1, (num*n+den-1)/den)
	upper := func(s []int64, v int64) int {
		i, _ := slices.BinarySearchFunc(s, v, func(e, t int64) int {
			if e <= t {
				return -1
			}
			return 1
		})
		return i
	}
	i, _ := slices.BinarySearchFunc(all, k, func(v int64, k int) int {
		if upper(all, v)-upper(sub, v) >= k {
			return 1
		}
		return -1
	})
	return all[i]
}

// waitStats are the figures of the sorted waits of the lab (lab) and of
// the whole cluster (all, a superset) with their rank-1 counts.
func waitStats(lab []int64, labFirst int64, all []int64, allFirst int64) (l, r WaitStats) {
	l = WaitStats{Jobs: int64(len(lab)), FirstInLine: labFirst}
	if len(lab) > 0 {
		l.MedianSec, l.P90Sec = nearestRank(lab, 1, 2), nearestRank(lab, 9, 10)
	}
	r = WaitStats{Jobs: int64(len(all) - len(lab)), FirstInLine: allFirst - labFirst}
	if r.Jobs > 0 {
		r.MedianSec, r.P90Sec = restNearestRank(all, lab, 1, 2), restNearestRank(all, lab, 9, 10)
	}
	return l, r
}

// startWaits are the waits of one account's jobs that started in one UTC
// month of the period.
type startWaits struct {
	Account, Month string
	// Waits are in no order (every use sorts them); First counts the
	// rank-1 starts.
	Waits []int64
	First int64
}

// pendingSums are the sums over the pending rows of one account (or of
// every account: Account "") at one snapshot: each factor in integer
// thousandths of a point (exact, so independent of the order rows are
// added in), nice and priority as sprio prints them.
type pendingSums struct {
	At      time.Time
	Account string
	Rows    int64
	// Milli are the factors' sums in thousandths (FactorNice: −nice).
	Milli    [numFactors]int64
	Priority int64
}

// prioData is what the section needs of the whole cluster from the
// priority table; each lab's own rows are in accountRows.
type prioData struct {
	recorded bool
	months   []string      // the UTC months of the period
	all      [][]int64     // per month (then the period), every start's wait, sorted
	allFirst []int64       // per month (then the period), the rank-1 starts
	totals   []pendingSums // per snapshot, the sums of every account's pending rows, sorted by event time
}

func (o Options) longestWaits() int {
	if o.LongestWaits <= 0 {
		return 5
	}
	return o.LongestWaits
}

// prioPeriod restricts a priority query to the rows of an event whose time
// is in [From, To) (the period's hive months first, so DuckDB opens only
// those files).
func (d *Dataset) prioPeriod(event string) string {
	return "cluster = " + query.SQLString(d.Cluster) + " AND " + d.monthRange() + " AND event = " + query.SQLString(event) +
		" AND event_time >= " + tsLit(d.From) + " AND event_time < " + tsLit(d.To)
}

// tresSum is the TRES factor of a priority row: the sum of its per-TRES
// terms.
const tresSum = "coalesce(list_sum(map_values(tres_w)), 0)"

// factorExprs are the SQL of the factors, in Factor order.
var factorExprs = [numFactors]string{"age_w", "assoc_w", "fairshare_w", "jobsize_w", "partition_w", "qos_w", tresSum,
	"site", "-nice"}

// loadPriority reads the cluster's figures of the priority table: the
// waits of every start per month, and the sums of the pending rows per
// snapshot (the rest of the cluster is every account but the lab's: these
// less the lab's own).
func (d *Dataset) loadPriority(q *querier) error {
	p := &d.prio
	for m := monthStart(d.From); m.Before(d.To); m = m.AddDate(0, 1, 0) {
		p.months = append(p.months, m.Format(schemas.MonthLayout))
	}
	p.all = make([][]int64, len(p.months)+1)
	p.allFirst = make([]int64, len(p.months)+1)
	starts := 0
	err := d.eachStart(q, nil, func(s startWaits, i int) {
		starts++
		for _, j := range []int{i, len(p.months)} {
			p.all[j] = append(p.all[j], s.Waits...)
			p.allFirst[j] += s.First
		}
	})
	if err != nil {
		return err
	}
	for _, w := range p.all {
		slices.Sort(w)
	}
	err = d.eachPending(q, false, nil, func(s pendingSums) { p.totals = append(p.totals, s) })
	if err != nil {
		return err
	}
	p.recorded = starts > 0 || len(p.totals) > 0
	return nil
}

// loadWaits reads the filtered accounts' starts, pending sums and longest
// waits.
func (d *Dataset) loadWaits(q *querier, filter []string) error {
	rows := &d.rows
	if err := d.eachStart(q, filter, func(s startWaits, _ int) { rows.starts = append(rows.starts, s) }); err != nil {
		return err
	}
	if err := d.eachPending(q, true, filter, func(s pendingSums) { rows.pending = append(rows.pending, s) }); err != nil {
		return err
	}
	return d.loadLongest(q, filter)
}

// eachStart calls fn with the waits of the starts of each filtered
// account in each UTC month of the period (the hive month is the UTC
// month of the start row's time), sorted by account and month, and the
// month's index in prio.months.
func (d *Dataset) eachStart(q *querier, filter []string, fn func(s startWaits, month int)) error {
	idx := make(map[string]int, len(d.prio.months))
	for i, m := range d.prio.months {
		idx[m] = i
	}
	return q.each("waits per month", `SELECT account, month, list(wait_sec), count(*) FILTER (WHERE "rank" = 1)
	FROM priority WHERE `+d.prioPeriod("start")+` AND wait_sec IS NOT NULL`+accountFilter(filter)+`
	GROUP BY ALL ORDER BY account, month`, func(row []any) error {
		s := startWaits{Account: asString(row[0]), Month: asString(row[1]), First: asInt(row[3])}
		list, _ := row[2].([]any)
		for _, v := range list {
			s.Waits = append(s.Waits, asInt(v))
		}
		if i, ok := idx[s.Month]; ok {
			fn(s, i)
		}
		return nil
	})
}

// eachPending calls fn with the sums of the pending rows of the filtered
// accounts at each snapshot of the period, per account (byAccount) or of
// all of them together (Account ""), sorted by event time and account.
func (d *Dataset) eachPending(q *querier, byAccount bool, filter []string, fn func(pendingSums)) error {
	account := "''"
	if byAccount {
		account = "account"
	}
	sums := make([]string, numFactors)
	for i, e := range factorExprs {
		sums[i] = "sum(((" + e + ") * 1000)::BIGINT)::BIGINT"
	}
	return q.each("pending factors", `SELECT event_time, `+account+`, count(*), `+strings.Join(sums, ", ")+`, sum(priority)::BIGINT
	FROM priority WHERE `+d.prioPeriod("pending")+accountFilter(filter)+` GROUP BY ALL ORDER BY 1, 2`, func(row []any) error {
		s := pendingSums{At: asTime(row[0]), Account: asString(row[1]), Rows: asInt(row[2]), Priority: asInt(row[3+numFactors])}
		for f := range numFactors {
			s.Milli[f] = asInt(row[3+f])
		}
		fn(s)
		return nil
	})
}

// loadLongest reads the N longest waits of each filtered account (a lab's
// N longest are among its accounts'), then the medians of the other jobs
// waiting in each one's partition at the last snapshot before its start.
func (d *Dataset) loadLongest(q *querier, filter []string) error {
	p := &d.rows
	type key struct {
		snap int64
		part string
		job  int64
	}
	var keys []string
	months := map[string]bool{}
	at := map[key][]int{}
	err := q.topPerAccount("longest waits", `WITH r AS (
	SELECT * FROM priority WHERE `+d.prioPeriod("start")+` AND wait_sec IS NOT NULL`+accountFilter(filter)+`
)`, "wait_sec", d.opts.longestWaits(), `account, "user", job_id, "partition", submit, event_time, wait_sec, "rank", waiting,
	priority, snapshot, `+strings.Join(factorExprs[:], ", "), `wait_sec DESC, event_time, job_id, "partition"`, func(row []any) error {
		i := len(p.longest)
		w := LongWait{Account: asString(row[0]), User: asString(row[1]), JobID: asInt(row[2]), Partition: asString(row[3]),
			Start: asTime(row[5]), WaitSec: asInt(row[6]), Rank: asInt(row[7]), Waiting: asInt(row[8]), Priority: asInt(row[9])}
		if row[4] != nil {
			s := asTime(row[4])
			w.Submit = &s
		}
		for f := range numFactors {
			w.Factors[f] = asFloat(row[11+f])
		}
		if row[10] != nil {
			s := asTime(row[10])
			w.Snapshot = &s
			k := key{s.UnixMicro(), w.Partition, w.JobID}
			if _, dup := at[k]; !dup {
				keys = append(keys, "("+tsLit(s)+", "+query.SQLString(w.Partition)+", "+fmt.Sprint(w.JobID)+")")
				months[s.Format(schemas.MonthLayout)] = true
			}
			at[k] = append(at[k], i)
		}
		p.longest = append(p.longest, w)
		return nil
	})
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	monthList := make([]string, 0, len(months))
	for m := range months {
		monthList = append(monthList, query.SQLString(m))
	}
	slices.Sort(monthList)
	meds := make([]string, numFactors)
	for i, e := range factorExprs {
		meds[i] = "quantile_disc(" + e + ", 0.5)"
	}
	return q.each("jobs waiting before the longest waits", `WITH k(snap, part, job) AS (VALUES `+strings.Join(keys, ", ")+`),
	o AS (SELECT * FROM priority WHERE cluster = `+query.SQLString(d.Cluster)+` AND month IN (`+strings.Join(monthList, ", ")+`)
		AND event = 'pending')
	SELECT k.snap, k.part, k.job, count(o.job_id), quantile_disc(o.priority, 0.5), `+strings.Join(meds, ", ")+`
	FROM k LEFT JOIN o ON o.event_time = k.snap AND o."partition" = k.part AND o.job_id <> k.job GROUP BY ALL`, func(row []any) error {
		for _, i := range at[key{asTime(row[0]).UnixMicro(), asString(row[1]), asInt(row[2])}] {
			w := &p.longest[i]
			w.Others = asInt(row[3])
			if w.Others == 0 {
				continue
			}
			w.OthersPriority = asInt(row[4])
			for f := range numFactors {
				w.OthersFactors[f] = asFloat(row[5+f])
			}
		}
		return nil
	})
}

// waits sets the lab's section "Why did our jobs wait".
func (d *Dataset) waits(r *Report, inLab func(string) bool) {
	p := &d.prio
	w := Waits{Recorded: p.recorded}
	if !w.Recorded {
		r.Waits = w
		return
	}
	// Waits per month and over the period.
	labW := make([][]int64, len(p.months)+1)
	labFirst := make([]int64, len(p.months)+1)
	idx := map[string]int{}
	for i, m := range p.months {
		idx[m] = i
	}
	for _, s := range d.rows.starts {
		if !inLab(s.Account) {
			continue
		}
		for _, j := range []int{idx[s.Month], len(p.months)} {
			labW[j] = append(labW[j], s.Waits...)
			labFirst[j] += s.First
		}
	}
	if total := len(p.months); len(labW[total]) > 0 {
		for i := range labW {
			slices.Sort(labW[i])
			m := WaitMonth{Month: "period"}
			if i < total {
				m.Month = p.months[i]
			}
			m.Lab, m.Rest = waitStats(labW[i], labFirst[i], p.all[i], p.allFirst[i])
			w.Months = append(w.Months, m)
		}
	}
	w.Compare = compareFactors(p.totals, d.rows.pending, inLab)
	for _, l := range d.rows.longest {
		if inLab(l.Account) {
			w.Longest = append(w.Longest, l)
		}
	}
	slices.SortStableFunc(w.Longest, func(a, b LongWait) int {
		if c := cmp.Compare(b.WaitSec, a.WaitSec); c != 0 {
			return c
		}
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(a.JobID, b.JobID); c != 0 {
			return c
		}
		return strings.Compare(a.Partition, b.Partition)
	})
	w.Longest = w.Longest[:min(len(w.Longest), d.opts.longestWaits())]
	w.LabRows = len(w.Months) > 0 || w.Compare.LabRows > 0
	r.Waits = w
}

// compareFactors sets the lab's pending rows against the others' at the
// snapshots where the lab had a job waiting: the lab's are the sums of
// its accounts (sums, sorted by event time, account), the others' those
// of the whole cluster at the snapshot (totals, sorted by event time) less
// the lab's. The sums are integers, so the difference is exact.
func compareFactors(totals, sums []pendingSums, inLab func(string) bool) FactorComparison {
	var c FactorComparison
	var lab, all [numFactors]int64
	var labPrio, allPrio, allRows int64
	for i := 0; i < len(sums); {
		j := i
		for j < len(sums) && sums[j].At.Equal(sums[i].At) {
			j++
		}
		snap := sums[i:j]
		i = j
		if !slices.ContainsFunc(snap, func(s pendingSums) bool { return inLab(s.Account) }) {
			continue
		}
		t, ok := slices.BinarySearchFunc(totals, snap[0].At, func(s pendingSums, at time.Time) int { return s.At.Compare(at) })
		if !ok {
			// Both come from the same rows of one pinned generation.
			panic(fmt.Sprintf("report: pending rows at %s without the cluster's sums", fmtTime(snap[0].At)))
		}
		c.Snapshots++
		allRows += totals[t].Rows
		allPrio += totals[t].Priority
		for f := range numFactors {
			all[f] += totals[t].Milli[f]
		}
		for _, s := range snap {
			if !inLab(s.Account) {
				continue
			}
			c.LabRows += s.Rows
			labPrio += s.Priority
			for f := range numFactors {
				lab[f] += s.Milli[f]
			}
		}
	}
	var others [numFactors]int64
	for f := range numFactors {
		others[f] = all[f] - lab[f]
	}
	c.OtherRows = allRows - c.LabRows
	mean := func(sum [numFactors]int64, prio, n int64) (m Factors, p float64) {
		if n == 0 {
			return m, 0
		}
		for f := range numFactors {
			m[f] = float64(sum[f]) / 1000 / float64(n)
		}
		return m, float64(prio) / float64(n)
	}
	c.Lab, c.LabPriority = mean(lab, labPrio, c.LabRows)
	c.Others, c.OthersPriority = mean(others, allPrio-labPrio, c.OtherRows)
	return c
}
