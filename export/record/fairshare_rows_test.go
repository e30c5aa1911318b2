package record_test

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/record/recordtest"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/internal/golden"
	"github.com/fairledger/fairledger/schemas"
)

// fsSpec is one association of a test tree (golden.Spec).
type fsSpec = golden.Spec

// tree24_4(t) is the Fair Tree tree of docs/slurm-semantics.md §11.2 (Slurm's
// test24.4) with its usage, row for row: fairshare/testdata/test24_4.txt.
func tree24_4(tb testing.TB) []fsSpec {
	return golden.Load(tb, "fairshare/testdata/test24_4.txt").Specs()
}

// tree24_1(t) is the classic tree of docs/slurm-semantics.md §11.1 (test24.1)
// with its usage: fairshare/testdata/test24_1.txt.
func tree24_1(tb testing.TB) []fsSpec {
	return golden.Load(tb, "fairshare/testdata/test24_1.txt").Specs()
}

// specLines returns the `sshare -a -l -p` lines of a §11 tree, header
// excluded, from the [sshare -a -l -p] section of
// fairshare/testdata/<name>.txt: the spec's lines (§11.1 full output table,
// §11.2 all 35 lines) with sshare's indentation.
func specLines(t *testing.T, name string) []string {
	t.Helper()
	return golden.Load(t, "fairshare/testdata/"+name+".txt").Lines(t, "sshare -a -l -p")[1:]
}

// treePartitions has per-partition user associations: bob in account a on
// partitions gpu and cpu, with their own shares (raw usage 30 and 10).
var treePartitions = []fsSpec{
	{Name: "root", Kind: "root", Shares: "1"},
	{Name: "a", Kind: "account", Parent: "root", Shares: "1"},
	{Name: "bob", Kind: "user", Parent: "a", Shares: "3", Usage: 30, Partition: "gpu"},
	{Name: "bob", Kind: "user", Parent: "a", Shares: "1", Usage: 10, Partition: "cpu"},
}

// buildFS builds the tree of specs and its descendant-inclusive usage.
var buildFS = recordtest.Tree

func sshareString(tb testing.TB, t *fairshare.Tree, r *fairshare.Result, opt fairshare.SshareOptions) string {
	tb.Helper()
	var b bytes.Buffer
	if err := fairshare.WriteSshare(&b, t, r, opt); err != nil {
		tb.Fatalf("WriteSshare: %v", err)
	}
	return b.String()
}

// TestFairshareRowsRoundTrip converts the §11.2 and §11.1 results into rows,
// writes them to a history partition and reads them back (so the rows come
// back in the table's sort order, not tree order), rebuilds the tree and
// result and checks that WriteSshare prints byte for byte what it printed
// on the original, in every layout; and that the rebuilt -l -p lines are
// the spec's own.
func TestFairshareRowsRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		specs  []fsSpec
		algo   fairshare.Algorithm
		want   []string // lines of §11 (-l -p, indented); nil: not in the spec
		limits bool     // GrpTRESMins on a and on bob's gpu association
	}{
		{"fair_tree_24_4", tree24_4(t), fairshare.FairTreeAlgo, specLines(t, "test24_4"), false},
		{"classic_24_1", tree24_1(t), fairshare.ClassicAlgo, specLines(t, "test24_1"), false},
		{"depth_oblivious_24_1", tree24_1(t), fairshare.DepthObliviousAlgo, nil, false},
		{"partitions", treePartitions, fairshare.FairTreeAlgo, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, usage := buildFS(t, tc.specs)
			if tc.limits {
				tree.GrpTRESMins[tree.Pos[1]] = "cpu=1000,gres/gpu=50"
				tree.GrpTRESMins[tree.Pos[2]] = "mem=20G"
			}
			var r fairshare.Result
			switch tc.algo {
			case fairshare.FairTreeAlgo:
				fairshare.FairTree(tree, usage, &r)
			case fairshare.ClassicAlgo:
				fairshare.Classic(tree, usage, 1, &r)
			case fairshare.DepthObliviousAlgo:
				fairshare.DepthOblivious(tree, usage, 1, &r)
			}
			snap := ts("2025-03-01T00:00:00Z", 0)
			rows := record.FairshareRows(snap, tree, &r)
			if len(rows) != len(tc.specs) {
				t.Fatalf("FairshareRows gave %d rows, want %d", len(rows), len(tc.specs))
			}

			h := openHistory(t)
			if err := h.WritePartition(schemas.TableFairshare, "c1", snap, rows); err != nil {
				t.Fatal(err)
			}
			var back []record.FairshareRow
			if err := h.ReadPartition(schemas.TableFairshare, "c1", snap, &back); err != nil {
				t.Fatal(err)
			}
			reversed := slices.Clone(rows)
			slices.Reverse(reversed)

			for _, in := range []struct {
				name string
				rows []record.FairshareRow
			}{{"parquet", back}, {"reversed", reversed}} {
				t2, r2, err := record.FairshareFromRows(in.rows)
				if err != nil {
					t.Fatalf("%s: FairshareFromRows: %v", in.name, err)
				}
				if r2.Algorithm != tc.algo {
					t.Errorf("%s: algorithm %v, want %v", in.name, r2.Algorithm, tc.algo)
				}
				for _, opt := range []fairshare.SshareOptions{
					{Long: true, TrailingSep: true},
					{},
					{Long: true, Partitions: true, NoHeader: true},
					{TrailingSep: true, Partitions: true},
				} {
					if got, want := sshareString(t, t2, r2, opt), sshareString(t, tree, &r, opt); got != want {
						t.Errorf("%s: sshare %+v after the round trip:\n%s\nwant\n%s", in.name, opt, got, want)
					}
				}
				if tc.limits { // a's limit on its row, bob's on his gpu row (S, U by hand: a 1, 40/40; gpu 3/4, 30/40)
					got := sshareString(t, t2, r2, fairshare.SshareOptions{Long: true, TrailingSep: true, Partitions: true})
					for _, w := range []string{
						"\n a|||1|1.000000|40|1.000000|1.000000||1.000000|cpu=1000,gres/gpu=50|cpu=0|\n",
						"\n  a|bob|cpu|1|0.250000|10|0.250000|0.250000|1.000000|1.000000||cpu=0|\n",
						"\n  a|bob|gpu|3|0.750000|30|0.750000|0.750000|1.000000|1.000000|mem=20G|cpu=0|\n",
					} {
						if !strings.Contains(got, w) {
							t.Errorf("%s: sshare -l -p -m lacks %q:\n%s", in.name, w, got)
						}
					}
				}
				if tc.want == nil {
					continue
				}
				got := strings.Split(strings.TrimSuffix(sshareString(t, t2, r2, fairshare.SshareOptions{Long: true, TrailingSep: true, NoHeader: true}), "\n"), "\n")
				if len(got) != len(tc.want) {
					t.Fatalf("%s: %d lines, want %d", in.name, len(got), len(tc.want))
				}
				for i, w := range tc.want {
					if g := got[i]; g != w {
						t.Errorf("%s: line %d = %q, want %q", in.name, i+1, g, w)
					}
				}
			}
		})
	}
}

// TestFairshareRowsNulls checks that NULL cells are exactly where sshare
// prints blanks (docs/slurm-semantics.md §8): root's RawShares,
// NormUsage, FairShare and LevelFS; "parent" RawShares; account FairShare
// under every algorithm (sshare ≥ 25.11); LevelFS of FairShare=parent rows
// and of every row outside Fair Tree; ranks only on Fair Tree users.
func TestFairshareRowsNulls(t *testing.T) {
	t.Parallel()
	type cell struct {
		rawShares, normUsage, fairShare, levelFS, rank bool // true: NULL
	}
	// Keys are account|user. Values from §11.2 (Fair Tree) and §11.1
	// (classic): a blank cell there is a NULL here.
	ft := map[string]cell{
		"root|":    {rawShares: true, normUsage: true, fairShare: true, levelFS: true, rank: true},
		"aA|":      {fairShare: true, rank: true},                                 // LevelFS 1.025641
		"aDA|":     {rawShares: true, fairShare: true, levelFS: true, rank: true}, // parent account
		"aD|uD1":   {rawShares: true, levelFS: true},                              // parent user, F 0.476190
		"aDA|uDA2": {},                                                            // every cell printed
		"root|u1":  {},                                                            // LevelFS inf
		"aC|uC1":   {},                                                            // zero shares: 0, not blank
		"aBB|":     {fairShare: true, rank: true},                                 // LevelFS inf
		"aGA|uGA2": {},
		"aAB|uAB2": {},
		"aE|aE1":   {},
		"aF|":      {fairShare: true, rank: true},
		"aAA|uAA1": {},
		"aAB|uAB1": {},
		"aDA|uDA1": {rawShares: true, levelFS: true},
		"aB|":      {fairShare: true, rank: true},
		"aBA|uBA1": {},
		"aG|uG1":   {},
		"aGA|uGA1": {},
		"root|u2":  {},
		"aD|uD3":   {},
		"aDA|uDA3": {},
		"aD|uD2":   {},
		"aBA|":     {fairShare: true, rank: true},
		"aAA|":     {fairShare: true, rank: true},
		"aAB|":     {fairShare: true, rank: true},
		"aC|":      {fairShare: true, rank: true},
		"aD|":      {fairShare: true, rank: true},
		"aE|":      {fairShare: true, rank: true},
		"aE|aE2":   {},
		"aF|uF1":   {},
		"aF|uF2":   {},
		"aG|":      {fairShare: true, rank: true},
		"aGA|":     {fairShare: true, rank: true},
		"aBB|uBB1": {},
	}
	classic := map[string]cell{
		"root|":          {rawShares: true, normUsage: true, fairShare: true, levelFS: true, rank: true},
		"AccountA|":      {fairShare: true, levelFS: true, rank: true}, // historic 0.458502 no longer printed
		"AccountB|User1": {levelFS: true, rank: true},                  // F 0.408479
		"AccountG|User6": {levelFS: true, rank: true},                  // F 0.000000
		"AccountF|":      {fairShare: true, levelFS: true, rank: true},
		"AccountF|User5": {levelFS: true, rank: true},
		"AccountC|User3": {levelFS: true, rank: true},
	}
	for _, tc := range []struct {
		name  string
		specs []fsSpec
		algo  string
		want  map[string]cell
		all   bool // want lists every row
	}{
		{"fair_tree", tree24_4(t), "fair_tree", ft, true},
		{"classic", tree24_1(t), "classic", classic, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, usage := buildFS(t, tc.specs)
			var r fairshare.Result
			if tc.algo == "fair_tree" {
				fairshare.FairTree(tree, usage, &r)
			} else {
				fairshare.Classic(tree, usage, 1, &r)
			}
			rows := record.FairshareRows(ts("2025-03-01T00:00:00Z", 0), tree, &r)
			seen := 0
			for _, row := range rows {
				if row.Algorithm != tc.algo {
					t.Errorf("%s|%s: algorithm %q, want %q", row.Account, row.User, row.Algorithm, tc.algo)
				}
				if row.NormShares == nil || row.RawUsage == nil || row.EffectvUsage == nil {
					t.Errorf("%s|%s: NormShares, RawUsage, EffectvUsage = %v, %v, %v; sshare prints them on every row", row.Account, row.User, row.NormShares, row.RawUsage, row.EffectvUsage)
				}
				w, ok := tc.want[row.Account+"|"+row.User]
				if !ok {
					continue
				}
				seen++
				got := cell{row.RawShares == nil, row.NormUsage == nil, row.FairShare == nil, row.LevelFS == nil, row.Rank == nil}
				if got != w {
					t.Errorf("%s|%s: NULLs (raw_shares, norm_usage, fair_share, level_fs, rank) = %+v, want %+v", row.Account, row.User, got, w)
				}
			}
			if tc.all && seen != len(rows) {
				t.Errorf("checked %d rows of %d", seen, len(rows))
			}
			if seen != len(tc.want) {
				t.Errorf("found %d of the %d rows checked", seen, len(tc.want))
			}
		})
	}

	// Values of single cells, worked out in §11.2: u1 has no usage, so
	// LevelFS = S/0 = +Inf (printed inf) and rank 21 (F = 21/21); uD1's rank
	// is 10 (F = 10/21 = 0.476190); the root row's NormShares is 0/NO_VAL =
	// 0, its EffectvUsage 1; uDA1 sits at depth 3 under aDA, under aD.
	tree, usage := buildFS(t, tree24_4(t))
	var r fairshare.Result
	fairshare.FairTree(tree, usage, &r)
	by := map[string]record.FairshareRow{}
	for _, row := range record.FairshareRows(ts("2025-03-01T00:00:00Z", 0), tree, &r) {
		by[row.Account+"|"+row.User] = row
	}
	if u1 := by["root|u1"]; u1.LevelFS == nil || !math.IsInf(*u1.LevelFS, 1) || u1.Rank == nil || *u1.Rank != 21 || u1.Parent != "root" || u1.Depth != 1 {
		t.Errorf("root|u1: level_fs %v rank %v parent %q depth %d, want +Inf, 21, root, 1", u1.LevelFS, u1.Rank, u1.Parent, u1.Depth)
	}
	if d := by["aD|uD1"]; d.Rank == nil || *d.Rank != 10 || !d.SharesParent || d.FairShare == nil || *d.FairShare != 10.0/21 {
		t.Errorf("aD|uD1: rank %v shares_parent %v fair_share %v, want 10, true, 10/21", d.Rank, d.SharesParent, d.FairShare)
	}
	if root := by["root|"]; root.Parent != "" || root.Depth != 0 || *root.NormShares != 0 || *root.EffectvUsage != 1 || *root.RawUsage != 240 {
		t.Errorf("root: parent %q depth %d norm_shares %v effectv_usage %v raw_usage %v, want \"\", 0, 0, 1, 240", root.Parent, root.Depth, *root.NormShares, *root.EffectvUsage, *root.RawUsage)
	}
	if d := by["aDA|uDA1"]; d.Parent != "aDA" || d.Depth != 3 || !d.IsUser || by["aDA|"].Parent != "aD" {
		t.Errorf("aDA|uDA1: parent %q depth %d is_user %v, aDA parent %q; want aDA, 3, true, aD", d.Parent, d.Depth, d.IsUser, by["aDA|"].Parent)
	}
	if s := by["aGA|uGA1"].RawShares; s == nil || *s != 20 {
		t.Errorf("aGA|uGA1: raw_shares %v, want 20", s)
	}
}

// TestAssociationRows checks the associations rows of §11.2 and of a tree
// with per-partition users.
func TestAssociationRows(t *testing.T) {
	t.Parallel()
	tree, _ := buildFS(t, tree24_4(t))
	snap := ts("2025-03-01T00:00:00Z", 0)
	rows := record.AssociationRows(snap, tree, "assoc-2025-03-01.txt")
	if len(rows) != 35 {
		t.Fatalf("%d rows, want 35", len(rows))
	}
	by := map[string]record.AssociationRow{}
	for _, r := range rows {
		if r.SourceFile != "assoc-2025-03-01.txt" || !r.Snapshot.Equal(snap) {
			t.Errorf("%s|%s: source %q snapshot %v", r.Account, r.User, r.SourceFile, r.Snapshot)
		}
		by[r.Account+"|"+r.User] = r
	}
	for _, w := range []struct {
		key, parent, lineage string
		shares               int64 // -1: NULL (FairShare=parent)
	}{
		{"root|", "", "/", 0}, // root keeps its share count (0 in test24.4)
		{"aA|", "root", "/aA/", 40},
		{"aAA|uAA1", "aAA", "/aA/aAA/0-uAA1/", 1},
		{"aDA|", "aD", "/aD/aDA/", -1},
		{"aDA|uDA1", "aDA", "/aD/aDA/0-uDA1/", -1},
		{"aD|uD1", "aD", "/aD/0-uD1/", -1},
		{"root|u2", "root", "/0-u2/", 10},
		{"aC|uC1", "aC", "/aC/0-uC1/", 0},
	} {
		r := by[w.key]
		if r.Parent != w.parent || r.Lineage != w.lineage {
			t.Errorf("%s: parent %q lineage %q, want %q %q", w.key, r.Parent, r.Lineage, w.parent, w.lineage)
		}
		switch {
		case w.shares < 0 && (r.Shares != nil || !r.SharesParent):
			t.Errorf("%s: shares %v shares_parent %v, want NULL, true", w.key, r.Shares, r.SharesParent)
		case w.shares >= 0 && (r.Shares == nil || *r.Shares != w.shares || r.SharesParent):
			t.Errorf("%s: shares %v shares_parent %v, want %d, false", w.key, r.Shares, r.SharesParent, w.shares)
		}
	}

	ptree, _ := buildFS(t, treePartitions)
	prow := record.AssociationRows(snap, ptree, "a.txt")
	// Lineage order: /, /a/, /a/0-bob/cpu/, /a/0-bob/gpu/.
	wantLineage := []string{"/", "/a/", "/a/0-bob/cpu/", "/a/0-bob/gpu/"}
	wantPart := []string{"", "", "cpu", "gpu"}
	for i := range prow {
		if prow[i].Lineage != wantLineage[i] || prow[i].Partition != wantPart[i] {
			t.Errorf("row %d: lineage %q partition %q, want %q %q", i, prow[i].Lineage, prow[i].Partition, wantLineage[i], wantPart[i])
		}
	}
}

// TestFairshareFromRowsErrors checks that malformed row sets are rejected
// with a message naming the offending row.
func TestFairshareFromRowsErrors(t *testing.T) {
	t.Parallel()
	tree, usage := buildFS(t, tree24_1(t))
	var r fairshare.Result
	fairshare.Classic(tree, usage, 1, &r)
	base := func() []record.FairshareRow { return record.FairshareRows(ts("2025-03-01T00:00:00Z", 0), tree, &r) }
	// Row positions in the tree order of §11.1: 0 root, 1 AccountA,
	// 2 AccountB, 3 User1, 4 AccountC, ...
	for _, tc := range []struct {
		name   string
		mutate func([]record.FairshareRow) []record.FairshareRow
		want   string
	}{
		{"empty", func([]record.FairshareRow) []record.FairshareRow { return nil }, "rebuild fair share: no rows"},
		{"algorithm", func(rs []record.FairshareRow) []record.FairshareRow {
			for i := range rs {
				rs[i].Algorithm = "NO_FAIR_TREE"
			}
			return rs
		}, `unknown fair-share algorithm "NO_FAIR_TREE"`},
		{"mixed algorithms", func(rs []record.FairshareRow) []record.FairshareRow { rs[3].Algorithm = "fair_tree"; return rs },
			`row 3 (account "AccountB", user "User1"): algorithm "fair_tree" differs from row 0 ("classic")`},
		{"mixed snapshots", func(rs []record.FairshareRow) []record.FairshareRow {
			rs[2].Snapshot = ts("2025-03-02T00:00:00Z", 0)
			return rs
		}, `row 2 (account "AccountB"): snapshot 2025-03-02T00:00:00Z differs from row 0`},
		{"missing parent", func(rs []record.FairshareRow) []record.FairshareRow { return slices.Delete(rs, 4, 5) },
			`row 4 (account "AccountC", user "User2"): parent account "AccountC" has no row`},
		{"duplicate account", func(rs []record.FairshareRow) []record.FairshareRow { return append(rs, rs[1]) },
			`row 14 (account "AccountA"): duplicate of account row 1`},
		{"null shares", func(rs []record.FairshareRow) []record.FairshareRow { rs[1].RawShares = nil; return rs },
			`row 1 (account "AccountA"): raw_shares is NULL but shares_parent is false`},
		{"is_user", func(rs []record.FairshareRow) []record.FairshareRow { rs[3].IsUser = false; return rs },
			`row 3 (account "AccountB", user "User1"): is_user=false with user "User1"`},
		{"depth", func(rs []record.FairshareRow) []record.FairshareRow { rs[3].Depth = 2; return rs },
			`row 3 (account "AccountB", user "User1"): depth 2, but the rebuilt tree puts it at depth 3`},
		{"two roots", func(rs []record.FairshareRow) []record.FairshareRow { rs[7].Parent = ""; return rs },
			"second root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := record.FairshareFromRows(tc.mutate(base()))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("FairshareFromRows error = %v, want one containing %q", err, tc.want)
			}
			if err != nil && tc.name != "empty" && !strings.HasPrefix(err.Error(), "rebuild fair share at 2025-03-01T00:00:00Z: ") {
				t.Errorf("error %q lacks the snapshot context", err)
			}
		})
	}
}
