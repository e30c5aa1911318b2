package record

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestAppendBatchBlocks: a batch longer than two of AppendBatch's blocks,
// appended to a table that already holds a record, reads back row for row
// across the block edges; and names enter the dictionary in the order the
// rows give them: first every dictionary column's entries (user, account,
// partition, QOS, state, source file), then, row by row, "" for a null
// and the utf8 cancelled_by values.
func TestAppendBatchBlocks(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 2*appendBlock + 76
	start := int64(1735776000) // 2025-01-02T00:00:00Z
	specs := make([]jobSpec, n)
	for i := range specs {
		s := &specs[i]
		*s = jobSpec{jobID: fmt.Sprint(500 + i), raw: int64(500 + i), user: fmt.Sprintf("u%d", i%7), account: "a",
			part: "p", qos: "q", state: "COMPLETED", start: &start, nnodes: 1, cpus: int64(1 + i%5),
			tres: map[string]float64{"cpu": float64(1 + i%5)}, billing: float64(1 + i%5), billingSlurm: int64(1 + i%5),
			usageFactor: 1, sourceLine: int64(i)}
	}
	last := appendBlock - 1 // a block's last row, and the next block's first
	specs[last].cancelledBy = ptr("zed")
	specs[last+1].qos = "" // null
	specs[n-1].cancelledBy = ptr("amy")
	specs[n-1].qos = ""
	rec := buildBatch(t, mem, specs)
	defer rec.Release()
	tb := NewJobTable(NewJobDict(), 0)
	first := JobRow{JobID: "x", User: "first"}
	tb.AppendRow(&first)
	if err := tb.AppendBatch(rec); err != nil {
		t.Fatal(err)
	}
	if len(tb.Recs) != n+1 {
		t.Fatalf("%d records, want %d", len(tb.Recs), n+1)
	}
	if got := tb.Row(0); got.JobID != "x" || got.User != "first" {
		t.Errorf("the record before the batch: %+v", got)
	}
	for i := range specs {
		got, s := tb.Row(1+i), specs[i]
		cancelled := ""
		if got.CancelledBy != nil {
			cancelled = *got.CancelledBy
		}
		want := ""
		if s.cancelledBy != nil {
			want = *s.cancelledBy
		}
		if got.JobID != s.jobID || got.JobIDRaw != s.raw || got.User != s.user || got.QOS != s.qos ||
			got.AllocCPUs != s.cpus || got.SourceLine != s.sourceLine || cancelled != want ||
			!reflect.DeepEqual(got.TRES, s.tres) {
			t.Errorf("row %d: %+v, want %+v", i, got, s)
		}
	}
	// AppendRow interned its row's names first ("first", then "" for the
	// empty account), so the batch's null QOS finds "" there.
	wantNames := []string{"first", "", "u0", "u1", "u2", "u3", "u4", "u5", "u6", "a", "p", "q", "COMPLETED",
		"sacct.txt", "zed", "amy"}
	if got := tb.Dict.Names(); !reflect.DeepEqual(got, wantNames) {
		t.Errorf("names %q, want %q", got, wantNames)
	}
	// Without the record before, "" comes in row order: after "zed".
	tb2 := NewJobTable(NewJobDict(), 0)
	if err := tb2.AppendBatch(rec); err != nil {
		t.Fatal(err)
	}
	wantNames = []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6", "a", "p", "q", "COMPLETED", "sacct.txt",
		"zed", "", "amy"}
	if got := tb2.Dict.Names(); !reflect.DeepEqual(got, wantNames) {
		t.Errorf("names %q, want %q", got, wantNames)
	}
}

// TestAppendBatchTRESRepeats: rows with the TRES of the row before share
// its set; a row with the same keys but another value, or the same
// entries after an empty map, does not mix them up.
func TestAppendBatchTRESRepeats(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	start := int64(1735776000)
	a := map[string]float64{"cpu": 4, "mem": 100}
	b := map[string]float64{"cpu": 4, "mem": 200}
	var specs []jobSpec
	for i, m := range []map[string]float64{a, a, b, {}, b, a} {
		specs = append(specs, jobSpec{jobID: fmt.Sprint(i), raw: int64(i), user: "u", account: "a", part: "p",
			qos: "q", state: "COMPLETED", start: &start, tres: m, usageFactor: 1})
	}
	rec := buildBatch(t, mem, specs)
	defer rec.Release()
	tb := NewJobTable(NewJobDict(), 0)
	if err := tb.AppendBatch(rec); err != nil {
		t.Fatal(err)
	}
	var got []uint32
	for _, r := range tb.Recs {
		got = append(got, r.TRES)
	}
	// Set 0 is the empty set; a is interned first (1), b second (2).
	if want := []uint32{1, 1, 2, 0, 2, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("TRES sets %v, want %v", got, want)
	}
}
