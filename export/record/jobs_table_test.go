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
	// three digit passes.
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

// TestJobTablePartition checks Partition's order (the records not
// selected, then the selected ones, each in their order; every record
// moved whole) and that it copies no record: a night's month, and a month
// whose settled and hot records interleave, allocate nothing once the
// table's scratch has its size.
func TestJobTablePartition(t *testing.T) {
	// Not parallel: testing.AllocsPerRun.
	// JobIDRaw odd: selected. Each record's Start is its JobIDRaw too, so
	// a record torn apart by a move shows.
	sel := func(r *JobRec) bool { return r.JobIDRaw%2 == 1 }
	table := func(ids ...int64) *JobTable {
		tb := &JobTable{Recs: make([]JobRec, len(ids))}
		for i, id := range ids {
			tb.Recs[i].JobIDRaw, tb.Recs[i].Start = id, id
		}
		return tb
	}
	ids := func(tb *JobTable) []int64 {
		out := []int64{}
		for _, r := range tb.Recs {
			if r.Start != r.JobIDRaw {
				t.Fatalf("record %d has the start of record %d", r.JobIDRaw, r.Start)
			}
			out = append(out, r.JobIDRaw)
		}
		return out
	}
	tests := []struct {
		name  string
		in    []int64
		want  []int64
		wantK int
	}{
		{"empty", []int64{}, []int64{}, 0},
		{"none selected", []int64{2, 4, 6}, []int64{2, 4, 6}, 3},
		{"all selected", []int64{1, 3, 5}, []int64{1, 3, 5}, 0},
		{"selected tail (a night)", []int64{2, 4, 1, 3, 5, 7}, []int64{2, 4, 1, 3, 5, 7}, 2},
		{"interleaved", []int64{2, 1, 4, 3, 6, 5, 7}, []int64{2, 4, 6, 1, 3, 5, 7}, 3},
		{"one unselected last", []int64{1, 3, 5, 8}, []int64{8, 1, 3, 5}, 1},
		{"one selected first", []int64{9, 2, 4, 6}, []int64{2, 4, 6, 9}, 3},
		{"reversed blocks", []int64{1, 3, 5, 2, 4, 6}, []int64{2, 4, 6, 1, 3, 5}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := table(tt.in...)
			k := tb.Partition(sel)
			if got := ids(tb); k != tt.wantK || !slices.Equal(got, tt.want) {
				t.Errorf("Partition(%v) = %d, %v; want %d, %v", tt.in, k, got, tt.wantK, tt.want)
			}
		})
	}
	// A month of 10,000 records, the last 9,000 selected (a night); the
	// same with one unselected record at the end (9,000 records move); and
	// the two kinds alternating through the whole month.
	night := make([]int64, 10000)
	for i := range night {
		night[i] = int64(2*i + min(1, i/1000))
	}
	alternating := make([]int64, 10000)
	for i := range alternating {
		alternating[i] = int64(i)
	}
	for _, c := range []struct {
		name string
		ids  []int64
	}{{"night", night}, {"night then an unselected record", append(slices.Clone(night), 2)}, {"alternating", alternating}} {
		base := table(c.ids...)
		tb := table(c.ids...)
		want := slices.Clone(c.ids)
		slices.SortStableFunc(want, func(a, b int64) int { return int(a%2 - b%2) })
		if a := testing.AllocsPerRun(5, func() {
			copy(tb.Recs, base.Recs)
			tb.Partition(sel)
		}); a != 0 {
			t.Errorf("%s: %v allocations, want 0", c.name, a)
		}
		if got := ids(tb); !slices.Equal(got, want) {
			t.Errorf("%s: not partitioned stably", c.name)
		}
	}
}
