package pipeline

import (
	"encoding/binary"
	"math"
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
	s := testSpill(t)
	dict := export.NewJobDict()
	in := tableOf(dict, rows)
	if err := s.add("2025-01", in, []int32{0}); err != nil {
		t.Fatal(err)
	}
	if err := s.add("2025-02", in, []int32{1}); err != nil {
		t.Fatal(err)
	}
	if err := s.add("2025-01", in, []int32{1}); err != nil {
		t.Fatal(err)
	}
	if got := readSpill(t, s, dict, "2025-01"); !reflect.DeepEqual(got, rows) {
		t.Errorf("January:\n got %+v\nwant %+v", got, rows)
	}
	if got := readSpill(t, s, dict, "2025-02"); !reflect.DeepEqual(got, rows[1:]) {
		t.Errorf("February: %+v", got)
	}
	if got := readSpill(t, s, dict, "2025-03"); got != nil {
		t.Errorf("unknown month: %v", got)
	}
}

// testSpill returns a new spill that is closed when the test ends.
func testSpill(t *testing.T) *spill {
	t.Helper()
	s, err := newSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close() })
	return s
}

// tableOf returns rows as a table using dict.
func tableOf(dict *export.JobDict, rows []export.JobRow) *export.JobTable {
	tb := export.NewJobTable(dict, len(rows))
	for i := range rows {
		tb.AppendRow(&rows[i])
	}
	return tb
}

// readSpill reads month's records back as rows.
func readSpill(t *testing.T, s *spill, dict *export.JobDict, month string) []export.JobRow {
	t.Helper()
	tb := export.NewJobTable(dict, 0)
	if err := s.read(month, tb); err != nil {
		t.Fatalf("read %s: %v", month, err)
	}
	var rows []export.JobRow
	for i := range tb.Recs {
		rows = append(rows, tb.Row(i))
	}
	return rows
}

// TestSpillValues: floats keep every bit (integral ones take the short
// form, -0, fractions, huge values, infinities and NaN the long one);
// timestamps before the start survive the delta encoding; rows sharing a
// TRES map, or holding equal maps, read back equal maps.
func TestSpillValues(t *testing.T) {
	start := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	before := start.Add(-36 * time.Hour)
	shared := map[string]float64{"cpu": 2, "mem": 0.5}
	vals := []float64{0, math.Copysign(0, -1), 0.1, -5, 1 << 53, 1<<53 + 2, -(1 << 53), 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	var rows []export.JobRow
	for i, v := range vals {
		rows = append(rows, export.JobRow{JobID: "j", JobIDRaw: int64(i), Start: start, Submit: &before,
			MemMB: v, NodeCount: -v, GPU: v, Billing: v, UsageFactor: v, TRES: shared})
	}
	rows[1].TRES = map[string]float64{"mem": 0.5, "cpu": 2} // equal contents, another map
	rows[2].TRES = map[string]float64{"cpu": 2, "mem": -0.5}
	rows[3].TRES = map[string]float64{}
	s := testSpill(t)
	idx := make([]int32, len(rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	dict := export.NewJobDict()
	if err := s.add("2025-05", tableOf(dict, rows), idx); err != nil {
		t.Fatal(err)
	}
	got := readSpill(t, s, dict, "2025-05")
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for i, r := range got {
		w := rows[i]
		if !same(r.MemMB, w.MemMB) || !same(r.NodeCount, w.NodeCount) || !same(r.GPU, w.GPU) ||
			!same(r.Billing, w.Billing) || !same(r.UsageFactor, w.UsageFactor) {
			t.Errorf("row %d: floats %v %v %v %v %v, want %v", i, r.MemMB, r.NodeCount, r.GPU, r.Billing, r.UsageFactor, w.MemMB)
		}
		if r.Submit == nil || !r.Submit.Equal(before) || !r.Start.Equal(start) {
			t.Errorf("row %d: submit %v start %v", i, r.Submit, r.Start)
		}
		if len(w.TRES) == 0 {
			if r.TRES != nil {
				t.Errorf("row %d: TRES %v, want none", i, r.TRES)
			}
		} else if !reflect.DeepEqual(r.TRES, w.TRES) {
			t.Errorf("row %d: TRES %v, want %v", i, r.TRES, w.TRES)
		}
	}
}

// TestSpillDifferences: the fields stored as differences from the record
// before (start, job_id_raw, source line) and from the start (the other
// times) come back exactly when they go backwards, before 1970 or off the
// whole second, and a job id is only left out when it is job_id_raw in
// decimal.
func TestSpillDifferences(t *testing.T) {
	at := func(sec, us int64) time.Time { return time.Unix(sec, us*1000).UTC() }
	ptr := func(v time.Time) *time.Time { return &v }
	rows := []export.JobRow{
		{JobID: "123", JobIDRaw: 123, Start: at(1_700_000_000, 0), End: ptr(at(1_700_000_100, 0)), SourceLine: 10},
		{JobID: "0123", JobIDRaw: 123, Start: at(1_699_990_000, 0), SourceLine: 3},                  // leading zero; earlier start
		{JobID: "", JobIDRaw: 7, Start: at(-86_401, 0), Submit: ptr(at(-90_000, 0)), SourceLine: 4}, // empty id; before 1970
		{JobID: "-5", JobIDRaw: -5, Start: at(1_700_000_000, 250), End: ptr(at(1_700_000_001, 999_999)), // off the second
			Eligible: ptr(at(1_699_999_999, 1)), SourceLine: 1 << 40},
		{JobID: "0", JobIDRaw: 0, Start: at(0, 0), SourceLine: 0},
		{JobID: "10_0", JobIDRaw: 11, Start: at(1_700_000_000, 0), SourceLine: 2},
		{JobID: "9223372036854775807", JobIDRaw: 1<<63 - 1, Start: at(1_700_000_000, 0), SourceLine: 5},
	}
	s := testSpill(t)
	dict := export.NewJobDict()
	in := tableOf(dict, rows)
	for i := range rows { // one record a call: the differences span calls
		if err := s.add("2025-01", in, []int32{int32(i)}); err != nil {
			t.Fatal(err)
		}
	}
	got := readSpill(t, s, dict, "2025-01")
	if len(got) != len(rows) {
		t.Fatalf("%d rows back, want %d", len(got), len(rows))
	}
	for i := range rows {
		if !reflect.DeepEqual(got[i], rows[i]) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], rows[i])
		}
	}
	// A decimal id is the length 0 and no bytes; others their length plus one.
	for i, want := range []uint64{0, 5, 1, 3, 0, 5, 0} {
		r := &in.Recs[i]
		b := appendRec(nil, r, in.JobID(r), &recPrev{})
		if n, _ := binary.Uvarint(b); n != want {
			t.Errorf("row %d (%q, %d): id length %d, want %d", i, rows[i].JobID, rows[i].JobIDRaw, n, want)
		}
	}
}
