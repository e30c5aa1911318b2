package encode

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// snapshotCase describes the snapshots of the varied rows: mono gives 3% of
// the rows a snapshot with a monotonic clock reading (time.Compare then
// compares those, so the encoders fall back to sortedOrder); with repeat,
// most rows take the names of the row at the same offset in the snapshot
// before, as the snapshots of one association tree do.
type snapshotCase struct {
	days   int
	mono   bool
	repeat bool
}

// repeatNames gives row i, with probability 0.95, the names of row
// i-run, when both are in runs of one snapshot (variedSnapshots makes
// runs of n/days rows).
func repeatNames(r *rand.Rand, c snapshotCase, n, i int, account, user, partition *string, prev func(int) (string, string, string)) {
	run := max(1, n/c.days)
	if !c.repeat || i < run || i/run >= c.days || r.Float64() >= 0.95 {
		return
	}
	*account, *user, *partition = prev(i - run)
}

// variedSnapshots returns the snapshot of each of n rows: runs of one
// snapshot (as a month's snapshots are appended), the runs in shuffled
// order, among them a snapshot before 1970, one with nanoseconds the file
// does not keep, and one equal to another but in another time zone (equal
// for time.Compare).
func variedSnapshots(r *rand.Rand, n int, c snapshotCase) []time.Time {
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	days := make([]time.Time, c.days)
	for d := range days {
		days[d] = base.AddDate(0, 0, d)
	}
	days[0] = time.Date(1969, 12, 31, 23, 59, 59, 999_000, time.UTC)
	if c.days > 2 {
		days[1] = base.Add(36*time.Hour + 1234567*time.Nanosecond)
	}
	if c.days > 3 {
		days[3] = days[2].In(time.FixedZone("CET", 3600))
	}
	r.Shuffle(len(days), func(i, j int) { days[i], days[j] = days[j], days[i] })
	now := time.Now() // carries a monotonic reading
	out := make([]time.Time, n)
	run := max(1, n/c.days)
	for i := range out {
		out[i] = days[min(i/run, c.days-1)]
		if c.mono && r.Float64() < 0.03 {
			out[i] = now.Add(time.Duration(r.IntN(3)) * time.Hour)
		}
	}
	return out
}

// names of the varied rows: empty, non-ASCII and case-differing ones.
var (
	variedAccounts = []string{"root", "physics", "chem", "", "Åström_lab", "bio", "Bio", "lab-with-a-rather-long-name"}
	variedUsers    = []string{"", "", "alice", "bob", "zoë", "Bob", "u60001"}
	variedParts    = []string{"", "", "", "gpu", "cpu"}
)

// variedFairshare makes n fairshare rows exercising every way a value can
// look to the encoder: nil and set pointers in each nullable column, +Inf,
// -Inf, -0 and a NaN behind a pointer, rows equal in every sort key (so the
// tie order shows), several snapshots given out of order.
func variedFairshare(n int, seed uint64, c snapshotCase) []record.FairshareRow {
	r := rand.New(rand.NewPCG(seed, 2))
	snaps := variedSnapshots(r, n, c)
	num := func() *float64 {
		var v float64
		switch x := r.Float64(); {
		case x < 0.2:
			return nil
		case x < 0.25:
			v = math.Inf(1)
		case x < 0.26:
			v = math.Inf(-1)
		case x < 0.27:
			v = math.Copysign(0, -1)
		case x < 0.28:
			v = math.NaN()
		case x < 0.4:
			v = 0
		default:
			v = r.ExpFloat64() * math.Pow(10, float64(r.IntN(20)-10))
		}
		return &v
	}
	rows := make([]record.FairshareRow, n)
	for i := range rows {
		row := record.FairshareRow{Snapshot: snaps[i], Algorithm: []string{"fair_tree", "classic", ""}[r.IntN(3)],
			Account: variedAccounts[r.IntN(len(variedAccounts))], User: variedUsers[r.IntN(len(variedUsers))],
			Partition: variedParts[r.IntN(len(variedParts))], Parent: variedAccounts[r.IntN(len(variedAccounts))],
			Depth: int32(r.IntN(6)), IsUser: r.IntN(2) == 0, SharesParent: r.IntN(5) == 0,
			NormShares: num(), RawUsage: num(), NormUsage: num(), EffectvUsage: num(), FairShare: num(), LevelFS: num()}
		if r.IntN(4) > 0 {
			s := []int64{0, 1, math.MaxInt64, -1, int64(r.IntN(1000))}[r.IntN(5)]
			row.RawShares = &s
		}
		if r.IntN(3) == 0 {
			k := []int32{0, 1, math.MaxInt32, int32(r.IntN(10000))}[r.IntN(4)]
			row.Rank = &k
		}
		if r.IntN(8) == 0 {
			g := []string{"", "cpu=1000", "cpu=60,gres/gpu=5", "mem=20G"}[r.IntN(4)]
			row.GrpTRESMins = &g
		}
		if r.IntN(3) == 0 {
			g := []string{"", "cpu=0,mem=0,energy=0", "cpu=620,mem=1054480,energy=0,node=200", "cpu=20"}[r.IntN(4)]
			row.TRESRunMins = &g
		}
		if r.Float64() < 0.05 && i > 0 { // equal sort keys, other columns differ
			p := rows[r.IntN(i)]
			row.Snapshot, row.Account, row.User, row.Partition = p.Snapshot, p.Account, p.User, p.Partition
		}
		repeatNames(r, c, n, i, &row.Account, &row.User, &row.Partition, func(j int) (string, string, string) {
			return rows[j].Account, rows[j].User, rows[j].Partition
		})
		rows[i] = row
	}
	return rows
}

// variedAssociations is variedFairshare for the associations table.
func variedAssociations(n int, seed uint64, c snapshotCase) []record.AssociationRow {
	r := rand.New(rand.NewPCG(seed, 3))
	snaps := variedSnapshots(r, n, c)
	rows := make([]record.AssociationRow, n)
	for i := range rows {
		row := record.AssociationRow{Snapshot: snaps[i], Account: variedAccounts[r.IntN(len(variedAccounts))],
			User: variedUsers[r.IntN(len(variedUsers))], Partition: variedParts[r.IntN(len(variedParts))],
			Parent: variedAccounts[r.IntN(len(variedAccounts))], SharesParent: r.IntN(5) == 0,
			Lineage: "/" + strconv.Itoa(r.IntN(n+1)) + "/", SourceFile: []string{"assoc.psv", "", "assoc-2025-03-01.psv"}[r.IntN(3)]}
		if r.IntN(4) > 0 {
			s := []int64{0, 1, math.MaxInt64, -1, int64(r.IntN(1000))}[r.IntN(5)]
			row.Shares = &s
		}
		if r.Float64() < 0.05 && i > 0 {
			p := rows[r.IntN(i)]
			row.Snapshot, row.Account, row.User, row.Partition = p.Snapshot, p.Account, p.User, p.Partition
		}
		repeatNames(r, c, n, i, &row.Account, &row.User, &row.Partition, func(j int) (string, string, string) {
			return rows[j].Account, rows[j].User, rows[j].Partition
		})
		rows[i] = row
	}
	return rows
}

// encoderCase is one input of the byte-equality tests.
type encoderCase struct {
	name  string
	n     int
	seed  uint64
	snaps snapshotCase
}

// encoderCases are row counts around the batch and row-group sizes, one
// snapshot or several, with and without monotonic clock readings.
func encoderCases(t *testing.T) []encoderCase {
	big := 300_000 // three row groups
	if testing.Short() {
		big = RowGroupRows + 1
	}
	return []encoderCase{
		{"none", 0, 1, snapshotCase{days: 1}},
		{"one row", 1, 1, snapshotCase{days: 1}},
		{"one batch", writeBatch, 2, snapshotCase{days: 1}},
		{"batch+1", writeBatch + 1, 3, snapshotCase{days: 2}},
		{"one snapshot", 5000, 4, snapshotCase{days: 1}},
		{"several snapshots", 20000, 5, snapshotCase{days: 31}},
		{"one tree's snapshots", 20000, 9, snapshotCase{days: 31, repeat: true}},
		{"monotonic snapshots", 3 * writeBatch, 6, snapshotCase{days: 4, mono: true}},
		{"row groups", big, 7, snapshotCase{days: 31, repeat: true}},
	}
}

// TestFairshareEncoderBytes checks that fairshareEncoder writes exactly the
// bytes of parquet-go's GenericWriter[record.FairshareRow] fed in record.CompareFairshare
// order, for rows given shuffled or already sorted.
func TestFairshareEncoderBytes(t *testing.T) {
	t.Parallel()
	checkEncoderBytes(t, schemas.TableFairshare, variedFairshare, sampleFairshare(), record.CompareFairshare, fairshareEncoder)
}

// TestAssociationsEncoderBytes is TestFairshareEncoderBytes for the
// associations table.
func TestAssociationsEncoderBytes(t *testing.T) {
	t.Parallel()
	checkEncoderBytes(t, schemas.TableAssociations, variedAssociations, sampleAssociations(), record.CompareAssociations, associationsEncoder)
}

// checkEncoderBytes compares a column encoder with the generic encoder on
// the varied rows of every encoderCase, shuffled and sorted, on the sample
// rows and on a nil slice.
func checkEncoderBytes[T any](t *testing.T, table string, varied func(n int, seed uint64, s snapshotCase) []T, sample []T,
	compare func(a, b *T) int, columnar func(rows []T, sortBy []string) func(io.Writer) error) {
	t.Helper()
	def, err := schemas.TableByName(table)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, rows []T) {
		var want, got bytes.Buffer
		if err := encoder(rows, compare, def.SortBy)(&want); err != nil {
			t.Fatalf("%s: generic encoder: %v", name, err)
		}
		if err := columnar(rows, def.SortBy)(&got); err != nil {
			t.Fatalf("%s: %s encoder: %v", name, table, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s (%d rows): the %s encoder wrote %d bytes that differ from the generic encoder's %d",
				name, len(rows), table, got.Len(), want.Len())
		}
	}
	for _, c := range encoderCases(t) {
		rows := varied(c.n, c.seed, c.snaps)
		check(c.name+", shuffled", rows)
		check(c.name+", sorted", sortedCopy(rows, compare))
	}
	check("sample", sample)
	check("nil", nil)
}

// TestSnapshotOrder checks snapshotOrder on a hand-sorted example and
// against sortedOrder (a stable sort with the comparison functions) on
// rows with many ties, with and without monotonic clock readings (the two
// ways snapshotOrder sorts).
func TestSnapshotOrder(t *testing.T) {
	t.Parallel()
	d1, d2 := jan, jan.AddDate(0, 0, 1)
	d1Berlin := d1.In(time.FixedZone("CET", 3600))
	hand := []record.AssociationRow{
		{Snapshot: d2, Account: "a"},                             // 0
		{Snapshot: d1, Account: "b"},                             // 1
		{Snapshot: d1, Account: "a", User: "x"},                  // 2
		{Snapshot: d1Berlin, Account: "a"},                       // 3: same instant as d1
		{Snapshot: d1, Account: "a", User: "x", Partition: ""},   // 4: tie with 2
		{Snapshot: d1, Account: "a", User: "", Partition: "gpu"}, // 5
		{Snapshot: d2, Account: "B"},                             // 6
		{Snapshot: d1.Add(time.Nanosecond), Account: "a"},        // 7
	}
	want := []int32{3, 5, 2, 4, 1, 7, 6, 0}
	if got, _ := snapshotOrder(hand, record.CompareAssociations, associationKey); !slices.Equal(got, want) {
		t.Errorf("snapshotOrder(hand-made rows) = %v, want %v", got, want)
	}

	for _, c := range []snapshotCase{{days: 31}, {days: 31, repeat: true}, {days: 31, mono: true}} {
		rows := variedFairshare(20000, 8, c)
		want := sortedOrder(rows, record.CompareFairshare)
		if want == nil {
			want = identity(len(rows))
		}
		got, _ := snapshotOrder(rows, record.CompareFairshare, fairshareKey)
		if !slices.Equal(got, want) {
			t.Errorf("%+v: snapshotOrder differs from sortedOrder", c)
		}
	}
}

// TestSnapshotOrderStrings checks the strings snapshotOrder interns: each
// row's value of each dictionary-encoded column holds the row's string,
// and the interned strings are distinct. The rows come with their strings
// shared between runs of one snapshot (as one tree's snapshots share
// them), without (copies of their bytes) and with monotonic clock
// readings.
func TestSnapshotOrderStrings(t *testing.T) {
	t.Parallel()
	for _, c := range []snapshotCase{{days: 31}, {days: 31, repeat: true}, {days: 31, mono: true}} {
		for _, clone := range []bool{false, true} {
			fs := variedFairshare(5000, 10, c)
			as := variedAssociations(5000, 11, c)
			if clone {
				for i := range fs {
					r := &fs[i]
					r.Algorithm, r.Account, r.User = strings.Clone(r.Algorithm), strings.Clone(r.Account), strings.Clone(r.User)
					r.Partition, r.Parent = strings.Clone(r.Partition), strings.Clone(r.Parent)
				}
				for i := range as {
					r := &as[i]
					r.Account, r.User, r.Partition = strings.Clone(r.Account), strings.Clone(r.User), strings.Clone(r.Partition)
					r.Parent, r.SourceFile = strings.Clone(r.Parent), strings.Clone(r.SourceFile)
				}
			}
			_, fstrs := snapshotOrder(fs, record.CompareFairshare, fairshareKey)
			checkRowStrings(t, fmt.Sprintf("fairshare %+v, cloned %v", c, clone), fstrs, len(fs), func(i int) []string {
				r := &fs[i]
				return []string{r.Account, r.User, r.Partition, r.Parent, r.Algorithm}
			})
			_, astrs := snapshotOrder(as, record.CompareAssociations, associationKey)
			checkRowStrings(t, fmt.Sprintf("associations %+v, cloned %v", c, clone), astrs, len(as), func(i int) []string {
				r := &as[i]
				return []string{r.Account, r.User, r.Partition, r.Parent, r.SourceFile}
			})
		}
	}
}

// checkRowStrings checks that the string of rs.row(i)[c] is want(i)[c]
// for each of n rows, and that rs's strings are distinct.
func checkRowStrings(t *testing.T, name string, rs *rowStrings, n int, want func(i int) []string) {
	t.Helper()
	bad := 0
	for i := range n {
		for c, w := range want(i) {
			if v := rs.strs.vals[rs.row(int32(i))[c]]; string(v.ByteArray()) != w && bad < 5 {
				t.Errorf("%s: row %d, column %d holds %q, want %q", name, i, c, v.ByteArray(), w)
				bad++
			}
		}
	}
	seen := map[string]bool{}
	for _, v := range rs.strs.vals {
		if s := string(v.ByteArray()); seen[s] {
			t.Errorf("%s: %q interned twice", name, s)
		} else {
			seen[s] = true
		}
	}
}
