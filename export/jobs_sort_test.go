package export

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestSortJobRows checks SortJobRows against a stable sort by
// CompareJobRows, on rows with repeated names, equal starts and equal ids
// (ties must keep their input order), and that every row is moved whole.
func TestSortJobRows(t *testing.T) {
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
	slices.SortStableFunc(want, func(a, b JobRow) int { return CompareJobRows(&a, &b) })
	got := rows
	SortJobRows(got)
	for i := range want {
		if got[i].SourceLine != want[i].SourceLine {
			t.Fatalf("row %d: got input row %d, want %d", i, got[i].SourceLine, want[i].SourceLine)
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("row %d: fields of different rows: %+v, want %+v", i, got[i], want[i])
		}
	}
}
