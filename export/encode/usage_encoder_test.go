package encode

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// TestUsageEncoderBytes checks that usageEncoder writes exactly the bytes
// of parquet-go's GenericWriter[record.UsageRow] fed in record.CompareUsage order, for
// rows given shuffled or already sorted (the pipeline's are neither).
func TestUsageEncoderBytes(t *testing.T) {
	t.Parallel()
	checkEncoderBytes(t, schemas.TableUsage, variedUsage, sampleUsage(), record.CompareUsage, usageEncoder)
}

// variedUsage returns n usage rows over the varied names and c's days
// (pre-1970, sub-second and other-zone times among them), with repeated
// keys and sums that are zero, fractional, huge or integral.
func variedUsage(n int, seed uint64, c snapshotCase) []record.UsageRow {
	r := rand.New(rand.NewPCG(seed, 5))
	days := variedSnapshots(r, n, c)
	sums := []float64{0, 0.5, 1e300, math.SmallestNonzeroFloat64, 86400, 3.25}
	rows := make([]record.UsageRow, n)
	for i := range rows {
		rows[i] = record.UsageRow{Account: variedAccounts[r.IntN(len(variedAccounts))],
			User: variedUsers[r.IntN(len(variedUsers))], Partition: variedParts[r.IntN(len(variedParts))],
			PeriodStart: days[r.IntN(len(days))], BillingSec: sums[r.IntN(len(sums))] * float64(r.IntN(50)),
			CPUSec: float64(r.IntN(1 << 20)), MemMBSec: r.Float64() * 1e9, GPUSec: sums[r.IntN(len(sums))]}
	}
	return rows
}

// TestUsageOrder checks usageOrder on a hand-sorted example and against
// sortedOrder (the stable comparison sort the encoder used before) on
// varied rows: shuffled, in runs of the names of the row before (as the
// pipeline adds them, the names sharing their bytes or not), and with
// monotonic clock readings (the two ways usageOrder sorts).
func TestUsageOrder(t *testing.T) {
	t.Parallel()
	d1, d2 := jan, jan.AddDate(0, 0, 1)
	d1Berlin := d1.In(time.FixedZone("CET", 3600))
	hand := []record.UsageRow{
		{Account: "a", PeriodStart: d2},                             // 0
		{Account: "b", PeriodStart: d1},                             // 1
		{Account: "a", User: "x", PeriodStart: d1},                  // 2
		{Account: "a", PeriodStart: d1Berlin},                       // 3: same instant as d1
		{Account: "a", User: "x", Partition: "", PeriodStart: d1},   // 4: tie with 2
		{Account: "a", User: "", Partition: "gpu", PeriodStart: d1}, // 5
		{Account: "B", PeriodStart: d2},                             // 6
		{Account: "a", PeriodStart: d1.Add(time.Nanosecond)},        // 7
		{Account: "a", PeriodStart: d1},                             // 8: tie with 3
	}
	// By name: B (6); a with no user: 3, 8 (d1), 7 (d1+1ns), 0 (d2); a||gpu: 5;
	// a|x: 2, 4; b: 1.
	want := []int32{6, 3, 8, 7, 0, 5, 2, 4, 1}
	if got := usageOrder(hand); !slices.Equal(got, want) {
		t.Errorf("usageOrder(hand-made rows) = %v, want %v", got, want)
	}

	for _, c := range []struct {
		name string
		snap snapshotCase
		runs bool
	}{
		{"shuffled", snapshotCase{days: 31}, false},
		{"runs of names", snapshotCase{days: 31}, true},
		{"monotonic", snapshotCase{days: 31, mono: true}, true},
	} {
		rows := variedUsage(20000, 8, c.snap)
		if c.runs {
			r := rand.New(rand.NewPCG(8, 9))
			for i := 1; i < len(rows); i++ {
				switch r.IntN(4) {
				case 0, 1: // the same strings as the row before
					rows[i].Account, rows[i].User, rows[i].Partition = rows[i-1].Account, rows[i-1].User, rows[i-1].Partition
				case 2: // equal names in bytes of their own
					rows[i].Account = strings.Clone(rows[i-1].Account)
					rows[i].User = strings.Clone(rows[i-1].User)
					rows[i].Partition = strings.Clone(rows[i-1].Partition)
				}
			}
		}
		want := sortedOrder(rows, record.CompareUsage)
		if want == nil {
			want = identity(len(rows))
		}
		if got := usageOrder(rows); !slices.Equal(got, want) {
			t.Errorf("%s: usageOrder differs from sortedOrder", c.name)
		}
	}
	if got := usageOrder(nil); len(got) != 0 {
		t.Errorf("usageOrder(nil) = %v, want no positions", got)
	}
}
