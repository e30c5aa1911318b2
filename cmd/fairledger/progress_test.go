package main

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/fairledger/fairledger/pipeline"
)

// In a JSON log, progress is info records at most once per interval, with
// rows, bytes, rate and ETA worked out by hand: 100 rows and 250 of 1000
// bytes after 5 s is 25 %, 20 rows/s, and 750 bytes left at 50 B/s = 15 s.
func TestProgressLog(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var clock time.Time
	var buf bytes.Buffer
	p := &progressLog{log: zerolog.New(&buf), every: 5 * time.Second, now: func() time.Time { return clock }, start: t0}
	steps := []struct {
		after time.Duration
		pr    pipeline.Progress
	}{
		{1 * time.Second, pipeline.Progress{File: "s.psv", BytesDone: 50, BytesTotal: 1000, Rows: 20}},
		{4900 * time.Millisecond, pipeline.Progress{File: "s.psv", BytesDone: 245, BytesTotal: 1000, Rows: 98}},
		{5 * time.Second, pipeline.Progress{File: "s.psv", BytesDone: 250, BytesTotal: 1000, Rows: 100}},
		{9 * time.Second, pipeline.Progress{File: "s.psv", BytesDone: 450, BytesTotal: 1000, Rows: 180}},
		{10 * time.Second, pipeline.Progress{File: "s.psv", BytesDone: 1000, BytesTotal: 1000, Rows: 400}},
	}
	for _, s := range steps {
		clock = t0.Add(s.after)
		p.update(s.pr)
	}
	recs := jsonLines(t, buf.String())
	if len(recs) != 2 {
		t.Fatalf("%d progress records, want 2 (at 5 s and 10 s):\n%s", len(recs), buf.String())
	}
	want := []map[string]any{
		{"level": "info", "message": "progress", "file": "s.psv", "percent": 25.0, "rows": 100.0, "bytes": 250.0,
			"bytes_total": 1000.0, "rows_per_s": 20.0, "eta_s": 15.0},
		{"level": "info", "message": "progress", "file": "s.psv", "percent": 100.0, "rows": 400.0, "bytes": 1000.0,
			"bytes_total": 1000.0, "rows_per_s": 40.0, "eta_s": 0.0},
	}
	for i := range want {
		for k, v := range want[i] {
			if recs[i][k] != v {
				t.Errorf("record %d: %s = %v, want %v", i, k, recs[i][k], v)
			}
		}
	}
}

// run --progress always with a JSON log (stderr no terminal) keeps every
// stderr line one JSON record: no redrawn line glued to the next record.
func TestRunProgressAlwaysJSON(t *testing.T) {
	_, in := genSite(t)
	var out, errs bytes.Buffer
	args := append(append([]string{"fairledger", "run"}, in...),
		"--history", filepath.Join(t.TempDir(), "h"), "--to", "2025-02-11", "--tz", "UTC", "--progress", "always")
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("run exit %d:\n%s", code, errs.String())
	}
	recs := jsonLines(t, errs.String())
	if last := recs[len(recs)-1]; last["message"] != "run finished" {
		t.Errorf("last record %v, want the summary", last)
	}
}
