package pipeline

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/decay"
)

// TestDedupMatchesMap feeds dedup random records, many of them repeats,
// through a filter far too small for them (so that most candidates only
// share a bit), and checks what finish leaves against a computation with
// a map of every key: the decay jobs, the dead others, the winners and
// the number dropped.
func TestDedupMatchesMap(t *testing.T) {
	t.Parallel()
	type rec struct {
		k       jobKey
		charged bool
		end     int64
	}
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 7))
		ids := []int64{0, -3, 1, 2, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64, math.MinInt64}
		var recs []rec
		for i := range 60000 {
			var k jobKey
			switch rng.IntN(3) {
			case 0: // a small space: many repeats
				k = jobKey{ids[rng.IntN(len(ids))], int64(rng.IntN(50))}
			default: // a large one: few repeats, a full filter
				k = jobKey{int64(rng.IntN(40000)), 1e9 + int64(rng.IntN(3))}
			}
			end := int64(decay.Running)
			if rng.IntN(4) > 0 {
				end = k.start + int64(i)
			}
			recs = append(recs, rec{k, rng.IntN(5) > 0, end})
		}

		d := newDedup(1) // 2^16 bits for 60,000 records
		var jobs decay.Jobs
		var otherRec []int // others[u] is record otherRec[u]
		for i, r := range recs {
			if r.charged {
				jobs.Start = append(jobs.Start, r.k.start)
				jobs.End = append(jobs.End, r.end)
				jobs.Rate = append(jobs.Rate, float64(i)) // names the record
				jobs.Assoc = append(jobs.Assoc, int32(i%7))
				d.charged(r.k.id)
			}
			d.see(r.k)
			if !r.charged {
				d.other(r.k, r.end)
				otherRec = append(otherRec, i)
			}
		}
		dropped, winners := d.finish(&jobs, &jobExtra{})

		// The map's answer: the last record of a key wins; when charged, it
		// takes the place of the key's first charged record.
		last, count := map[jobKey]int{}, map[jobKey]int{}
		placed := map[jobKey]bool{}
		for i, r := range recs {
			last[r.k] = i
			count[r.k]++
		}
		var want []float64
		for _, r := range recs {
			if w := last[r.k]; r.charged && recs[w].charged && !placed[r.k] {
				placed[r.k] = true
				want = append(want, float64(w))
			}
		}
		if wantDropped := int64(len(recs) - len(last)); dropped != wantDropped {
			t.Errorf("seed %d: dropped %d, want %d", seed, dropped, wantDropped)
		}
		if !slices.Equal(jobs.Rate, want) {
			t.Fatalf("seed %d: %d decay jobs, want %d (or they differ)", seed, len(jobs.Rate), len(want))
		}
		for j, x := range jobs.Rate {
			r := recs[int(x)]
			if jobs.Start[j] != r.k.start || jobs.End[j] != r.end || jobs.Assoc[j] != int32(int(x)%7) {
				t.Fatalf("seed %d: decay job %d is not record %d's", seed, j, int(x))
			}
		}
		for u, o := range d.others {
			if dead := last[o.key] != otherRec[u]; o.dead != dead {
				t.Fatalf("seed %d: other %d (record %d) dead %v, want %v", seed, u, otherRec[u], o.dead, dead)
			}
		}
		nDup := 0
		for k, n := range count {
			if n < 2 {
				continue
			}
			nDup++
			w := recs[last[k]]
			if got, ok := winners[k]; !ok || got != (winner{end: w.end, charged: w.charged}) {
				t.Fatalf("seed %d: winner of %v %+v, want %+v", seed, k, got, w)
			}
		}
		if len(winners) != nDup {
			t.Errorf("seed %d: %d winners, want %d", seed, len(winners), nDup)
		}
		falseCand := 0
		for _, k := range d.cand {
			if count[k] == 1 {
				falseCand++
			}
		}
		if falseCand == 0 {
			t.Errorf("seed %d: no key read once was a candidate: the filter forced no collisions", seed)
		}
	}
}
