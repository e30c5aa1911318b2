package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/internal/golden"
	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/schemas"
)

// siteInputs reads a site directory holding slurm.conf, assoc.psv (or an
// assoc/ directory of dated dumps), an optional qos.psv and the given
// sacct files.
func siteInputs(t testing.TB, dir string, sacct ...string) pipeline.Inputs {
	t.Helper()
	conf, err := ingest.ReadSlurmConf(filepath.Join(dir, "slurm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	in := pipeline.Inputs{Conf: conf, Jobs: sacctWith(sacct, nil)}
	if fi, err := os.Stat(filepath.Join(dir, "assoc")); err == nil && fi.IsDir() {
		d, _, err := ingest.ReadAssocDir(filepath.Join(dir, "assoc"), time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		in.Assoc = d
	} else {
		a, _, err := ingest.ReadAssocFile(filepath.Join(dir, "assoc.psv"))
		if err != nil {
			t.Fatal(err)
		}
		in.Assoc = []ingest.DatedAssociations{{Assoc: a}}
	}
	if f, err := os.Open(filepath.Join(dir, "qos.psv")); err == nil {
		q, _, err := ingest.ParseQOS("qos.psv", f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		in.QOS = q
	}
	return in
}

// sacctWith are the sacct files as siteInputs reads them (times in UTC),
// with their reader's options changed by edit (if not nil).
func sacctWith(files []string, edit func(*ingest.SacctOptions)) []ingest.JobSource {
	opt := ingest.SacctOptions{Location: time.UTC}
	if edit != nil {
		edit(&opt)
	}
	return ingest.SacctFiles(files, opt)
}

func runOpts(history string, to time.Time) pipeline.Options {
	return pipeline.Options{History: history, To: to, SnapshotEvery: 24 * time.Hour, Location: time.UTC,
		Log: zerolog.Nop(), Version: "test"}
}

// snapshotAt reads the rows of the fair-share snapshot at, failing the test
// when there is none.
func snapshotAt(t *testing.T, hist, cluster string, at time.Time) []record.FairshareRow {
	t.Helper()
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	var rows []record.FairshareRow
	if err := h.ReadPartition(schemas.TableFairshare, cluster, at, &rows); err != nil {
		t.Fatal(err)
	}
	var snap []record.FairshareRow
	for _, r := range rows {
		if r.Snapshot.Equal(at) {
			snap = append(snap, r)
		}
	}
	if len(snap) == 0 {
		t.Fatalf("no snapshot at %s", at)
	}
	return snap
}

// sshareAt prints the snapshot at of the history the way `sshare -a -l -p`
// does, from the fairshare table.
func sshareAt(t *testing.T, history, cluster string, at time.Time) string {
	t.Helper()
	tree, res, err := record.FairshareFromRows(snapshotAt(t, history, cluster, at))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := fairshare.WriteSshare(&b, tree, res, fairshare.SshareOptions{Long: true, TrailingSep: true}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// goldenSite writes a golden case of Slurm's test trees (internal/golden)
// as a site directory: its [slurm.conf], its [associations] as assoc.psv
// and its [usage] as sacct.psv, one cpu=1 job per user whose seconds are
// the user's raw usage. It returns the directory and the case.
func goldenSite(t testing.TB, path string) (string, *golden.Case) {
	t.Helper()
	c := golden.Load(t, path)
	dir := t.TempDir()
	for name, body := range map[string]string{
		"slurm.conf": c.Text(t, "slurm.conf"),
		"assoc.psv":  c.AssocPSV(t),
		"sacct.psv":  c.SacctPSV(t),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, c
}

// TestSlurmTestTreesAsJobs replays docs/slurm-semantics.md §11.1 (test24.1,
// classic) and §11.2 (test24.4, Fair Tree) as jobs: no decay, limits
// enforced, one cpu=1 job per user whose seconds are the user's raw usage.
// Every line of `sshare -a -l -p` must come out exactly as the case's
// [sshare -a -l -p] section has it, with sshare's indentation.
func TestSlurmTestTreesAsJobs(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"test24_1", "test24_4"} {
		t.Run(name, func(t *testing.T) {
			dir, c := goldenSite(t, "fairshare/testdata/"+name+".txt")
			hist := t.TempDir()
			to := time.Date(2025, 1, 1, 1, 0, 0, 0, time.UTC)
			sum, err := pipeline.Run(context.Background(), siteInputs(t, dir, filepath.Join(dir, "sacct.psv")), runOpts(hist, to))
			if err != nil {
				t.Fatal(err)
			}
			if sum.Ingest.Rejected != 0 || sum.Resolve.NotCharged() != 0 {
				t.Fatalf("rejected %d, not charged %v", sum.Ingest.Rejected, sum.Resolve.ByReason)
			}
			want := c.Text(t, "sshare -a -l -p")
			if got := sshareAt(t, hist, name, to); got != want {
				t.Errorf("sshare -a -l -p:\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestRunPhases checks the summary's stage times against a clock that moves
// one second at every reading: reading ends after the run started, decay
// and the jobs tables both end after reading, and the run finishes after
// both.
func TestRunPhases(t *testing.T) {
	t.Parallel()
	dir, _ := goldenSite(t, "fairshare/testdata/test24_1.txt")
	to := time.Date(2025, 1, 1, 1, 0, 0, 0, time.UTC)
	var ticks atomic.Int64 // Now is called from two goroutines
	opt := runOpts(t.TempDir(), to)
	opt.Now = func() time.Time { return to.Add(time.Duration(ticks.Add(1)) * time.Second) }
	sum, err := pipeline.Run(context.Background(), siteInputs(t, dir, filepath.Join(dir, "sacct.psv")), opt)
	if err != nil {
		t.Fatal(err)
	}
	p := sum.Phases
	if p.Read < time.Second || p.Decay < time.Second || p.Jobs < time.Second {
		t.Fatalf("phases %+v: each stage ends at least one clock reading after it began", p)
	}
	if total := sum.Finished.Sub(sum.Started); p.Read+max(p.Decay, p.Jobs) >= total {
		t.Errorf("phases %+v: read + max(decay, jobs) = %s, not within the run's %s", p, p.Read+max(p.Decay, p.Jobs), total)
	}
}
