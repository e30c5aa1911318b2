package decay

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// yearCluster builds a synthetic cluster: root, 199 top-level accounts,
// 1,800 sub-accounts, 8,000 users (10,000 associations, depth 4), and nJobs
// jobs over the year 2025 sorted by start (as sacct lists them), with
// skewed user activity, durations from seconds to days and rates of 1–64
// CPUs × UsageFactor 0.5–2. Jobs still running at the year's end are Running.
func yearCluster(nJobs int) (parent []int32, jobs Jobs, start, end int64) {
	r := rand.New(rand.NewPCG(2025, 5))
	const top, sub, users = 199, 1800, 8000
	parent = make([]int32, 1, 1+top+sub+users)
	parent[0] = -1
	for range top {
		parent = append(parent, 0)
	}
	for range sub {
		parent = append(parent, int32(1+r.IntN(top)))
	}
	for range users {
		parent = append(parent, int32(1+r.IntN(top+sub)))
	}
	start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	end = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	starts := make([]int64, nJobs)
	for i := range starts {
		starts[i] = start + r.Int64N(end-start)
	}
	slices.Sort(starts)
	jobs = Jobs{Start: starts, End: make([]int64, nJobs), Rate: make([]float64, nJobs), Assoc: make([]int32, nJobs)}
	for i, s := range starts {
		var dur int64
		switch x := r.IntN(10); {
		case x < 3:
			dur = r.Int64N(600)
		case x < 8:
			dur = 600 + r.Int64N(4*3600)
		default:
			dur = 4*3600 + r.Int64N(3*86400)
		}
		jobs.End[i] = s + dur
		if jobs.End[i] > end {
			jobs.End[i] = Running
		}
		jobs.Rate[i] = float64(int(1)<<r.IntN(7)) * []float64{1, 0.5, 2}[r.IntN(3)]
		u := r.Float64()
		jobs.Assoc[i] = int32(1 + top + sub + int(u*u*users))
	}
	return parent, jobs, start, end
}

// BenchmarkYear5M advances one year of a 5M-job, 10,000-association cluster
// with 5-minute ticks (105,120 ticks), H = 7 days, limits enforced, taking a
// daily snapshot. Reproduce with:
//
//	go test ./decay -run x -bench Year5M -benchtime 1x
func BenchmarkYear5M(b *testing.B) {
	parent, jobs, start, end := yearCluster(5_000_000)
	p := Params{HalfLifeSec: 7 * 86400, CalcPeriodSec: 300, LimitsEnforced: true}
	var snaps []int64
	for t := start + 86400; t <= end; t += 86400 {
		snaps = append(snaps, t)
	}
	keep := make([]float64, len(parent))
	var stats Stats
	b.ReportAllocs()
	for b.Loop() {
		st, err := NewState(p, len(parent), start)
		if err != nil {
			b.Fatal(err)
		}
		stats, err = Advance(p, st, Window{
			Parent: parent, Jobs: jobs, To: end, Snapshots: snaps,
			OnSnapshot: func(_, _ int64, usage []float64) error { copy(keep, usage); return nil },
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(stats.Ticks)/float64(len(parent)), "ns/assoc-tick")
	b.ReportMetric(float64(jobs.Len())/(perOp/1e9), "jobs/s")
	b.ReportMetric(float64(stats.Ticks), "ticks")
}

// benchAdvanceTick times one tick of the per-association kernel over
// 10,000 associations, a third of them idle (zero usage, rate and new
// usage), on the tree parent gives.
func benchAdvanceTick(b *testing.B, parent []int32) {
	n := len(parent)
	r := rand.New(rand.NewPCG(7, 7))
	u, rateF := make([]float64, n), make([]float64, n)
	for a := range u {
		if r.IntN(3) > 0 {
			u[a] = float64(r.Int64N(1 << 40))
			rateF[a] = float64(r.IntN(64))
		}
	}
	e := &engine{st: &State{Usage: u}, w: Window{Parent: parent}}
	e.initTree(n)
	f, cP := DecayOver(7*86400, 300), chunk(Factor(7*86400), 300)
	b.ReportAllocs()
	for b.Loop() {
		if e.flat {
			advanceTickFlat(u, rateF, e.acc, f, cP)
		} else {
			advanceTick(u, rateF, e.acc, e.up, f, cP)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/assoc")
}

// BenchmarkAdvanceTickFlat is the kernel on 10,000 roots, as `fairledger
// run` uses it (own usage only; the fair-share projection builds the tree).
//
//	go test ./decay -run '^$' -bench AdvanceTick -cpu 1 -count 5
func BenchmarkAdvanceTickFlat(b *testing.B) {
	parent := make([]int32, 10_000)
	for i := range parent {
		parent[i] = -1
	}
	benchAdvanceTick(b, parent)
}

// BenchmarkAdvanceTickTree is the kernel on the 10,000-association tree of
// depth 4 of yearCluster.
func BenchmarkAdvanceTickTree(b *testing.B) {
	parent, _, _, _ := yearCluster(0)
	benchAdvanceTick(b, parent)
}

// BenchmarkEvents validates yearCluster(5,000,000) and groups its events by
// tick on the 5-minute ticks of BenchmarkYear5M: dense places them by
// counting (as Advance does on such a window), sparse radix-sorts them (as
// it does when the window has far more ticks than jobs).
//
//	go test ./decay -run '^$' -bench Events -cpu 1 -count 5
func BenchmarkEvents(b *testing.B) {
	parent, jobs, start, end := yearCluster(5_000_000)
	const P = 300
	g := grid{origin: 0, P: P, k0: start / P, kEnd: end / P, limits: true}
	for _, dense := range []bool{true, false} {
		name := "sparse"
		if dense {
			name = "dense"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var stats Stats
				if _, err := g.events(jobs, len(parent), &stats, dense); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(jobs.Len())/(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e9), "jobs/s")
		})
	}
}
