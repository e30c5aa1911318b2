package record

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestJobTableSort checks JobTable.Sort against a stable sort by
// CompareJobs, on rows with repeated names, equal starts and equal ids
// (ties must keep their input order), and that every record is moved whole.
func TestJobTableSort(t *testing.T) {
	t.Parallel()
	tb := NewJobTable(NewJobDict(), 0)
	checkSort(t, tb, []string{"", "a", "b", "ab", "B", "lab-1", "lab-10", "lab-2"}, 5000)
	// The same table again (Sort reuses its scratch), with a dictionary of
	// over 2¹⁶ names, so that the ranks of the (account, user) pairs take
	// three radix passes.
	many := make([]string, 70_000)
	for i := range many {
		many[i] = fmt.Sprintf("u%05d", (i*7919)%len(many)) // not in rank order
	}
	tb.Reset()
	checkSort(t, tb, many, 200_000)
	// And a smaller table in the scratch sized for the larger one.
	tb.Reset()
	checkSort(t, tb, []string{"x", "y", "z"}, 3000)
}

// checkSort fills tb with n random rows using names and checks Sort.
func checkSort(t *testing.T, tb *JobTable, names []string, n int) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(7, 11))
	rows := make([]JobRow, n)
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
	slices.SortStableFunc(want, func(a, b JobRow) int { return CompareJobs(&a, &b) })
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
