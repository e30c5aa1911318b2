package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What slurmctld's log says about its decay ticks and job ends. With
// DebugFlags=Priority (SlurmctldDebug=verbose or more) priority/multifactor
// logs, at each tick of its decay thread but the first after a start,
//
//	[2026-11-26T18:23:00.227] _decay_thread: PRIO: Decay factor over 60 seconds goes from 0.999229 -> 0.954842
//
// where 60 is run_delta, the whole seconds since the previous tick
// (difftime of two time_t), and at each job end
//
//	[2026-11-26T18:23:00.612] priority_p_job_end: called for job 1234
//
// (spellings vary between releases: a "PRIO: " before "called", "JobId="
// for "job "). At start it logs the last tick it recovers from its state
// file: "PRIO: Last ran decay on jobs at 1764180000". The tick's own time
// is a whole second, taken just before the line is written; the line's
// milliseconds order a job end against a tick in the same second.

// LogTick is one decay tick of slurmctld's log.
type LogTick struct {
	// Logged is when the line was written (to the millisecond when the
	// log's time format has them).
	Logged time.Time
	// DeltaSec is run_delta: whole seconds since the previous tick.
	DeltaSec int64
	// File and Line locate the line.
	File string
	Line int
}

// LogJobEnd is one job end of slurmctld's log.
type LogJobEnd struct {
	// JobID is the job's id (JobIDRaw).
	JobID int64
	// Logged is when the line was written.
	Logged time.Time
	File   string
	Line   int
	// RanSec is the run_delta the end charged, from the "job N ran for
	// δ seconds" line _apply_new_usage logs right after the end's line;
	// −1 when no such line follows (an end already charged, or a log
	// without it).
	RanSec int64
	// PassCharged reports that the decay pass of the tick before the end
	// had charged the job ("job N ran for" logged after that tick's
	// "Decay factor" line and before the end's line): an end processed
	// before the tick set g_last_ran then charges the same seconds again.
	PassCharged bool
	// BeforeFairShare reports that the end's charge (its "Adding … new
	// usage to assoc" lines, written under the association lock) came
	// after the tick's "Decay factor" line but before that tick's pass
	// logged "_apply_priority_fs: … Fair Tree fairshare algorithm" (Fair
	// Tree's fair-share step, fair_tree_decay in fair_tree.c): the charge
	// is then in the usage that step computes NormUsage, EffectvUsage and
	// LevelFS from. Never set for a log without that line (classic or
	// depth-oblivious fair share).
	BeforeFairShare bool
}

// LogHold is a hold or a release of a job by scontrol (hold, uhold,
// release), which slurmctld's _hold_job_rec and _release_job_rec log at
// the info level (sched_info, so SlurmctldDebug=info or more) in
// src/slurmctld/job_mgr.c, the same at 22.05, 24.11 and 26.05:
//
//	[2026-11-29T01:56:35.807] sched: _hold_job_rec: hold on JobId=10 by uid 0
//	[2026-11-29T01:56:35.807] sched: _release_job_rec: release hold on JobId=10 by uid 0
//
// The job is printed as %pJ does: JobId=N, JobId=A_T(N) for an array
// task, JobId=A_* for an array's pending record (whose id is A) and
// JobId=H+K(N) for a het-job component.
type LogHold struct {
	// JobID is the job's id (JobIDRaw; the array's id for its pending
	// record).
	JobID int64
	// Release is true for a release, false for a hold.
	Release bool
	Logged  time.Time
	File    string
	Line    int
}

// LogRecovered is a "Last ran decay on jobs at" line: a tick's exact Unix
// second, read back from the state file at a start of slurmctld.
type LogRecovered struct {
	Unix   int64
	Logged time.Time
	File   string
	Line   int
}

// SlurmctldLog is what one or more slurmctld logs (rotated files
// allowed, in any order) say about decay ticks and job ends, sorted by
// time.
type SlurmctldLog struct {
	Ticks     []LogTick
	JobEnds   []LogJobEnd
	Recovered []LogRecovered
	// Holds are the holds and releases of jobs, in time order.
	Holds []LogHold
	// Starts are the times slurmctld started ("slurmctld version …
	// started on cluster …", logged at every start at the info level).
	Starts []time.Time
	// Millis reports whether every line read had milliseconds: without
	// them a job end and a tick in the same second cannot be ordered.
	Millis bool
	// Lines counts the lines read.
	Lines int64
}

// maxLogLine bounds one log line; longer lines are skipped (a log line
// of interest is short).
const maxLogLine = 64 << 10

// ReadSlurmctldLogs reads slurmctld's log files, their times in loc (the
// zone slurmctld ran in), and merges them in time order.
func ReadSlurmctldLogs(paths []string, loc *time.Location) (*SlurmctldLog, error) {
	out := &SlurmctldLog{Millis: true}
	for _, p := range paths {
		if err := readSlurmctldLog(p, loc, out); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(out.Ticks, func(a, b LogTick) int { return a.Logged.Compare(b.Logged) })
	slices.SortStableFunc(out.JobEnds, func(a, b LogJobEnd) int { return a.Logged.Compare(b.Logged) })
	slices.SortStableFunc(out.Recovered, func(a, b LogRecovered) int { return a.Logged.Compare(b.Logged) })
	slices.SortStableFunc(out.Holds, func(a, b LogHold) int { return a.Logged.Compare(b.Logged) })
	slices.SortFunc(out.Starts, time.Time.Compare)
	return out, nil
}

func readSlurmctldLog(path string, loc *time.Location, out *SlurmctldLog) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("slurmctld log: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return fmt.Errorf("slurmctld log: %w", err)
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("slurmctld log %s: not a regular file", path)
	}
	name := filepath.Base(path)
	return parseSlurmctldLog(name, f, loc, out)
}

// parseSlurmctldLog adds the ticks, job ends and recovered ticks of the
// log r (called name in errors) to out.
func parseSlurmctldLog(name string, r io.Reader, loc *time.Location, out *SlurmctldLog) error {
	br := bufio.NewReaderSize(r, 64<<10)
	sc := &logScan{pass: map[int64]bool{}, ends: map[int64]int{}, charging: -1}
	line := 0
	for {
		text, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: skip the rest of it.
			line++
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return fmt.Errorf("read slurmctld log %s: %w", name, err)
			}
			if err == io.EOF {
				return nil
			}
			continue
		}
		if len(text) == 0 && err == io.EOF {
			return nil
		}
		line++
		out.Lines++
		if len(text) <= maxLogLine {
			if perr := parseLogLine(name, line, string(text), loc, out, sc); perr != nil {
				return perr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read slurmctld log %s: %w", name, err)
		}
	}
}

// parseLogLine records one line if it is a tick, a job end or a
// recovered tick; other lines are ignored.
func parseLogLine(name string, line int, text string, loc *time.Location, out *SlurmctldLog, sc *logScan) *ParseError {
	const (
		decay     = "Decay factor over "
		recovered = "Last ran decay on jobs at "
		jobEnd    = "priority_p_job_end: "
		started   = " started on cluster "
		ranFor    = " ran for "
		hold      = "_hold_job_rec: hold on "
		release   = "_release_job_rec: release hold on "
		fairTree  = "_apply_priority_fs: "
		adding    = "_apply_new_usage: PRIO: Adding "
	)
	var kind int
	switch {
	case strings.Contains(text, decay):
		kind = 1
	case strings.Contains(text, jobEnd) && strings.Contains(text, "called for "):
		kind = 2
	case strings.Contains(text, recovered):
		kind = 3
	case strings.Contains(text, "slurmctld version ") && strings.Contains(text, started):
		kind = 4
	case strings.Contains(text, "_apply_new_usage: job ") && strings.Contains(text, ranFor):
		kind = 5
	case strings.Contains(text, hold):
		kind = 6
	case strings.Contains(text, release):
		kind = 7
	case strings.Contains(text, fairTree) && strings.Contains(text, "Fair Tree fairshare algorithm"):
		kind = 8
	case strings.Contains(text, adding) && strings.Contains(text, " new usage to assoc "):
		kind = 9
	default:
		return nil
	}
	at, millis, ok := logTime(text, loc)
	if !ok {
		return &ParseError{File: name, Line: line, Value: quoteHead(text),
			Err: errors.New("no time at the start of the line: set LogTimeFormat=iso8601_ms (slurmctld's default) or rfc5424_ms")}
	}
	out.Millis = out.Millis && millis
	switch kind {
	case 1:
		rest := text[strings.Index(text, decay)+len(decay):]
		num, _, _ := strings.Cut(rest, " ")
		d, err := strconv.ParseFloat(num, 64)
		if err != nil || d <= 0 || d != float64(int64(d)) {
			return &ParseError{File: name, Line: line, Field: "run_delta", Value: num, Err: errors.New("not a whole number of seconds")}
		}
		out.Ticks = append(out.Ticks, LogTick{Logged: at, DeltaSec: int64(d), File: name, Line: line})
	case 2:
		rest := text[strings.Index(text, "called for ")+len("called for "):]
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, "job "), "JobId=")
		num := strings.TrimRight(rest, "\r\n")
		if i := strings.IndexAny(num, " _+"); i >= 0 {
			num = num[:i]
		}
		id, err := strconv.ParseInt(num, 10, 64)
		if err != nil || id <= 0 {
			return &ParseError{File: name, Line: line, Field: "job", Value: num, Err: errors.New("not a job id")}
		}
		sc.ends[id] = len(out.JobEnds)
		out.JobEnds = append(out.JobEnds, LogJobEnd{JobID: id, Logged: at, File: name, Line: line, RanSec: -1, PassCharged: sc.pass[id]})
	case 3:
		num := strings.TrimRight(text[strings.Index(text, recovered)+len(recovered):], "\r\n ")
		u, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return &ParseError{File: name, Line: line, Field: "last ran", Value: num, Err: errors.New("not a Unix time")}
		}
		out.Recovered = append(out.Recovered, LogRecovered{Unix: u, Logged: at, File: name, Line: line})
	case 4:
		out.Starts = append(out.Starts, at)
		clear(sc.pass)
		clear(sc.ends)
		sc.open, sc.charging, sc.preFS = false, -1, sc.preFS[:0]
	case 5:
		rest := text[strings.Index(text, "_apply_new_usage: job ")+len("_apply_new_usage: job "):]
		idStr, rest, _ := strings.Cut(rest, " ran for ")
		secStr, _, _ := strings.Cut(rest, " ")
		id, err := strconv.ParseInt(idStr, 10, 64)
		if err != nil || id <= 0 {
			return &ParseError{File: name, Line: line, Field: "job", Value: idStr, Err: errors.New("not a job id")}
		}
		// run_delta printed with %g: whole seconds, six significant
		// digits (1.23457e+06 beyond 999999 s).
		sec, err := strconv.ParseFloat(secStr, 64)
		if err != nil || sec < 0 || math.IsInf(sec, 0) {
			return &ParseError{File: name, Line: line, Field: "run_delta", Value: secStr, Err: errors.New("not a number of seconds")}
		}
		if i, ok := sc.ends[id]; ok {
			// The end's own charge, logged right after its line.
			out.JobEnds[i].RanSec = int64(math.Round(sec))
			delete(sc.ends, id)
			sc.charging = i
		} else {
			sc.pass[id] = true // charged by the tick's pass
			sc.charging = -1
		}
	case 6, 7:
		word := hold
		if kind == 7 {
			word = release
		}
		rest := text[strings.Index(text, word)+len(word):]
		id, ok := logJobID(rest)
		if !ok {
			num, _, _ := strings.Cut(strings.TrimRight(rest, "\r\n"), " ")
			return &ParseError{File: name, Line: line, Field: "job", Value: num, Err: errors.New("not a job as %pJ prints it (JobId=N, JobId=A_T(N), JobId=A_*)")}
		}
		out.Holds = append(out.Holds, LogHold{JobID: id, Release: kind == 7, Logged: at, File: name, Line: line})
	case 8:
		// Fair Tree's fair-share step of the tick's pass: the ends charged
		// since the tick's line are in the usage it reads. An end whose
		// "ran for" line came but not its charge is waiting for the lock
		// the step holds: it charges after it.
		if sc.open {
			for _, i := range sc.preFS {
				out.JobEnds[i].BeforeFairShare = true
			}
		}
		sc.open, sc.preFS = false, sc.preFS[:0]
	case 9:
		// The charge of the end whose "ran for" line came last, under the
		// association lock: before the fair-share step if the tick's pass
		// has not reached it.
		if sc.charging >= 0 && sc.open {
			sc.preFS = append(sc.preFS, sc.charging)
		}
		sc.charging = -1
	}
	if kind == 1 {
		clear(sc.pass) // a new pass begins
		sc.open, sc.charging, sc.preFS = true, -1, sc.preFS[:0]
	}
	return nil
}

// logScan is what reading one log file keeps from line to line: the jobs
// the current tick's pass has charged, and the job ends whose "ran for"
// line has not come yet (indexes into SlurmctldLog.JobEnds); whether the
// current pass has yet to reach Fair Tree's fair-share step (open), the
// end whose "ran for" line came last and whose charge has not (charging,
// −1 for none), and the ends charged since the tick's line (preFS).
type logScan struct {
	pass     map[int64]bool
	ends     map[int64]int
	open     bool
	charging int
	preFS    []int
}

// logJobID reads the job id of a "JobId=…" word as %pJ prints it: N; the
// raw id N of A_T(N) or H+K(N); the array's id A of A_*.
func logJobID(s string) (int64, bool) {
	s, ok := strings.CutPrefix(s, "JobId=")
	if !ok {
		return 0, false
	}
	word, _, _ := strings.Cut(strings.TrimRight(s, "\r\n"), " ")
	if open := strings.IndexByte(word, '('); open >= 0 && strings.HasSuffix(word, ")") {
		word = word[open+1 : len(word)-1]
	} else if a, ok := strings.CutSuffix(word, "_*"); ok {
		word = a
	}
	id, err := strconv.ParseInt(word, 10, 64)
	return id, err == nil && id > 0
}

// logTime reads the time a slurmctld log line starts with:
// "[2006-01-02T15:04:05.000]" (LogTimeFormat=iso8601_ms, the default),
// "[2006-01-02T15:04:05]" (iso8601), in loc; or RFC 3339 with its offset
// (rfc5424_ms, rfc5424). millis reports whether it has milliseconds.
func logTime(text string, loc *time.Location) (t time.Time, millis, ok bool) {
	if strings.HasPrefix(text, "[") {
		end := strings.IndexByte(text, ']')
		if end < 0 {
			return time.Time{}, false, false
		}
		s := text[1:end]
		for _, layout := range []string{"2006-01-02T15:04:05.000", "2006-01-02T15:04:05"} {
			if t, err := time.ParseInLocation(layout, s, loc); err == nil {
				return t, strings.Contains(s, "."), true
			}
		}
		return time.Time{}, false, false
	}
	s, _, _ := strings.Cut(text, " ")
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, strings.Contains(s, "."), true
	}
	return time.Time{}, false, false
}

// TickTimes returns the Unix second of each tick of l, in order. A tick's
// second (its time_t start_time) is taken just before its line is
// written, and consecutive ticks are run_delta apart. The ticks of one run
// of slurmctld are anchored once: on the recovered "Last ran" second the
// run started from (the first tick is that plus its run_delta), else on
// the tick whose line leaves the least room, the smallest floor(logged)
// minus the run_deltas since the run's first tick (a line is written in
// its tick's second, rarely in the next).
func (l *SlurmctldLog) TickTimes() []int64 {
	out := make([]int64, len(l.Ticks))
	start := 0
	prev := time.Time{}
	for start < len(l.Ticks) {
		rec, restarted := l.recoveredBetween(prev, l.Ticks[start].Logged)
		end := start + 1
		for end < len(l.Ticks) {
			if _, r := l.recoveredBetween(l.Ticks[end-1].Logged, l.Ticks[end].Logged); r {
				break
			}
			end++
		}
		// Ticks start..end-1 are one run: tick i is at anchor + Σ deltas.
		var cum int64
		anchor := int64(0)
		for i := start; i < end; i++ {
			if i > start {
				cum += l.Ticks[i].DeltaSec
			}
			if a := l.Ticks[i].Logged.Unix() - cum; i == start || a < anchor {
				anchor = a
			}
		}
		if restarted {
			anchor = rec + l.Ticks[start].DeltaSec
		}
		cum = 0
		for i := start; i < end; i++ {
			if i > start {
				cum += l.Ticks[i].DeltaSec
			}
			out[i] = anchor + cum
		}
		prev = l.Ticks[end-1].Logged
		start = end
	}
	return out
}

// recoveredBetween returns the last recovered tick logged in (a, b], if
// any: slurmctld restarted there.
func (l *SlurmctldLog) recoveredBetween(a, b time.Time) (int64, bool) {
	var u int64
	found := false
	for _, r := range l.Recovered {
		if r.Logged.After(a) && !r.Logged.After(b) {
			u, found = r.Unix, true
		}
	}
	return u, found
}
