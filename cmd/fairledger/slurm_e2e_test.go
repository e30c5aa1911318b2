package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Slurm end-to-end comparison (docs/slurm-e2e.md): a live Slurm cluster's
// `sshare -a -l -P`, captured every minute by testdata/slurm-e2e/run.sh, is
// the expected value; fairledger runs on the sacct/sacctmgr/slurm.conf dumps
// of the same cluster and answers `sshare --at` each capture's time. The
// comparison is cell by cell, as strings, with no tolerance.

var updateSlurmE2E = flag.Bool("update-slurm-e2e", false,
	"rewrite the kept files of what matches Slurm's today: testdata/slurm-e2e/<scenario>/matching.tsv and matching-onerun.tsv (TestSlurmE2E), sprio-matching-onerun.tsv (TestSprioE2E)")

// slurmCapture is one scenario's capture directory, as run.sh writes it.
type slurmCapture struct {
	dir      string
	to       string // meta.txt's to: Unix seconds of the export, fairledger's --to
	tz       string
	release  string // meta.txt's slurm_version as a series (22.05), fairledger's --slurm-version; "" if absent
	captures []sshareCapture
}

// sshareCapture is one `sshare -a -l -P` of the live cluster and the time
// (`date +%s.%N`) taken just before it ran.
type sshareCapture struct {
	file  string
	at    float64
	until float64 // when sshare had answered (captures.tsv's third column); 0 in the kept captures
}

// cellKey names one cell of one capture: the association by account, user
// and partition (empty but for a user's per-partition associations, in a
// capture taken with `sshare -m`) and the column.
type cellKey struct {
	capture, account, user, partition, column string
}

// String is the cell's line in the kept files: capture, account, user, the
// partition when there is one, and the column, tab-separated.
func (k cellKey) String() string {
	s := k.capture + "\t" + k.account + "\t" + k.user + "\t"
	if k.partition != "" {
		s += k.partition + "\t"
	}
	return s + k.column
}

// assocKey is an sshare row's association: account (without its
// indentation), user and partition.
type assocKey [3]string

// cellDiff is a cell where fairledger's answer differs from Slurm's.
type cellDiff struct {
	key         cellKey
	slurm, ours string
}

func readSlurmCapture(t *testing.T, dir string) slurmCapture {
	t.Helper()
	c := slurmCapture{dir: dir}
	meta, err := os.ReadFile(filepath.Join(dir, "meta.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(meta)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "to":
			c.to = v
		case "tz":
			c.tz = v
		case "slurm_version":
			if f := strings.Split(v, "."); len(f) >= 2 {
				c.release = f[0] + "." + f[1]
			}
		}
	}
	if c.to == "" || c.tz == "" {
		t.Fatalf("%s/meta.txt: want to= and tz= lines", dir)
	}
	f, err := os.Open(filepath.Join(dir, "captures.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		var sec, until float64
		var err error
		if len(f) >= 2 {
			sec, err = strconv.ParseFloat(f[1], 64)
		}
		if len(f) == 3 && err == nil {
			until, err = strconv.ParseFloat(f[2], 64)
		}
		if len(f) < 2 || len(f) > 3 || err != nil {
			t.Fatalf("%s/captures.tsv: %q: want FILE<TAB>UNIX-SECONDS[<TAB>UNIX-SECONDS]", dir, sc.Text())
		}
		c.captures = append(c.captures, sshareCapture{file: f[0], at: sec, until: until})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(c.captures) == 0 {
		t.Fatalf("%s/captures.tsv: no capture", dir)
	}
	return c
}

// parseSshare reads `sshare -P` output into its header and its rows keyed by
// (account without its indentation, user, partition when the output has the
// Partition column); the row order is kept in keys.
func parseSshare(text string) (header []string, keys []assocKey, rows map[assocKey][]string, err error) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return nil, nil, nil, fmt.Errorf("empty sshare output")
	}
	header = strings.Split(lines[0], "|")
	ia, iu := slices.Index(header, "Account"), slices.Index(header, "User")
	if ia < 0 || iu < 0 {
		return nil, nil, nil, fmt.Errorf("sshare header %q: no Account or User column", lines[0])
	}
	ip := slices.Index(header, "Partition")
	rows = make(map[assocKey][]string)
	for i, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != len(header) {
			return nil, nil, nil, fmt.Errorf("line %d: %d fields, header has %d", i+2, len(f), len(header))
		}
		k := assocKey{strings.TrimLeft(f[ia], " "), f[iu]}
		if ip >= 0 {
			k[2] = f[ip]
		}
		if _, dup := rows[k]; dup {
			return nil, nil, nil, fmt.Errorf("line %d: association %s/%s/%s twice", i+2, k[0], k[1], k[2])
		}
		keys = append(keys, k)
		rows[k] = f
	}
	return header, keys, rows, nil
}

// e2eMode is one of the two ways the live comparisons run fairledger on a
// capture (docs/slurm-e2e.md, The two modes).
type e2eMode struct {
	name     string // the subtest's name
	title    string // how the log names it
	matching string // the scenario's kept file of the cells that must match
	oneRun   bool   // one run over the whole recording, then --at each capture
}

// e2eModes are the two modes, the one-run-per-capture form first: a run
// ending at each capture's second, then the realistic way, one run over the
// whole recording and `--at` each capture on that one history.
func e2eModes() []e2eMode {
	return []e2eMode{
		{name: "per-capture", title: "per-capture runs", matching: "matching.tsv"},
		{name: "one-run", title: "one run, --at each capture", matching: "matching-onerun.tsv", oneRun: true},
	}
}

// slurmRunArgs are the arguments of `fairledger run` over the capture's
// dumps into the history hist that both modes give, without --to and
// --snapshot-every.
func slurmRunArgs(c slurmCapture, hist string) []string {
	args := []string{"fairledger", "--log-format", "json", "--log-level", "warn", "run",
		"--slurm-conf", filepath.Join(c.dir, "slurm.conf"), "--assoc", filepath.Join(c.dir, "assoc.psv"),
		"--qos", filepath.Join(c.dir, "qos.psv"), "--sacct", filepath.Join(c.dir, "sacct.psv"),
		"--history", hist, "--tz", c.tz, "--progress", "never"}
	// The release the capture's cluster ran (the TRES it tracks, sshare's
	// row order depend on it).
	if c.release != "" {
		args = append(args, "--slurm-version", c.release)
	}
	// The ticks of the capture's slurmctld: its log (DebugFlags=Priority)
	// when the capture has one, as a site gives it to every night's run;
	// else, as a site reads them from its StateSaveLocation, the last
	// tick's Unix second, the first of the two big-endian int64 of
	// priority_last_decay_ran.
	if logFile := filepath.Join(c.dir, "slurmctld.log"); fileExists(logFile) {
		args = append(args, "--slurmctld-log", logFile)
	} else if b, err := os.ReadFile(filepath.Join(c.dir, "priority_last_decay_ran")); err == nil && len(b) == 16 {
		args = append(args, "--tick-phase", "@"+strconv.FormatInt(int64(binary.BigEndian.Uint64(b[:8])), 10))
	}
	// FAIRLEDGER_SLURM_RUN_ARGS adds flags to the run, {dir} standing for
	// the capture directory.
	for _, a := range strings.Fields(os.Getenv("FAIRLEDGER_SLURM_RUN_ARGS")) {
		args = append(args, strings.ReplaceAll(a, "{dir}", c.dir))
	}
	return args
}

// captureSecond is the `--at`/`--to` argument of a capture taken at Unix
// time at: its whole second, @S (`--at T` is the instant T.000).
func captureSecond(at float64) string {
	return "@" + strconv.FormatInt(int64(math.Floor(at)), 10)
}

// querySecond is the whole second whose answer is the state Slurm printed
// at the capture's instant at, as slurmctld's log (in dir) dates its job
// starts, job ends and decay ticks to the millisecond. fairledger's second
// T is the instant T.000: a job starting or ending in T does so after it
// (a whole-second record cannot say when in T), a tick of second T is in
// it (slurmctld's tick is dated by its own whole second). So T is Slurm's
// instant unless a job started or ended in T before the capture, or a tick
// of T came after it. Then T+1 is, when no job starts or ends from the
// capture to the end of T and no tick comes from the capture to the end of
// T+1; when one does, no whole second is, and T stays (its differences
// show as any other).
func querySecond(t *testing.T, dir, tz string, at float64) string {
	q, _ := querySecondWhy(t, dir, tz, at)
	return q
}

// querySecondWhy is querySecond, and, when no whole second is Slurm's
// instant, why: a job started or ended (or a tick came) in the capture's
// second on both sides of it.
func querySecondWhy(t *testing.T, dir, tz string, at float64) (string, string) {
	t.Helper()
	events, ok := ctldEvents(t, dir, tz)
	if !ok {
		return captureSecond(at), "" // no log: the whole second
	}
	sec := math.Floor(at)
	var jobBefore, tickAfterInT, jobAfterInT, tickAfter bool
	for _, e := range events {
		switch x := e.at; {
		case !e.tick && x >= sec && x < at:
			jobBefore = true
		case !e.tick && x >= at && x < sec+1:
			jobAfterInT = true
		case e.tick && x >= at && x < sec+1:
			tickAfterInT, tickAfter = true, true
		case e.tick && x >= at && x < sec+2:
			tickAfter = true
		}
	}
	switch {
	case !jobBefore && !tickAfterInT:
		return captureSecond(at), ""
	case !jobAfterInT && !tickAfter:
		return "@" + strconv.FormatInt(int64(sec)+1, 10), ""
	}
	return captureSecond(at), fmt.Sprintf("slurmctld's log has job starts, ends or ticks on both sides of the capture (%.3f) within a second: no whole second is its instant", at)
}

// duringCapture names the first job start, job end or decay tick that
// slurmctld's log (in dir) dates between from, the time just before a
// capture's command ran, and until, when it had answered; "" when none or
// when until is unknown (0). slurmctld answered at some instant of that
// window, which no record gives: a capture with such an event has no one
// state to compare with, and its differences are reported, not required.
func duringCapture(t *testing.T, dir, tz string, from, until float64) string {
	t.Helper()
	if until <= from {
		return ""
	}
	events, _ := ctldEvents(t, dir, tz)
	for _, e := range events {
		if e.at >= from && e.at <= until {
			return fmt.Sprintf("slurmctld logged %q at %.3f, while the capture ran (%.3f to %.3f)", e.text, e.at, from, until)
		}
	}
	return ""
}

// ctldEvent is a job start, a job end or a decay tick of slurmctld's log:
// its time (Unix seconds, to the millisecond) and its line.
type ctldEvent struct {
	at   float64
	tick bool
	text string
}

// ctldEvents reads the job starts, job ends and decay ticks of the
// capture's slurmctld.log (in dir), in the log's order; ok is false when
// the capture has no log.
func ctldEvents(t *testing.T, dir, tz string) (events []ctldEvent, ok bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "slurmctld.log"))
	if err != nil {
		return nil, false
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		ts, rest, found := strings.Cut(strings.TrimPrefix(l, "["), "] ")
		if !found {
			continue
		}
		job, tick := logEvent(rest)
		if !job && !tick {
			continue
		}
		when, err := time.ParseInLocation("2006-01-02T15:04:05.000", ts, loc)
		if err != nil {
			continue
		}
		events = append(events, ctldEvent{at: float64(when.UnixMilli()) / 1000, tick: tick, text: strings.TrimSpace(rest)})
	}
	return events, true
}

// uncertainCapture says why a capture has no one state of fairledger's
// to compare with (duringCapture, or no whole second being its instant),
// or "".
func uncertainCapture(t *testing.T, dir, tz string, at, until float64) string {
	t.Helper()
	if e := duringCapture(t, dir, tz, at, until); e != "" {
		return e
	}
	_, why := querySecondWhy(t, dir, tz, at)
	return why
}

// logEvent reports whether a slurmctld log line (without its time) is a
// job start or end, or a decay tick.
func logEvent(rest string) (job, tick bool) {
	for _, w := range []string{"sched: Allocate JobId=", "_start_job: Started JobId=", "_job_complete: JobId=",
		"priority_p_job_end: called for job"} {
		if strings.Contains(rest, w) {
			return true, false
		}
	}
	return false, strings.Contains(rest, "_decay_thread: PRIO: Decay factor")
}

// compareSlurmCapture runs fairledger on the capture's dumps in mode m and
// compares every cell of every captured sshare with fairledger's `sshare
// --at` the capture's second. It returns the cells that match and those that
// differ (a missing row or a failed command differs in every cell of Slurm's
// row) and, per capture file, what fairledger said on stderr about the
// answer (which snapshot it shows).
func compareSlurmCapture(t *testing.T, c slurmCapture, m e2eMode) (matched []cellKey, diffs []cellDiff, notes map[string]string) {
	t.Helper()
	hist := t.TempDir()
	runArgs := slurmRunArgs(c, hist)
	notes = make(map[string]string, len(c.captures))
	var stdout, stderr bytes.Buffer
	compare := func(cp sshareCapture, failed string) {
		mk, d, note := compareCapture(t, c, cp, hist, querySecond(t, c.dir, c.tz, cp.at), failed)
		matched, diffs, notes[cp.file] = append(matched, mk...), append(diffs, d...), note
	}
	if m.oneRun {
		// The realistic way: one run over the whole recording, to the
		// export's second (meta.txt's to), with run's default
		// --snapshot-every (daily), as a site's nightly run makes the
		// history; then `sshare --at` each capture on that one history.
		to := "@" + c.to
		failed := ""
		if code := run(append(slices.Clip(runArgs), "--to", to), &stdout, &stderr); code != 0 && code != exitRejected {
			failed = fmt.Sprintf("(run --to %s: exit %d: %s)", to, code, lastLine(stderr.String()))
		}
		for _, cp := range c.captures {
			compare(cp, failed)
		}
		return matched, diffs, notes
	}
	// One run per capture, ending at its second, as a site running
	// fairledger at that moment would: the snapshot at --to holds what
	// slurmctld had charged by its last tick at or before it.
	runArgs = append(runArgs, "--snapshot-every", "0")
	for _, cp := range c.captures {
		stdout.Reset()
		stderr.Reset()
		at := querySecond(t, c.dir, c.tz, cp.at)
		failed := ""
		code := run(append(slices.Clip(runArgs), "--to", at), &stdout, &stderr)
		if code != 0 && code != exitRejected {
			failed = fmt.Sprintf("(run --to %s: exit %d: %s)", at, code, lastLine(stderr.String()))
		}
		compare(cp, failed)
	}
	return matched, diffs, notes
}

// compareCapture compares every cell of the captured sshare cp with
// fairledger's `sshare --at at` of the history hist (failed, when not
// empty, says why fairledger has no answer: every cell differs). Both modes
// compare through it. note is what sshare said on stderr about its answer
// (its last log message: which snapshot or moment it shows).
func compareCapture(t *testing.T, c slurmCapture, cp sshareCapture, hist, at, failed string) (matched []cellKey, diffs []cellDiff, note string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(c.dir, "sshare", cp.file))
	if err != nil {
		t.Fatal(err)
	}
	wh, wkeys, wrows, err := parseSshare(string(want))
	if err != nil {
		t.Fatalf("%s: %v", cp.file, err)
	}
	var stdout, stderr bytes.Buffer
	var gh []string
	var gkeys []assocKey
	var grows map[assocKey][]string
	code := 0
	if failed == "" {
		args := []string{"fairledger", "--log-format", "json", "--log-level", "info", "sshare",
			"--history", hist, "--at", at, "--tz", c.tz, "-a", "-l", "-P"}
		if slices.Contains(wh, "Partition") { // captured with sshare -m
			args = append(args, "-m")
		}
		code = run(args, &stdout, &stderr)
		note = lastLogMessage(stderr.String())
	}
	if failed == "" && code != 0 {
		failed = fmt.Sprintf("(sshare --at %s: exit %d: %s)", at, code, lastLine(stderr.String()))
	} else if gh, gkeys, grows, err = parseSshare(stdout.String()); failed == "" && err != nil {
		failed = fmt.Sprintf("(sshare --at %s: %v)", at, err)
	}
	for _, k := range wkeys {
		wf := wrows[k]
		gf, ok := grows[k]
		for i, col := range wh {
			if col == "Account" || col == "User" || col == "Partition" {
				continue
			}
			key := cellKey{cp.file, k[0], k[1], k[2], col}
			got := failed
			if got == "" {
				got = "(no such row)"
				if ok {
					got = "(no such column)"
					if j := slices.Index(gh, col); j >= 0 {
						got = gf[j]
					}
				}
			}
			if got == wf[i] {
				matched = append(matched, key)
			} else {
				diffs = append(diffs, cellDiff{key, wf[i], got})
			}
		}
	}
	for k := range grows {
		if _, ok := wrows[k]; !ok {
			diffs = append(diffs, cellDiff{cellKey{cp.file, k[0], k[1], k[2], "(row)"}, "(no such row)", "(row)"})
		}
	}
	// The rows' order, the release's (docs/slurm-versions.md §5): not a
	// cell, a difference when it differs.
	if failed == "" && len(gkeys) == len(wkeys) && !slices.Equal(gkeys, wkeys) {
		diffs = append(diffs, cellDiff{cellKey{cp.file, "", "", "", "(row order)"}, fmt.Sprint(wkeys), fmt.Sprint(gkeys)})
	}
	return matched, diffs, note
}

// requiredDiffs counts the differences that must not be: those of
// captures during which slurmctld logged no job start, job end or tick
// (duringCapture), whose differences are logged with the event.
func requiredDiffs(t *testing.T, c slurmCapture, diffs []cellDiff) int {
	t.Helper()
	during := map[string]string{}
	for _, cp := range c.captures {
		if e := uncertainCapture(t, c.dir, c.tz, cp.at, cp.until); e != "" {
			during[cp.file] = e
		}
	}
	n := 0
	logged := map[string]bool{}
	for _, d := range diffs {
		e, ok := during[d.key.capture]
		if !ok {
			n++
			continue
		}
		if !logged[d.key.capture] {
			t.Logf("%s: its differences are reported, not required: %s", d.key.capture, e)
			logged[d.key.capture] = true
		}
	}
	return n
}

// lastLogMessage is the message of the last JSON log line in s, or its
// last line when that is not a JSON log line.
func lastLogMessage(s string) string {
	l := lastLine(s)
	var ev struct {
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(l), &ev) == nil && ev.Message != "" {
		return ev.Message
	}
	return l
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestSlurmE2E compares fairledger with a live Slurm cluster, in each
// scenario in both modes of e2eModes (subtests per-capture and one-run):
// a run ending at each capture's second, and one run over the whole
// recording with `sshare --at` each capture. Without
// FAIRLEDGER_SLURM_CAPTURE it reads the captures kept in testdata/slurm-e2e
// (one run of run.sh) and requires every cell listed in the mode's kept file
// (matching.tsv, matching-onerun.tsv: the cells that matched when it was
// recorded) to match Slurm's, reporting the others; with
// FAIRLEDGER_SLURM_CAPTURE=DIR (set by run.sh) it compares the live capture
// in DIR and only reports. With FAIRLEDGER_SLURM_EXACT=1 every cell must
// match, in both modes.
func TestSlurmE2E(t *testing.T) {
	root, live := os.LookupEnv("FAIRLEDGER_SLURM_CAPTURE")
	if !live {
		root = filepath.Join("..", "..", "testdata", "slurm-e2e")
	}
	exact := os.Getenv("FAIRLEDGER_SLURM_EXACT") == "1"
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var scenarios []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "meta.txt")); e.IsDir() && err == nil {
			scenarios = append(scenarios, e.Name())
		}
	}
	if len(scenarios) == 0 {
		t.Fatalf("%s: no scenario (a directory with meta.txt)", root)
	}
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			c := readSlurmCapture(t, dir)
			for _, m := range e2eModes() {
				t.Run(m.name, func(t *testing.T) {
					matched, diffs, notes := compareSlurmCapture(t, c, m)
					total := len(matched) + len(diffs)
					if total == 0 {
						t.Fatal("no cell compared")
					}
					t.Logf("%s: %s: %d/%d cells match Slurm's (%d captures)", name, m.title, len(matched), total, len(c.captures))
					logDiffs(t, c, m.title, matched, diffs, notes)
					if required := requiredDiffs(t, c, diffs); exact && required > 0 {
						t.Errorf("%s: %s: %d/%d cells differ from Slurm's (FAIRLEDGER_SLURM_EXACT=1)", name, m.title, required, total)
					}
					if live {
						return
					}
					keys := make([]string, len(matched))
					for i, k := range matched {
						keys[i] = k.String()
					}
					file := filepath.Join(dir, m.matching)
					if *updateSlurmE2E {
						writeMatching(t, file, fmt.Sprintf("the cells of sshare/*.psv where fairledger matched Slurm, %s", m.title), "TestSlurmE2E", keys)
						return
					}
					differs := make(map[string]string, len(diffs))
					for _, d := range diffs {
						differs[d.key.String()] = fmt.Sprintf("matched Slurm's %q before, fairledger now prints %q", d.slurm, d.ours)
					}
					checkMatching(t, file, keys, differs, "TestSlurmE2E", false)
				})
			}
		})
	}
}

// logDiffs reports, for the comparison title, the matched cells per
// capture, what fairledger said about each answer (notes, by capture
// file), and the first differences (diffLimit of them; a capture where
// fairledger failed is one line), each naming the capture, the cell,
// Slurm's value and fairledger's.
func logDiffs(t *testing.T, c slurmCapture, title string, matched []cellKey, diffs []cellDiff, notes map[string]string) {
	t.Helper()
	limit := diffLimit()
	ok, bad := map[string]int{}, map[string]int{}
	for _, k := range matched {
		ok[k.capture]++
	}
	for _, d := range diffs {
		bad[d.key.capture]++
	}
	shown := 0
	for _, cp := range c.captures {
		t.Logf("%s: %s (at %.3f, --at %s): %d/%d cells match", title, cp.file, cp.at, querySecond(t, c.dir, c.tz, cp.at), ok[cp.file], ok[cp.file]+bad[cp.file])
		if n := notes[cp.file]; n != "" {
			t.Logf("  fairledger: %s", n)
		}
		for _, d := range diffs {
			if d.key.capture != cp.file {
				continue
			}
			if strings.HasPrefix(d.ours, "(sshare --at") || strings.HasPrefix(d.ours, "(run --to") {
				t.Logf("  %s every cell: fairledger %s", cp.file, d.ours)
				break
			}
			if shown == limit {
				t.Logf("  ... (FAIRLEDGER_SLURM_DIFFS=%d shown)", limit)
				shown++
			}
			if shown > limit {
				break
			}
			t.Logf("  %s %s/%s %s: slurm %q, fairledger %q", cp.file, d.key.account, d.key.user, d.key.column, d.slurm, d.ours)
			shown++
		}
	}
}

// diffLimit is how many differences the comparisons log:
// FAIRLEDGER_SLURM_DIFFS, default 40.
func diffLimit() int {
	if n, err := strconv.Atoi(os.Getenv("FAIRLEDGER_SLURM_DIFFS")); err == nil {
		return n
	}
	return 40
}

// writeMatching writes the kept file of what matched Slurm's today (the
// keys, one a line, under a comment line saying what they are and which
// test rewrites them).
func writeMatching(t *testing.T, file, what, test string, keys []string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (go test ./cmd/fairledger -run %s -update-slurm-e2e)\n", what, test)
	for _, k := range keys {
		b.WriteString(k + "\n")
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkMatching requires every key listed in file to be among matched: a
// cell or line that matched Slurm's when the file was written must keep
// matching. differs says, for a key that differs now, how (a key in
// neither was not in the capture). test names the test whose
// -update-slurm-e2e rewrites file. A file that lists nothing is an error
// unless allowEmpty (a comparison that matches nothing yet, logged).
func checkMatching(t *testing.T, file string, matched []string, differs map[string]string, test string, allowEmpty bool) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (written by go test ./cmd/fairledger -run %s -update-slurm-e2e)", err, test)
	}
	ok := make(map[string]bool, len(matched))
	for _, k := range matched {
		ok[k] = true
	}
	base := filepath.Base(file)
	listed := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		listed++
		if ok[line] {
			delete(ok, line)
			continue
		}
		if d, found := differs[line]; found {
			t.Errorf("%s (%s): %s", strings.ReplaceAll(line, "\t", " "), base, d)
		} else {
			t.Errorf("%s: listed in %s but not in the capture", strings.ReplaceAll(line, "\t", " "), file)
		}
	}
	switch {
	case listed == 0 && allowEmpty:
		t.Logf("%s lists nothing: nothing of this comparison is required yet", file)
	case listed == 0:
		t.Errorf("%s lists nothing: a kept comparison must require something", file)
	}
	if len(ok) > 0 {
		t.Logf("%d more match than %s lists: check them against the capture, then run go test ./cmd/fairledger -run %s -update-slurm-e2e",
			len(ok), base, test)
	}
}

// fileExists reports whether path names a file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestSacctAllFieldsE2E: the scenario's jobs dumped with every field its
// release's sacct has (sacct-all.psv: `sacct -o` of every name `sacct
// --helpformat` lists, 22.05's, 24.11's or 26.05's) give the history the
// narrow dump gives: the run succeeds with no row rejected, and sshare at
// the export's second prints the same bytes. Only a live capture
// (FAIRLEDGER_SLURM_CAPTURE) has sacct-all.psv.
func TestSacctAllFieldsE2E(t *testing.T) {
	root, live := os.LookupEnv("FAIRLEDGER_SLURM_CAPTURE")
	if !live {
		t.Skip("no live capture (FAIRLEDGER_SLURM_CAPTURE)")
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !fileExists(filepath.Join(dir, "sacct-all.psv")) {
			continue
		}
		compared++
		t.Run(e.Name(), func(t *testing.T) {
			c := readSlurmCapture(t, dir)
			out := make(map[string]string)
			for _, file := range []string{"sacct.psv", "sacct-all.psv"} {
				hist := filepath.Join(t.TempDir(), "h")
				args := slurmRunArgs(c, hist)
				i := slices.Index(args, "--sacct")
				args[i+1] = filepath.Join(dir, file)
				var stdout, stderr bytes.Buffer
				if code := run(append(args, "--to", "@"+c.to), &stdout, &stderr); code != 0 {
					t.Fatalf("run --sacct %s: exit %d: %s", file, code, lastLine(stderr.String()))
				}
				stdout.Reset()
				stderr.Reset()
				if code := run([]string{"fairledger", "sshare", "--history", hist, "--at", "@" + c.to, "--tz", c.tz, "-a", "-l", "-P", "-m"}, &stdout, &stderr); code != 0 {
					t.Fatalf("sshare after --sacct %s: exit %d: %s", file, code, lastLine(stderr.String()))
				}
				out[file] = stdout.String()
			}
			if out["sacct.psv"] != out["sacct-all.psv"] {
				t.Errorf("sshare differs:\nwith sacct.psv:\n%s\nwith sacct-all.psv:\n%s", out["sacct.psv"], out["sacct-all.psv"])
			}
			head, _, _ := strings.Cut(readFileString(t, filepath.Join(dir, "sacct-all.psv")), "\n")
			t.Logf("%s: sacct-all.psv (%d fields) gives the history sacct.psv gives", e.Name(), strings.Count(head, "|")+1)
		})
	}
	if compared == 0 {
		t.Skipf("%s: no scenario with sacct-all.psv", root)
	}
}

func readFileString(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
