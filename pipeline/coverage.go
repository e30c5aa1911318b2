package pipeline

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/ingest"
)

// A run charges the window (lo, to] from its sacct input alone: a job the
// input lacks is not charged, and a job running at the checkpoint that it
// lacks is charged as still running. So the input must cover the window:
// sacct -S S -E E (without -s) gives every job eligible or running at some
// time in [S, E], which covers (lo, to] when S ≤ lo and E ≥ to. The run
// knows S and E when they are declared (Options.SacctStart, SacctEnd);
// otherwise it judges from the records themselves (checkCoverage).

// Coverage is the span of time a run's sacct input covers, and where each
// bound came from.
type Coverage struct {
	// From is Options.SacctStart when FromFlag, else the earliest job start
	// of the input (zero: the input has no job of the cluster).
	From time.Time
	// To is Options.SacctEnd when ToFlag, else the latest job start or end
	// of the input (zero: no job).
	To time.Time
	// FromFlag and ToFlag report that From and To were declared
	// (--sacct-start, --sacct-end) rather than taken from the records.
	FromFlag, ToFlag bool
}

// record is c as the runs table's config records it.
func (c Coverage) record() *record.SacctCoverage {
	src := func(flag bool) string {
		if flag {
			return "flag"
		}
		return "data"
	}
	unix := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.Unix()
	}
	return &record.SacctCoverage{From: unix(c.From), FromSource: src(c.FromFlag), To: unix(c.To), ToSource: src(c.ToFlag)}
}

// checkSacctSpan refuses the declared sacct span that does not cover the
// window (lo, to]: for a resumed run (lo is the checkpoint's To), a
// --sacct-start after lo; for a fresh start at --from lo, a --sacct-start
// after it; and a --sacct-end before to. It needs no record, so a run
// whose window is known before reading (--to given) calls it first.
func checkSacctSpan(opt Options, cluster string, lo, to int64, resumed, priority bool) error {
	if s := opt.SacctStart; !s.IsZero() && s.Unix() > lo {
		cmd := sacctCommand(opt.Location, lo, to, priority)
		if resumed {
			return fmt.Errorf("coverage: --sacct-start %s is after %s, where the history of cluster %q resumes (its checkpoint): "+
				"the jobs that ran between are missing from the input (missed nights?) and the jobs running at the checkpoint would be "+
				"charged as still running; fetch the whole span, `%s`, and run with --sacct-start %s; nothing was written",
				fmtUnix(s.Unix()), fmtUnix(lo), cluster, cmd, fmtUnix(lo))
		}
		return fmt.Errorf("coverage: --from %s is before --sacct-start %s: the jobs that ran between are missing from the input; "+
			"fetch from --from on, `%s`, or start at --from %s; nothing was written",
			fmtUnix(lo), fmtUnix(s.Unix()), cmd, fmtUnix(s.Unix()))
	}
	if e := opt.SacctEnd; !e.IsZero() && e.Unix() < to {
		return fmt.Errorf("coverage: --sacct-end %s is before the window's end %s: the jobs after it are missing from the input and "+
			"those running would be charged as still running; end the run at --to %s, or fetch up to the window's end, `%s`; nothing was written",
			fmtUnix(e.Unix()), fmtUnix(to), fmtUnix(e.Unix()), sacctCommand(opt.Location, lo, to, priority))
	}
	return nil
}

// checkCoverage checks that the input covers the window (lo, to] set by
// setWindow, records the coverage in the summary and logs it. With the
// span declared (checkSacctSpan), only an empty input while jobs were
// running at the checkpoint is refused besides. Without --sacct-start, a
// resumed run is refused when jobs running at the checkpoint are missing
// from the input and no record of the input ends at or before the
// checkpoint: the input then starts after it (nights were missed, or sacct
// answered nothing), and the jobs that ended in between would be lost
// while those missing were charged as still running. An input whose
// earliest record starts after the checkpoint is only warned of: on a
// quiet cluster nothing may have run.
func (r *runState) checkCoverage() error {
	opt, st, lo, to := r.opt, r.st, r.lo, r.to
	cov := Coverage{From: opt.SacctStart, To: opt.SacctEnd, FromFlag: !opt.SacctStart.IsZero(), ToFlag: !opt.SacctEnd.IsZero()}
	empty := st.minStart == math.MaxInt64
	if !cov.FromFlag && !empty {
		cov.From = time.Unix(st.minStart, 0).UTC()
	}
	if !cov.ToFlag && !empty {
		cov.To = time.Unix(max(st.maxEnd, st.maxStart), 0).UTC()
	}
	r.sum.Coverage = cov
	if err := checkSacctSpan(opt, r.m.cluster, lo, to, r.ck != nil, r.m.prio != nil); err != nil {
		return err
	}
	if r.ck != nil {
		running := r.ck.Running
		missing := 0
		for _, j := range running {
			if !st.seen[j.key()] {
				missing++
			}
		}
		cmd := sacctCommand(opt.Location, lo, to, r.m.prio != nil)
		switch {
		case empty && len(running) > 0:
			return fmt.Errorf("coverage: the sacct input holds no job of cluster %q, but %d jobs were running at the checkpoint (%s): "+
				"an empty sacct answer (sacct failed, or a wrong -S, -E or cluster) would charge them as running up to %s and miss every "+
				"other job; fetch the window again, `%s`, and check that it lists jobs; nothing was written",
				r.m.cluster, len(running), fmtUnix(lo), fmtUnix(to), cmd)
		case !cov.FromFlag && missing > 0 && st.minEnd > lo:
			first := "it has no job that ended"
			if st.minEnd < math.MaxInt64 {
				first = "its earliest job end is " + fmtUnix(st.minEnd)
			}
			return fmt.Errorf("coverage: %d of the %d jobs running at the checkpoint of cluster %q (%s) are missing from the sacct input, "+
				"and no record of it ends at or before the checkpoint (%s): the input seems to start after it (missed nights, or sacct -S too late), "+
				"so the jobs that ended in between would be lost and those %d charged as still running; fetch the whole window, `%s`; "+
				"if the files do cover it, say so with --sacct-start %s; nothing was written",
				missing, len(running), r.m.cluster, fmtUnix(lo), first, missing, cmd, fmtUnix(lo))
		case !cov.FromFlag && empty:
			r.log.Warn().Time("checkpoint", time.Unix(lo, 0).UTC()).
				Msgf("the sacct input holds no job of the cluster: nothing shows that it covers the window from the checkpoint (%s) on; "+
					"if it does (an idle cluster), declare its span with --sacct-start and --sacct-end", fmtUnix(lo))
		case !cov.FromFlag && st.minStart > lo:
			r.log.Warn().Time("data_start", cov.From).Time("checkpoint", time.Unix(lo, 0).UTC()).
				Msgf("the sacct input starts at %s (its earliest job start), after the checkpoint (%s): jobs that ran only in between "+
					"would be missing; if the files were fetched with sacct -S %s or earlier, declare it with --sacct-start (and --sacct-end), "+
					"else fetch the whole window: `%s`", fmtUnix(st.minStart), fmtUnix(lo), fmtUnix(lo), cmd)
		}
	}
	ev := r.log.Info().Bool("from_flag", cov.FromFlag).Bool("to_flag", cov.ToFlag)
	if !cov.From.IsZero() {
		ev = ev.Time("from", cov.From)
	}
	if !cov.To.IsZero() {
		ev = ev.Time("to", cov.To)
	}
	ev.Msg("sacct coverage: " + cov.source())
	return nil
}

// source says where the coverage's bounds came from, for the log.
func (c Coverage) source() string {
	switch {
	case c.FromFlag && c.ToFlag:
		return "declared (--sacct-start, --sacct-end)"
	case c.FromFlag:
		return "declared start (--sacct-start), end from the records"
	case c.ToFlag:
		return "declared end (--sacct-end), start from the records"
	}
	return "the records' own extent (no --sacct-start or --sacct-end)"
}

// sacctCommand is the sacct command that fetches every job of (lo, to]
// with the columns docs/inputs.md names, its times in loc as sacct reads
// them.
func sacctCommand(loc *time.Location, lo, to int64, priority bool) string {
	if loc == nil {
		loc = time.UTC
	}
	const layout = "2006-01-02T15:04:05"
	env := "SLURM_TIME_FORMAT=%s "
	if z := loc.String(); z != "Local" {
		env = "TZ=" + z + " " + env
	}
	cols, states := ingest.RunFields, ""
	if priority {
		cols, states = ingest.PriorityFields, " -s "+ingest.PriorityStates
	}
	return fmt.Sprintf("%ssacct -a -D -P -S %s -E %s%s -o %s", env,
		time.Unix(lo, 0).In(loc).Format(layout), time.Unix(to, 0).In(loc).Format(layout), states, strings.Join(cols, ","))
}

// checkZone refuses to resume the checkpoint ck of cluster in another zone
// than the one it was computed in (runs before the zone was recorded
// accept any).
func checkZone(ck *checkpoint, loc *time.Location, cluster string) error {
	if ck.Zone == "" || ck.Zone == loc.String() {
		return nil
	}
	return fmt.Errorf("--tz %s: the history of cluster %q is in zone %s (checkpoint at %s): sacct's local times would be read "+
		"in another zone, so every job fed again would be written twice, and midnights and usage resets would move; run with --tz %s "+
		"(or leave --tz out to take the history's), or recompute from the start of the history in the new zone "+
		"(--from its first day, with every sacct file); nothing was written",
		loc, cluster, ck.Zone, fmtUnix(ck.To), ck.Zone)
}

// HistoryZone returns the name of the zone the history in historyDir is
// computed in for cluster, as its newest checkpoint records it: what run
// takes when --tz is not given. It returns "" when the directory, the
// cluster or a recorded zone is missing. It only reads: a missing
// directory is not created, and the history is not locked.
func HistoryZone(historyDir, cluster string) (string, error) {
	c, _, err := NewestCheckpoint(historyDir, cluster)
	return c.Zone, err
}
