package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSprioWaitLive checks `sprio --wait` against the kept live capture of
// the prio scenario (testdata/slurm-e2e/prio): after one run over the
// whole recording (daily snapshots, the realistic way), each job that
// sprio -l listed at two captures or more is followed over its wait, and
// at each capture the line of the decay tick then in force (the last at
// or before the capture's instant) must show the priority and weighted
// factors slurmctld's sprio -l printed at that capture. Only the lines
// TestSprioE2E matches the one-run way (sprio-matching-onerun.tsv) are
// compared: the others' inputs are in no dump.
func TestSprioWaitLive(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "testdata", "slurm-e2e", "prio")
	c := readSlurmCapture(t, dir)
	hist := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(append(sprioRunArgs(t, dir, c.tz, hist), "--to", "@"+c.to), &stdout, &stderr); code != 0 && code != exitRejected {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	captures := map[string]float64{} // capture file → its instant
	b, err := os.ReadFile(filepath.Join(dir, "sprio.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, at, _ := strings.Cut(l, "\t")
		if captures[name], err = strconv.ParseFloat(at, 64); err != nil {
			t.Fatal(err)
		}
	}
	// The matched lines, per job: capture and partition.
	b, err = os.ReadFile(filepath.Join(dir, sprioMatchingOneRun))
	if err != nil {
		t.Fatal(err)
	}
	type seen struct{ capture, part string }
	jobs := map[string][]seen{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Split(l, "\t"); len(f) == 3 && !strings.HasPrefix(l, "#") {
			jobs[f[1]] = append(jobs[f[1]], seen{f[0], f[2]})
		}
	}
	checked, followed := 0, 0
	for _, job := range slices.Sorted(maps.Keys(jobs)) {
		if len(jobs[job]) < 2 {
			continue
		}
		followed++
		stdout.Reset()
		stderr.Reset()
		if code := run([]string{"fairledger", "--log-format", "json", "--log-level", "warn", "sprio", "--history", hist,
			"--wait", job, "--tz", "UTC", "-P"}, &stdout, &stderr); code != 0 {
			t.Fatalf("sprio --wait %s: exit %d: %s", job, code, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")[1:]
		for _, s := range jobs[job] {
			want := sprioLine(t, filepath.Join(dir, "sprio", s.capture), job, s.part)
			at := captures[s.capture]
			// The line of the last tick at or before the capture.
			var got []string
			for _, l := range lines {
				f := strings.Split(l, "|")
				tick, err := time.Parse("2006-01-02T15:04:05", f[1])
				if err != nil {
					t.Fatalf("sprio --wait %s: line %q: %v", job, l, err)
				}
				if f[2] == s.part && float64(tick.Unix()) <= at {
					got = f
				}
			}
			if got == nil {
				t.Errorf("job %s, %s (%.3f): sprio --wait has no line of partition %s at a tick before it:\n%s",
					job, s.capture, at, s.part, stdout.String())
				continue
			}
			// sprio -l (22.05): JOBID PARTITION USER PRIORITY SITE AGE ASSOC
			// FAIRSHARE JOBSIZE PARTITION QOS NICE TRES (cut to 20);
			// --wait -P: TIME TICK PARTITION PRIORITY RANK AHEAD WAITING AGE
			// ASSOC FAIRSHARE JOBSIZE PARTITION QOS NICE TRES CHANGE.
			tres := got[14]
			if len(tres) > 20 {
				tres = tres[:20]
			}
			ours := append([]string{got[3]}, append(got[7:14], tres)...)
			theirs := append([]string{want[3]}, want[5:]...)
			if len(want) == 12 {
				theirs = append(theirs, "") // no TRES factor
			}
			if !slices.Equal(ours, theirs) {
				t.Errorf("job %s, %s (%.3f), tick %s: sprio --wait %v, sprio -l printed %v", job, s.capture, at, got[1], ours, theirs)
			}
			checked++
		}
	}
	t.Logf("%d captured lines of %d jobs that waited across captures: each as sprio -l printed it", checked, followed)
	if followed < 2 || checked < 10 {
		t.Errorf("followed %d jobs over %d captured lines; the kept capture has job 13 waiting across all five", followed, checked)
	}
}

// sprioLine is the fields of job's line of partition part in a sprio -l
// capture.
func sprioLine(t *testing.T, file, job, part string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == job && f[1] == part {
			return f
		}
	}
	t.Fatalf("%s: no line of job %s in partition %s", file, job, part)
	return nil
}

// TestWaitOf finds a wait from hand-made submit and start rows.
func TestWaitOf(t *testing.T) {
	t.Parallel()
	const end = 9000
	sub := func(job, at, elig int64) waitEvent {
		return waitEvent{event: "submit", at: at, submit: at, eligible: elig, job: job}
	}
	start := func(job, array, at, submit, elig int64) waitEvent {
		return waitEvent{event: "start", at: at, submit: submit, eligible: elig, job: job, arrayJob: array}
	}
	for _, c := range []struct {
		name       string
		job        int64
		events     []waitEvent
		key        int64
		begin, end int64
		ok         bool
	}{
		{"started: eligible to start", 5, []waitEvent{sub(5, 100, 100), start(5, 0, 400, 100, 100)}, 5, 100, 400, true},
		{"submitted held, released at 250", 6, []waitEvent{start(6, 0, 400, 100, 250)}, 6, 250, 400, true},
		{"never started: to the history's end", 7, []waitEvent{sub(7, 100, 120)}, 7, 120, end, true},
		// Array 8: tasks 9 and 10 started at 300 and 500; asked by a task,
		// its pending rows are the array's.
		{"array by its id: to its last task's start", 8, []waitEvent{sub(8, 100, 100), start(9, 8, 300, 100, 100), start(10, 8, 500, 100, 100)}, 8, 100, 500, true},
		{"array task", 10, []waitEvent{start(10, 8, 500, 100, 100)}, 8, 100, 500, true},
		{"no rows", 11, nil, 0, 0, 0, false},
	} {
		s, ok := waitOf(c.job, c.events, end)
		if ok != c.ok || s.key != c.key || s.begin != c.begin || s.end != c.end {
			t.Errorf("%s: waitOf(%d) = key %d, [%d, %d), %v; want key %d, [%d, %d), %v", c.name, c.job, s.key, s.begin, s.end, ok,
				c.key, c.begin, c.end, c.ok)
		}
	}
}
