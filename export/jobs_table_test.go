package export

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestJobTableSort checks JobTable.Sort against a stable sort by
// compareJobs, on rows with repeated names, equal starts and equal ids
// (ties must keep their input order), and that every record is moved whole.
func TestJobTableSort(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	names := []string{"", "a", "b", "ab", "B", "lab-1", "lab-10", "lab-2"}
	rows := make([]JobRow, 5000)
	for i := range rows {
		rows[i] = JobRow{
			Account:    names[rnd.IntN(len(names))],
			User:       names[rnd.IntN(len(names))],
			Start:      time.Unix(1_700_000_000+int64(rnd.IntN(50)), 0).UTC(),
			JobIDRaw:   int64(rnd.IntN(20)),
			JobID:      names[rnd.IntN(3)],
			SourceLine: int64(i), // tells tied rows apart
		}
	}
	want := slices.Clone(rows)
	slices.SortStableFunc(want, func(a, b JobRow) int { return compareJobs(&a, &b) })
	tb := NewJobTable(NewJobDict(), 0)
	for i := range rows {
		tb.AppendRow(&rows[i])
	}
	tb.Sort()
	if !tb.sorted() {
		t.Errorf("sorted() is false after Sort")
	}
	for i := range want {
		got := tb.Row(i)
		if got.SourceLine != want[i].SourceLine {
			t.Fatalf("row %d: got input row %d, want %d", i, got.SourceLine, want[i].SourceLine)
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("row %d: fields of different rows: %+v, want %+v", i, got, want[i])
		}
	}
}
