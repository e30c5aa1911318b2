package pipeline

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/priority/queue"
)

// ctldLog is what slurmctld's log tells a run (Inputs.SlurmctldLogs): the
// times its decay thread really ticked, and the job ends that came after
// a tick in that tick's second.
type ctldLog struct {
	// ticks are the ticks' Unix seconds, increasing: every tick a
	// "Decay factor over N seconds" line shows, and the one N seconds
	// before it (the first tick of a slurmctld start logs no line).
	ticks []int64
	// after holds (job id, end second) of every job end logged after the
	// tick of its second: such a job is charged by that tick as running.
	after map[[2]int64]bool
	// twice holds (job id, end second) → δ of every job end that
	// slurmctld charged on top of the tick's pass (the double charge,
	// docs/slurm-versions.md §10): the seconds its end charged again.
	twice map[[2]int64]int64
	// inPass holds the ends of twice whose charge came before the Fair
	// Tree fair-share step of the tick's pass (ingest.LogJobEnd.
	// BeforeFairShare): that tick's usage holds it.
	inPass map[[2]int64]bool
	// restarts are the seconds slurmctld started ("started on cluster"
	// and "Last ran decay on jobs at" lines): each rebuilds TRESRunMins
	// and drops what ended jobs left in it.
	restarts []int64
	// ordered reports whether the log's lines have milliseconds, without
	// which a job end and a tick in one second cannot be ordered.
	ordered bool
	lines   int64
	jobEnds int
	// holds are the holds of jobs the log shows, each from its hold to its
	// release (0: none logged), in the order of the holds.
	holds []logHold
	// restartTicks are, for each start of slurmctld the log shows with
	// the tick it recovered, that tick and the first tick after the start.
	restartTicks [][2]int64
}

// logHold is a job's hold from slurmctld's log.
type logHold struct {
	id          uint32
	from, until int64
}

// readCtldLog reads slurmctld's log files, their times in loc.
func readCtldLog(paths []string, loc *time.Location) (*ctldLog, error) {
	l, err := ingest.ReadSlurmctldLogs(paths, loc)
	if err != nil {
		return nil, err
	}
	if len(l.Ticks) == 0 {
		return nil, fmt.Errorf("slurmctld log %s: no decay tick (\"_decay_thread: PRIO: Decay factor over\"): slurm.conf needs DebugFlags=Priority and SlurmctldDebug=verbose or more; "+
			"or slurmctld has not ticked since it started (the first tick comes PriorityCalcPeriod after its start): run again after it; nothing was written", paths[0])
	}
	return newCtldLog(l), nil
}

// newCtldLog takes the ticks and job ends of a read log.
func newCtldLog(l *ingest.SlurmctldLog) *ctldLog {
	c := &ctldLog{after: map[[2]int64]bool{}, twice: map[[2]int64]int64{}, inPass: map[[2]int64]bool{}, ordered: l.Millis, lines: l.Lines, jobEnds: len(l.JobEnds)}
	times := l.TickTimes()
	for i, t := range times {
		c.ticks = append(c.ticks, t)
		if d := l.Ticks[i].DeltaSec; d > 0 {
			c.ticks = append(c.ticks, t-d)
		}
	}
	slices.Sort(c.ticks)
	c.ticks = slices.Compact(c.ticks)
	for _, r := range l.Recovered {
		c.restarts = append(c.restarts, r.Logged.Unix())
	}
	for _, t := range l.Starts {
		c.restarts = append(c.restarts, t.Unix())
	}
	slices.Sort(c.restarts)
	c.restarts = slices.Compact(c.restarts)
	for _, r := range l.Recovered {
		// The first tick logged after the start is the start's own.
		if i, _ := slices.BinarySearchFunc(l.Ticks, r.Logged, func(t ingest.LogTick, at time.Time) int { return t.Logged.Compare(at) }); i < len(times) && times[i] > r.Unix {
			c.restartTicks = append(c.restartTicks, [2]int64{r.Unix, times[i]})
		}
	}
	// A hold is open until the job's next release; a release without a
	// hold before it (a job submitted held) is left to the job's record.
	open := map[int64]int{}
	for _, h := range l.Holds {
		if h.JobID > math.MaxUint32 {
			continue
		}
		if !h.Release {
			if _, ok := open[h.JobID]; !ok {
				open[h.JobID] = len(c.holds)
				c.holds = append(c.holds, logHold{id: uint32(h.JobID), from: h.Logged.Unix()})
			}
			continue
		}
		if i, ok := open[h.JobID]; ok {
			c.holds[i].until = h.Logged.Unix()
			delete(open, h.JobID)
		}
	}
	if !c.ordered {
		return c
	}
	// A job end logged after a tick's line came after the tick's decay:
	// slurmctld charges a job end and decays under the same association
	// lock (docs/slurm-versions.md §10). Keyed by the tick's second, it
	// applies to a job whose record ends in that second: one ending in
	// the tick's second after it, or a job whose time limit slurmctld
	// noticed after the tick but dated in its second (a TIMEOUT logged
	// at 17:55:52.001 with End 17:55:51, after the tick at 17:55:51.259
	// had charged it as running: live 24.11.5).
	i := 0
	for _, e := range l.JobEnds {
		for i < len(l.Ticks) && l.Ticks[i].Logged.Before(e.Logged) {
			i++
		}
		if i > 0 {
			c.after[[2]int64{e.JobID, times[i-1]}] = true
		}
		// The double charge: the tick's pass charged the job, then its
		// end, processed before the tick moved g_last_ran, charged from
		// the tick before again. An end after g_last_ran moved charges at
		// most the seconds since the tick (its δ counts from it); one
		// counted from the tick before is more.
		if i > 0 && e.PassCharged && e.RanSec > e.Logged.Unix()-times[i-1] {
			c.twice[[2]int64{e.JobID, e.Logged.Unix()}] = e.RanSec
			if e.BeforeFairShare {
				c.inPass[[2]int64{e.JobID, e.Logged.Unix()}] = true
			}
		}
	}
	return c
}

// addToPrio gives the priority model m the holds and restarts of the
// log.
func (c *ctldLog) addToPrio(m *queue.Model) {
	for _, h := range c.holds {
		m.AddHold(h.id, h.from, h.until)
	}
	for _, r := range c.restartTicks {
		m.AddRestart(r[0], r[1])
	}
}

// residuesFrom is when the log begins for TRESRunMins: what a job with a
// fractional UsageFactor leaves in it after its end (fairshare.RunSecs)
// is counted from the log's first tick or start on, since before either
// fairledger cannot know when slurmctld last rebuilt the values.
func (c *ctldLog) residuesFrom() int64 {
	from := c.ticks[0]
	if len(c.restarts) > 0 {
		from = min(from, c.restarts[0])
	}
	return from
}

// chargedTwice returns the seconds slurmctld charged a second time at the
// end of the job run with id that ended at end (Unix seconds), the tick's
// pass having charged it already, and whether it did.
func (c *ctldLog) chargedTwice(id, end int64) (int64, bool) {
	if c == nil {
		return 0, false
	}
	sec, ok := c.twice[[2]int64{id, end}]
	return sec, ok
}

// chargedInPass reports whether the end of the job run with id that ended
// at end, charged twice (chargedTwice), was charged before the Fair Tree
// fair-share step of its tick's pass (decay.Window.EndChargeInPass).
func (c *ctldLog) chargedInPass(id, end int64) bool {
	return c != nil && c.inPass[[2]int64{id, end}]
}

// endsAfter reports whether the job run with id that ended at end (Unix
// seconds) ended after the tick of that second, as the log says.
func (c *ctldLog) endsAfter(id, end int64) bool {
	return c != nil && c.after[[2]int64{id, end}]
}
