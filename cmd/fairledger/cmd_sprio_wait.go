package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/query"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/priority/queue"
)

// sprio --wait JOBID: one job over its whole wait, one line per decay tick
// it waited through (docs/sprio.md, "One job's wait"). The wait is read
// from the priority table's submit and start rows of the job (findWait,
// waitOf); the queue at
// each tick is a moment replayed from the history (pipeline.Moments), and
// the job's rank in it follows the start rows' rule (queue.Ahead).

// waitOptions are the options of sprio --wait.
type waitOptions struct {
	dir, cluster       string
	job                int64
	loc                *time.Location
	parsable, noHeader bool
}

// waitSpan is a job's wait: the id its pending rows carry (an array
// task's: the array's), from begin to end (exclusive), and where each
// came from.
type waitSpan struct {
	key                int64
	begin, end         int64
	beginFrom, endFrom string
	startFound         bool
}

// waitEvent is a submit or start row of the priority table, as findWait
// reads it (times in Unix seconds, 0 for none).
type waitEvent struct {
	event                string
	at, submit, eligible int64
	job, arrayJob        int64 // arrayJob 0: none
}

// findWait reads the job's submit and start rows, and the start rows of
// the tasks of an array of that id, from cluster's priority table (with
// DuckDB, which reads only the row groups that may hold them), and finds
// its wait (waitOf).
func findWait(ctx context.Context, dir, cluster string, job, histEnd int64) (waitSpan, error) {
	db, err := query.OpenDuckDB(ctx, dir)
	if err != nil {
		return waitSpan{}, err
	}
	defer db.Close()
	stmt := fmt.Sprintf(`SELECT event, epoch(event_time)::BIGINT, coalesce(epoch(submit)::BIGINT, 0), coalesce(epoch(eligible)::BIGINT, 0),
	job_id, coalesce(array_job_id, 0) FROM priority
	WHERE cluster = %s AND event IN ('submit', 'start') AND (job_id = %d OR array_job_id = %d) ORDER BY event_time, job_id`,
		query.SQLString(cluster), job, job)
	res, err := db.Query(ctx, stmt)
	if err != nil {
		return waitSpan{}, fmt.Errorf("history %s: the priority rows of job %d: %w", dir, job, err)
	}
	var events []waitEvent
	for _, r := range res.Rows {
		e := waitEvent{}
		e.event, _ = r[0].(string)
		for i, p := range []*int64{&e.at, &e.submit, &e.eligible, &e.job, &e.arrayJob} {
			n, ok := r[i+1].(int64)
			if !ok {
				return waitSpan{}, fmt.Errorf("history %s: the priority rows of job %d: column %d is %T, want an integer", dir, job, i+2, r[i+1])
			}
			*p = n
		}
		events = append(events, e)
	}
	s, ok := waitOf(job, events, histEnd)
	if !ok {
		return waitSpan{}, fmt.Errorf("history %s: job %d of cluster %s has no submit or start row in the priority table "+
			"(a job submitted held that never started has neither; an array task that never started waits as its array: give the array's id; "+
			"check with: fairledger sql --history %s \"SELECT event, event_time, job_id, array_job_id FROM priority WHERE job_id = %d OR array_job_id = %d\")",
			dir, job, cluster, dir, job, job)
	}
	return s, nil
}

// waitOf is job's wait from its events (sorted by time): it begins at the
// eligible time of its start row (else of its submit row, else its
// submission) and ends at its start; for an array's id, at the start of
// its last task to start; for a job that never started, at histEnd (the
// history's newest snapshot, the last run's --to). ok is false when job
// has neither a submit nor a start row.
func waitOf(job int64, events []waitEvent, histEnd int64) (s waitSpan, ok bool) {
	var submit, start, task *waitEvent
	for i := range events {
		e := &events[i]
		switch {
		case e.job != job:
			if e.event == record.EventStart && e.arrayJob == job {
				task = e // the latest
			}
		case e.event == record.EventSubmit && submit == nil:
			submit = e
		case e.event == record.EventStart && start == nil:
			start = e
		}
	}
	if submit == nil && start == nil {
		return waitSpan{}, false
	}
	s = waitSpan{key: job, end: histEnd, endFrom: "the history's end (its newest snapshot): the job never started"}
	if start != nil {
		s.startFound = true
		s.end, s.endFrom = start.at, "its start row"
		if start.arrayJob != 0 {
			s.key = start.arrayJob // its pending rows are the array's
		}
	} else if task != nil {
		s.startFound = true
		s.end, s.endFrom = task.at, fmt.Sprintf("the start row of task %d, its array's last to start", task.job)
	}
	for _, c := range []struct {
		e    *waitEvent
		what string
	}{{start, "start"}, {submit, "submit"}} {
		switch {
		case c.e == nil:
		case c.e.eligible != 0:
			s.begin, s.beginFrom = c.e.eligible, "eligible time of its "+c.what+" row"
			return s, true
		case c.e.submit != 0:
			s.begin, s.beginFrom = c.e.submit, "submit time of its "+c.what+" row"
			return s, true
		}
	}
	if submit != nil {
		s.begin, s.beginFrom = submit.at, "time of its submit row"
	} else {
		s.begin, s.beginFrom = start.at, "time of its start row, which holds no submit or eligible time"
	}
	return s, true
}

// waitTimes are the seconds to take the moments of a wait [begin, end) at:
// its first second, the middle of every tick interval of the grid of
// period from origin inside it (the middle, so that a tick slurmctld's log
// placed off the grid by less than half a period is still found), and its
// last second, sorted and distinct.
func waitTimes(begin, end, origin, period int64) []int64 {
	last := end - 1
	out := []int64{begin}
	if period <= 0 {
		period = 300
	}
	k := (begin - origin) / period
	if begin-origin < 0 && (begin-origin)%period != 0 {
		k--
	}
	for g := origin + k*period; g+period/2 < last; g += period {
		if t := g + period/2; t > begin {
			out = append(out, t)
		}
	}
	if last > begin {
		out = append(out, last)
	}
	return out
}

// waitLine is one line of sprio --wait: the job in one partition at one
// decay tick.
type waitLine struct {
	At, Tick time.Time // the moment, and the decay tick its factors are of
	Row      record.PriorityRow
	Rank     int // 1 + Ahead
	Ahead    int // jobs waiting in the partition with a higher priority
	Waiting  int // jobs waiting in the partition, itself included
	Change   string
}

// waitSample is a line with the queue it was ranked in.
type waitSample struct {
	line  waitLine
	ahead []int64        // sorted
	queue map[int64]bool // the jobs waiting in the partition
}

// waitTrack builds the lines of one partition from the moments, in time
// order, keeping the last moment of each tick.
type waitTrack struct {
	part  string
	tres  []string
	lines []waitLine
	prev  *waitSample // the last line kept
	cur   *waitSample // the newest moment, not yet kept
}

// add takes the job's row in the track's partition at moment at (tick),
// ranked among rows.
func (t *waitTrack) add(at, tick time.Time, row *record.PriorityRow, rows []record.PriorityRow) {
	ahead, waiting, ok := queue.Ahead(rows, row.JobID, t.part)
	if !ok {
		return
	}
	queue := map[int64]bool{}
	for i := range rows {
		if rows[i].Partition == t.part {
			queue[rows[i].JobID] = true
		}
	}
	s := &waitSample{line: waitLine{At: at, Tick: tick, Row: *row, Rank: 1 + len(ahead), Ahead: len(ahead), Waiting: waiting},
		ahead: ahead, queue: queue}
	if t.cur != nil && !t.cur.line.Tick.Equal(tick) {
		t.keep()
	}
	t.cur = s
}

// keep ends the current tick: its last moment becomes a line, with what
// changed since the line before.
func (t *waitTrack) keep() {
	if t.cur == nil {
		return
	}
	t.cur.line.Change = waitChange(t.prev, t.cur, t.tres)
	t.lines = append(t.lines, t.cur.line)
	t.prev, t.cur = t.cur, nil
}

// aheadMoves counts the jobs of ahead (one sample's jobs ahead) that the
// other sample did not have waiting at all, and those it had waiting but
// not ahead.
func aheadMoves(ahead []int64, other *waitSample) (absent, notAhead int) {
	for _, id := range ahead {
		switch {
		case !other.queue[id]:
			absent++
		case !slices.Contains(other.ahead, id):
			notAhead++
		}
	}
	return absent, notAhead
}

// countList formats the non-zero counts with their formats, joined by
// ", ".
func countList(counts []int, formats []string) string {
	var parts []string
	for i, n := range counts {
		if n > 0 {
			parts = append(parts, fmt.Sprintf(formats[i], n))
		}
	}
	return strings.Join(parts, ", ")
}

// waitChange says what moved the job between the lines prev and cur: the
// weighted factor whose change moved its priority most, and when its rank
// changed, the other jobs: those that overtook it (submitted since, or
// waiting before with a priority not above its own) or those ahead that
// left the queue or fell behind it. When its rank fell while its priority
// did not, the other jobs come first.
func waitChange(prev, cur *waitSample, tres []string) string {
	if prev == nil {
		return "wait starts"
	}
	var rank string
	switch a, b := prev.line.Rank, cur.line.Rank; {
	case b > a:
		submitted, waiting := aheadMoves(cur.ahead, prev)
		rank = "overtaken by " + countList([]int{submitted, waiting}, []string{"%d submitted", "%d waiting"})
	case b < a:
		left, passed := aheadMoves(prev.ahead, cur)
		rank = countList([]int{left, passed}, []string{"%d ahead left", "passed %d"})
	}
	factor := ""
	p, c := &prev.line.Row, &cur.line.Row
	best := 0.0
	consider := func(name string, d float64) {
		if math.Abs(d) > math.Abs(best) {
			best, factor = d, name
		}
	}
	consider("AGE", c.AgeW-p.AgeW)
	consider("ASSOC", c.AssocW-p.AssocW)
	consider("FAIRSHARE", c.FairShareW-p.FairShareW)
	consider("JOBSIZE", c.JobSizeW-p.JobSizeW)
	consider("PARTITION", c.PartitionW-p.PartitionW)
	consider("QOS", c.QOSW-p.QOSW)
	consider("SITE", float64(c.Site-p.Site))
	consider("NICE", -float64(c.Nice-p.Nice)) // nice lowers the priority
	for _, n := range tres {
		consider("TRES "+n, c.TRESW[n]-p.TRESW[n])
	}
	if factor != "" {
		d := strconv.FormatFloat(best, 'f', 0, 64)
		if d == "0" || d == "-0" {
			d = strconv.FormatFloat(best, 'g', 3, 64)
		}
		if best > 0 {
			d = "+" + d
		}
		factor += " " + d
	}
	switch {
	case rank == "":
		return factor
	case factor == "":
		return rank
	case cur.line.Rank > prev.line.Rank && c.Priority >= p.Priority:
		return rank + "; " + factor
	}
	return factor + "; " + rank
}

// waitTRES is the row's weighted TRES factors as sprio -l prints them:
// name=value of each non-zero one, in the cluster's order.
func waitTRES(r *record.PriorityRow, tres []string) string {
	var b []byte
	for _, n := range tres {
		v := r.TRESW[n]
		if v == 0 {
			continue
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, n...)
		b = append(b, '=')
		b = strconv.AppendFloat(b, v, 'f', 0, 64)
	}
	return string(b)
}

// waitColumns are sprio --wait's columns: header, width (0: the last,
// not cut) and whether right-justified.
var waitColumns = []struct {
	name  string
	width int
	right bool
}{
	{"TIME", 19, false}, {"TICK", 19, false}, {"PARTITION", 9, false}, {"PRIORITY", 10, true}, {"RANK", 6, true},
	{"AHEAD", 6, true}, {"WAITING", 7, true}, {"AGE", 10, true}, {"ASSOC", 10, true}, {"FAIRSHARE", 10, true},
	{"JOBSIZE", 10, true}, {"PARTITION", 10, true}, {"QOS", 10, true}, {"NICE", 11, true}, {"TRES", 20, true},
	{"CHANGE", 0, false},
}

// writeWait prints the lines: a header, then one line per tick, the
// partitions' blocks one after another; parsable: '|'-separated, none
// cut.
func writeWait(w io.Writer, lines []waitLine, tres []string, loc *time.Location, parsable, noHeader bool) error {
	var b []byte
	put := func(cells []string) {
		for i, c := range cells {
			col := waitColumns[i]
			switch {
			case parsable:
				if i > 0 {
					b = append(b, '|')
				}
				b = append(b, c...)
			case col.width == 0:
				b = append(b, ' ')
				b = append(b, c...)
			default:
				if i > 0 {
					b = append(b, ' ')
				}
				b = appendField(b, c, col.width, col.right)
			}
		}
		if !parsable {
			for len(b) > 0 && b[len(b)-1] == ' ' {
				b = b[:len(b)-1]
			}
		}
		b = append(b, '\n')
	}
	if !noHeader {
		cells := make([]string, len(waitColumns))
		for i, c := range waitColumns {
			cells[i] = c.name
		}
		put(cells)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	const layout = "2006-01-02T15:04:05"
	for i := range lines {
		l := &lines[i]
		r := &l.Row
		put([]string{l.At.In(loc).Format(layout), l.Tick.In(loc).Format(layout), r.Partition, strconv.FormatInt(r.Priority, 10),
			strconv.Itoa(l.Rank), strconv.Itoa(l.Ahead), strconv.Itoa(l.Waiting), f(r.AgeW), f(r.AssocW), f(r.FairShareW),
			f(r.JobSizeW), f(r.PartitionW), f(r.QOSW), strconv.FormatInt(r.Nice, 10), waitTRES(r, tres), l.Change})
	}
	_, err := w.Write(b)
	return err
}

// appendField appends s in width bytes, right-justified or not, cut to
// the width as sprio cuts its fields.
func appendField(b []byte, s string, width int, right bool) []byte {
	if len(s) > width {
		s = s[:width]
	}
	if right {
		b = append(b, strings.Repeat(" ", width-len(s))...)
	}
	b = append(b, s...)
	if !right {
		b = append(b, strings.Repeat(" ", width-len(s))...)
	}
	return b
}

// runSprioWait prints job o.job's wait: its priority, rank and factors at
// every decay tick it waited through, from moments replayed from the
// history.
func runSprioWait(ctx context.Context, log zerolog.Logger, stdout io.Writer, o waitOptions) error {
	v, err := pinHistory(o.dir)
	if err != nil {
		return err
	}
	defer v.Close()
	cluster, err := sshareCluster(v, o.dir, o.cluster)
	if err != nil {
		return err
	}
	last, err := v.Snapshot(cluster, time.Time{})
	if err != nil {
		return history.DamageHint(err, o.dir, v.Generation())
	}
	span, err := findWait(ctx, o.dir, cluster, o.job, last.Time.Unix())
	if err != nil {
		return err
	}
	f := func(t int64) string { return time.Unix(t, 0).In(o.loc).Format(time.RFC3339) }
	if span.end <= span.begin {
		return fmt.Errorf("history %s: job %d of cluster %s never waited: it became eligible at %s (%s) and %s at %s",
			o.dir, o.job, cluster, f(span.begin), span.beginFrom, map[bool]string{true: "started", false: "the history ends"}[span.startFound], f(span.end))
	}
	cfg, err := v.RunConfig(cluster, time.Unix(span.begin, 0))
	if err != nil {
		return history.DamageHint(err, o.dir, v.Generation())
	}
	if cfg.PriorityWeights == nil {
		return fmt.Errorf("history %s: the run of cluster %s at %s computed no job priority (run it with --priority)", o.dir, cluster, f(span.begin))
	}
	secs := waitTimes(span.begin, span.end, cfg.TickOriginUnix, cfg.CalcPeriodSec)
	times := make([]time.Time, len(secs))
	for i, s := range secs {
		times[i] = time.Unix(s, 0)
	}
	tracks := map[string]*waitTrack{}
	moments := 0
	err = pipeline.Moments(v, cluster, times, func(m *pipeline.MomentResult) error {
		moments++
		for i := range m.Priority {
			r := &m.Priority[i]
			if r.JobID != span.key {
				continue
			}
			t := tracks[r.Partition]
			if t == nil {
				t = &waitTrack{part: r.Partition, tres: cfg.TRES}
				tracks[r.Partition] = t
			} else if t.cur != nil && t.cur.line.At.Equal(m.Time) {
				continue // a second row of the job here: its first is its rank's
			}
			t.add(m.Time, m.Tick, r, m.Priority)
		}
		return nil
	})
	if errors.Is(err, pipeline.ErrNoMoment) {
		return fmt.Errorf("history %s: job %d's wait %s – %s: %w (the history keeps moment seeds since fairledger wrote them: rerun that window with fairledger run --from)",
			o.dir, o.job, f(span.begin), f(span.end), err)
	}
	if err != nil {
		return history.DamageHint(err, o.dir, v.Generation())
	}
	var lines []waitLine
	parts := make([]string, 0, len(tracks))
	for p := range tracks {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	for _, p := range parts {
		t := tracks[p]
		t.keep()
		lines = append(lines, t.lines...)
	}
	if len(lines) == 0 {
		return fmt.Errorf("history %s: job %d of cluster %s is in no queue of its wait %s – %s (%d moments): "+
			"its rows there carry another id, or the run computed none for it", o.dir, o.job, cluster, f(span.begin), f(span.end), moments)
	}
	log.Info().Str("cluster", cluster).Int64("job", o.job).Int64("queue_id", span.key).Str("from", f(span.begin)).Str("to", f(span.end)).
		Int("moments", moments).Int("lines", len(lines)).Strs("partitions", parts).
		Msgf("job %d of cluster %s waited from %s (%s) to %s (%s): its priority and rank at each of the %d decay ticks of its wait "+
			"(one moment replayed from the history per tick interval, its last; docs/sprio.md)",
			o.job, cluster, f(span.begin), span.beginFrom, f(span.end), span.endFrom, len(lines)/max(len(parts), 1))
	return writeWait(stdout, lines, cfg.TRES, o.loc, o.parsable, o.noHeader)
}
