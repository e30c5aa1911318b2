package pipeline

import (
	"reflect"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export"
)

// TestSpillRoundTrip: rows come back from the spill exactly, NULLs apart
// from zeros (array task 0, a zero elapsed), in order, per month.
func TestSpillRoundTrip(t *testing.T) {
	zero, seven := int64(0), int64(7)
	by := "1234"
	start := time.Date(2025, 1, 31, 23, 59, 59, 0, time.UTC)
	end := start.Add(90 * time.Second)
	rows := []export.JobRow{
		{JobID: "10_0", JobIDRaw: 11, ArrayJobID: &seven, ArrayTaskID: &zero, User: "u", Account: "a",
			Partition: "p", QOS: "normal", State: "CANCELLED", CancelledBy: &by, Submit: &start, Start: start,
			End: &end, ElapsedSec: &zero, ChargedSec: 90, NNodes: 1, AllocCPUs: 4, MemMB: 1024.5, NodeCount: 1,
			GPU: 2, TRES: map[string]float64{"cpu": 4, "gres/gpu": 2, "mem": 1024.5}, Billing: 6.25,
			BillingSlurm: 6, UsageFactor: 0.5, SourceFile: "s.psv", SourceLine: 3},
		{JobID: "12", JobIDRaw: 12, User: "u", Account: "a", Start: start.Add(time.Hour), State: "RUNNING",
			SourceFile: "s.psv", SourceLine: 4},
	}
	s, err := newSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if err := s.add("2025-01", rows[:1]); err != nil {
		t.Fatal(err)
	}
	if err := s.add("2025-02", rows[1:]); err != nil {
		t.Fatal(err)
	}
	if err := s.add("2025-01", rows[1:]); err != nil {
		t.Fatal(err)
	}
	got, err := s.read("2025-01")
	if err != nil {
		t.Fatal(err)
	}
	if want := []export.JobRow{rows[0], rows[1]}; !reflect.DeepEqual(got, want) {
		t.Errorf("January:\n got %+v\nwant %+v", got, want)
	}
	if got, _ := s.read("2025-02"); !reflect.DeepEqual(got, rows[1:]) {
		t.Errorf("February: %+v", got)
	}
	if got, err := s.read("2025-03"); got != nil || err != nil {
		t.Errorf("unknown month: %v, %v", got, err)
	}
}
