package main

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// quantileCont is DuckDB's quantile_cont: the value at position q·(n−1)
// of the sorted values, interpolated between its neighbours.
func quantileCont(v []float64, q float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	lo := math.Floor(pos)
	hi := math.Ceil(pos)
	return s[int(lo)] + (pos-lo)*(s[int(hi)]-s[int(lo)])
}

// TestSprioDocQueries runs docs/sprio.md's queries on the demo history
// and checks each result against the priority rows read with parquet-go.
func TestSprioDocQueries(t *testing.T) {
	doc, err := os.ReadFile("../../docs/sprio.md")
	if err != nil {
		t.Fatal(err)
	}
	var qs []string
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		qs = append(qs, m[1])
	}
	if len(qs) != 3 {
		t.Fatalf("docs/sprio.md has %d SQL blocks, want 3", len(qs))
	}
	hist := demoHistory(t)
	rows := tableRows[record.PriorityRow](t, hist, schemas.TablePriority, "demo")

	t.Run("waiting per day", func(t *testing.T) {
		jobs := map[string]map[int64]bool{}
		for _, r := range rows {
			if r.Event == record.EventPending {
				k := r.Account + " " + r.At.Format("2006-01-02")
				if jobs[k] == nil {
					jobs[k] = map[int64]bool{}
				}
				jobs[k][r.JobID] = true
			}
		}
		got := sqlCSV(t, hist, qs[0])
		if len(got) != len(jobs) || len(got) < 10 {
			t.Fatalf("%d account-days, the pending rows have %d", len(got), len(jobs))
		}
		for _, r := range got {
			k := r[0] + " " + r[1][:10]
			if n, _ := strconv.Atoi(r[2]); n != len(jobs[k]) {
				t.Errorf("%s: %s jobs, the pending rows have %d", k, r[2], len(jobs[k]))
			}
		}
	})

	t.Run("waits per month", func(t *testing.T) {
		waits, first := map[string][]float64{}, map[string]int{}
		for _, r := range rows {
			if r.Event == record.EventStart && r.WaitSec != nil {
				k := r.Account + " " + r.At.Format("2006-01")
				waits[k] = append(waits[k], float64(*r.WaitSec))
				if *r.Rank == 1 {
					first[k]++
				}
			}
		}
		got := sqlCSV(t, hist, qs[1])
		if len(got) != len(waits) || len(got) < 10 {
			t.Fatalf("%d account-months, the start rows have %d", len(got), len(waits))
		}
		for _, r := range got {
			k := r[0] + " " + r[1]
			w := waits[k]
			want := []string{strconv.Itoa(len(w)), fmt.Sprintf("%.2f", quantileCont(w, 0.5)/3600),
				fmt.Sprintf("%.2f", quantileCont(w, 0.9)/3600), fmt.Sprintf("%.3f", float64(first[k])/float64(len(w)))}
			for i, c := range r[2:] {
				f, err := strconv.ParseFloat(c, 64)
				if err != nil {
					t.Fatalf("%s: %q: %v", k, c, err)
				}
				if g := strconv.FormatFloat(f, 'f', []int{0, 2, 2, 3}[i], 64); g != want[i] {
					t.Errorf("%s: column %d is %s, the start rows give %s", k, i+3, g, want[i])
				}
			}
		}
	})

	t.Run("one job", func(t *testing.T) {
		var want []string
		for _, r := range rows {
			if r.JobID == 5270520 || r.ArrayJobID != nil && *r.ArrayJobID == 5270520 {
				want = append(want, fmt.Sprintf("%s %s %d", r.Event, r.Partition, r.Priority))
			}
		}
		var got []string
		for _, r := range sqlCSV(t, hist, qs[2]) {
			got = append(got, r[0]+" "+r[2]+" "+r[3])
		}
		if len(want) < 3 || !slices.Contains(got, want[0]) || len(got) != len(want) {
			t.Errorf("job 5270520: %v, the rows read with parquet-go give %v", got, want)
		}
		for _, e := range []string{record.EventSubmit, record.EventPending, record.EventStart} {
			if !slices.ContainsFunc(got, func(s string) bool { return len(s) > len(e) && s[:len(e)+1] == e+" " }) {
				t.Errorf("job 5270520: no %s row in %v", e, got)
			}
		}
	})
}
