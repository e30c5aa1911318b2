package record_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
)

// TestAppendFairshareRows appends a snapshot to a buffer that holds one
// row and, beyond its length, rows of an older month with every pointer
// set (as the writer's buffer does after a flush), and checks each new row
// against the tree and the Result it was made from: nothing of the old
// rows shows through, the row already there is kept, and the new rows
// point into no old row's values.
func TestAppendFairshareRows(t *testing.T) {
	t.Parallel()
	tree, err := fairshare.NewTree([]fairshare.Node{
		{Account: "root", Parent: -1, Shares: 1},
		{Account: "a", Parent: 0, Shares: 5},
		{Account: "a", User: "u", Parent: 1, Shares: 2},
		{Account: "a", User: "u", Partition: "gpu", Parent: 1, Shares: 0},
		{Account: "a", User: "v", Parent: 1, SharesParent: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	n := tree.Len()
	nan, inf := math.NaN(), math.Inf(1)
	// Values by tree position (root, a, a|u, a|u|gpu, a|v); the rows must
	// carry them through, NaN as NULL.
	res := &fairshare.Result{Algorithm: fairshare.FairTreeAlgo,
		NormShares:   []float64{0, 1, 0.4, 0.6, nan},
		RawUsage:     []float64{300, 300, 100, 200, 0},
		NormUsage:    []float64{nan, 1, 1.0 / 3, 2.0 / 3, 0},
		EffectvUsage: []float64{1, 1, 1.0 / 3, 2.0 / 3, 0},
		FairShare:    []float64{nan, nan, 1.0 / 3, 2.0 / 3, 1},
		LevelFS:      []float64{nan, 1, 1.2, 0.9, inf},
		Rank:         []int32{0, 0, 3, 2, 1},
	}
	old := ts("2025-02-28T00:00:00Z", 0)
	dst := make([]record.FairshareRow, 1+n, 1+2*n)
	for i := range dst[:cap(dst)] {
		dst[:cap(dst)][i] = record.FairshareRow{Snapshot: old, Algorithm: "stale", Account: "stale", User: "stale",
			Partition: "stale", Parent: "stale", Depth: 9, IsUser: true, RawShares: ptr[int64](-7), SharesParent: true,
			NormShares: ptr(-1.0), RawUsage: ptr(-1.0), NormUsage: ptr(-1.0), EffectvUsage: ptr(-1.0),
			FairShare: ptr(-1.0), LevelFS: ptr(-1.0), Rank: ptr[int32](-7)}
	}
	dst = dst[:1]
	first := dst[0]
	snap := ts("2025-03-01T00:00:00Z", 0)
	got := record.AppendFairshareRows(dst, nil, snap, tree, res)
	if len(got) != 1+n {
		t.Fatalf("AppendFairshareRows gave %d rows, want %d", len(got), 1+n)
	}
	if got[0] != first {
		t.Errorf("row 0 changed from %+v to %+v", first, got[0])
	}
	num := func(v float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		return &v
	}
	for p := range n {
		row := got[1+p]
		want := record.FairshareRow{Snapshot: snap, Algorithm: "fair_tree", Account: tree.Account[p], User: tree.User[p],
			Partition: tree.Partition[p], Depth: tree.Depth[p], IsUser: tree.IsUser[p], SharesParent: tree.SharesParent[p],
			NormShares: num(res.NormShares[p]), RawUsage: num(res.RawUsage[p]), NormUsage: num(res.NormUsage[p]),
			EffectvUsage: num(res.EffectvUsage[p]), LevelFS: num(res.LevelFS[p])}
		if par := tree.Parent[p]; par >= 0 {
			want.Parent = tree.Account[par]
		}
		if p > 0 && !tree.SharesParent[p] {
			want.RawShares = &tree.Shares[p]
		}
		if tree.IsUser[p] {
			want.FairShare = num(res.FairShare[p])
			want.Rank = &res.Rank[p]
		}
		if !reflect.DeepEqual(normalize([]record.FairshareRow{row}), []record.FairshareRow{want}) {
			t.Errorf("position %d (%s|%s|%s):\n got %s\nwant %s", p, tree.Account[p], tree.User[p], tree.Partition[p],
				fmtRow(row), fmtRow(want))
		}
	}
	for _, row := range got[1:] {
		for _, v := range []*float64{row.NormShares, row.RawUsage, row.NormUsage, row.EffectvUsage, row.FairShare, row.LevelFS} {
			if v != nil && *v == -1 {
				t.Errorf("%s|%s: a value of the old rows shows through", row.Account, row.User)
			}
		}
	}
}

// TestFairshareValuesReuse appends rounds of snapshots of growing trees to
// one buffer with one record.FairshareValues, Reset between rounds as the
// pipeline's writer does between months, and checks every round's rows,
// once all of it is appended, against record.FairshareRows with memory of its
// own: a value handed out twice within a round, or a pointer moved when
// the values grow, shows as a difference.
func TestFairshareValuesReuse(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(16, 3))
	var vals record.FairshareValues
	var buf []record.FairshareRow
	for round, size := range []int{5, 40, 40, 300, 20} {
		nodes := []fairshare.Node{{Account: "root", Parent: -1, Shares: 1}}
		for len(nodes) < size {
			parent := rng.IntN(len(nodes))
			for nodes[parent].User != "" {
				parent = nodes[parent].Parent
			}
			name := "n" + strconv.Itoa(len(nodes))
			if rng.IntN(2) == 0 {
				nodes = append(nodes, fairshare.Node{Account: name, Parent: parent, Shares: 1 + rng.Int64N(9), SharesParent: rng.IntN(6) == 0})
			} else {
				nodes = append(nodes, fairshare.Node{Account: nodes[parent].Account, User: name, Parent: parent, Shares: rng.Int64N(4)})
			}
		}
		tree, err := fairshare.NewTree(nodes)
		if err != nil {
			t.Fatal(err)
		}
		buf = buf[:0]
		vals.Reset()
		var want []record.FairshareRow
		for snap := range 7 {
			usage := make([]float64, tree.Len())
			for i := range usage {
				if rng.IntN(3) > 0 {
					usage[i] = float64(rng.IntN(1000))
				}
			}
			var res fairshare.Result
			if snap%2 == 0 {
				fairshare.FairTree(tree, usage, &res)
			} else {
				fairshare.Classic(tree, usage, 1, &res)
			}
			at := jan.AddDate(0, 0, snap)
			buf = record.AppendFairshareRows(buf, &vals, at, tree, &res)
			want = append(want, record.FairshareRows(at, tree, &res)...)
		}
		if !reflect.DeepEqual(buf, want) {
			t.Errorf("round %d (%d associations): the rows appended with reused values differ from FairshareRows'", round, size)
		}
	}
}
