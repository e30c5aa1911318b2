package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
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
	t.Parallel()
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

// Jobs of the dry run audit, beside rwA, rwB and rwC: 4004 runs from 00:30,
// RUNNING at 01:00 (rwD) and ended at 01:30 (rwDdone); 4005 ran 00:40-01:20
// but is first seen on the second night (late); 4006 starts at 02:30, after
// a 02:00 --to, and 4008 in the next month; rwBad has an Elapsed sacct cannot print (rejected); rwX are
// rwA and rwB of a second cluster, c2.
const (
	rwD     = "4004|4004|test24_1|normal|normal|AccountB|User1|2025-01-01T00:30:00|2025-01-01T00:30:00|Unknown|00:30:00|RUNNING|1|billing=1,cpu=1,mem=1M,node=1\n"
	rwDdone = "4004|4004|test24_1|normal|normal|AccountB|User1|2025-01-01T00:30:00|2025-01-01T00:30:00|2025-01-01T01:30:00|01:00:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
	rwLate  = "4005|4005|test24_1|normal|normal|AccountC|User2|2025-01-01T00:40:00|2025-01-01T00:40:00|2025-01-01T01:20:00|00:40:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
	rwAfter = "4006|4006|test24_1|normal|normal|AccountC|User3|2025-01-01T02:30:00|2025-01-01T02:30:00|2025-01-01T02:50:00|00:20:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
	rwFeb   = "4008|4008|test24_1|normal|normal|AccountC|User3|2025-02-01T00:30:00|2025-02-01T00:30:00|2025-02-01T00:50:00|00:20:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
	rwBad   = "4007|4007|test24_1|normal|normal|AccountC|User3|2025-01-01T01:00:00|2025-01-01T01:00:00|2025-01-01T01:20:00|1-25:00:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
	rwX     = "5001|5001|c2|normal|normal|AccountB|User1|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n" +
		"5002|5002|c2|normal|normal|AccountC|User2|2025-01-01T00:20:00|2025-01-01T00:20:00|2025-01-01T00:50:00|00:30:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
)

// TestDryRunMatchesRun audits the dry run against the run that follows it
// on the same inputs, scenario by scenario: the same summary (every field
// but those only writing fills) or the same refusal, and the history's
// files byte for byte as before the dry run. The counts wanted are by hand
// from the jobs above (test24_1: no decay, 1 billing per CPU).
func TestDryRunMatchesRun(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	type night struct {
		to, from time.Time
		files    []int // indexes into sacct
	}
	for _, tc := range []struct {
		name    string
		sacct   []string // siteWith's sacct bodies
		before  []night  // the runs that build the history (none: no history)
		tonight night
		cluster string    // Options.Cluster
		now     time.Time // Options.Now tonight (zero: the clock)
		locked  bool      // another process holds the history's lock
		cancel  bool      // interrupted (the context of SIGINT)
		want    string    // the dry run's counts (see got), or the error both give
	}{
		{name: "first night, no history", sacct: []string{rwA + rwB},
			tonight: night{to: rwT1, files: []int{0}},
			want:    "from 00:00 resumed false charged 2 dup 0 carried 0 late 0 after 0 rejected 0 other 0"},
		{name: "resumed second night", sacct: []string{rwA + rwB, rwA + rwB + rwC},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT2, files: []int{1}},
			want: "from 01:00 resumed true charged 1 dup 0 carried 0 late 0 after 0 rejected 0 other 0"},
		{name: "recompute from an earlier checkpoint", sacct: []string{rwA + rwB, rwA + rwB + rwC},
			before:  []night{{to: rwT1, files: []int{0}}, {to: rwT2, files: []int{1}}, {to: rwT3, files: []int{1}}},
			tonight: night{to: rwT3, from: rwT1.Add(30 * time.Minute), files: []int{1}},
			want:    "from 01:00 resumed true charged 1 dup 0 carried 0 late 0 after 0 rejected 0 other 0"},
		{name: "second cluster of a shared history", sacct: []string{rwA + rwB + rwX},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT1, files: []int{0}}, cluster: "c2",
			want: "from 00:00 resumed false charged 2 dup 0 carried 0 late 0 after 0 rejected 0 other 2"},
		{name: "running job finished tonight", sacct: []string{rwA + rwB + rwD, rwA + rwB + rwC + rwDdone},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT2, files: []int{1}},
			want: "from 01:00 resumed true charged 2 dup 0 carried 0 late 0 after 0 rejected 0 other 0"},
		{name: "running job missing tonight", sacct: []string{rwA + rwB + rwD, rwA + rwB + rwC},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT2, files: []int{1}},
			want: "from 01:00 resumed true charged 2 dup 0 carried 1 late 0 after 0 rejected 0 other 0"},
		{name: "late job", sacct: []string{rwA + rwB, rwA + rwB + rwC + rwLate},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT2, files: []int{1}},
			want: "from 01:00 resumed true charged 2 dup 0 carried 0 late 1 after 0 rejected 0 other 0"},
		{name: "duplicates across two files", sacct: []string{rwA + rwB, rwA + rwB + rwC, rwC},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT2, files: []int{1, 2}},
			want: "from 01:00 resumed true charged 1 dup 1 carried 0 late 0 after 0 rejected 0 other 0"},
		{name: "rejected row", sacct: []string{rwA + rwB, rwA + rwB + rwC + rwBad},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT2, files: []int{1}},
			want: "from 01:00 resumed true charged 1 dup 0 carried 0 late 0 after 0 rejected 1 other 0"},
		{name: "job after --to", sacct: []string{rwA + rwB, rwA + rwB + rwC + rwAfter},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT2, files: []int{1}},
			want: "from 01:00 resumed true charged 1 dup 0 carried 0 late 0 after 1 rejected 0 other 0"},
		{name: "job of a month after --to's", sacct: []string{rwA + rwB, rwA + rwB + rwC + rwAfter + rwFeb},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT2, files: []int{1}},
			want: "from 01:00 resumed true charged 1 dup 0 carried 0 late 0 after 2 rejected 0 other 0"},
		// rwAfter starts half an hour after the moment of the run: a time
		// that has not happened yet, rejected (ingest.ClockSkew).
		{name: "default --to, now, a job running", sacct: []string{rwA + rwB + rwD + rwAfter},
			tonight: night{files: []int{0}}, now: rwT2,
			want: "from 00:00 resumed false charged 3 dup 0 carried 0 late 0 after 0 rejected 1 other 0"},
		{name: "window before the newest checkpoint", sacct: []string{rwA + rwB, rwA + rwB + rwC},
			before:  []night{{to: rwT1, files: []int{0}}, {to: rwT2, files: []int{1}}},
			tonight: night{to: rwT1, files: []int{0}},
			want:    "before 2025-01-01T02:00:00Z, where the history"},
		{name: "fresh start after the origin", sacct: []string{rwA + rwB, rwB},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT1, files: []int{1}},
			want: "start afresh at 2025-01-01T00:20:00Z (the earliest job start)"},
		{name: "--to after now", sacct: []string{rwA + rwB, rwA + rwB + rwC},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT3, files: []int{1}}, now: rwT2,
			want: "--to 2025-01-01T03:00:00Z is after now (2025-01-01T02:00:00Z)"},
		{name: "locked by another process", sacct: []string{rwA + rwB, rwA + rwB + rwC},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT2, files: []int{1}}, locked: true,
			want: history.ErrLocked.Error()},
		{name: "interrupted", sacct: []string{rwA + rwB, rwA + rwB + rwC},
			before: []night{{to: rwT1, files: []int{0}}}, tonight: night{to: rwT2, files: []int{1}}, cancel: true,
			want: context.Canceled.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, files := siteWith(t, tc.sacct...)
			hist := filepath.Join(t.TempDir(), "history")
			run := func(n night, cluster string, now time.Time, dry, stop bool) (*pipeline.Summary, error) {
				opt := runOpts(hist, n.to)
				opt.From, opt.Cluster, opt.DryRun = n.from, cluster, dry
				if !now.IsZero() {
					opt.Now = func() time.Time { return now }
				}
				var in []string
				for _, i := range n.files {
					in = append(in, files[i])
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if stop {
					cancel()
				}
				return pipeline.Run(ctx, siteInputs(t, dir, in...), opt)
			}
			for _, n := range tc.before {
				if _, err := run(n, "", time.Time{}, false, false); err != nil {
					t.Fatal(err)
				}
			}
			if tc.locked {
				h, err := history.Open(hist)
				if err != nil {
					t.Fatal(err)
				}
				unlock, err := h.Lock(0, time.Now)
				if err != nil {
					t.Fatal(err)
				}
				defer unlock()
			}
			var before map[string][]byte
			if len(tc.before) > 0 {
				before = snapshotDir(t, hist)
			}
			dry, derr := run(tc.tonight, tc.cluster, tc.now, true, tc.cancel)
			if len(tc.before) == 0 {
				if _, err := os.Stat(hist); !os.IsNotExist(err) {
					t.Errorf("a dry run created the history directory (stat: %v)", err)
				}
			} else {
				sameFiles(t, "history after the dry run", snapshotDir(t, hist), before)
			}
			real, rerr := run(tc.tonight, tc.cluster, tc.now, false, tc.cancel)
			if derr != nil || rerr != nil {
				if derr == nil || rerr == nil || derr.Error() != rerr.Error() || !strings.Contains(derr.Error(), tc.want) {
					t.Fatalf("dry run: %v\nrun: %v\nwant both to fail with %q", derr, rerr, tc.want)
				}
				return
			}
			got := fmt.Sprintf("from %s resumed %v charged %d dup %d carried %d late %d after %d rejected %d other %d",
				dry.From.Sub(t0).String(), dry.Resumed, dry.Decay.JobsCharged, dry.Duplicates, dry.CarriedUnseen,
				dry.Late, dry.AfterTo, dry.Ingest.Rejected, dry.OtherCluster)
			if want := strings.Replace(strings.Replace(tc.want, "from 00:00", "from 0s", 1), "from 01:00", "from 1h0m0s", 1); got != want {
				t.Errorf("dry run: %s\nwant:    %s", got, want)
			}
			if !dry.DryRun || dry.RunID != "" || dry.JobsWritten != 0 || dry.Partitions != 0 || dry.Unrecharged != 0 || dry.Generation != 0 {
				t.Errorf("dry run: DryRun %v, RunID %q, jobs written %d, files %d, unrecharged %d; want true, \"\", 0, 0, 0",
					dry.DryRun, dry.RunID, dry.JobsWritten, dry.Partitions, dry.Unrecharged)
			}
			if d, r := comparable(dry), comparable(real); !reflect.DeepEqual(d, r) {
				t.Errorf("dry run and run differ:\ndry %+v\nrun %+v", d, r)
			}
		})
	}
}

// comparable is s without what only a run that writes fills, and the
// times.
func comparable(s *pipeline.Summary) pipeline.Summary {
	c := *s
	c.RunID, c.DryRun, c.JobsWritten, c.Unrecharged, c.Partitions, c.Compacted, c.Generation = "", false, 0, 0, 0, 0, 0
	c.Phases, c.Started, c.Finished = pipeline.Phases{}, time.Time{}, time.Time{}
	return c
}
