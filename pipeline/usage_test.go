package pipeline

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
)

// TestUsageSums splits jobs over UTC days by hand: a job across midnight,
// one on the same row after it, one on another partition between them,
// and two cut off at the month's end, one of them running; the sums were
// used for another month before.
func TestUsageSums(t *testing.T) {
	t.Parallel()
	us := func(s string) int64 { return mustTime(t, s).UnixMicro() }
	names := []string{"lab", "ann", "cpu", "gpu"}
	rec := func(part uint32, start, end string, billing, factor float64, cpus int64, mem, gpu float64) record.JobRec {
		r := record.JobRec{Account: 0, User: 1, Partition: part, Start: us(start), Billing: billing,
			UsageFactor: factor, AllocCPUs: cpus, MemMB: mem, GPU: gpu}
		if end != "" {
			r.End, r.Valid = us(end), record.ValidEnd
		}
		return r
	}
	recs := []record.JobRec{
		rec(2, "2025-01-01T23:00:00Z", "2025-01-02T01:00:00Z", 2, 0.5, 4, 1000, 0), // 3600 s each day
		rec(3, "2025-01-02T00:30:00Z", "2025-01-02T00:40:00Z", 10, 1, 1, 0, 2),     // 600 s, gpu partition
		rec(2, "2025-01-02T02:00:00Z", "2025-01-02T02:30:00Z", 2, 1, 1, 500, 0),    // 1800 s, the first job's day-2 row
		rec(2, "2025-01-31T23:00:00Z", "2025-02-01T05:00:00Z", 1, 1, 1, 0, 0),      // 3600 s in January
		rec(3, "2025-01-31T20:00:00Z", "", 1, 1, 1, 0, 1),                          // running: cut at the month's end
	}
	from, next := mustTime(t, "2025-01-01T00:00:00Z").Unix(), mustTime(t, "2025-02-01T00:00:00Z").Unix()
	to := mustTime(t, "2025-02-01T06:00:00Z").Unix()
	// The sums are reused from month to month: fill them first with a job
	// over the new year, whose second row has the key of January's first
	// row, then reset them.
	var u usageSums
	u.reset([]string{"x", "y", "cpu", "z"})
	dec := mustTime(t, "2024-12-01T00:00:00Z").Unix()
	u.add([]record.JobRec{rec(2, "2024-12-31T23:00:00Z", "2025-01-01T23:30:00Z", 1, 1, 1, 0, 0)}, dec, next, to)
	if len(u.rows) != 2 || u.rows[1].Account != "x" {
		t.Fatalf("December: %+v", u.rows)
	}
	u.reset(names)
	u.add(recs, from, next, to)
	day := func(s string) time.Time { return mustTime(t, s+"T00:00:00Z") }
	want := []record.UsageRow{
		{Account: "lab", User: "ann", Partition: "cpu", PeriodStart: day("2025-01-01"),
			BillingSec: 3600, CPUSec: 14400, MemMBSec: 3.6e6},
		{Account: "lab", User: "ann", Partition: "cpu", PeriodStart: day("2025-01-02"),
			BillingSec: 3600 + 3600, CPUSec: 14400 + 1800, MemMBSec: 3.6e6 + 9e5},
		{Account: "lab", User: "ann", Partition: "gpu", PeriodStart: day("2025-01-02"),
			BillingSec: 6000, CPUSec: 600, GPUSec: 1200},
		{Account: "lab", User: "ann", Partition: "cpu", PeriodStart: day("2025-01-31"),
			BillingSec: 3600, CPUSec: 3600},
		{Account: "lab", User: "ann", Partition: "gpu", PeriodStart: day("2025-01-31"),
			BillingSec: 14400, CPUSec: 14400, GPUSec: 14400},
	}
	if len(u.rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(u.rows), len(want), u.rows)
	}
	for i := range want {
		if u.rows[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, u.rows[i], want[i])
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUsageSumsMatchMap checks usageSums against the plain algorithm it
// replaced (one map from the full key to the row), on random records over
// several months and before 1970, added in several calls with spans that
// differ from the first's (so some days fall outside the day table), and
// with the sums reused after a reset: the rows must come out in the same
// order with bit-identical sums.
func TestUsageSumsMatchMap(t *testing.T) {
	t.Parallel()
	reference := func(names []string, calls [][]record.JobRec, spans [][2]int64, to int64) []record.UsageRow {
		acc := map[usageKey]int{}
		var rows []record.UsageRow
		for c, recs := range calls {
			from, next := spans[c][0], spans[c][1]
			for i := range recs {
				r := &recs[i]
				s, e := max(unixSec(r.Start), from), min(effEnd(r, to), next)
				for s < e {
					day := s - s%86400
					end := min(e, day+86400)
					sec := float64(end - s)
					k := usageKey{r.Account, r.User, r.Partition, day}
					j, ok := acc[k]
					if !ok {
						j = len(rows)
						acc[k] = j
						rows = append(rows, record.UsageRow{Account: names[r.Account], User: names[r.User],
							Partition: names[r.Partition], PeriodStart: time.Unix(day, 0).UTC()})
					}
					x := &rows[j]
					x.BillingSec += r.Billing * r.UsageFactor * sec
					x.CPUSec += float64(r.AllocCPUs) * sec
					x.MemMBSec += r.MemMB * sec
					x.GPUSec += r.GPU * sec
					s = end
				}
			}
		}
		return rows
	}
	names := []string{"a", "b", "c", "u1", "u2", "u3", "cpu", "gpu"}
	rng := rand.New(rand.NewPCG(3, 4))
	var u usageSums
	for _, base := range []int64{
		mustTime(t, "2025-03-01T00:00:00Z").Unix(),
		mustTime(t, "1969-11-01T00:00:00Z").Unix(), // negative seconds
		mustTime(t, "2025-03-01T00:00:00Z").Unix() + 3600,
	} {
		month := int64(31 * 86400)
		spans := [][2]int64{{base, base + month}, {base - month, base + 2*month}, {base + 5*86400, base + 9*86400}}
		to := base + month + 86400
		var calls [][]record.JobRec
		for range spans {
			recs := make([]record.JobRec, 3000)
			for i := range recs {
				start := base - month + rng.Int64N(3*month)
				r := record.JobRec{Account: uint32(rng.IntN(3)), User: 3 + uint32(rng.IntN(3)),
					Partition: 6 + uint32(rng.IntN(2)), Start: start*1e6 + rng.Int64N(1e6),
					Billing: float64(rng.IntN(9)) + 0.25, UsageFactor: 0.5 + rng.Float64(),
					AllocCPUs: 1 + rng.Int64N(64), MemMB: rng.Float64() * 1e5, GPU: float64(rng.IntN(3))}
				if rng.IntN(10) > 0 {
					r.End, r.Valid = (start+rng.Int64N(4*86400))*1e6, record.ValidEnd
				}
				// Runs of one user's records, as in the table's order.
				if i > 0 && rng.IntN(3) > 0 {
					r.Account, r.User = recs[i-1].Account, recs[i-1].User
				}
				recs[i] = r
			}
			calls = append(calls, recs)
		}
		want := reference(names, calls, spans, to)
		u.reset(names)
		for c, recs := range calls {
			u.add(recs, spans[c][0], spans[c][1], to)
		}
		if len(u.rows) != len(want) {
			t.Fatalf("base %d: %d rows, want %d", base, len(u.rows), len(want))
		}
		for i := range want {
			if u.rows[i] != want[i] {
				t.Fatalf("base %d: row %d = %+v, want %+v", base, i, u.rows[i], want[i])
			}
		}
	}
}
