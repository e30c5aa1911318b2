package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNightlyE2E checks the nights testdata/slurm-e2e/run.sh ran with
// fairledger nightly against the live decay cluster (docs/slurm-e2e.md,
// "The nightly command"): each night exited as it should, a night that
// failed left the history as it was, a night that succeeded printed
// nothing, and the history the nights built answers sshare --at each
// night's end as the live sshare captured at that second, every cell.
// It runs only on a live capture (FAIRLEDGER_SLURM_CAPTURE).
func TestNightlyE2E(t *testing.T) {
	root, live := os.LookupEnv("FAIRLEDGER_SLURM_CAPTURE")
	if !live {
		t.Skip("needs a live capture (FAIRLEDGER_SLURM_CAPTURE, set by testdata/slurm-e2e/run.sh)")
	}
	dir := filepath.Join(root, "decay")
	nights := readNights(t, filepath.Join(dir, "nightly", "nights.tsv"))
	c := readSlurmCapture(t, dir)
	hist := filepath.Join(dir, "nightly", "history")
	exact := os.Getenv("FAIRLEDGER_SLURM_EXACT") == "1"
	var matched []cellKey
	var diffs []cellDiff
	notes := map[string]string{}
	compared := 0
	for _, n := range nights {
		t.Logf("night %s: --to %s, exit %s (want %s), history unchanged %s, stdout %s bytes, stderr %s lines: %q",
			n.name, n.to, n.exit, n.wantExit, n.unchanged, n.stdoutBytes, n.stderrLines, n.stderr)
		if n.exit != n.wantExit {
			t.Errorf("night %s: exit %s, want %s (stderr %q)", n.name, n.exit, n.wantExit, n.stderr)
		}
		switch n.wantExit {
		case "0":
			if n.stdoutBytes != "0" || n.stderrLines != "0" {
				t.Errorf("night %s: not silent: %s bytes on stdout, stderr %q", n.name, n.stdoutBytes, n.stderr)
			}
		case "1":
			if n.unchanged != "yes" {
				t.Errorf("night %s failed but the history changed", n.name)
			}
			if n.stderrLines != "1" {
				t.Errorf("night %s failed without one line on stderr: %q", n.name, n.stderr)
			}
		}
		if n.capture == "-" || n.wantExit != "0" || n.exit != "0" {
			continue
		}
		var cp sshareCapture
		for _, x := range c.captures {
			if x.file == n.capture {
				cp = x
			}
		}
		if cp.file == "" {
			t.Fatalf("night %s: capture %s not in captures.tsv", n.name, n.capture)
		}
		if q := querySecond(t, c.dir, c.tz, cp.at); q != "@"+n.to {
			// A job started in the night's last second, before the capture:
			// Slurm's instant is after the end of the night's history.
			t.Logf("night %s: not compared with %s: a job started in its last second before the capture (Slurm's instant is %s, the night ended at @%s)", n.name, cp.file, q, n.to)
			continue
		}
		m, d, note := compareCapture(t, c, cp, hist, "@"+n.to, "")
		matched, diffs, notes[cp.file] = append(matched, m...), append(diffs, d...), note
		compared++
	}
	if compared < 3 {
		t.Errorf("%d nights compared with a capture, want at least 3", compared)
	}
	t.Logf("nightly: %d/%d cells match Slurm's (%d nights compared)", len(matched), len(matched)+len(diffs), compared)
	logDiffs(t, c, "nightly", matched, diffs, notes)
	if required := requiredDiffs(t, c, diffs); exact && required > 0 {
		t.Errorf("nightly: %d cells differ from Slurm's (FAIRLEDGER_SLURM_EXACT=1)", required)
	}
}

// night is one line of nights.tsv, written by run.sh.
type night struct {
	name, capture, to, wantExit, exit, unchanged, stdoutBytes, stderrLines, stderr string
}

func readNights(t *testing.T, file string) []night {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []night
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 9 {
			t.Fatalf("%s: %q: want 9 tab-separated fields", file, sc.Text())
		}
		out = append(out, night{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no night", file)
	}
	return out
}
