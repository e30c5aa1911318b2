package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/pipeline"
)

// Jobs of Slurm's test24_1 tree (no decay, limits enforced, billing 1 per
// CPU): raw usage is the charged seconds.
const (
	rwA = "4001|4001|test24_1|normal|normal|AccountB|User1|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
	rwB = "4002|4002|test24_1|normal|normal|AccountC|User2|2025-01-01T00:20:00|2025-01-01T00:20:00|2025-01-01T00:50:00|00:30:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
	rwC = "4003|4003|test24_1|normal|normal|AccountC|User3|2025-01-01T01:10:00|2025-01-01T01:10:00|2025-01-01T01:40:00|00:30:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
)

var (
	rwT1 = time.Date(2025, 1, 1, 1, 0, 0, 0, time.UTC)
	rwT2 = time.Date(2025, 1, 1, 2, 0, 0, 0, time.UTC)
	rwT3 = time.Date(2025, 1, 1, 3, 0, 0, 0, time.UTC)
)

// runTo runs the site's files into hist up to to (zero: the default).
func runTo(t *testing.T, dir, hist string, to time.Time, files ...string) (*pipeline.Summary, error) {
	t.Helper()
	return pipeline.Run(context.Background(), siteInputs(t, dir, files...), runOpts(hist, to))
}

// mustRun is runTo failing the test on an error.
func mustRun(t *testing.T, dir, hist string, to time.Time, files ...string) *pipeline.Summary {
	t.Helper()
	sum, err := runTo(t, dir, hist, to, files...)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// refused checks that err refuses the window with a message holding want,
// and that the refused run wrote nothing (before is the history before it).
func refused(t *testing.T, err error, want, hist string, before map[string][]byte) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("err %v, want a refusal holding %q", err, want)
	}
	sameFiles(t, "history after a refused run", snapshotDir(t, hist), before)
}

// TestRunRefusesRewind: once the history reaches 02:00, a run ending at
// 01:00 (the first night's file again) is refused and writes nothing; it
// used to drop the usage and charged seconds after 01:00 while the
// snapshot and checkpoint at 02:00 stayed.
func TestRunRefusesRewind(t *testing.T) {
	t.Parallel()
	dir, files := siteWith(t, rwA+rwB, rwA+rwB+rwC)
	hist := t.TempDir()
	mustRun(t, dir, hist, rwT1, files[0])
	mustRun(t, dir, hist, rwT2, files[1])
	before := snapshotDir(t, hist)
	_, err := runTo(t, dir, hist, rwT1, files[0])
	refused(t, err, "before 2025-01-01T02:00:00Z, where the history", hist, before)
	// A dry run is refused as the run is.
	_, err = dryRun(t, dir, hist, rwT1, files[0])
	refused(t, err, "before 2025-01-01T02:00:00Z, where the history", hist, before)
	// The default --to, the latest end (01:00), is refused the same way.
	_, err = runTo(t, dir, hist, time.Time{}, files[0])
	refused(t, err, "(the latest job end)", hist, before)
	// Ending at the newest checkpoint again (a rerun) is allowed.
	mustRun(t, dir, hist, rwT2, files[1])
	if u := rawUsage(t, hist, "test24_1", rwT2); u["User1"] != 3600 || u["User2"] != 1800 || u["User3"] != 1800 {
		t.Errorf("raw usage at 02:00 %v, want User1 3600, User2 1800, User3 1800", u)
	}
}

// TestRunRefusesFreshStartAfterOrigin: the history was charged from 00:00;
// rerunning its first night with a file that has no job (or only a later
// one) would start afresh after 00:00 and lose the usage before, and with
// no job at all it duplicated the snapshot at --to with zero usage and
// overwrote the checkpoint with zeros. Both are refused; the same file
// again is a rerun and allowed.
func TestRunRefusesFreshStartAfterOrigin(t *testing.T) {
	t.Parallel()
	dir, files := siteWith(t, rwA+rwB, "", rwB)
	hist := t.TempDir()
	mustRun(t, dir, hist, rwT1, files[0])
	before := snapshotDir(t, hist)
	_, err := runTo(t, dir, hist, rwT1, files[1])
	refused(t, err, "start afresh at 2025-01-01T01:00:00Z (the window's end: no job started)", hist, before)
	_, err = runTo(t, dir, hist, rwT1, files[2])
	refused(t, err, "start afresh at 2025-01-01T00:20:00Z (the earliest job start)", hist, before)
	mustRun(t, dir, hist, rwT1, files[0])
	if u := rawUsage(t, hist, "test24_1", rwT1); u["User1"] != 3600 || u["User2"] != 1800 {
		t.Errorf("raw usage at 01:00 %v, want User1 3600, User2 1800", u)
	}
	// A --from at or before the origin recomputes the whole history.
	opt := runOpts(hist, rwT1)
	opt.From = time.Date(2024, 12, 31, 23, 0, 0, 0, time.UTC)
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, files[0]), opt); err != nil {
		t.Fatal(err)
	}
}

// TestRunRefusesToAfterNow: an explicit --to after now would charge running
// jobs for time that has not passed.
func TestRunRefusesToAfterNow(t *testing.T) {
	t.Parallel()
	dir, files := siteWith(t, rwA)
	hist := t.TempDir()
	opt := runOpts(hist, rwT2)
	opt.Now = func() time.Time { return rwT1.Add(30 * time.Minute) }
	_, err := pipeline.Run(context.Background(), siteInputs(t, dir, files...), opt)
	if err == nil || !strings.Contains(err.Error(), "--to 2025-01-01T02:00:00Z is after now (2025-01-01T01:30:00Z)") {
		t.Fatalf("err %v, want --to after now refused", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(hist, "fairshare")); len(ents) != 0 {
		t.Errorf("a refused run wrote fair-share files: %v", ents)
	}
}

// TestRerunWithMissingJobs: rerunning the second night with a file that
// lacks job 4003 (01:10–01:40, charged by the first computation of that
// night) keeps it in the jobs table but cannot charge it: the run counts
// it, so that the warning names it, and User3's usage at 02:00 is 0.
func TestRerunWithMissingJobs(t *testing.T) {
	t.Parallel()
	dir, files := siteWith(t, rwA+rwB, rwA+rwB+rwC, rwA+rwB)
	hist := t.TempDir()
	mustRun(t, dir, hist, rwT1, files[0])
	if sum := mustRun(t, dir, hist, rwT2, files[1]); sum.Unrecharged != 0 {
		t.Errorf("first computation of night 2: unrecharged %d, want 0", sum.Unrecharged)
	}
	sum := mustRun(t, dir, hist, rwT2, files[2])
	if sum.Unrecharged != 1 {
		t.Errorf("unrecharged %d, want 1 (job 4003)", sum.Unrecharged)
	}
	if g, w := jobRows(t, hist, "test24_1"), []string{"4001 3600", "4002 1800", "4003 1800"}; !slices.Equal(g, w) {
		t.Errorf("jobs %v, want %v", g, w)
	}
	if u := rawUsage(t, hist, "test24_1", rwT2); u["User3"] != 0 || u["User1"] != 3600 {
		t.Errorf("raw usage at 02:00 %v, want User1 3600, User3 0", u)
	}
}

// TestRecomputeRemovesSupersededCheckpoints: recomputing from the origin
// through three nights replaces the checkpoints inside the window, which
// held the first computation's usage.
func TestRecomputeRemovesSupersededCheckpoints(t *testing.T) {
	t.Parallel()
	dir, files := siteWith(t, rwA+rwB, rwA+rwB+rwC)
	hist := t.TempDir()
	mustRun(t, dir, hist, rwT1, files[0])
	mustRun(t, dir, hist, rwT2, files[1])
	mustRun(t, dir, hist, rwT3, files[1])
	opt := runOpts(hist, rwT3)
	opt.From = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, files[1]), opt); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(hist, "current", "state", "cluster=test24_1"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if history.IsCheckpoint(e.Name()) {
			names = append(names, e.Name())
		}
	}
	if w := []string{"checkpoint-20250101T030000Z.json"}; !slices.Equal(names, w) {
		t.Errorf("state files %v, want %v", names, w)
	}
}
