package pipeline_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/schemas"
)

// TestZeroLengthJobAtTo: jobs that start and end exactly at --to belong
// to the run that ends there (written, charged 0 s); a job that starts at
// --to and ends after it is left for the next run. With the default --to
// (the latest end) nothing is left over; night by night equals one run.
func TestZeroLengthJobAtTo(t *testing.T) {
	t.Parallel()
	const (
		long  = "3001|3001|test24_1|normal|normal|AccountB|User1|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
		zero2 = "3002|3002|test24_1|normal|normal|AccountC|User2|2025-01-01T00:30:00|2025-01-01T01:00:00|2025-01-01T01:00:00|00:00:00|CANCELLED by 0|1|billing=1,cpu=1,mem=1M,node=1\n"
		zero3 = "3003|3003|test24_1|normal|normal|AccountC|User3|2025-01-01T00:30:00|2025-01-01T01:00:00|2025-01-01T01:00:00|00:00:00|CANCELLED by 0|1|billing=1,cpu=1,mem=1M,node=1\n"
		later = "3004|3004|test24_1|normal|normal|AccountB|User1|2025-01-01T00:30:00|2025-01-01T01:00:00|2025-01-01T01:30:00|00:30:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
	)
	t1, t2 := time.Date(2025, 1, 1, 1, 0, 0, 0, time.UTC), time.Date(2025, 1, 1, 2, 0, 0, 0, time.UTC)

	// The default --to is 01:00, the zero-length jobs' start and end.
	dir, files := siteWith(t, long+zero2+zero3)
	hist := t.TempDir()
	sum, err := pipeline.Run(context.Background(), siteInputs(t, dir, files...), runOpts(hist, time.Time{}))
	if err != nil {
		t.Fatal(err)
	}
	if !sum.To.Equal(t1) || sum.AfterTo != 0 || sum.JobsWritten != 3 {
		t.Errorf("to %s, after to %d, written %d; want %s, 0, 3", sum.To, sum.AfterTo, sum.JobsWritten, t1)
	}
	if g, w := jobRows(t, hist, "test24_1"), []string{"3001 3600", "3002 0", "3003 0"}; !slices.Equal(g, w) {
		t.Errorf("jobs %v, want %v", g, w)
	}

	// --to 01:00 then 02:00 equals one run to 02:00; the job starting at
	// 01:00 and ending after it waits for the second night.
	dir, files = siteWith(t, long+zero2+zero3+later)
	nightly := t.TempDir()
	sum, err = pipeline.Run(context.Background(), siteInputs(t, dir, files...), runOpts(nightly, t1))
	if err != nil {
		t.Fatal(err)
	}
	if sum.AfterTo != 1 || sum.JobsWritten != 3 {
		t.Errorf("night 1: after to %d, written %d; want 1, 3", sum.AfterTo, sum.JobsWritten)
	}
	if g, w := jobRows(t, nightly, "test24_1"), []string{"3001 3600", "3002 0", "3003 0"}; !slices.Equal(g, w) {
		t.Errorf("night 1: jobs %v, want %v", g, w)
	}
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, files...), runOpts(nightly, t2)); err != nil {
		t.Fatal(err)
	}
	single := t.TempDir()
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, files...), runOpts(single, t2)); err != nil {
		t.Fatal(err)
	}
	want := []string{"3001 3600", "3002 0", "3003 0", "3004 1800"}
	for _, h := range []string{nightly, single} {
		if g := jobRows(t, h, "test24_1"); !slices.Equal(g, want) {
			t.Errorf("jobs %v, want %v", g, want)
		}
		if u := rawUsage(t, h, "test24_1", t2); u["User1"] != 5400 || u["User2"] != 0 || u["User3"] != 0 {
			t.Errorf("raw usage %v, want User1 5400, User2 and User3 0", u)
		}
	}
	sameFiles(t, "usage", tableFiles(t, nightly, schemas.TableUsage), tableFiles(t, single, schemas.TableUsage))
}
