package priority

import (
	"strings"
	"testing"

	"github.com/fairledger/fairledger/internal/release"
)

// TestSprioHostileNames checks that a user and a partition name holding
// terminal controls and the -P separator print visibly (docs/bad-input.md,
// "Hostile names"): CR as \x0d, ESC as \x1b, and '|' as \x7c in -P only;
// the figures are TestSprioParsable's and TestSprioLong22_05's.
func TestSprioHostileNames(t *testing.T) {
	t.Parallel()
	r := release.Series{Major: 22, Minor: 5}
	rows := rowsOf(t, testParams(r), testCluster(), workedJob())
	for i := range rows {
		rows[i].User, rows[i].Partition = "al|ice\x1b[2J", "lo\rng"
	}
	opt := sprioOpt(r)
	opt.Long, opt.Parsable = true, true
	checkLines(t, sprio(t, rows, opt),
		"JOBID|PARTITION|USER|PRIORITY|SITE|AGE|ASSOC|FAIRSHARE|JOBSIZE|PARTITION|QOS|NICE|TRES",
		`1001|lo\x0dng|al\x7cice\x1b[2J|6012|0|562|250|2500|250|1000|400|0|cpu=250,mem=50,gres/gpu=750`)
	// Fixed width: PARTITION %9r keeps lo\x0dng (8 bytes) and a space,
	// USER %.8u the first 8 bytes of al|ice\x1b[2J; the line stays 155
	// columns.
	opt.Parsable = false
	got := sprio(t, rows, opt)
	if strings.ContainsAny(got, "\x1b\r") {
		t.Errorf("sprio -l prints a raw control:\n%q", got)
	}
	checkLines(t, got,
		"          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES",
		`           1001 lo\x0dng  al|ice\x       6012          0        562        250       2500        250       1000        400           0 cpu=250,mem=50,gres/`)
}
