package record

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkJobTableSort sorts a month of 2,000,000 records of 3,000
// names, in random order, with one (account, user) pair holding a
// quarter of them (a flood of one user's jobs). Each iteration restores
// the random order first (a copy, timed).
//
//	go test ./export/record -run '^$' -bench JobTableSort -benchmem
func BenchmarkJobTableSort(b *testing.B) {
	names := make([]string, 3000)
	for i := range names {
		names[i] = fmt.Sprintf("n%04d", (i*1009)%len(names))
	}
	rnd := rand.New(rand.NewPCG(3, 5))
	tb := NewJobTable(NewJobDict(), 2_000_000)
	for i := range 2_000_000 {
		acct, user := names[rnd.IntN(len(names))], names[rnd.IntN(len(names))]
		if i%4 == 0 {
			acct, user = "flood", "flood"
		}
		tb.AppendRow(&JobRow{Account: acct, User: user, JobID: fmt.Sprint(i), JobIDRaw: int64(i),
			Start: time.Unix(1_760_000_000+int64(rnd.IntN(86400)), 0).UTC()})
	}
	base := append([]JobRec(nil), tb.Recs...)
	b.ResetTimer()
	for range b.N {
		copy(tb.Recs, base)
		tb.Sort()
	}
	b.ReportMetric(float64(len(base))*float64(b.N)/b.Elapsed().Seconds(), "recs/s")
}
