package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/schemas"
)

// withFutureJob copies sacct file in to out with one more finished job:
// a copy of its last row, as job 9999999, ending at end.
func withFutureJob(t *testing.T, in, out string, end time.Time) {
	t.Helper()
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "|") {
		col[h] = i
	}
	f := strings.Split(lines[len(lines)-1], "|")
	start, err := strconv.ParseInt(f[col["Start"]], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	f[col["JobID"]], f[col["JobIDRaw"]] = "9999999", "9999999"
	f[col["End"]], f[col["State"]], f[col["ExitCode"]] = strconv.FormatInt(end.Unix(), 10), "COMPLETED", "0:0"
	f[col["ElapsedRaw"]] = strconv.FormatInt(end.Unix()-start, 10)
	f[col["Elapsed"]] = elapsedStr(end.Unix() - start)
	if err := os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"+strings.Join(f, "|")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFutureCheckpointRepair: a history that a run without --to took into
// the future (a job End weeks after the moment of the run, which releases
// before job times were bounded charged) refuses every later run, with a
// message naming verify --repair; verify reports the checkpoint, and
// --repair cuts the history back to the checkpoint before it, after which
// the night runs again and the history equals the one the bad run never
// touched.
func TestFutureCheckpointRepair(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 1500)
	mid, next := from.AddDate(0, 0, 10), from.AddDate(0, 0, 11)
	full := filepath.Join(dir, "sacct.psv")
	first, night := filepath.Join(dir, "first.psv"), filepath.Join(dir, "night.psv")
	sacctAsOf(t, full, first, from, mid)
	sacctAsOf(t, full, night, mid, next)
	at := func(t time.Time) func() time.Time { return func() time.Time { return t } }
	run := func(hist, sacct string, to, now time.Time) error {
		opt := runOpts(hist, to)
		opt.Now = at(now)
		_, err := pipeline.Run(context.Background(), siteInputs(t, dir, sacct), opt)
		return err
	}
	ref := t.TempDir()
	for _, r := range []struct {
		sacct string
		to    time.Time
	}{{first, mid}, {night, next}} {
		if err := run(ref, r.sacct, r.to, r.to.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}

	// What a history an older release wrote looks like: a run whose
	// moment was 2025-04-01 (a host clock two months ahead), no --to, one
	// job ending 2025-03-15 and jobs still running: the window ran to
	// 2025-04-01.
	hist := t.TempDir()
	if err := run(hist, first, mid, mid.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.psv")
	future := time.Date(2025, 3, 15, 0, 0, 0, 0, time.UTC)
	withFutureJob(t, night, bad, future)
	if err := run(hist, bad, time.Time{}, time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}

	// Back at the real moment, the next morning: every run is refused.
	now := next.Add(time.Hour)
	for _, to := range []time.Time{next, {}} {
		err := run(hist, night, to, now)
		if err == nil || !strings.Contains(err.Error(), "reaches 2025-04-01T00:00:00Z, after now") ||
			!strings.Contains(err.Error(), "fairledger verify --repair --history "+hist) {
			t.Fatalf("run --to %v on a history in the future: err = %v", to, err)
		}
	}
	// And the job ending in the future, given again, is now rejected.
	opt := runOpts(t.TempDir(), time.Time{})
	opt.Now = at(now)
	sum, err := pipeline.Run(context.Background(), siteInputs(t, dir, bad), opt)
	if err != nil || sum.Ingest.Rejected != 1 || !sum.To.Equal(now) {
		t.Fatalf("fresh run of the bad file: err %v, rejected %d, to %v; want 1 rejected, window to now", err, sum.Ingest.Rejected, sum.To)
	}

	h := &history.Store{Dir: hist, Now: at(now)}
	rep, err := h.Verify("")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].What, "a checkpoint after now") ||
		len(rep.Reruns) != 1 || rep.Reruns[0].From != mid.Unix() || rep.Reruns[0].To != 0 {
		t.Fatalf("verify: %+v", rep)
	}
	unlock, err := h.Lock(0, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = h.Repair("")
	unlock()
	if err != nil || rep.Repaired == 0 || rep.Problems[0].Fixed != history.FixedRemoved {
		t.Fatalf("repair: err %v, %+v", err, rep)
	}
	if rep, err := h.Verify(""); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify after repair: err %v, %+v", err, rep.Problems)
	}
	if err := run(hist, night, next, now); err != nil {
		t.Fatalf("the night after the repair: %v", err)
	}
	for _, table := range []string{schemas.TableUsage, schemas.TableFairshare, schemas.TableAssociations} {
		sameFiles(t, table, tableFiles(t, hist, table), tableFiles(t, ref, table))
	}
	sameJobs(t, hist, ref)
}

// dirState is every file under dir: a regular file's bytes, a symlink's
// target, by slash path.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			m[filepath.ToSlash(rel)] = "-> " + target
			return err
		}
		b, err := os.ReadFile(p)
		m[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// unchanged fails the test when the history's files after a failed run
// differ from before.
func unchanged(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(after) != len(before) {
		t.Errorf("%d files after the failed run, %d before", len(after), len(before))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed by the failed run", k)
		}
	}
}

// TestFailedRunLeavesHistory: a run that exits with an error leaves every
// byte of the history as it was, whether it fails before reading a job
// (TRESBillingWeights CPU=1e308, which used to fail in decay after the
// jobs had been written with billing=inf) or after (a PriorityCalcPeriod
// change, refused when the checkpoint is resumed).
func TestFailedRunLeavesHistory(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 1500)
	hist := t.TempDir()
	nights(t, dir, hist, from, from.AddDate(0, 0, 2))
	before := dirState(t, hist)
	conf, err := os.ReadFile(filepath.Join(dir, "slurm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	n := from.AddDate(0, 0, 3)
	night := nightFile(dir, n)
	sacctAsOf(t, filepath.Join(dir, "sacct.psv"), night, n.AddDate(0, 0, -1), n)
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"huge weight", `TRESBillingWeights="CPU=1.0,Mem=0.25G"`, `TRESBillingWeights="CPU=1e308,Mem=0.25G"`,
			// Refused still, as a job's billing from it is not finite;
			// the message no longer says "want 0 to 1e+06": negative
			// weights are taken as Slurm takes them (issue 37).
			`partition shared: weight of cpu is 1e+308 per unit: a job's billing from weights this large may not be finite`},
		{"calc period changed", "PriorityCalcPeriod=5\n", "PriorityCalcPeriod=10\n", "PriorityCalcPeriod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(string(conf), tc.old) {
				t.Fatalf("slurm.conf lacks %q", tc.old)
			}
			site := t.TempDir()
			for _, f := range []string{"assoc.psv", "qos.psv"} {
				if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
					if err := os.WriteFile(filepath.Join(site, f), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := os.WriteFile(filepath.Join(site, "slurm.conf"), []byte(strings.Replace(string(conf), tc.old, tc.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := pipeline.Run(context.Background(), siteInputs(t, site, night), runOpts(hist, n))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			unchanged(t, before, dirState(t, hist))
		})
	}
}

// TestDiskFullRun: a run whose writes fail part way (the disk full; here
// a file size limit on the process) exits with an error and leaves the
// history as it was: the snapshots sshare reads are the last commit's,
// consistent with its newest checkpoint. (Before the generation store a
// failed run left the snapshots it had written while the checkpoint
// stayed older.)
func TestDiskFullRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir, from, _ := nightlyCluster(t, 6000)
	hist := t.TempDir()
	nights(t, dir, hist, from, from.AddDate(0, 0, 2))
	before := dirState(t, hist)
	n := from.AddDate(0, 0, 12)
	night := nightFile(dir, n)
	sacctAsOf(t, filepath.Join(dir, "sacct.psv"), night, from.AddDate(0, 0, 1), n)
	var out bytes.Buffer
	err := startChild(t, &out, dir, hist, night, n, "FAIRLEDGER_CRASH_FSIZE=65536").Wait()
	if err == nil || !strings.Contains(out.String(), "file too large") {
		t.Fatalf("the run with writes failing past 64 KiB: err %v, output:\n%s", err, out.String())
	}
	unchanged(t, before, dirState(t, hist))
}
