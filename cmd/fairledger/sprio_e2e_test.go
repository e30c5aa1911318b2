package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSprioE2E compares `fairledger sprio -l` with what a live Slurm
// cluster's sprio printed (the prio scenario of run.sh, docs/slurm-e2e.md):
// for each capture, a run with --priority ending at the capture's second
// on the scenario's dumps, as a site running fairledger then would, and
// sprio --at that second. Every line Slurm printed must come out, but those
// of a job whose record is in no sacct dump (as the pending remainder of a
// job array, whose Eligible is Unknown, is not in a dump of every state for
// a window), and no other line.
func TestSprioE2E(t *testing.T) {
	root, live := os.LookupEnv("FAIRLEDGER_SLURM_CAPTURE")
	if !live {
		root = filepath.Join("..", "..", "testdata", "slurm-e2e")
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !fileExists(filepath.Join(dir, "sprio.tsv")) {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) { compareSprio(t, dir, live) })
	}
	if n == 0 {
		t.Fatalf("%s: no scenario with sprio captures", root)
	}
}

func compareSprio(t *testing.T, dir string, live bool) {
	recorded := sacctJobIDs(t, dir)
	c := readSlurmCapture(t, dir)
	b, err := os.ReadFile(filepath.Join(dir, "sprio.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	matched, total, unrecorded := 0, 0, 0
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, at, _ := strings.Cut(l, "\t")
		sec, err := strconv.ParseFloat(at, 64)
		if err != nil {
			t.Fatal(err)
		}
		when := "@" + strconv.FormatInt(int64(math.Floor(sec)), 10)
		hist := t.TempDir()
		var stdout, stderr bytes.Buffer
		args := []string{"fairledger", "--log-format", "json", "--log-level", "warn", "run", "--priority",
			"--slurm-conf", filepath.Join(dir, "slurm.conf"), "--assoc", filepath.Join(dir, "assoc.psv"),
			"--qos", filepath.Join(dir, "qos.psv"), "--sacct", filepath.Join(dir, "sacct.psv"),
			"--slurmctld-log", filepath.Join(dir, "slurmctld.log"), "--history", hist, "--snapshot-every", "0",
			"--tz", c.tz, "--progress", "never", "--to", when, "--slurm-version", sprioRelease(t, dir)}
		if code := run(args, &stdout, &stderr); code != 0 && code != exitRejected {
			t.Fatalf("%s: run --to %s: exit %d: %s", name, when, code, stderr.String())
		}
		stdout.Reset()
		stderr.Reset()
		if code := run([]string{"fairledger", "--log-format", "json", "--log-level", "warn", "sprio",
			"--history", hist, "--at", when, "-l"}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: sprio --at %s: exit %d: %s", name, when, code, stderr.String())
		}
		want, err := os.ReadFile(filepath.Join(dir, "sprio", name))
		if err != nil {
			t.Fatal(err)
		}
		wl := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
		gl := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
		for _, l := range wl[1:] {
			total++
			id := strings.Fields(l)[0]
			switch {
			case slices.Contains(gl, l):
				matched++
			case !recorded[id]:
				unrecorded++
				t.Logf("%s: job %s is in no sacct record:\n%s", name, id, l)
			default:
				t.Errorf("%s: Slurm printed\n%s\nfairledger has no such line; it printed\n%s", name, l, stdout.String())
			}
		}
		for _, l := range gl[1:] {
			if !slices.Contains(wl, l) {
				t.Errorf("%s: fairledger printed\n%s\nSlurm has no such line", name, l)
			}
		}
		if wl[0] != gl[0] {
			t.Errorf("%s: header\n%s\nwant\n%s", name, gl[0], wl[0])
		}
	}
	t.Logf("%s: %d/%d sprio -l lines match Slurm's; %d of a job in no sacct record", filepath.Base(dir), matched, total, unrecorded)
	if !live && unrecorded != 1 {
		// The kept capture: the remainder of array 7 at 04.txt
		// (docs/sprio.md).
		t.Errorf("%d lines of a job in no sacct record, want 1", unrecorded)
	}
}

// sacctJobIDs are the JobIDRaw values of a capture's sacct dump.
func sacctJobIDs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "sacct.psv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	col := slices.Index(strings.Split(lines[0], "|"), "JobIDRaw")
	if col < 0 {
		t.Fatalf("%s/sacct.psv: no JobIDRaw column", dir)
	}
	ids := map[string]bool{}
	for _, l := range lines[1:] {
		if f := strings.Split(l, "|"); col < len(f) {
			ids[f[col]] = true
		}
	}
	return ids
}

// sprioRelease is the release series (X.YY) of the capture's slurmctld,
// from meta.txt's slurm_version.
func sprioRelease(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "meta.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "slurm_version="); ok {
			if f := strings.Split(v, "."); len(f) >= 2 {
				return f[0] + "." + f[1]
			}
		}
	}
	t.Fatalf("%s/meta.txt: no slurm_version", dir)
	return ""
}

// TestCheckPriority: check --priority counts the jobs that never started
// apart. The live capture's sacct dump has four (job 12, cancelled while
// pending, and 13, 16 and 18, pending when it was taken), and without
// --priority they are skipped: one as never started, three as pending.
func TestCheckPriority(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "slurm-e2e", "prio")
	sacct := filepath.Join(dir, "sacct.psv")
	args := []string{"fairledger", "check", "--slurm-conf", filepath.Join(dir, "slurm.conf"), "--assoc", filepath.Join(dir, "assoc.psv"),
		"--qos", filepath.Join(dir, "qos.psv"), "--sacct", sacct, "--slurm-version", "22.05"}
	for _, c := range []struct {
		priority bool
		want     string
	}{
		{true, sacct + ": 4 of the ingested rows never started: read for job priority, charged nothing\n"},
		{false, "never started=1 pending=3"},
	} {
		var stdout, stderr bytes.Buffer
		a := args
		if c.priority {
			a = append(slices.Clone(args), "--priority")
		}
		if code := run(a, &stdout, &stderr); code != 0 {
			t.Fatalf("check (priority %v): exit %d: %s", c.priority, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), c.want) {
			t.Errorf("check (priority %v) printed\n%s\nwant a line with %q", c.priority, stdout.String(), c.want)
		}
	}
}
