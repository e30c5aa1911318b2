package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// unix is the Unix second of a UTC time of 2026-11-26.
func unix(h, m, s int) int64 { return time.Date(2026, 11, 26, h, m, s, 0, time.UTC).Unix() }

// The case, in the line formats of Slurm's priority/multifactor:
// ticks 61 s and then 59 s apart (one wake-up 0.44 s late), and a job end
// 385 ms after the tick of its second. Lines of no interest are skipped.
func TestSlurmctldLogTicks(t *testing.T) {
	t.Parallel()
	log := `[2026-11-26T18:20:59.100] Recovered state of 3 partitions
[2026-11-26T18:21:00.227] _decay_thread: PRIO: Decay factor over 60 seconds goes from 0.999229132965003 -> 0.954842536434163
[2026-11-26T18:22:01.671] _decay_thread: PRIO: Decay factor over 61 seconds goes from 0.999229132965003 -> 0.954107003201133
[2026-11-26T18:23:00.227] _decay_thread: PRIO: Decay factor over 59 seconds goes from 0.999229132965003 -> 0.955578634843289
[2026-11-26T18:23:00.612] priority_p_job_end: called for job 1234
[2026-11-26T18:23:05.001] priority_p_job_end: PRIO: called for JobId=1235
`
	var l SlurmctldLog
	l.Millis = true
	if err := parseSlurmctldLog("slurmctld.log", strings.NewReader(log), time.UTC, &l); err != nil {
		t.Fatal(err)
	}
	got := l.TickTimes()
	want := []int64{unix(18, 21, 0), unix(18, 22, 1), unix(18, 23, 0)}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("tick times %v, want %v", got, want)
	}
	if len(l.JobEnds) != 2 || l.JobEnds[0].JobID != 1234 || l.JobEnds[1].JobID != 1235 || l.JobEnds[0].Line != 5 {
		t.Fatalf("job ends %+v", l.JobEnds)
	}
	// Job 1234 ended in the second of the third tick, after it.
	if !l.JobEnds[0].Logged.After(l.Ticks[2].Logged) || l.JobEnds[0].Logged.Unix() != got[2] {
		t.Errorf("job end %v against tick %v", l.JobEnds[0].Logged, l.Ticks[2].Logged)
	}
	if !l.Millis || l.Lines != 6 {
		t.Errorf("millis %v, lines %d", l.Millis, l.Lines)
	}
}

// A tick's line may be written in the second after its tick: the ticks
// are anchored on the line that leaves the least room, so 18:22:00 (logged
// at 18:22:01.001, 60 s after a tick logged at 18:21:00.999) stays
// 18:22:00.
func TestSlurmctldLogLineInNextSecond(t *testing.T) {
	t.Parallel()
	log := "[2026-11-26T18:21:00.999] _decay_thread: PRIO: Decay factor over 60 seconds goes from 1 -> 1\n" +
		"[2026-11-26T18:22:01.001] _decay_thread: PRIO: Decay factor over 60 seconds goes from 1 -> 1\n"
	var l SlurmctldLog
	if err := parseSlurmctldLog("l", strings.NewReader(log), time.UTC, &l); err != nil {
		t.Fatal(err)
	}
	if got := l.TickTimes(); got[0] != unix(18, 21, 0) || got[1] != unix(18, 22, 0) {
		t.Errorf("tick times %v", got)
	}
}

// A restart recovers the last tick from the state file: the ticks after
// it continue from that exact second, whatever the phase before.
func TestSlurmctldLogRestart(t *testing.T) {
	t.Parallel()
	log := "[2026-11-26T18:21:00.500] _decay_thread: PRIO: Decay factor over 60 seconds goes from 1 -> 1\n" +
		"[2026-11-26T18:21:29.900] slurmctld version 22.05.8 started on cluster demo\n" +
		"[2026-11-26T18:21:30.000] _read_last_decay_ran: PRIO: Last ran decay on jobs at " + itoa(unix(18, 21, 0)) + "\n" +
		"[2026-11-26T18:21:42.300] _decay_thread: PRIO: Decay factor over 42 seconds goes from 1 -> 1\n" +
		"[2026-11-26T18:22:42.300] _decay_thread: PRIO: Decay factor over 60 seconds goes from 1 -> 1\n"
	var l SlurmctldLog
	if err := parseSlurmctldLog("l", strings.NewReader(log), time.UTC, &l); err != nil {
		t.Fatal(err)
	}
	want := []int64{unix(18, 21, 0), unix(18, 21, 42), unix(18, 22, 42)}
	if got := l.TickTimes(); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("tick times %v, want %v", got, want)
	}
	if len(l.Starts) != 1 || l.Starts[0].Unix() != unix(18, 21, 29) {
		t.Errorf("starts %v, want the one at 18:21:29.900", l.Starts)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// Rotated files are merged in time order; the zone is slurmctld's; a line
// of interest without a time at its start is an error naming it.
func TestReadSlurmctldLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no zone data")
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newer := write("slurmctld.log", "[2026-11-26T19:22:00.100] _decay_thread: PRIO: Decay factor over 60 seconds goes from 1 -> 1\n")
	older := write("slurmctld.log.1", "[2026-11-26T19:21:00.100] _decay_thread: PRIO: Decay factor over 60 seconds goes from 1 -> 1\n")
	l, err := ReadSlurmctldLogs([]string{newer, older}, berlin)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.TickTimes(); len(got) != 2 || got[0] != unix(18, 21, 0) || got[1] != unix(18, 22, 0) {
		t.Errorf("tick times %v", got)
	}
	bad := write("bad.log", "no time here: priority_p_job_end: called for job 7\n")
	if _, err := ReadSlurmctldLogs([]string{bad}, time.UTC); err == nil || !strings.Contains(err.Error(), "ingest bad.log:1:") ||
		!strings.Contains(err.Error(), "LogTimeFormat=iso8601_ms") {
		t.Errorf("err = %v", err)
	}
}

// The lines that show slurmctld's double charge (docs/slurm-versions.md
// §10), as 22.05.8 wrote them in a live run: the tick's pass charges job
// 8 ("ran for 30 seconds" after the tick's line), then the job's end logs
// its own charge, 31 s from the tick before. Job 9 ends after the tick
// with no pass line of its own before its end (a job the pass skipped);
// job 10's end line has no "ran for" line (an end already charged).
func TestSlurmctldLogEndCharges(t *testing.T) {
	t.Parallel()
	log := `[2026-11-29T03:32:50.002] priority/multifactor: _decay_thread: PRIO: Decay factor over 30 seconds goes from 0.999230000000000 -> 0.977167967014806
[2026-11-29T03:32:50.008] priority/multifactor: _apply_new_usage: job 8 ran for 30 seconds with TRES counts of
[2026-11-29T03:32:50.008] priority/multifactor: _apply_new_usage: TRES cpu: 1
[2026-11-29T03:32:50.019] _job_complete: JobId=5_0(8) WEXITSTATUS 0
[2026-11-29T03:32:50.019] priority/multifactor: priority_p_job_end: PRIO: priority_p_job_end: called for job 8
[2026-11-29T03:32:50.019] priority/multifactor: _apply_new_usage: job 8 ran for 31 seconds with TRES counts of
[2026-11-29T03:32:50.020] priority/multifactor: priority_p_job_end: PRIO: priority_p_job_end: called for job 9
[2026-11-29T03:32:50.020] priority/multifactor: _apply_new_usage: job 9 ran for 12 seconds with TRES counts of
[2026-11-29T03:32:51.000] priority/multifactor: priority_p_job_end: PRIO: priority_p_job_end: called for job 10
[2026-11-29T03:33:20.002] priority/multifactor: _decay_thread: PRIO: Decay factor over 30 seconds goes from 0.999230000000000 -> 0.977167967014806
[2026-11-29T03:33:20.010] priority/multifactor: _apply_new_usage: job 11 ran for 1.23457e+06 seconds with TRES counts of
[2026-11-29T03:33:21.000] priority/multifactor: priority_p_job_end: PRIO: priority_p_job_end: called for job 11
[2026-11-29T03:33:21.000] priority/multifactor: _apply_new_usage: job 11 ran for 1 seconds with TRES counts of
`
	var l SlurmctldLog
	if err := parseSlurmctldLog("slurmctld.log", strings.NewReader(log), time.UTC, &l); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id, sec int64
		pass    bool
	}{{8, 31, true}, {9, 12, false}, {10, -1, false}, {11, 1, true}}
	if len(l.JobEnds) != len(want) {
		t.Fatalf("job ends %+v, want %d", l.JobEnds, len(want))
	}
	for i, w := range want {
		if e := l.JobEnds[i]; e.JobID != w.id || e.RanSec != w.sec || e.PassCharged != w.pass {
			t.Errorf("end %d: job %d ran for %d, pass charged %v; want job %d, %d, %v", i, e.JobID, e.RanSec, e.PassCharged, w.id, w.sec, w.pass)
		}
	}
	// A "ran for" line that is not a number is refused with its line.
	bad := "[2026-11-29T03:32:50.008] priority/multifactor: _apply_new_usage: job 8 ran for many seconds with TRES counts of\n"
	err := parseSlurmctldLog("slurmctld.log", strings.NewReader(bad), time.UTC, &l)
	if err == nil || !strings.Contains(err.Error(), "slurmctld.log:1") || !strings.Contains(err.Error(), `"many"`) {
		t.Errorf("bad run_delta: err = %v", err)
	}
}

// FuzzSlurmctldLog: any text either parses or is refused with a
// ParseError; a parsed job end's charged δ is −1 (none logged) or more.
func FuzzSlurmctldLog(f *testing.F) {
	f.Add("[2026-11-29T03:32:50.002] priority/multifactor: _decay_thread: PRIO: Decay factor over 30 seconds goes from 1 -> 1\n" +
		"[2026-11-29T03:32:50.008] priority/multifactor: _apply_new_usage: job 8 ran for 30 seconds with TRES counts of\n" +
		"[2026-11-29T03:32:50.019] priority/multifactor: priority_p_job_end: PRIO: priority_p_job_end: called for job 8\n" +
		"[2026-11-29T03:32:50.019] priority/multifactor: _apply_new_usage: job 8 ran for 31 seconds with TRES counts of\n")
	f.Add("[2026-11-29T03:32:45.000] slurmctld version 22.05.8 started on cluster c\n" +
		"[2026-11-29T03:32:45.010] priority/multifactor: _read_last_decay_ran: PRIO: Last ran decay on jobs at 1764386700\n")
	f.Fuzz(func(t *testing.T, log string) {
		var l SlurmctldLog
		if err := parseSlurmctldLog("slurmctld.log", strings.NewReader(log), time.UTC, &l); err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a ParseError", err)
			}
			return
		}
		for _, e := range l.JobEnds {
			if e.RanSec < -1 || e.JobID <= 0 {
				t.Fatalf("job end %+v", e)
			}
		}
	})
}

// Holds and releases as _hold_job_rec and _release_job_rec log them
// (sched_info, src/slurmctld/job_mgr.c at 22.05, 24.11 and 26.05), the job
// printed as %pJ prints it (log.c _jobid2fmt): a plain job, an array task
// (its raw id in parentheses), an array's pending record (the array's id)
// and a het-job component. The release of job 10 is the kept 22.05
// capture's line (testdata/slurm-e2e/prio/slurmctld.log).
func TestSlurmctldLogHolds(t *testing.T) {
	t.Parallel()
	log := `[2026-11-29T01:56:30.100] sched: _hold_job_rec: hold on JobId=10 by uid 0
[2026-11-29T01:56:31.000] sched: _hold_job_rec: hold on JobId=7_3(20) by uid 1000
[2026-11-29T01:56:32.000] sched: _hold_job_rec: hold on JobId=7_* by uid 1000
[2026-11-29T01:56:33.000] sched: _hold_job_rec: hold on JobId=30+1(31) by uid 0
[2026-11-29T01:56:35.807] sched: _release_job_rec: release hold on JobId=10 by uid 0
`
	var l SlurmctldLog
	if err := parseSlurmctldLog("slurmctld.log", strings.NewReader(log), time.UTC, &l); err != nil {
		t.Fatal(err)
	}
	type hold struct {
		id      int64
		release bool
		ms      int
	}
	want := []hold{{10, false, 100}, {20, false, 0}, {7, false, 0}, {31, false, 0}, {10, true, 807}}
	if len(l.Holds) != len(want) {
		t.Fatalf("holds %+v, want %v", l.Holds, want)
	}
	for i, h := range l.Holds {
		if got := (hold{h.JobID, h.Release, h.Logged.Nanosecond() / 1e6}); got != want[i] || h.Line != i+1 {
			t.Errorf("hold %d: %+v (line %d), want %+v", i, got, h.Line, want[i])
		}
	}
	// A job the line does not name as %pJ does is an error naming it.
	var bad SlurmctldLog
	err := parseSlurmctldLog("slurmctld.log", strings.NewReader("[2026-11-29T01:56:30.100] sched: _hold_job_rec: hold on job 10 by uid 0\n"), time.UTC, &bad)
	if err == nil || !strings.Contains(err.Error(), `slurmctld.log:1`) || !strings.Contains(err.Error(), `"job"`) {
		t.Errorf("bad hold line: %v", err)
	}
}

// Whether a job end's charge came before the tick's Fair Tree fair-share
// step (docs/slurm-versions.md §10), in 24.11.5's exact lines (the live
// capture's restart tick, 2026-12-02 15:53:02, trimmed): job 6's end is
// charged (its "Adding" line) before "_apply_priority_fs"; job 7's "ran
// for" line comes before that line too, but its charge after it (it waited
// for the association lock the step holds); job 8 ends after the step. The
// second tick has no fair-share line (classic fair share): nothing is
// before it.
func TestSlurmctldLogBeforeFairShare(t *testing.T) {
	t.Parallel()
	log := `[2026-12-02T15:53:02.584] priority/multifactor: _decay_thread: PRIO: Decay factor over 20 seconds goes from 0.999230000000000 -> 0.984712132251355
[2026-12-02T15:53:02.587] priority/multifactor: _apply_new_usage: job 6 ran for 20 seconds with TRES counts of
[2026-12-02T15:53:02.595] priority/multifactor: _apply_new_usage: PRIO: Adding 22.098325 new usage to assoc 10 (chem/fl_dave/(null)) raw usage is now 658.966511. Group wall added 19.694243 making it 316.092594.
[2026-12-02T15:53:02.618] _job_complete: JobId=6_3(6) WEXITSTATUS 0
[2026-12-02T15:53:02.618] priority/multifactor: priority_p_job_end: PRIO: priority_p_job_end: called for job 6
[2026-12-02T15:53:02.618] priority/multifactor: _apply_new_usage: job 6 ran for 20 seconds with TRES counts of
[2026-12-02T15:53:02.618] priority/multifactor: _apply_new_usage: TRES cpu: 1
[2026-12-02T15:53:02.619] priority/multifactor: _apply_new_usage: PRIO: Adding 22.098325 new usage to assoc 10 (chem/fl_dave/(null)) raw usage is now 698.789017. Group wall added 19.694243 making it 341.240431.
[2026-12-02T15:53:02.619] priority/multifactor: _apply_new_usage: PRIO: Adding 22.098325 new usage to assoc 5 (chem/(null)/(null)) raw usage is now 1500.379921. Group wall added 19.694243 making it 543.106418.
[2026-12-02T15:53:02.620] priority/multifactor: priority_p_job_end: PRIO: priority_p_job_end: called for job 7
[2026-12-02T15:53:02.620] priority/multifactor: _apply_new_usage: job 7 ran for 20 seconds with TRES counts of
[2026-12-02T15:53:02.635] priority/multifactor: _apply_priority_fs: PRIO: Fair Tree fairshare algorithm, starting at root:
[2026-12-02T15:53:02.635] priority/multifactor: _ft_debug:     root (root):  inf
[2026-12-02T15:53:02.640] priority/multifactor: _apply_new_usage: PRIO: Adding 22.098325 new usage to assoc 10 (chem/fl_dave/(null)) raw usage is now 720.887342. Group wall added 19.694243 making it 360.934674.
[2026-12-02T15:53:02.700] priority/multifactor: priority_p_job_end: PRIO: priority_p_job_end: called for job 8
[2026-12-02T15:53:02.700] priority/multifactor: _apply_new_usage: job 8 ran for 20 seconds with TRES counts of
[2026-12-02T15:53:02.700] priority/multifactor: _apply_new_usage: PRIO: Adding 22.098325 new usage to assoc 10 (chem/fl_dave/(null)) raw usage is now 742.985667. Group wall added 19.694243 making it 380.628917.
[2026-12-02T15:53:22.584] priority/multifactor: _decay_thread: PRIO: Decay factor over 20 seconds goes from 0.999230000000000 -> 0.984712132251355
[2026-12-02T15:53:22.587] priority/multifactor: _apply_new_usage: job 9 ran for 20 seconds with TRES counts of
[2026-12-02T15:53:22.590] priority/multifactor: _apply_new_usage: PRIO: Adding 22.098325 new usage to assoc 10 (chem/fl_dave/(null)) raw usage is now 720.887342. Group wall added 19.694243 making it 360.934674.
[2026-12-02T15:53:22.618] priority/multifactor: priority_p_job_end: PRIO: priority_p_job_end: called for job 9
[2026-12-02T15:53:22.618] priority/multifactor: _apply_new_usage: job 9 ran for 20 seconds with TRES counts of
[2026-12-02T15:53:22.619] priority/multifactor: _apply_new_usage: PRIO: Adding 22.098325 new usage to assoc 10 (chem/fl_dave/(null)) raw usage is now 742.985667. Group wall added 19.694243 making it 380.628917.
`
	var l SlurmctldLog
	if err := parseSlurmctldLog("slurmctld.log", strings.NewReader(log), time.UTC, &l); err != nil {
		t.Fatal(err)
	}
	want := map[int64]bool{6: true, 7: false, 8: false, 9: false}
	if len(l.JobEnds) != len(want) {
		t.Fatalf("job ends %+v, want %d", l.JobEnds, len(want))
	}
	for _, e := range l.JobEnds {
		if e.BeforeFairShare != want[e.JobID] {
			t.Errorf("job %d: before the fair-share step %v, want %v", e.JobID, e.BeforeFairShare, want[e.JobID])
		}
	}
	if !l.JobEnds[0].PassCharged || l.JobEnds[0].RanSec != 20 {
		t.Errorf("job 6: %+v, want charged by the pass and 20 s", l.JobEnds[0])
	}
}
