package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/fairledger/fairledger/pipeline"
)

// dryRun runs the site's files into hist up to to as a dry run.
func dryRun(t *testing.T, dir, hist string, to time.Time, files ...string) (*pipeline.Summary, error) {
	t.Helper()
	opt := runOpts(hist, to)
	opt.DryRun = true
	return pipeline.Run(context.Background(), siteInputs(t, dir, files...), opt)
}

// TestDryRunWritesNothing: a dry run computes what the run would (the same
// window, counts, charged jobs and snapshots) and leaves the history as it
// was; on a history that does not exist yet it creates nothing.
func TestDryRunWritesNothing(t *testing.T) {
	dir, files := siteWith(t, rwA+rwB, rwA+rwB+rwC)
	hist := filepath.Join(t.TempDir(), "history")

	// First night, no history: jobs 4001 (00:00-01:00) and 4002 (00:20-00:50)
	// charged from the earliest start, 00:00, to 01:00; one snapshot, at --to.
	dry, err := dryRun(t, dir, hist, rwT1, files[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(hist); !os.IsNotExist(err) {
		t.Fatalf("a dry run created the history directory (stat: %v)", err)
	}
	if !dry.DryRun || dry.RunID != "" || dry.Partitions != 0 || dry.JobsWritten != 0 {
		t.Errorf("dry run summary: DryRun %v, RunID %q, files %d, jobs written %d; want true, \"\", 0, 0",
			dry.DryRun, dry.RunID, dry.Partitions, dry.JobsWritten)
	}
	want := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if !dry.From.Equal(want) || !dry.To.Equal(rwT1) || dry.Resumed {
		t.Errorf("dry window %s → %s (resumed %v), want %s → %s, fresh", dry.From, dry.To, dry.Resumed, want, rwT1)
	}
	if dry.Ingest.Read != 2 || dry.Ingest.Ingested != 2 || dry.Decay.JobsCharged != 2 || dry.Snapshots != 1 {
		t.Errorf("dry run: read %d, ingested %d, charged %d, snapshots %d; want 2, 2, 2, 1",
			dry.Ingest.Read, dry.Ingest.Ingested, dry.Decay.JobsCharged, dry.Snapshots)
	}
	real := mustRun(t, dir, hist, rwT1, files[0])
	sameCounts(t, "first night", dry, real)

	// Second night on that history: resumed at 01:00; only job 4003
	// (01:10-01:40) runs in (01:00, 02:00].
	before := snapshotDir(t, hist)
	dry, err = dryRun(t, dir, hist, rwT2, files[1])
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "history after a dry run", snapshotDir(t, hist), before)
	if !dry.Resumed || !dry.From.Equal(rwT1) || dry.Decay.JobsCharged != 1 || dry.Ingest.Read != 3 {
		t.Errorf("second dry night: resumed %v from %s, charged %d, read %d; want resumed from %s, 1, 3",
			dry.Resumed, dry.From, dry.Decay.JobsCharged, dry.Ingest.Read, rwT1)
	}
	real = mustRun(t, dir, hist, rwT2, files[1])
	sameCounts(t, "second night", dry, real)
	if u := rawUsage(t, hist, "test24_1", rwT2); u["User3"] != 1800 {
		t.Errorf("User3 raw usage after the real run %v, want 1800", u["User3"])
	}
}

// sameCounts compares what a dry run and the run it previewed report.
func sameCounts(t *testing.T, what string, dry, real *pipeline.Summary) {
	t.Helper()
	type counts struct {
		From, To  time.Time
		Resumed   bool
		Read      int64
		Ingested  int64
		Rejected  int64
		Charged   int
		Snapshots int
		Resolve   any
	}
	of := func(s *pipeline.Summary) counts {
		return counts{s.From, s.To, s.Resumed, s.Ingest.Read, s.Ingest.Ingested, s.Ingest.Rejected,
			s.Decay.JobsCharged, s.Snapshots, s.Resolve}
	}
	if d, r := of(dry), of(real); !reflect.DeepEqual(d, r) {
		t.Errorf("%s: dry run %+v, run %+v", what, d, r)
	}
}
