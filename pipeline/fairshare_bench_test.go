package pipeline

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/internal/benchtest"
)

// benchModel returns as much of a model as fairshareWriter uses, with one
// association tree of 10,000 associations (root, 400 labs, 40
// FairShare=parent sub-accounts of labs, and users under both, one in 20
// with a per-partition association as well), and an own-usage vector by
// universe index (a third of it zero).
func benchModel(tb testing.TB) (*model, []float64) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(2026, 11))
	nodes := []fairshare.Node{{Account: "root", Parent: -1, Shares: 1}}
	const labs = 400
	for l := range labs {
		nodes = append(nodes, fairshare.Node{Account: "lab" + strconv.Itoa(1000+l), Parent: 0, Shares: 1 + rng.Int64N(100)})
	}
	for l := range 40 { // sub-accounts, FairShare=parent
		nodes = append(nodes, fairshare.Node{Account: "sub" + strconv.Itoa(1000+l), Parent: 1 + l*7, SharesParent: true})
	}
	accounts := len(nodes)
	for u := 0; len(nodes) < 10_000; u++ {
		parent := 1 + rng.IntN(accounts-1)
		user := "u" + strconv.Itoa(60000+u)
		nodes = append(nodes, fairshare.Node{Account: nodes[parent].Account, User: user, Parent: parent, Shares: 1})
		if u%20 == 0 {
			nodes = append(nodes, fairshare.Node{Account: nodes[parent].Account, User: user, Partition: "gpu", Parent: parent, Shares: 1})
		}
	}
	tree, err := fairshare.NewTree(nodes)
	if err != nil {
		tb.Fatal(err)
	}
	trees := []*fairshare.Tree{tree}
	uni, err := fairshare.NewUniverse(trees)
	if err != nil {
		tb.Fatal(err)
	}
	m := &model{cluster: "bench", algo: fairshare.FairTreeAlgo, damp: 1, trees: trees,
		effective: []time.Time{time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)},
		sources:   []string{"assoc-2024-01-01.psv"}, uni: uni}
	own := make([]float64, uni.Len())
	for i := range own {
		if rng.IntN(3) > 0 {
			own[i] = float64(rng.Int64N(1e9))
		}
	}
	return m, own
}

// BenchmarkFairshareSnapshots runs a month (31 daily snapshots) of a
// 10,000-association tree through fairshareWriter as `fairledger run`
// does: Fair Tree, and the month's fairshare and associations segments
// written snapshot by snapshot into a fresh history. The writer is kept
// from one iteration to the next, as a run keeps it from month to month.
// It reports the rows written per second (both tables), the process's CPU
// time per month (every goroutine and garbage collection included) and
// the allocations.
//
//	go test ./pipeline -run '^$' -bench FairshareSnapshots -benchtime 3x -benchmem
func BenchmarkFairshareSnapshots(b *testing.B) {
	m, own := benchModel(b)
	usage := make([]float64, len(own))
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const days = 31
	// One writer for every iteration, as one run keeps its writer from
	// month to month; each iteration writes into a fresh history. The
	// first month, untimed, grows the writer's buffers.
	w := &fairshareWriter{m: m, lo: start.Unix() - 1, to: start.AddDate(0, 0, days).Unix()}
	for d := range days {
		w.snaps = append(w.snaps, start.AddDate(0, 0, d).Unix())
	}
	var cpu time.Duration
	b.ReportAllocs()
	for i := -1; i < b.N; i++ {
		b.StopTimer()
		h, err := history.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		tx, err := h.Begin()
		if err != nil {
			b.Fatal(err)
		}
		w.tx, w.month, w.snapshots, w.files = tx, time.Time{}, 0, 0
		if i == 0 {
			b.ResetTimer()
			cpu = 0
		}
		b.StartTimer()
		cpu -= benchtest.CPUTime()
		for d := range days {
			for i, u := range own {
				usage[i] = u * (1 + float64(d)/days)
			}
			at := start.AddDate(0, 0, d).Unix()
			if err := w.snapshot(at, at, usage); err != nil { // w.run is nil: tick unused
				b.Fatal(err)
			}
		}
		if err := w.flush(); err != nil {
			b.Fatal(err)
		}
		cpu += benchtest.CPUTime()
		if w.snapshots != days || w.files != 2 {
			b.Fatalf("%d snapshots, %d files; want %d and 2", w.snapshots, w.files, days)
		}
	}
	rows := float64(2 * days * m.trees[0].Len())
	b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}
