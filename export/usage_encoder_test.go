package export

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fairledger/fairledger/schemas"
)

// TestUsageEncoderBytes checks that usageEncoder writes exactly the bytes
// of parquet-go's GenericWriter[UsageRow] fed in compareUsage order, for
// rows given shuffled or already sorted (the pipeline's are neither).
func TestUsageEncoderBytes(t *testing.T) {
	checkEncoderBytes(t, schemas.TableUsage, variedUsage, sampleUsage(), compareUsage, usageEncoder)
}

// variedUsage returns n usage rows over the varied names and c's days
// (pre-1970, sub-second and other-zone times among them), with repeated
// keys and sums that are zero, fractional, huge or integral.
func variedUsage(n int, seed uint64, c snapshotCase) []UsageRow {
	r := rand.New(rand.NewPCG(seed, 5))
	days := variedSnapshots(r, n, c)
	sums := []float64{0, 0.5, 1e300, math.SmallestNonzeroFloat64, 86400, 3.25}
	rows := make([]UsageRow, n)
	for i := range rows {
		rows[i] = UsageRow{Account: variedAccounts[r.IntN(len(variedAccounts))],
			User: variedUsers[r.IntN(len(variedUsers))], Partition: variedParts[r.IntN(len(variedParts))],
			PeriodStart: days[r.IntN(len(days))], BillingSec: sums[r.IntN(len(sums))] * float64(r.IntN(50)),
			CPUSec: float64(r.IntN(1 << 20)), MemMBSec: r.Float64() * 1e9, GPUSec: sums[r.IntN(len(sums))]}
	}
	return rows
}
