package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/encode"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/schemas"
)

// segmentTree builds a tree of about n associations: labs (one in ten
// FairShare=parent below another lab), users under them with a
// GrpTRESMins on some and a per-partition association on some, and user
// names that do not sort like their positions.
func segmentTree(tb testing.TB, n int, seed uint64) *fairshare.Tree {
	tb.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	nodes := []fairshare.Node{{Account: "root", Parent: -1, Shares: 1}}
	labs := max(2, n/20)
	for l := range labs {
		nd := fairshare.Node{Account: "lab" + strconv.Itoa(r.IntN(1e6)) + "_" + strconv.Itoa(l), Parent: 0, Shares: r.Int64N(50)}
		if l > 0 && l%10 == 0 {
			nd.Parent, nd.SharesParent = 1+r.IntN(l), true
		}
		nodes = append(nodes, nd)
	}
	for u := 0; len(nodes) < n; u++ {
		par := 1 + r.IntN(labs)
		nd := fairshare.Node{Account: nodes[par].Account, User: "u" + strconv.Itoa(r.IntN(1e7)) + "_" + strconv.Itoa(u), Parent: par, Shares: 1 + r.Int64N(3)}
		if u%7 == 0 {
			nd.GrpTRESMins = "cpu=" + strconv.Itoa(1000*u)
		}
		if u%11 == 0 {
			nd.SharesParent = true
		}
		nodes = append(nodes, nd)
		if u%13 == 0 {
			nd.Partition = "gpu"
			nodes = append(nodes, nd)
		}
	}
	t, err := fairshare.NewTree(nodes)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// segmentResult computes a snapshot of t with algorithm algo from random
// usage (a third of it zero).
func segmentResult(t *fairshare.Tree, algo fairshare.Algorithm, r *rand.Rand) *fairshare.Result {
	own := make([]float64, t.Len())
	for p := range own {
		if t.IsUser[p] && r.IntN(3) > 0 {
			own[p] = float64(r.Int64N(1e9))
		}
	}
	raw := make([]float64, t.Len())
	fairshare.Accumulate(t, own, raw)
	res := new(fairshare.Result)
	switch algo {
	case fairshare.ClassicAlgo:
		fairshare.Classic(t, raw, 1, res)
	case fairshare.DepthObliviousAlgo:
		fairshare.DepthOblivious(t, raw, 1, res)
	default:
		fairshare.FairTree(t, raw, res)
	}
	return res
}

// TestSnapshotSegmentsBytes writes months of snapshots through
// SnapshotSegments and checks that both files are byte for byte those
// Txn.Write writes for the rows record.AppendFairshareRows and record.AssociationRows
// give (plus the kept rows), and that the manifest entries agree: two
// trees, every algorithm, TRESRunMins cells, more rows than a row group,
// and older rows kept before and after the window.
func TestSnapshotSegmentsBytes(t *testing.T) {
	t.Parallel()
	big := segmentTree(t, 4700, 1) // 29 snapshots of it fill more than a row group
	small := segmentTree(t, 300, 2)
	day := func(d int) time.Time { return time.Date(2025, 3, 1+d, 0, 0, 0, 0, time.UTC) }
	type snap struct {
		at   time.Time
		tree int
		algo fairshare.Algorithm
		tres bool
	}
	cases := []struct {
		name          string
		snaps         []snap
		before, after int // kept old snapshots of small before and after
	}{
		{name: "one snapshot", snaps: []snap{{day(0), 1, fairshare.FairTreeAlgo, false}}},
		{name: "month over a row group", snaps: func() []snap {
			var s []snap
			for d := range 31 {
				s = append(s, snap{day(d), 0, fairshare.FairTreeAlgo, d%3 == 0})
			}
			s[10].tree, s[11].tree = 1, 1 // a dump change and back
			return s
		}()},
		{name: "algorithms", snaps: []snap{{day(2), 1, fairshare.ClassicAlgo, true}, {day(3), 1, fairshare.DepthObliviousAlgo, false},
			{day(4), 0, fairshare.FairTreeAlgo, true}}},
		{name: "recompute keeps old rows", snaps: []snap{{day(5), 0, fairshare.FairTreeAlgo, false}, {day(6), 1, fairshare.FairTreeAlgo, true}},
			before: 3, after: 2},
	}
	trees := []*fairshare.Tree{big, small}
	sources := []string{"assoc-2025-01-01.psv", "assoc-2025-03-11.psv"}
	// One SnapshotTrees serves every case's month in turn, as a run's
	// months.
	st, err := encode.NewSnapshotTrees(trees, sources)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 3))
			h := openHistory(t)
			tx, err := h.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Abort()
			month := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
			seg, err := tx.NewSnapshotSegments("c1", month, st)
			if err != nil {
				t.Fatal(err)
			}
			var wantFS []record.FairshareRow
			var wantAS []record.AssociationRow
			// Old rows: snapshots of small on the first days (before) and the
			// last days (after) of the month, classic.
			old := func(d int) ([]record.FairshareRow, []record.AssociationRow) {
				res := segmentResult(small, fairshare.ClassicAlgo, r)
				fs := record.FairshareRows(day(d), small, res)
				for i := range fs {
					if i%5 == 0 {
						fs[i].TRESRunMins = ptr("cpu=" + strconv.Itoa(i))
					}
				}
				return fs, record.AssociationRows(day(d), small, "old.psv")
			}
			var beforeFS, afterFS []record.FairshareRow
			var beforeAS, afterAS []record.AssociationRow
			for d := range c.before {
				fs, as := old(d)
				// Given out of order: AppendRows sorts.
				beforeFS, beforeAS = append(fs, beforeFS...), append(as, beforeAS...)
			}
			for d := range c.after {
				fs, as := old(28 + d)
				afterFS, afterAS = append(afterFS, fs...), append(afterAS, as...)
			}
			if err := seg.AppendRows(beforeFS, beforeAS); err != nil {
				t.Fatal(err)
			}
			wantFS, wantAS = append(wantFS, beforeFS...), append(wantAS, beforeAS...)
			for _, s := range c.snaps {
				tr := trees[s.tree]
				res := segmentResult(tr, s.algo, r)
				var cells []string
				if s.tres {
					cells = make([]string, tr.Len())
					for p := range cells {
						if r.IntN(4) == 0 {
							cells[p] = "cpu=" + strconv.Itoa(p) + ",mem=" + strconv.Itoa(r.IntN(1e6))
						}
					}
				}
				if err := seg.AppendSnapshot(s.at, s.tree, res, cells); err != nil {
					t.Fatal(err)
				}
				start := len(wantFS)
				wantFS = record.AppendFairshareRows(wantFS, nil, s.at, tr, res)
				for p, cell := range cells {
					if cell != "" {
						wantFS[start+p].TRESRunMins = &cells[p]
					}
				}
				wantAS = append(wantAS, record.AssociationRows(s.at, tr, sources[s.tree])...)
			}
			if err := seg.AppendRows(afterFS, afterAS); err != nil {
				t.Fatal(err)
			}
			wantFS, wantAS = append(wantFS, afterFS...), append(wantAS, afterAS...)
			fsPart, asPart, err := seg.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []struct {
				p    Partition
				rows any
				n    int
			}{{fsPart, wantFS, len(wantFS)}, {asPart, wantAS, len(wantAS)}} {
				want, err := EncodeRows(w.p.Table, w.rows)
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(tx.filePath(w.p))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: %d bytes differ from Txn.Write's %d", w.p.Table, len(got), len(want))
				}
				// The manifest entry Txn.Write gives the same rows.
				sum := sha256.Sum256(want)
				wp := Partition{Table: w.p.Table, Cluster: "c1", Month: "2025-03", Rows: int64(w.n), Bytes: int64(len(want)),
					SHA256: hex.EncodeToString(sum[:])}
				wp.Path = partitionDir(w.p.Table, "c1", "2025-03") + "/part-" + wp.SHA256[:16] + ".parquet"
				switch rows := w.rows.(type) {
				case []record.FairshareRow:
					timeStats(&wp, rows, func(r *record.FairshareRow) time.Time { return r.Snapshot })
				case []record.AssociationRow:
					timeStats(&wp, rows, func(r *record.AssociationRow) time.Time { return r.Snapshot })
				}
				if w.p != wp {
					t.Errorf("%s: entry %+v, want %+v", w.p.Table, w.p, wp)
				}
			}
		})
	}
}

// TestSnapshotSegmentsRefuse checks the misuses SnapshotSegments refuses:
// trees without their sources, a snapshot before one written, a result of another tree, a wrong number
// of TRESRunMins cells, an unknown tree and use after Close; and that a
// month without rows writes no file.
func TestSnapshotSegmentsRefuse(t *testing.T) {
	t.Parallel()
	tr := segmentTree(t, 50, 4)
	other := segmentTree(t, 60, 5)
	h := openHistory(t)
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort()
	month := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	if _, err := encode.NewSnapshotTrees([]*fairshare.Tree{tr}, nil); err == nil {
		t.Error("NewSnapshotTrees of a tree without its source: no error")
	}
	st, err := encode.NewSnapshotTrees([]*fairshare.Tree{tr}, []string{"a.psv"})
	if err != nil {
		t.Fatal(err)
	}
	seg, err := tx.NewSnapshotSegments("c1", month, st)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	res := segmentResult(tr, fairshare.FairTreeAlgo, r)
	at := month.Add(48 * time.Hour)
	if err := seg.AppendSnapshot(at, 0, res, nil); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"earlier snapshot": seg.AppendSnapshot(at.Add(-time.Hour), 0, res, nil),
		"other tree":       seg.AppendSnapshot(at.Add(time.Hour), 0, segmentResult(other, fairshare.FairTreeAlgo, r), nil),
		"cells":            seg.AppendSnapshot(at.Add(time.Hour), 0, res, make([]string, 3)),
		"tree index":       seg.AppendSnapshot(at.Add(time.Hour), 1, res, nil),
		"old rows before":  seg.AppendRows(record.FairshareRows(month, tr, res), nil),
		"associations rows after, then a snapshot before them": func() error {
			if err := seg.AppendRows(nil, record.AssociationRows(at.Add(5*time.Hour), tr, "a.psv")); err != nil {
				return nil // refused already: not the case tested
			}
			return seg.AppendSnapshot(at.Add(2*time.Hour), 0, res, nil)
		}(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, _, err := seg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := seg.AppendSnapshot(at.Add(time.Hour), 0, res, nil); err == nil {
		t.Error("AppendSnapshot after Close: no error")
	}
	empty, err := tx.NewSnapshotSegments("c1", month, st)
	if err != nil {
		t.Fatal(err)
	}
	fs, as, err := empty.Close()
	if err != nil || fs != (Partition{}) || as != (Partition{}) {
		t.Errorf("no rows: Close = %+v, %+v, %v; want empty entries", fs, as, err)
	}
	if n := len(tx.Files(schemas.TableFairshare, "c1")); n != 1 {
		t.Errorf("%d fairshare files in the commit, want 1", n)
	}
}

// TestReadFairshareSnapshot writes a month of 30 daily snapshots of a
// 4,700-association tree (141,000 rows: two row groups, the snapshot of
// March 28 spanning both) in one segment and a later snapshot in a second,
// and checks that ReadFairshareSnapshot returns exactly the rows of the
// newest snapshot at or before at: at a snapshot, between two (inside a
// row group), the newest of all, none before the first; that
// ReadFirstFairshareSnapshot returns the oldest; and that a segment with a
// changed byte is refused by its SHA-256.
func TestReadFairshareSnapshot(t *testing.T) {
	t.Parallel()
	tr := segmentTree(t, 4700, 6)
	r := rand.New(rand.NewPCG(6, 6))
	month := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	day := func(d int) time.Time { return month.AddDate(0, 0, d) }
	var rows []record.FairshareRow
	want := map[time.Time][]record.FairshareRow{}
	for d := range 30 {
		start := len(rows)
		rows = record.AppendFairshareRows(rows, nil, day(d), tr, segmentResult(tr, fairshare.FairTreeAlgo, r))
		want[day(d)] = rows[start:]
	}
	late := day(30).Add(-time.Hour)
	lateRows := record.FairshareRows(late, tr, segmentResult(tr, fairshare.ClassicAlgo, r))
	want[late] = lateRows
	h := openHistory(t)
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	p, err := tx.Write(schemas.TableFairshare, "c1", month, rows, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Write(schemas.TableFairshare, "c1", month, lateRows, false); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	v, err := h.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	key := func(rs []record.FairshareRow) []string {
		out := make([]string, len(rs))
		for i, row := range rs {
			out[i] = fmtRow(row)
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		at, want time.Time
	}{
		{day(3), day(3)},
		{day(27), day(27)}, // March 28, across the row groups
		{day(10).Add(13 * time.Hour), day(10)},
		{late.Add(time.Minute), late},
		{time.Time{}, late},
		{day(0).Add(-time.Second), time.Time{}},
	} {
		got, snap, err := v.ReadFairshareSnapshot("c1", month, c.at)
		if err != nil {
			t.Fatalf("at %v: %v", c.at, err)
		}
		if !snap.Equal(c.want) {
			t.Errorf("at %v: snapshot %v, want %v", c.at, snap, c.want)
		}
		if !slices.Equal(key(got), key(want[c.want])) {
			t.Errorf("at %v: %d rows, not the %d of snapshot %v", c.at, len(got), len(want[c.want]), c.want)
		}
	}
	// The oldest snapshot of the month: March 1.
	got, snap, err := v.ReadFirstFairshareSnapshot("c1", month)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Equal(day(0)) || !slices.Equal(key(got), key(want[day(0)])) {
		t.Errorf("first snapshot %v with %d rows, want %v with %d", snap, len(got), day(0), len(want[day(0)]))
	}
	if got, snap, err := v.ReadFirstFairshareSnapshot("c1", month.AddDate(0, 1, 0)); err != nil || len(got) != 0 || !snap.IsZero() {
		t.Errorf("first snapshot of a month without any: %v, %d rows, %v", snap, len(got), err)
	}
	// A changed byte, the size kept: the SHA-256 tells.
	file := v.Path(p)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if _, _, err := v.ReadFairshareSnapshot("c1", month, day(3)); !errors.As(err, &ce) || ce.Problem != "SHA-256 differs from the manifest's" {
		t.Errorf("damaged segment: %v, want a CorruptError of its SHA-256", err)
	}
}
