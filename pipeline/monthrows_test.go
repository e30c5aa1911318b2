package pipeline

import (
	"fmt"
	"testing"
)

// TestMonthRows groups rows whose months interleave, over three batches
// reusing one monthRows: each month's rows in row order, the months with
// rows in key order, and no month of an earlier batch left over.
func TestMonthRows(t *testing.T) {
	t.Parallel()
	var g monthRows
	batches := []struct {
		months []string // row i's month
		want   string
	}{
		{[]string{"2024-03", "2024-03", "2024-02", "2024-03", "2024-04", "2024-02"},
			"[2024-02 [2 5]] [2024-03 [0 1 3]] [2024-04 [4]]"},
		{[]string{"2024-04", "2024-04", "2024-05"}, "[2024-04 [0 1]] [2024-05 [2]]"},
		{nil, ""},
		{[]string{"2024-02"}, "[2024-02 [0]]"},
	}
	for b, batch := range batches {
		g.reset()
		for i, mk := range batch.months {
			g.add(mk, int32(i))
		}
		got := ""
		for k, mk := range g.months() {
			if k > 0 {
				got += " "
			}
			got += fmt.Sprintf("[%s %v]", mk, g.m[mk])
		}
		if got != batch.want {
			t.Errorf("batch %d: rows by month = %s, want %s", b, got, batch.want)
		}
	}
}
