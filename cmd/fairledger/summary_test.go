package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/pipeline"
)

// The summary line names dropped duplicates, the history's jobs a
// recomputed window could not charge, and the jobs running at the
// checkpoint charged as running without a record, only when there are some.
func TestSummaryLineCounts(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*pipeline.Summary)
		want string
	}{
		{"duplicates", func(s *pipeline.Summary) { s.Duplicates = 3 }, "; duplicates dropped 3 "},
		{"unrecharged", func(s *pipeline.Summary) { s.Unrecharged = 2 }, "; history jobs missing from the input 2 (kept, not charged"},
		{"carried unseen", func(s *pipeline.Summary) {
			s.CarriedUnseen, s.From = 1696, time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
		}, "; charged as running without a record 1696 (jobs running at the checkpoint the input lacks: widen sacct -S to 2025-12-01T00:00:00Z)"},
	} {
		s := &pipeline.Summary{RunID: "r", Cluster: "c"}
		if line := summaryLine(s); strings.Contains(line, c.want[:20]) {
			t.Errorf("%s: none, yet: %s", c.name, line)
		}
		c.set(s)
		if line := summaryLine(s); !strings.Contains(line, c.want) {
			t.Errorf("%s: not named: %s", c.name, line)
		}
	}
}

// The JSON summary's not_charged lists only the rows not charged; rows of a
// user missing from the tree, charged to the account, are under
// charged_with_fallback. Both objects are there even when empty.
func TestLogSummaryNotCharged(t *testing.T) {
	for _, c := range []struct {
		byReason             map[string]int64
		notCharged, fallback map[string]any
	}{
		{
			map[string]int64{decay.ReasonUserToAccount: 2, decay.ReasonUnknownAccount: 3, decay.ReasonNoStart: 1},
			map[string]any{decay.ReasonUnknownAccount: 3.0, decay.ReasonNoStart: 1.0},
			map[string]any{decay.ReasonUserToAccount: 2.0},
		},
		{nil, map[string]any{}, map[string]any{}},
	} {
		var buf bytes.Buffer
		s := &pipeline.Summary{RunID: "r", Cluster: "c"}
		s.Resolve.ByReason = c.byReason
		logSummary(zerolog.New(&buf), s)
		var rec map[string]any
		if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
			t.Fatalf("summary is not JSON: %v: %s", err, buf.String())
		}
		if !reflect.DeepEqual(rec["not_charged"], c.notCharged) {
			t.Errorf("ByReason %v: not_charged = %v, want %v", c.byReason, rec["not_charged"], c.notCharged)
		}
		if !reflect.DeepEqual(rec["charged_with_fallback"], c.fallback) {
			t.Errorf("ByReason %v: charged_with_fallback = %v, want %v", c.byReason, rec["charged_with_fallback"], c.fallback)
		}
	}
}

// The summary's durations are milliseconds (zerolog's DurationFieldUnit),
// as docs/operations.md says: 1.5 s of elapsed time is 1500.
func TestLogSummaryElapsedMillis(t *testing.T) {
	var buf bytes.Buffer
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &pipeline.Summary{RunID: "r", Cluster: "c", Started: t0, Finished: t0.Add(1500 * time.Millisecond)}
	s.Phases.Read = 250 * time.Millisecond
	logSummary(zerolog.New(&buf), s)
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["elapsed"] != 1500.0 || rec["read_elapsed"] != 250.0 {
		t.Errorf("elapsed = %v, read_elapsed = %v, want 1500 and 250 (ms)", rec["elapsed"], rec["read_elapsed"])
	}
}
