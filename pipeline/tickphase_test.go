package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/pipeline"
)

// TestTickPhase: slurmctld's decay thread ticks every PriorityCalcPeriod
// from its own start, not on the epoch's grid; --tick-phase says where.
// test24_1 has no decay and the default PriorityCalcPeriod, 5 minutes, so
// a cpu=1 job adds one unit of RawUsage per second charged, and a snapshot
// holds what was charged up to the last tick at or before it. Job 1 runs
// from 00:01:00 to 00:20:00; the snapshot is at --to 00:12:00. By hand:
//
//	epoch grid (ticks at 00:00, 00:05, 00:10):   charged 00:01 → 00:10 = 540
//	phase 60 s (ticks at 00:01, 00:06, 00:11):   charged 00:01 → 00:11 = 600
//	@ a tick at 00:03:20 (ticks …, 00:08:20):    charged 00:01 → 00:08:20 = 440
func TestTickPhase(t *testing.T) {
	t.Parallel()
	job := "1|1|test24_1|normal|normal|AccountB|User1|2025-01-01T00:00:00|2025-01-01T00:01:00|2025-01-01T00:20:00|00:19:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
	dir, files := siteWith(t, job)
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(m, s int) time.Time { return day.Add(time.Duration(m)*time.Minute + time.Duration(s)*time.Second) }
	run := func(hist string, to time.Time, origin *int64, from time.Time) error {
		opt := runOpts(hist, to)
		opt.TickOrigin, opt.From = origin, from
		_, err := pipeline.Run(context.Background(), siteInputs(t, dir, files...), opt)
		return err
	}
	ptr := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name   string
		origin *int64
		want   float64
	}{
		{"epoch grid", nil, 540},
		{"phase 60 s", ptr(60), 600},
		{"a tick's Unix time", ptr(at(3, 20).Unix()), 440},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hist := t.TempDir()
			if err := run(hist, at(12, 0), tc.origin, time.Time{}); err != nil {
				t.Fatal(err)
			}
			if got := rawUsage(t, hist, "test24_1", at(12, 0))["User1"]; got != tc.want {
				t.Errorf("RawUsage at 00:12 = %v, want %v", got, tc.want)
			}
		})
	}

	// The phase is the history's: the next run without --tick-phase keeps
	// it (to 00:17 on ticks at 00:16: 00:01 → 00:16 = 900, where the epoch
	// grid's 00:15 gives 840), one with another phase is refused, and a
	// recompute from the start may change it.
	hist := t.TempDir()
	if err := run(hist, at(12, 0), ptr(60), time.Time{}); err != nil {
		t.Fatal(err)
	}
	err := run(hist, at(17, 0), ptr(0), time.Time{})
	if err == nil || !strings.Contains(err.Error(), "computed on ticks at 60 s past each multiple of PriorityCalcPeriod") {
		t.Fatalf("resume on another grid: err = %v", err)
	}
	if err := run(hist, at(17, 0), nil, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := rawUsage(t, hist, "test24_1", at(17, 0))["User1"]; got != 900 {
		t.Errorf("RawUsage at 00:17 on the history's grid = %v, want 900", got)
	}
	if err := run(hist, at(17, 0), ptr(0), at(1, 0)); err != nil {
		t.Fatalf("recompute from the start on the epoch grid: %v", err)
	}
	if got := rawUsage(t, hist, "test24_1", at(17, 0))["User1"]; got != 840 {
		t.Errorf("RawUsage at 00:17 after the recompute on the epoch grid = %v, want 840", got)
	}
}
