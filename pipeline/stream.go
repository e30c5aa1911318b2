package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rs/zerolog"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/internal/spill"
	"github.com/fairledger/fairledger/priority/queue"
	"github.com/fairledger/fairledger/schemas"
)

// stream is the state of reading the sacct files.
type stream struct {
	m       *model
	opt     Options
	spill   *spill.Jobs
	table   *record.JobTable // the current batch's records
	jobs    decay.Jobs
	extra   jobExtra // beside jobs, with limits enforced (TRESRunMins)
	mem     memory.Allocator
	toKnown bool
	to      int64

	minStart, maxEnd int64
	minEnd           int64 // the earliest end of a job that ended; math.MaxInt64 when none did
	maxStart         int64 // 0 when no job of the cluster was read
	anyRunning       bool
	running          []carriedJob
	carriedKeys      map[jobKey]bool // running jobs of the checkpoints the run may resume from
	seen             map[jobKey]bool
	newestCk         int64
	late             []lateJob
	afterTo          int64   // a dry run's records left for a later run (see noteAfterTo)
	afterToStarts    []int64 // a dry run's record starts while to is unknown (see noteAfterTo)
	dedup            *dedup  // nil until the first batch
	charged          []bool  // batch's scratch: rows given to decay
	inputs           []record.RunInput
	byMonth          monthRows   // batch's scratch
	prio             []queue.Job // every job as its priority needs it; with Options.Priority only
}

type lateJob struct {
	key jobKey
	end int64 // decay.Running when running
}

func newStream(m *model, cps, loaded []*storedCheckpoint, opt Options, sp *spill.Jobs, dict *record.JobDict) *stream {
	s := &stream{m: m, opt: opt, spill: sp, table: record.NewJobTable(dict, 0), mem: memory.NewGoAllocator(),
		minStart: math.MaxInt64, maxEnd: math.MinInt64, minEnd: math.MaxInt64,
		carriedKeys: map[jobKey]bool{}, seen: map[jobKey]bool{}, newestCk: math.MinInt64}
	if !opt.To.IsZero() {
		s.toKnown, s.to = true, opt.To.Unix()
	}
	for _, c := range loaded {
		for _, j := range c.Running {
			s.carriedKeys[j.key()] = true
		}
	}
	for _, c := range cps {
		s.newestCk = max(s.newestCk, c.To)
	}
	return s
}

func (s *stream) readAll(ctx context.Context, in Inputs, opt Options, sum *Summary) error {
	var total int64
	for _, src := range in.Jobs {
		n, err := src.Size()
		if err != nil {
			return err
		}
		total += n
	}
	// Job times after the moment of the run are bad input: charged, they
	// would take the history into the future.
	jo := ingest.JobOptions{DenseTRES: s.m.bill.DenseTRES(), Cluster: s.m.cluster, Bounds: ingest.RunBounds(sum.Started),
		Priority: s.m.prio != nil, Hash: !opt.DryRun}
	var done int64
	for _, src := range in.Jobs {
		n, err := s.readSource(ctx, src, jo, opt, sum, done, total)
		done += n
		if err != nil {
			return err
		}
	}
	s.dedupe(sum)
	return nil
}

// readSource reads the job input src with jo, done of the total bytes of
// all inputs read before it, and returns the bytes it read.
func (s *stream) readSource(ctx context.Context, src ingest.JobSource, jo ingest.JobOptions, opt Options, sum *Summary, done, total int64) (int64, error) {
	p := src.Name()
	rd, err := src.Open(jo)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err == nil {
			// The run's ingested rows (those decay and the jobs table
			// keep: not the job steps, which are most of a sacct file
			// with steps), extrapolated from the bytes parsed so far (not
			// those read: the reader reads blocks ahead, and counting
			// them made the first estimate some 5 times too low, so
			// decay's columns were allocated twice). Counting every row
			// reserved 2.6 times the columns a 5 M-job year with steps
			// needs, and kept the heap above the soft memory limit.
			rows, parsed := max(sum.Ingest.Ingested+rd.Stats().Ingested, int64(rec.NumRows())), done+rd.ParsedBytes()
			expect := int(float64(rows) / float64(max(parsed, 1)) * float64(total))
			err = s.started(rec, sum, expect)
			rec.Release()
		}
		if err != nil {
			if fe := (*ingest.FileError)(nil); errors.As(err, &fe) {
				return 0, err // it names the file
			}
			return 0, fmt.Errorf("sacct %s: %w", p, err)
		}
		if opt.Progress != nil {
			st := rd.Stats()
			opt.Progress(Progress{File: p, BytesDone: done + rd.BytesRead(), BytesTotal: total, Rows: sum.Ingest.Read + st.Read})
		}
	}
	st := rd.Stats()
	rd.Close()
	n := rd.BytesRead()
	for _, w := range st.Warnings {
		opt.Log.Warn().Str("file", p).Msg(w)
	}
	sum.Files = append(sum.Files, st)
	sum.Ingest.Add(st)
	if jo.Hash {
		s.inputs = append(s.inputs, record.RunInput{Path: p, SizeBytes: n, SHA256: rd.SHA256()})
	}
	return n, nil
}

// dedupe drops the records of job runs the input gives more than once
// from decay's jobs and the stream's bookkeeping (see dedup), so that
// decay, the window's default bounds and the checkpoint's running jobs
// see the record the jobs table keeps, once.
func (s *stream) dedupe(sum *Summary) {
	dd := s.dedup
	s.dedup, s.charged = nil, nil // not needed past reading
	if dd == nil {
		return
	}
	dropped, winners := dd.finish(&s.jobs, &s.extra)
	sum.Duplicates = dropped
	if dropped == 0 {
		return
	}
	// The latest end and any running job, of the records that stay (the
	// start is the key's, the same for all).
	s.maxEnd, s.anyRunning = math.MinInt64, false
	note := func(end int64) {
		if end == decay.Running {
			s.anyRunning = true
		} else {
			s.maxEnd = max(s.maxEnd, end)
		}
	}
	for _, e := range s.jobs.End {
		note(e)
	}
	for _, o := range dd.others {
		if !o.dead {
			note(o.end)
		}
	}
	// A key's running entry is its winner's, the last one, when the
	// winner is running at to (it was appended when read); else none.
	last := map[jobKey]int{}
	for i, j := range s.running {
		if _, ok := winners[j.key()]; ok {
			last[j.key()] = i
		}
	}
	running := s.running[:0]
	for i, j := range s.running {
		if w, ok := winners[j.key()]; ok {
			runs := w.charged && (w.end == decay.Running || (s.toKnown && w.end > s.to))
			if !runs || last[j.key()] != i {
				continue
			}
		}
		running = append(running, j)
	}
	s.running = running
	// A late key counts once, with its winner's end.
	done := map[jobKey]bool{}
	late := s.late[:0]
	for _, l := range s.late {
		if w, ok := winners[l.key]; ok {
			if done[l.key] {
				continue
			}
			done[l.key], l.end = true, w.end
		}
		late = append(late, l)
	}
	s.late = late
}

// batch bills one batch, hands its jobs to decay and spills its rows.
// expect estimates the number of rows of the whole input, so that decay's
// job columns grow in few steps.
// started gives the rows of rec to batch, and with job priority first
// takes every row's priority inputs: the jobs that never started (a
// reader with KeepPending keeps them, their start null) go no further, so
// batch sees the started jobs only, in one record (a few never-started
// rows among each hundred would otherwise cut a batch into small ones).
func (s *stream) started(rec arrow.RecordBatch, sum *Summary, expect int) error {
	if s.m.prio == nil {
		return s.batch(rec, sum, expect)
	}
	// Grown in few steps, as decay's columns are: a 5 M-job year's
	// records are some 360 MB, and growing them by append copied them
	// some ten times over into fresh memory.
	if n, free := int(rec.NumRows()), cap(s.prio)-len(s.prio); n > free {
		s.prio = slices.Grow(s.prio, max(n, expect+expect/20-len(s.prio), cap(s.prio)/4))
	}
	var err error
	if s.prio, err = appendPrioJobs(s.m.prio, s.prio, rec); err != nil {
		return err
	}
	start, err := schemas.RecordColumn[*array.Timestamp](rec, schemas.ColStart, "timestamp")
	if err != nil {
		return err
	}
	if start.NullN() == 0 {
		return s.batch(rec, sum, expect)
	}
	// Counted as decay counts a row without a start: read, not charged.
	if sum.Resolve.ByReason == nil {
		sum.Resolve.ByReason = map[string]int64{}
	}
	sum.Resolve.Rows += int64(start.NullN())
	sum.Resolve.ByReason[decay.ReasonNoStart] += int64(start.NullN())
	if start.NullN() == start.Len() {
		return nil
	}
	// The runs of started rows, as slices, joined column by column.
	var parts []arrow.RecordBatch
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	n := start.Len()
	for lo := 0; lo < n; {
		if start.IsNull(lo) {
			lo++
			continue
		}
		hi := lo + 1
		for hi < n && start.IsValid(hi) {
			hi++
		}
		parts = append(parts, rec.NewSlice(int64(lo), int64(hi)))
		lo = hi
	}
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	rows := int64(0)
	for _, p := range parts {
		rows += p.NumRows()
	}
	arrs := make([]arrow.Array, len(parts))
	for c := range cols {
		// The parts of a dictionary column share the batch's dictionary:
		// only their indices are joined (Concatenate would compare the
		// dictionary of every part with the first's, some 1 CPU-s a 5
		// M-job year).
		d, isDict := rec.Column(c).(*array.Dictionary)
		for k, p := range parts {
			if isDict {
				arrs[k] = p.Column(c).(*array.Dictionary).Indices()
			} else {
				arrs[k] = p.Column(c)
			}
		}
		cols[c], err = array.Concatenate(arrs, s.mem)
		if isDict && err == nil {
			idx := cols[c]
			cols[c] = array.NewDictionaryArray(d.DataType(), idx, d.Dictionary())
			idx.Release()
		}
		if err != nil {
			return fmt.Errorf("jobs that started: column %s: %w", rec.ColumnName(c), err)
		}
	}
	ran := array.NewRecordBatch(rec.Schema(), cols, rows)
	defer ran.Release()
	return s.batch(ran, sum, expect)
}

// maxJobRate is decay's bound on a job's billing per second: a job at or
// above it is named with its file and line here, rather than by its index
// in decay's columns. ingest rejects each TRES count past the same bound
// (ingest.MaxTRESCount); a count below it times a large weight can still
// reach it.
const maxJobRate = 1 << 40

func (s *stream) batch(rec arrow.RecordBatch, sum *Summary, expect int) error {
	billed, bst, err := s.m.bill.Apply(s.mem, rec, s.usageFactor)
	if err != nil {
		return err
	}
	defer billed.Release()
	sum.Billing.Add(bst)
	if n, free := int(billed.NumRows()), cap(s.jobs.Start)-len(s.jobs.Start); n > free {
		s.jobs.Reserve(max(len(s.jobs.Start)+n, expect+expect/20, cap(s.jobs.Start)*5/4))
		if s.m.params.LimitsEnforced {
			s.extra.reserve(cap(s.jobs.Start))
		}
	}
	if s.dedup == nil {
		s.dedup = newDedup(expect)
	}
	dd := s.dedup
	if c := cap(s.jobs.Start); cap(dd.ids) < c {
		dd.ids = slices.Grow(dd.ids, c-len(dd.ids))
	}
	s.charged = slices.Grow(s.charged[:0], int(billed.NumRows()))[:billed.NumRows()]
	if err := s.m.res.AppendJobsMarked(billed, &s.jobs, &sum.Resolve, s.charged); err != nil {
		return err
	}
	t := s.table
	t.Reset()
	if err := t.AppendBatch(billed); err != nil {
		return err
	}
	_, codes, clusters, err := schemas.DictStringColumn(billed, schemas.ColCluster)
	if err != nil {
		return err
	}
	names := t.Dict.Names()
	ours := make([]bool, clusters.Len())
	for k := range ours {
		ours[k] = clusters.Value(k) == s.m.cluster
	}
	rows := &s.byMonth
	rows.reset()
	var month monthOf
	for i := range t.Recs {
		r := &t.Recs[i]
		if rate := r.Billing * r.UsageFactor; s.charged[i] && !(rate < maxJobRate) {
			return fmt.Errorf("ingest %s:%d: job %d: billing of %g per second (its TRES counts times TRESBillingWeights times UsageFactor) is 2^40 or more: check the row's AllocTRES and the partition's TRESBillingWeights",
				names[r.SourceFile], r.SourceLine, r.JobIDRaw, rate)
		}
		if s.charged[i] {
			dd.charged(r.JobIDRaw)
			if s.m.params.LimitsEnforced {
				s.extra.add(r)
			}
			if s.m.ctld != nil {
				if sec, ok := s.m.ctld.chargedTwice(r.JobIDRaw, unixSec(r.End)); ok && !r.Running() {
					if s.extra.twice == nil {
						s.extra.twice = map[int32]int64{}
					}
					s.extra.twice[int32(len(s.extra.after))] = sec
					if s.m.ctld.chargedInPass(r.JobIDRaw, unixSec(r.End)) {
						if s.extra.inPass == nil {
							s.extra.inPass = map[int32]bool{}
						}
						s.extra.inPass[int32(len(s.extra.after))] = true
					}
				}
				s.extra.after = append(s.extra.after, !r.Running() && s.m.ctld.endsAfter(r.JobIDRaw, unixSec(r.End)))
			}
		}
		if !ours[codes[i]] {
			sum.OtherCluster++
			continue
		}
		start := unixSec(r.Start)
		k := jobKey{r.JobIDRaw, start}
		if s.carriedKeys[k] {
			s.seen[k] = true
		}
		end := int64(decay.Running)
		if !r.Running() {
			end = unixSec(r.End)
			s.maxEnd = max(s.maxEnd, end)
			s.minEnd = min(s.minEnd, end)
		} else {
			s.anyRunning = true
		}
		s.minStart = min(s.minStart, start)
		s.maxStart = max(s.maxStart, start)
		dd.see(k)
		if !s.charged[i] {
			dd.other(k, end)
		}
		if end == decay.Running || (s.toKnown && end > s.to) {
			if a, _ := s.m.res.Lookup(names[r.Account], names[r.User], names[r.Partition]); a >= 0 {
				j := carriedJob{JobIDRaw: r.JobIDRaw, Start: start, End: end,
					Rate: r.Billing * r.UsageFactor, Key: keyArray(s.m.keys[a])}
				if s.m.params.LimitsEnforced {
					j.TRES, j.QOS, j.TimelimitMin = t.Dict.TRESMap(r.TRES), names[r.QOS], timeLimitMin(r)
				}
				s.running = append(s.running, j)
			}
		}
		if start < s.newestCk {
			s.late = append(s.late, lateJob{key: k, end: end})
		}
		rows.add(month.key(start), int32(i))
		if s.spill == nil {
			s.noteAfterTo(r, start)
		}
	}
	if s.m.params.LimitsEnforced && len(s.extra.tres) != len(s.jobs.Start) {
		return fmt.Errorf("%d TRESRunMins records for %d decay jobs", len(s.extra.tres), len(s.jobs.Start))
	}
	if s.spill == nil { // a dry run
		return nil
	}
	for _, mk := range rows.months() {
		if err := s.spill.Add(mk, t, rows.m[mk]); err != nil {
			return err
		}
	}
	return nil
}

// noteAfterTo counts, in a dry run, the records that a run's jobs writer
// counts as left for a later run (Summary.AfterTo, see afterTo): a dry run
// builds no jobs table. While the window's end is not known (the default
// --to) it keeps the record's start, shifted left one bit and odd when the
// record ended at its start, for afterToCount.
func (s *stream) noteAfterTo(r *record.JobRec, start int64) {
	if s.toKnown {
		if afterTo(r, start, s.to) {
			s.afterTo++
		}
		return
	}
	k := start << 1
	if !r.Running() && unixSec(r.End) == start {
		k |= 1
	}
	s.afterToStarts = append(s.afterToStarts, k)
}

// afterToCount is a dry run's Summary.AfterTo once the window ends at to.
func (s *stream) afterToCount(to int64) int64 {
	n := s.afterTo
	for _, k := range s.afterToStarts {
		if leftForLater(k>>1, k&1 == 1, to) {
			n++
		}
	}
	return n
}

// monthRows groups a batch's row indexes by start month, in slices kept
// from batch to batch. Most rows of a batch start in the month of the row
// before, so add looks the map up only when the month changes (a map
// update a row cost some 0.06 CPU-s a 5 M-job run, and growing fresh
// slices for every batch some more).
type monthRows struct {
	m   map[string][]int32 // by month key; a month without rows has an empty slice
	key string             // the month of cur
	cur []int32            // the rows of key, not yet stored in m
}

// reset empties the groups, keeping the slices of the months the last
// batch had and dropping the others.
func (g *monthRows) reset() {
	if g.m == nil {
		g.m = map[string][]int32{}
	}
	for k, idx := range g.m {
		if len(idx) == 0 {
			delete(g.m, k)
		} else {
			g.m[k] = idx[:0]
		}
	}
	g.key, g.cur = "", nil
}

// add appends row i to the rows of month mk.
func (g *monthRows) add(mk string, i int32) {
	if mk != g.key {
		g.flush()
		g.key, g.cur = mk, g.m[mk]
	}
	g.cur = append(g.cur, i)
}

func (g *monthRows) flush() {
	if g.key != "" {
		g.m[g.key] = g.cur
	}
}

// months stores the rows added last and returns the months that have rows,
// in order.
func (g *monthRows) months() []string {
	g.flush()
	var ks []string
	for k, idx := range g.m {
		if len(idx) > 0 {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// usageFactor is the batch's billing.QOSFactor: the factor of the QOS
// dump. A name the dump lacks is unknown (billing counts its rows and
// charges 1, as Slurm does a job without a QOS); without a dump every
// factor is 1 by design, and no QOS is unknown. The dump's names are
// searched in full, case-insensitively as slurmctld matches them: billing
// asks once per distinct name of a batch, and a site has few QOS.
func (s *stream) usageFactor(qos string) (float64, bool) {
	if s.m.qos == nil || qos == "" {
		return 1, true
	}
	for _, q := range s.m.qos.Rows {
		if strings.EqualFold(q.Name, qos) {
			return s.m.qos.UsageFactor(qos), true
		}
	}
	return 1, false
}

// settle reconciles the input with the checkpoint ck: it charges the jobs
// ck had running that the input lacks as still running, and counts the
// late jobs. It returns the start months of the carried jobs, whose jobs
// rows must be rewritten with their new charged time.
func (s *stream) settle(ck *checkpoint, lo, to int64, sum *Summary, log zerolog.Logger) []string {
	if ck == nil {
		return nil
	}
	carried := map[jobKey]bool{}
	var months []string
	for _, j := range ck.Running {
		carried[j.key()] = true
		if s.seen[j.key()] {
			continue
		}
		a, _ := foldAssoc(s.m.uni.Index, keyOf(j.Key))
		s.jobs.Start = append(s.jobs.Start, j.Start)
		s.jobs.End = append(s.jobs.End, j.End)
		s.jobs.Rate = append(s.jobs.Rate, j.Rate)
		s.jobs.Assoc = append(s.jobs.Assoc, a)
		if s.m.params.LimitsEnforced {
			s.extra.addCarried(s.table.Dict, j)
		}
		if s.m.ctld != nil {
			s.extra.after = append(s.extra.after, false)
		}
		s.running = append(s.running, j)
		sum.CarriedUnseen++
		months = append(months, monthKey(monthStart(j.Start)))
		if sum.CarriedUnseen <= 10 {
			log.Warn().Int64("job_id_raw", j.JobIDRaw).Time("start", time.Unix(j.Start, 0).UTC()).
				Msg("job running at the checkpoint is missing from the sacct input: charged as still running")
		}
	}
	for _, l := range s.late {
		if l.key.start < lo && (l.end == decay.Running || l.end > lo) && !carried[l.key] {
			sum.Late++
			if sum.Late <= 10 {
				log.Warn().Int64("job_id_raw", l.key.id).Time("start", time.Unix(l.key.start, 0).UTC()).
					Msg("job ran before the checkpoint but was not in that night's input: charged only from the checkpoint on; widen the sacct window (sacct -S)")
			}
		}
	}
	if sum.CarriedUnseen > 0 {
		log.Warn().Int("jobs", sum.CarriedUnseen).Msg("running jobs missing from the input, charged as still running")
	}
	if sum.Late > 0 {
		log.Warn().Int("jobs", sum.Late).Msg("jobs first seen after the checkpoint they ran before")
	}
	slices.Sort(months)
	return slices.Compact(months)
}

// nextRunning are the jobs running at to, for the next checkpoint, in a
// canonical order.
func (s *stream) nextRunning(to int64) []carriedJob {
	var out []carriedJob
	seen := map[jobKey]bool{}
	for _, j := range s.running {
		if j.Start >= to || (j.End != decay.Running && j.End <= to) || seen[j.key()] {
			continue
		}
		seen[j.key()] = true
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b carriedJob) int {
		if a.JobIDRaw != b.JobIDRaw {
			return cmp.Compare(a.JobIDRaw, b.JobIDRaw)
		}
		return cmp.Compare(a.Start, b.Start)
	})
	if out == nil {
		out = []carriedJob{}
	}
	return out
}
