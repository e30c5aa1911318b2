package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The Slurm end-to-end comparison (docs/slurm-e2e.md): a live Slurm cluster's
// `sshare -a -l -P`, captured every minute by testdata/slurm-e2e/run.sh, is
// the expected value; fairledger runs on the sacct/sacctmgr/slurm.conf dumps
// of the same cluster and answers `sshare --at` each capture's time. The
// comparison is cell by cell, as strings, with no tolerance.

var updateSlurmE2E = flag.Bool("update-slurm-e2e", false,
	"rewrite testdata/slurm-e2e/<scenario>/matching.tsv with the cells that match Slurm's today")

// slurmCapture is one scenario's capture directory, as run.sh writes it.
type slurmCapture struct {
	dir      string
	to       string // meta.txt's to: Unix seconds of the export, fairledger's --to
	tz       string
	captures []sshareCapture
}

// sshareCapture is one `sshare -a -l -P` of the live cluster and the time
// (`date +%s.%N`) taken just before it ran.
type sshareCapture struct {
	file string
	at   float64
}

// cellKey names one cell of one capture: the association by account and
// user (unique in `sshare -a` without partitions) and the column.
type cellKey struct {
	capture, account, user, column string
}

func (k cellKey) String() string {
	return k.capture + "\t" + k.account + "\t" + k.user + "\t" + k.column
}

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
		file, at, ok := strings.Cut(sc.Text(), "\t")
		sec, err := strconv.ParseFloat(at, 64)
		if !ok || err != nil {
			t.Fatalf("%s/captures.tsv: %q: want FILE<TAB>UNIX-SECONDS", dir, sc.Text())
		}
		c.captures = append(c.captures, sshareCapture{file: file, at: sec})
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
// (account without its indentation, user); the row order is kept in keys.
func parseSshare(text string) (header []string, keys [][2]string, rows map[[2]string][]string, err error) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return nil, nil, nil, fmt.Errorf("empty sshare output")
	}
	header = strings.Split(lines[0], "|")
	ia, iu := slices.Index(header, "Account"), slices.Index(header, "User")
	if ia < 0 || iu < 0 {
		return nil, nil, nil, fmt.Errorf("sshare header %q: no Account or User column", lines[0])
	}
	rows = make(map[[2]string][]string)
	for i, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != len(header) {
			return nil, nil, nil, fmt.Errorf("line %d: %d fields, header has %d", i+2, len(f), len(header))
		}
		k := [2]string{strings.TrimLeft(f[ia], " "), f[iu]}
		if _, dup := rows[k]; dup {
			return nil, nil, nil, fmt.Errorf("line %d: association %s/%s twice", i+2, k[0], k[1])
		}
		keys = append(keys, k)
		rows[k] = f
	}
	return header, keys, rows, nil
}

// compareSlurmCapture runs fairledger on the capture's dumps and compares
// every cell of every captured sshare with fairledger's `sshare --at` the
// capture's time. It returns the cells that match and those that differ (a
// missing row or a failed command differs in every cell of Slurm's row).
func compareSlurmCapture(t *testing.T, c slurmCapture) (matched []cellKey, diffs []cellDiff) {
	t.Helper()
	hist := t.TempDir()
	var stdout, stderr bytes.Buffer
	// One run per capture, ending at its second, as a site running
	// fairledger at that moment would: the snapshot at --to holds what
	// slurmctld had charged by its last tick at or before it.
	runArgs := []string{"fairledger", "--log-format", "json", "--log-level", "warn", "run",
		"--slurm-conf", filepath.Join(c.dir, "slurm.conf"), "--assoc", filepath.Join(c.dir, "assoc.psv"),
		"--qos", filepath.Join(c.dir, "qos.psv"), "--sacct", filepath.Join(c.dir, "sacct.psv"),
		"--history", hist, "--snapshot-every", "0", "--tz", c.tz, "--progress", "never"}
	// The ticks of the capture's slurmctld: its log (DebugFlags=Priority)
	// when the capture has one, as a site gives it to every night's run;
	// else, as a site reads them from its StateSaveLocation, the last
	// tick's Unix second, the first of the two big-endian int64 of
	// priority_last_decay_ran.
	if logFile := filepath.Join(c.dir, "slurmctld.log"); fileExists(logFile) {
		runArgs = append(runArgs, "--slurmctld-log", logFile)
	} else if b, err := os.ReadFile(filepath.Join(c.dir, "priority_last_decay_ran")); err == nil && len(b) == 16 {
		runArgs = append(runArgs, "--tick-phase", "@"+strconv.FormatInt(int64(binary.BigEndian.Uint64(b[:8])), 10))
	}
	// FAIRLEDGER_SLURM_RUN_ARGS adds flags to the run, {dir} standing for
	// the capture directory.
	for _, a := range strings.Fields(os.Getenv("FAIRLEDGER_SLURM_RUN_ARGS")) {
		runArgs = append(runArgs, strings.ReplaceAll(a, "{dir}", c.dir))
	}
	for _, cp := range c.captures {
		stdout.Reset()
		stderr.Reset()
		at := "@" + strconv.FormatInt(int64(math.Floor(cp.at)), 10)
		failed := ""
		code := run(append(slices.Clip(runArgs), "--to", at), &stdout, &stderr)
		if code != 0 && code != exitRejected {
			failed = fmt.Sprintf("(run --to %s: exit %d: %s)", at, code, lastLine(stderr.String()))
		}
		m, d := compareCapture(t, c, cp, hist, at, failed)
		matched, diffs = append(matched, m...), append(diffs, d...)
	}
	return matched, diffs
}

// compareCapture compares every cell of the captured sshare cp with
// fairledger's `sshare --at at` of the history hist (failed, when not
// empty, says why fairledger has no answer: every cell differs).
func compareCapture(t *testing.T, c slurmCapture, cp sshareCapture, hist, at, failed string) (matched []cellKey, diffs []cellDiff) {
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
	var grows map[[2]string][]string
	code := 0
	if failed == "" {
		code = run([]string{"fairledger", "--log-format", "json", "--log-level", "warn", "sshare",
			"--history", hist, "--at", at, "--tz", c.tz, "-a", "-l", "-P"}, &stdout, &stderr)
	}
	if failed == "" && code != 0 {
		failed = fmt.Sprintf("(sshare --at %s: exit %d: %s)", at, code, lastLine(stderr.String()))
	} else if gh, _, grows, err = parseSshare(stdout.String()); failed == "" && err != nil {
		failed = fmt.Sprintf("(sshare --at %s: %v)", at, err)
	}
	for _, k := range wkeys {
		wf := wrows[k]
		gf, ok := grows[k]
		for i, col := range wh {
			if col == "Account" || col == "User" {
				continue
			}
			key := cellKey{cp.file, k[0], k[1], col}
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
			diffs = append(diffs, cellDiff{cellKey{cp.file, k[0], k[1], "(row)"}, "(no such row)", "(row)"})
		}
	}
	return matched, diffs
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestSlurmE2E compares fairledger with a live Slurm cluster. Without
// FAIRLEDGER_SLURM_CAPTURE it reads the captures kept in testdata/slurm-e2e
// (one run of run.sh) and requires every cell listed in the scenario's
// matching.tsv to match Slurm's (the cells that matched when it was
// recorded), reporting the others; with FAIRLEDGER_SLURM_CAPTURE=DIR (set by
// run.sh) it compares the live capture in DIR and only reports. With
// FAIRLEDGER_SLURM_EXACT=1 every cell must match.
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
			matched, diffs := compareSlurmCapture(t, c)
			total := len(matched) + len(diffs)
			if total == 0 {
				t.Fatal("no cell compared")
			}
			t.Logf("%s: %d/%d cells match Slurm's (%d captures)", name, len(matched), total, len(c.captures))
			logDiffs(t, c, matched, diffs)
			if exact && len(diffs) > 0 {
				t.Errorf("%s: %d/%d cells differ from Slurm's (FAIRLEDGER_SLURM_EXACT=1)", name, len(diffs), total)
			}
			if live {
				return
			}
			file := filepath.Join(dir, "matching.tsv")
			if *updateSlurmE2E {
				var b strings.Builder
				b.WriteString("# the cells of sshare/*.psv where fairledger matched Slurm (go test -run TestSlurmE2E -update-slurm-e2e)\n")
				for _, k := range matched {
					b.WriteString(k.String() + "\n")
				}
				if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			checkMatching(t, file, matched, diffs)
		})
	}
}

// logDiffs reports the matched cells per capture and the first differences
// (FAIRLEDGER_SLURM_DIFFS of them, default 40; a capture where fairledger
// failed is one line).
func logDiffs(t *testing.T, c slurmCapture, matched []cellKey, diffs []cellDiff) {
	t.Helper()
	limit := 40
	if n, err := strconv.Atoi(os.Getenv("FAIRLEDGER_SLURM_DIFFS")); err == nil {
		limit = n
	}
	ok, bad := map[string]int{}, map[string]int{}
	for _, k := range matched {
		ok[k.capture]++
	}
	for _, d := range diffs {
		bad[d.key.capture]++
	}
	shown := 0
	for _, cp := range c.captures {
		t.Logf("%s (at %.3f): %d/%d cells match", cp.file, cp.at, ok[cp.file], ok[cp.file]+bad[cp.file])
		for _, d := range diffs {
			if d.key.capture != cp.file {
				continue
			}
			if strings.HasPrefix(d.ours, "(sshare --at") {
				t.Logf("  every cell: fairledger %s", d.ours)
				break
			}
			if shown == limit {
				t.Logf("  ... (FAIRLEDGER_SLURM_DIFFS=%d shown)", limit)
				shown++
			}
			if shown > limit {
				break
			}
			t.Logf("  %s/%s %s: slurm %q, fairledger %q", d.key.account, d.key.user, d.key.column, d.slurm, d.ours)
			shown++
		}
	}
}

// checkMatching requires every cell listed in file to be among matched: a
// cell that matched Slurm's when the file was written must keep matching.
func checkMatching(t *testing.T, file string, matched []cellKey, diffs []cellDiff) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ok := make(map[string]bool, len(matched))
	for _, k := range matched {
		ok[k.String()] = true
	}
	differs := make(map[string]cellDiff, len(diffs))
	for _, d := range diffs {
		differs[d.key.String()] = d
	}
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
			t.Errorf("%s: matched Slurm's %q before, fairledger now prints %q", strings.ReplaceAll(line, "\t", " "), d.slurm, d.ours)
		} else {
			t.Errorf("%s: listed in %s but not in the capture", strings.ReplaceAll(line, "\t", " "), file)
		}
	}
	if listed == 0 {
		t.Errorf("%s lists no cell", file)
	}
	if len(ok) > 0 {
		t.Logf("%d more cells match than %s lists: run go test -run TestSlurmE2E -update-slurm-e2e", len(ok), file)
	}
}

// fileExists reports whether path names a file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
