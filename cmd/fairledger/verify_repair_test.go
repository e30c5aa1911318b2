package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/schemas"
)

// repairSite generates a small cluster (jobs from 1 January to 1 April
// 2025) and runs two nights on it, to 1 March and to 1 April: a history
// with checkpoints at both. It returns the history and the run flags that
// read the site.
func repairSite(t *testing.T) (hist string, inputs []string) {
	t.Helper()
	tmp := t.TempDir()
	site, hist := filepath.Join(tmp, "site"), filepath.Join(tmp, "hist")
	var out, errs bytes.Buffer
	if code := run([]string{"fairledger", "gen", "--dir", site, "--jobs", "400", "--labs", "4"}, &out, &errs); code != 0 {
		t.Fatalf("gen exit %d: %s", code, errs.String())
	}
	inputs = []string{"--slurm-conf", filepath.Join(site, "slurm.conf"), "--assoc", filepath.Join(site, "assoc.psv"),
		"--qos", filepath.Join(site, "qos.psv"), "--sacct", filepath.Join(site, "sacct.psv"), "--tz", "UTC"}
	for _, to := range []string{"2025-03-01", "2025-04-01"} {
		if code, _, errs := runCLI(t, append([]string{"run", "--history", hist, "--to", to}, inputs...)...); code != 0 {
			t.Fatalf("run --to %s: exit %d: %s", to, code, errs)
		}
	}
	return hist, inputs
}

// TestVerifyRepairDataFile: a usage file of March cut short is found,
// removed by --repair, which prints the run that recomputes it (from the 1
// March checkpoint to the 1 April one); the history is clean then, and
// that run (with the nightly flags for "...") gives the same usage back.
func TestVerifyRepairDataFile(t *testing.T) {
	hist, inputs := repairSite(t)
	if code, out, errs := runCLI(t, "verify", "--history", hist); code != 0 || out != "" {
		t.Fatalf("verify of a fresh history: exit %d\n%s%s", code, out, errs)
	}
	usageSum := func() [][]string {
		return sqlCSV(t, hist, "SELECT count(*), sum(billing_sec) FROM usage")
	}
	before := usageSum()

	// The settled March usage: its first day is 1 March, the time of the
	// older checkpoint.
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	v, err := h.View()
	if err != nil {
		t.Fatal(err)
	}
	var bad history.Partition
	for _, p := range v.Files(schemas.TableUsage, "synth") {
		if p.Month == "2025-03" && !p.Hot {
			bad = p
		}
	}
	file, gen := v.Path(bad), v.Generation()
	v.Close()
	if bad.Path == "" {
		t.Fatal("no settled usage file of 2025-03")
	}
	if got := time.Unix(bad.MinTime, 0).UTC(); got.Before(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("the March usage starts %s, before the 1 March checkpoint", got)
	}
	// Cut short in place: every generation's hard link is the same inode,
	// so no intact copy is left.
	if err := os.Truncate(file, bad.Bytes-10); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runCLI(t, "verify", "--history", hist)
	if code != 1 || !strings.HasPrefix(out, file+": ") || strings.Count(out, "\n") != 1 {
		t.Fatalf("verify of the damaged history: exit %d, stdout\n%s%s", code, out, errs)
	}
	cmd := "fairledger run --history " + hist + " --from 2025-03-01T00:00:00Z --to 2025-04-01T00:00:00Z " +
		"--sacct <every sacct file of cluster synth from 2025-03-01 on> ..."
	if !strings.Contains(out, "remove it with `fairledger verify --repair --history "+hist+"`, then recompute its rows: `"+cmd+"`") {
		t.Errorf("verify: the repair lacks %q:\n%s", cmd, out)
	}

	code, out, errs = runCLI(t, "verify", "--repair", "--history", hist)
	want := []string{
		fmt.Sprintf("removed from the history (generation %d): %s", gen+1, bad.Path),
		`recompute cluster synth ("..." = the --slurm-conf, --assoc, --qos, --tz and --cluster flags of cluster synth's nightly run; one --sacct per file):`,
		"  " + cmd,
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 1 || len(lines) != 4 || !strings.HasPrefix(lines[0], file+": ") || strings.Join(lines[1:], "\n") != strings.Join(want, "\n") {
		t.Errorf("verify --repair: exit %d, stdout\n%s\nwant a problem line, then\n%s", code, out, strings.Join(want, "\n"))
	}
	if !strings.Contains(errs, fmt.Sprintf("repaired: generation %d, 1 removed, 0 restored", gen+1)) ||
		!strings.Contains(errs, "run the recompute printed on stdout") {
		t.Errorf("verify --repair: stderr %s", errs)
	}
	if code, out, errs := runCLI(t, "verify", "--history", hist); code != 0 || out != "" {
		t.Errorf("verify after the repair: exit %d\n%s%s", code, out, errs)
	}

	// The printed run, with the nightly run's flags for "...".
	args := append([]string{"run", "--history", hist, "--from", "2025-03-01T00:00:00Z", "--to", "2025-04-01T00:00:00Z"}, inputs...)
	if code, _, errs := runCLI(t, args...); code != 0 {
		t.Fatalf("the recompute: exit %d: %s", code, errs)
	}
	if code, out, errs := runCLI(t, "verify", "--history", hist); code != 0 || out != "" {
		t.Errorf("verify after the recompute: exit %d\n%s%s", code, out, errs)
	}
	if after := usageSum(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("usage after the recompute %v, before the damage %v", after, before)
	}
}

// TestVerifyRepairLocked: --repair does not wait for a run holding the
// history's lock; the error names the holder, as run's does.
func TestVerifyRepairLocked(t *testing.T) {
	hist, _ := repairSite(t)
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := h.Lock(0, func() time.Time { return time.Date(2025, 4, 1, 2, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	code, out, errs := runCLI(t, "verify", "--repair", "--history", hist)
	want := fmt.Sprintf("fairledger: history is locked by another run: %s (holder: pid %d since 2025-04-01T02:00:00Z); "+
		"verify --repair and --migrate change the history and do not wait: run it again when that run has finished\n", hist, os.Getpid())
	if code != 1 || out != "" || errs != want {
		t.Errorf("exit %d, stdout %q, stderr\n%q\nwant\n%q", code, out, errs, want)
	}
	// Without --repair, verify takes no lock.
	if code, out, errs := runCLI(t, "verify", "--history", hist); code != 0 {
		t.Errorf("verify while locked: exit %d\n%s%s", code, out, errs)
	}
}
