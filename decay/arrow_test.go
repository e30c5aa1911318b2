package decay_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/schemas"
)

// null marks a null value in a jobRow's string fields.
const null = "\x00null"

// noTime marks a null start or end in a jobRow.
const noTime = math.MinInt64

// jobRow is the part of a billed jobs batch row that AppendJobs reads.
type jobRow struct {
	cluster, account, user, partition string
	start, end                        int64
	billing, factor                   float64
}

// billedSchema is a jobs batch after billing: schemas.Jobs(nil) followed by
// schemas.BillingFields().
func billedSchema() *arrow.Schema {
	return arrow.NewSchema(append(schemas.Jobs(nil).Fields(), schemas.BillingFields()...), nil)
}

// jobBatch builds a billed jobs batch from rows with array builders; the
// columns AppendJobs does not read are all null.
func jobBatch(t testing.TB, mem memory.Allocator, rows []jobRow) arrow.RecordBatch {
	t.Helper()
	schema := billedSchema()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	str := func(fb array.Builder, get func(jobRow) string) {
		db := fb.(*array.BinaryDictionaryBuilder)
		for _, r := range rows {
			if v := get(r); v == null {
				db.AppendNull()
			} else if err := db.AppendString(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	ts := func(fb array.Builder, get func(jobRow) int64) {
		tb := fb.(*array.TimestampBuilder)
		for _, r := range rows {
			if v := get(r); v == noTime {
				tb.AppendNull()
			} else {
				tb.Append(arrow.Timestamp(v))
			}
		}
	}
	f64 := func(fb array.Builder, get func(jobRow) float64) {
		for _, r := range rows {
			fb.(*array.Float64Builder).Append(get(r))
		}
	}
	for i, f := range schema.Fields() {
		fb := b.Field(i)
		switch f.Name {
		case schemas.ColCluster:
			str(fb, func(r jobRow) string { return r.cluster })
		case schemas.ColAccount:
			str(fb, func(r jobRow) string { return r.account })
		case schemas.ColUser:
			str(fb, func(r jobRow) string { return r.user })
		case schemas.ColPartition:
			str(fb, func(r jobRow) string { return r.partition })
		case schemas.ColStart:
			ts(fb, func(r jobRow) int64 { return r.start })
		case schemas.ColEnd:
			ts(fb, func(r jobRow) int64 { return r.end })
		case schemas.ColBilling:
			f64(fb, func(r jobRow) float64 { return r.billing })
		case schemas.ColUsageFactor:
			f64(fb, func(r jobRow) float64 { return r.factor })
		default:
			fb.AppendNulls(len(rows))
		}
	}
	return b.NewRecordBatch()
}

// replaceColumn returns a new record equal to rec with column name replaced
// by col (or dropped when col is nil, its field too). rec and col are not
// released.
func replaceColumn(t testing.TB, rec arrow.RecordBatch, name string, col arrow.Array) arrow.RecordBatch {
	t.Helper()
	i, err := schemas.Index(rec.Schema(), name)
	if err != nil {
		t.Fatal(err)
	}
	fields := slices.Clone(rec.Schema().Fields())
	cols := slices.Clone(rec.Columns())
	if col == nil {
		fields = slices.Delete(fields, i, i+1)
		cols = slices.Delete(cols, i, i+1)
	} else {
		fields[i].Type = col.DataType()
		cols[i] = col
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

// dictArray builds a dictionary<int32, utf8> array with the given dictionary
// and codes (−1: null row).
func dictArray(mem memory.Allocator, dict []string, codes []int32) arrow.Array {
	db := array.NewStringBuilder(mem)
	defer db.Release()
	db.AppendValues(dict, nil)
	d := db.NewArray()
	defer d.Release()
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	for _, c := range codes {
		if c < 0 {
			ib.AppendNull()
		} else {
			ib.Append(c)
		}
	}
	idx := ib.NewArray()
	defer idx.Release()
	return array.NewDictionaryArray(schemas.DictString(), idx, d)
}

// adapterCase is one row of TestAppendJobs: the row, the association it is
// charged to (−1: not appended), the reason it is counted under ("" for
// none) and the rate and end it is appended with.
type adapterCase struct {
	row    jobRow
	assoc  int32
	reason string
	rate   float64
	end    int64
}

// adapterCases cover every resolution rule of docs/slurm-semantics.md §4.4
// against testTree; the expected associations are read off the tree, the
// rates are billing × usage_factor worked out by hand.
var adapterCases = []adapterCase{
	{jobRow{"alpha", "phys", "alice", "gpu", 100, 200, 4, 1}, 4, "", 4, 200},   // per-partition association
	{jobRow{"alpha", "phys", "alice", "cpu", 100, 200, 4, 0.5}, 3, "", 2, 200}, // plain one; 4 × 0.5 = 2
	{jobRow{"alpha", "phys", "alice", null, 100, 200, 3, 2}, 3, "", 6, 200},    // null partition; 3 × 2 = 6
	{jobRow{"alpha", "chem", "alice", "gpu", 100, 200, 1, 1}, 6, "", 1, 200},   // gpu association is under phys
	{jobRow{"alpha", "phys", "carol", "cpu", 100, 200, 1, 1}, 1, decay.ReasonUserToAccount, 1, 200},
	{jobRow{"alpha", "chem", "carol", "gpu", 100, 200, 1, 1}, 7, "", 1, 200}, // per-partition only
	{jobRow{"alpha", "chem", "carol", "cpu", 100, 200, 1, 1}, 2, decay.ReasonUserToAccount, 1, 200},
	{jobRow{"alpha", "phys", null, "cpu", 100, 200, 1, 1}, 1, decay.ReasonUserToAccount, 1, 200},
	{jobRow{"alpha", "physics", "alice", "gpu", 100, 200, 1, 1}, -1, decay.ReasonUnknownAccount, 0, 0},
	{jobRow{"alpha", "zoo", "bob", "cpu", 100, 200, 1, 1}, -1, decay.ReasonUnknownAccount, 0, 0},
	{jobRow{"alpha", "physics", "bob", "cpu", 100, 200, 1, 1}, -1, decay.ReasonUnknownAccount, 0, 0},
	{jobRow{"beta", "phys", "alice", "gpu", 100, 200, 1, 1}, -1, decay.ReasonOtherCluster, 0, 0},
	{jobRow{null, "phys", "alice", "gpu", 100, 200, 1, 1}, -1, decay.ReasonOtherCluster, 0, 0},
	{jobRow{"alpha", null, "alice", "gpu", 100, 200, 1, 1}, -1, decay.ReasonNoAccount, 0, 0},
	{jobRow{"alpha", "", "alice", "gpu", 100, 200, 1, 1}, -1, decay.ReasonNoAccount, 0, 0},
	{jobRow{"alpha", "phys", "bob", "gpu", 300, noTime, 2.5, 2}, 5, "", 5, decay.Running}, // running; 2.5 × 2 = 5
	{jobRow{"alpha", "phys", "bob", "gpu", noTime, noTime, 1, 1}, -1, decay.ReasonNoStart, 0, 0},
	{jobRow{"alpha", "theory", "dave", "gpu", 400, 900, 3, 1.5}, 9, "", 4.5, 900}, // 3 × 1.5 = 4.5
}

// wantJobs returns the jobs and stats AppendJobs must produce for cases.
func wantJobs(cases []adapterCase) (decay.Jobs, decay.ResolveStats) {
	var j decay.Jobs
	st := decay.ResolveStats{Rows: int64(len(cases))}
	for _, c := range cases {
		if c.reason != "" {
			if st.ByReason == nil {
				st.ByReason = map[string]int64{}
			}
			st.ByReason[c.reason]++
		}
		if c.assoc < 0 {
			continue
		}
		st.Charged++
		j.Start = append(j.Start, c.row.start)
		j.End = append(j.End, c.end)
		j.Rate = append(j.Rate, c.rate)
		j.Assoc = append(j.Assoc, c.assoc)
	}
	return j, st
}

func checkJobs(t *testing.T, name string, got, want decay.Jobs) {
	t.Helper()
	if !slices.Equal(got.Start, want.Start) {
		t.Errorf("%s: Start = %v, want %v", name, got.Start, want.Start)
	}
	if !slices.Equal(got.End, want.End) {
		t.Errorf("%s: End = %v, want %v", name, got.End, want.End)
	}
	if !slices.Equal(got.Rate, want.Rate) {
		t.Errorf("%s: Rate = %v, want %v", name, got.Rate, want.Rate)
	}
	if !slices.Equal(got.Assoc, want.Assoc) {
		t.Errorf("%s: Assoc = %v, want %v", name, got.Assoc, want.Assoc)
	}
}

func checkStats(t *testing.T, name string, got, want decay.ResolveStats) {
	t.Helper()
	if got.Rows != want.Rows || got.Charged != want.Charged {
		t.Errorf("%s: Rows, Charged = %d, %d, want %d, %d", name, got.Rows, got.Charged, want.Rows, want.Charged)
	}
	if got.Rows != got.Charged+got.NotCharged() {
		t.Errorf("%s: Rows %d != Charged %d + NotCharged %d", name, got.Rows, got.Charged, got.NotCharged())
	}
	if !slices.Equal(got.Reasons(), want.Reasons()) {
		t.Errorf("%s: Reasons() = %q, want %q", name, got.Reasons(), want.Reasons())
	}
	for _, r := range want.Reasons() {
		if got.ByReason[r] != want.ByReason[r] {
			t.Errorf("%s: ByReason[%q] = %d, want %d", name, r, got.ByReason[r], want.ByReason[r])
		}
	}
	if !slices.Equal(got.UnknownAccounts, want.UnknownAccounts) {
		t.Errorf("%s: UnknownAccounts = %q, want %q", name, got.UnknownAccounts, want.UnknownAccounts)
	}
}

func TestAppendJobs(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := mustResolver(t, "alpha", testTree())

	rows := make([]jobRow, len(adapterCases))
	for i, c := range adapterCases {
		rows[i] = c.row
	}
	rec := jobBatch(t, mem, rows)
	defer rec.Release()

	var got decay.Jobs
	var st decay.ResolveStats
	if err := r.AppendJobs(rec, &got, &st); err != nil {
		t.Fatalf("AppendJobs: %v", err)
	}
	want, wantSt := wantJobs(adapterCases)
	wantSt.UnknownAccounts = []string{"physics", "zoo"} // sorted, each once
	checkJobs(t, "AppendJobs", got, want)
	checkStats(t, "AppendJobs", st, wantSt)
	// By hand: 18 rows; not charged: 3 unknown account, 2 other cluster,
	// 2 no account, 1 no start = 8; charged 10, 3 of them to the account.
	if st.Rows != 18 || st.Charged != 10 || st.NotCharged() != 8 || st.ByReason[decay.ReasonUserToAccount] != 3 {
		t.Errorf("AppendJobs stats = %+v, want 18 rows, 10 charged (3 to the account), 8 not", st)
	}
	// The two other-cluster rows: beta and a null cluster, named "".
	if want := []string{"", "beta"}; !slices.Equal(st.OtherClusters, want) {
		t.Errorf("OtherClusters = %q, want %q", st.OtherClusters, want)
	}

	// Lookup agrees with the adapter for every row it resolves by name.
	for _, c := range adapterCases {
		row := c.row
		if row.cluster != "alpha" || row.start == noTime || row.account == null || row.user == null {
			continue
		}
		part := row.partition
		if part == null {
			part = ""
		}
		if a, reason := r.Lookup(row.account, row.user, part); a != c.assoc || reason != c.reason {
			t.Errorf("Lookup(%q, %q, %q) = %d, %q, want %d, %q", row.account, row.user, part, a, reason, c.assoc, c.reason)
		}
	}

	// A second batch accumulates: stats add up, unknown accounts merge
	// sorted and distinct, jobs are appended after the first batch's.
	more := []adapterCase{
		{jobRow{"alpha", "aardvark", "x", "cpu", 1, 2, 1, 1}, -1, decay.ReasonUnknownAccount, 0, 0},
		{jobRow{"alpha", "physics", "x", "cpu", 1, 2, 1, 1}, -1, decay.ReasonUnknownAccount, 0, 0},
		{jobRow{"alpha", "chem", "alice", "cpu", 10, 20, 8, 0.25}, 6, "", 2, 20}, // 8 × 0.25 = 2
	}
	rows2 := make([]jobRow, len(more))
	for i, c := range more {
		rows2[i] = c.row
	}
	rec2 := jobBatch(t, mem, rows2)
	defer rec2.Release()
	if err := r.AppendJobs(rec2, &got, &st); err != nil {
		t.Fatalf("AppendJobs (second batch): %v", err)
	}
	want, wantSt = wantJobs(append(slices.Clone(adapterCases), more...))
	wantSt.UnknownAccounts = []string{"aardvark", "physics", "zoo"}
	checkJobs(t, "AppendJobs twice", got, want)
	checkStats(t, "AppendJobs twice", st, wantSt)

	// The names are the stats' own: overwriting the batches' dictionary
	// bytes (as an allocator that recycles released buffers would) leaves
	// them intact.
	for _, rec := range []arrow.RecordBatch{rec, rec2} {
		_, _, names, err := schemas.DictStringColumn(rec, schemas.ColAccount)
		if err != nil {
			t.Fatal(err)
		}
		clear(names.ValueBytes())
	}
	if !slices.Equal(st.UnknownAccounts, wantSt.UnknownAccounts) {
		t.Errorf("UnknownAccounts after the batches' buffers changed = %q, want %q", st.UnknownAccounts, wantSt.UnknownAccounts)
	}
}

// Two batches whose dictionaries list the same names in different orders,
// one with a name twice and unused entries, resolve row by row to the same
// associations.
func TestAppendJobsDictionaries(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := mustResolver(t, "alpha", testTree())

	// Row i: account, user, partition and the association by testTree.
	rows := []jobRow{
		{"alpha", "phys", "alice", "gpu", 0, 100, 1, 1}, // 4
		{"alpha", "chem", "alice", "gpu", 0, 100, 1, 1}, // 6
		{"alpha", "phys", "bob", "cpu", 0, 100, 1, 1},   // 5
		{"alpha", "chem", "carol", "gpu", 0, 100, 1, 1}, // 7
		{"alpha", "phys", "alice", "cpu", 0, 100, 1, 1}, // 3
	}
	wantAssoc := []int32{4, 6, 5, 7, 3}

	base := jobBatch(t, mem, rows)
	defer base.Release()
	// Batch 2: reversed dictionaries, "phys" twice, unused "zoo", "dave", "debug".
	acc := dictArray(mem, []string{"zoo", "phys", "chem", "phys"}, []int32{1, 2, 3, 2, 1})
	defer acc.Release()
	usr := dictArray(mem, []string{"dave", "carol", "bob", "alice"}, []int32{3, 3, 2, 1, 3})
	defer usr.Release()
	part := dictArray(mem, []string{"debug", "gpu", "cpu", "gpu"}, []int32{3, 1, 2, 3, 2})
	defer part.Release()
	step1 := replaceColumn(t, base, schemas.ColAccount, acc)
	defer step1.Release()
	step2 := replaceColumn(t, step1, schemas.ColUser, usr)
	defer step2.Release()
	other := replaceColumn(t, step2, schemas.ColPartition, part)
	defer other.Release()

	for _, tt := range []struct {
		name string
		rec  arrow.RecordBatch
	}{{"builder dictionaries", base}, {"reordered dictionaries", other}} {
		t.Run(tt.name, func(t *testing.T) {
			var got decay.Jobs
			var st decay.ResolveStats
			if err := r.AppendJobs(tt.rec, &got, &st); err != nil {
				t.Errorf("%s: AppendJobs: %v", tt.name, err)
				return
			}
			if !slices.Equal(got.Assoc, wantAssoc) {
				t.Errorf("%s: Assoc = %v, want %v", tt.name, got.Assoc, wantAssoc)
			}
			if st.Rows != 5 || st.Charged != 5 || len(st.ByReason) != 0 {
				t.Errorf("%s: stats = %+v, want 5 rows all charged", tt.name, st)
			}
		})
	}
}

// A sliced batch (non-zero array offsets) resolves the same rows as the
// whole one.
func TestAppendJobsSlice(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := mustResolver(t, "alpha", testTree())
	rows := make([]jobRow, len(adapterCases))
	for i, c := range adapterCases {
		rows[i] = c.row
	}
	rec := jobBatch(t, mem, rows)
	defer rec.Release()
	const lo, hi = 2, 17 // includes nulls in every read column
	sl := rec.NewSlice(lo, hi)
	defer sl.Release()
	var got decay.Jobs
	var st decay.ResolveStats
	if err := r.AppendJobs(sl, &got, &st); err != nil {
		t.Fatalf("AppendJobs(slice): %v", err)
	}
	want, wantSt := wantJobs(adapterCases[lo:hi])
	wantSt.UnknownAccounts = []string{"physics", "zoo"}
	checkJobs(t, "AppendJobs(slice)", got, want)
	checkStats(t, "AppendJobs(slice)", st, wantSt)
}

// AppendJobsMarked marks exactly the rows it appends (the cases with an
// association), clearing stale marks, and rejects marks of the wrong
// length.
func TestAppendJobsMarked(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := mustResolver(t, "alpha", testTree())
	rows := make([]jobRow, len(adapterCases))
	want := make([]bool, len(adapterCases))
	for i, c := range adapterCases {
		rows[i], want[i] = c.row, c.assoc >= 0
	}
	rec := jobBatch(t, mem, rows)
	defer rec.Release()
	var got decay.Jobs
	var st decay.ResolveStats
	marks := make([]bool, len(rows))
	for i := range marks {
		marks[i] = true // stale
	}
	if err := r.AppendJobsMarked(rec, &got, &st, marks); err != nil {
		t.Fatalf("AppendJobsMarked: %v", err)
	}
	if !slices.Equal(marks, want) {
		t.Errorf("marks %v, want %v", marks, want)
	}
	wantJ, _ := wantJobs(adapterCases)
	checkJobs(t, "AppendJobsMarked", got, wantJ)
	if err := r.AppendJobsMarked(rec, &got, &st, marks[1:]); err == nil {
		t.Error("AppendJobsMarked with one mark too few: no error")
	}
}

func TestAppendJobsErrors(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := mustResolver(t, "alpha", testTree())
	base := jobBatch(t, mem, []jobRow{
		{"alpha", "phys", "alice", "gpu", 0, 100, 1, 1},
		{"alpha", "phys", "bob", "gpu", 0, 100, 1, 1},
	})
	defer base.Release()

	nullF64 := func() arrow.Array {
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.Append(1)
		b.AppendNull()
		return b.NewArray()
	}
	msTime := func() arrow.Array {
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"})
		defer b.Release()
		b.AppendValues([]arrow.Timestamp{0, 1}, nil)
		return b.NewArray()
	}
	plainStr := func() arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.AppendValues([]string{"phys", "phys"}, nil)
		return b.NewArray()
	}
	tests := []struct {
		name, column string
		col          func() arrow.Array // nil: drop the column
		want         string
	}{
		{"no cluster", schemas.ColCluster, nil, `no column "cluster"`},
		{"no account", schemas.ColAccount, nil, `no column "account"`},
		{"no user", schemas.ColUser, nil, `no column "user"`},
		{"no partition", schemas.ColPartition, nil, `no column "partition"`},
		{"no start", schemas.ColStart, nil, `no column "start"`},
		{"no end", schemas.ColEnd, nil, `no column "end"`},
		{"no billing", schemas.ColBilling, nil, `no column "billing"`},
		{"no usage_factor", schemas.ColUsageFactor, nil, `no column "usage_factor"`},
		{"null billing", schemas.ColBilling, nullF64, `column "billing": 1 null values`},
		{"null usage_factor", schemas.ColUsageFactor, nullF64, `column "usage_factor": 1 null values`},
		{"start in ms", schemas.ColStart, msTime, `column "start" is timestamp[ms`},
		{"plain string account", schemas.ColAccount, plainStr, `column "account" is utf8, want dictionary<int32, utf8>`},
		{"code out of range", schemas.ColAccount, func() arrow.Array { return dictArray(mem, []string{"phys"}, []int32{0, 5}) },
			`column "account" row 1: dictionary code 5 out of range [0, 1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var col arrow.Array
			if tt.col != nil {
				col = tt.col()
			}
			rec := replaceColumn(t, base, tt.column, col)
			if col != nil {
				col.Release()
			}
			dst := decay.Jobs{Start: []int64{7}, End: []int64{8}, Rate: []float64{1}, Assoc: []int32{0}}
			st := decay.ResolveStats{Rows: 3, Charged: 3}
			err := r.AppendJobs(rec, &dst, &st)
			rec.Release()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: AppendJobs error = %v, want one containing %q", tt.name, err, tt.want)
			}
			if dst.Len() != 1 || st.Rows != 3 || st.Charged != 3 || st.ByReason != nil {
				t.Errorf("%s: AppendJobs changed dst or st on error: %v, %+v", tt.name, dst, st)
			}
		})
	}
}

// Scenario D1 of docs/slurm-semantics.md §11.4 end to end: H = 3600 s, P = 300 s,
// ticks at 0, 300, …, three jobs of one user association under root —
// J1 B=4 [150, 1000), J2 B=2 [700, 800), J3 B=1.5 [1300, 2500), written
// as billing × usage_factor = 8 × 0.5, 2 × 1, 1 × 1.5 — plus rows that must
// not count (another cluster, an unknown account). The user, its account and
// root all carry the doc's U (§2.4: ancestors get the same Δusage).
func TestAppendJobsScenarioD1(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := mustResolver(t, "alpha", []decay.Assoc{
		{Account: "root", Parent: -1},
		{Account: "a", Parent: 0},
		{Account: "a", User: "u", Parent: 1},
	})
	rec := jobBatch(t, mem, []jobRow{
		{"alpha", "a", "u", "cpu", 150, 1000, 8, 0.5},  // J1
		{"alpha", "a", "u", "cpu", 700, 800, 2, 1},     // J2
		{"beta", "a", "u", "cpu", 100, 2000, 100, 1},   // another cluster
		{"alpha", "zz", "u", "cpu", 100, 2000, 100, 1}, // unknown account
		{"alpha", "a", "u", "cpu", 1300, 2500, 1, 1.5}, // J3
	})
	defer rec.Release()
	var jobs decay.Jobs
	var st decay.ResolveStats
	if err := r.AppendJobs(rec, &jobs, &st); err != nil {
		t.Fatalf("AppendJobs: %v", err)
	}
	if st.Charged != 3 {
		t.Fatalf("AppendJobs charged %d rows, want 3", st.Charged)
	}
	// Scenario D1's table (§11.4), columns U (limits) and U (no limits).
	want := []struct {
		t         int64
		lim, none float64
	}{
		{1200, 3113.512742, 2568.374940},
		{2700, 3837.077802, 3289.789746},
	}
	for _, limits := range []bool{true, false} {
		t.Run(fmt.Sprintf("limits=%v", limits), func(t *testing.T) {
			p := decay.Params{HalfLifeSec: 3600, CalcPeriodSec: 300, LimitsEnforced: limits}
			state, err := decay.NewState(p, r.Len(), 0)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]float64
			_, err = decay.Advance(p, state, decay.Window{
				Parent: r.Parents(), Jobs: jobs, To: 2700, Snapshots: []int64{1200, 2700},
				OnSnapshot: func(_, _ int64, usage []float64) error {
					got = append(got, slices.Clone(usage))
					return nil
				},
			})
			if err != nil {
				t.Fatalf("Advance: %v", err)
			}
			if len(got) != len(want) {
				t.Fatalf("limits=%v: %d snapshots, want %d", limits, len(got), len(want))
			}
			for i, w := range want {
				u := w.none
				if limits {
					u = w.lim
				}
				for a, name := range []string{"root", "a", "a/u"} {
					if g := got[i][a]; math.Abs(g-u) > 1e-9*u {
						t.Errorf("D1 limits=%v: usage(%s, t=%d) = %.6f, want %.6f", limits, name, w.t, g, u)
					}
				}
			}
		})
	}
}

// benchTree builds root, 100 accounts and 5,000 users spread over them,
// every tenth user also with a "gpu" association.
func benchTree() []decay.Assoc {
	assocs := []decay.Assoc{{Account: "root", Parent: -1}}
	for a := range 100 {
		assocs = append(assocs, decay.Assoc{Account: accountName(a), Parent: 0})
	}
	for u := range 5000 {
		acc := u % 100
		assocs = append(assocs, decay.Assoc{Account: accountName(acc), User: userName(u), Parent: int32(1 + acc)})
		if u%10 == 0 {
			assocs = append(assocs, decay.Assoc{Account: accountName(acc), User: userName(u), Partition: "gpu", Parent: int32(1 + acc)})
		}
	}
	return assocs
}

func accountName(a int) string { return "acct" + string(rune('A'+a/26)) + string(rune('a'+a%26)) }
func userName(u int) string {
	return "user" + string(rune('a'+u/676)) + string(rune('a'+u/26%26)) + string(rune('a'+u%26))
}

// BenchmarkAppendJobs resolves a 65,536-row billed batch (5,000 users over
// 100 accounts, three partitions, 1 % of rows with an unknown user) into a
// reused Jobs. Reproduce with:
//
//	go test ./decay -run x -bench AppendJobs -benchmem
func BenchmarkAppendJobs(b *testing.B) {
	const n = 1 << 16
	r := mustResolver(b, "alpha", benchTree())
	rnd := rand.New(rand.NewPCG(1, 2))
	rows := make([]jobRow, n)
	parts := []string{"cpu", "gpu", "debug"}
	for i := range rows {
		u := rnd.IntN(5000)
		user := userName(u)
		if rnd.IntN(100) == 0 {
			user = "gone"
		}
		end := int64(1_700_000_000+i) + rnd.Int64N(86400)
		if rnd.IntN(50) == 0 {
			end = noTime
		}
		rows[i] = jobRow{"alpha", accountName(u % 100), user, parts[rnd.IntN(3)], int64(1_700_000_000 + i), end, float64(1 + rnd.IntN(64)), 1}
	}
	rec := jobBatch(b, memory.DefaultAllocator, rows)
	defer rec.Release()
	var jobs decay.Jobs
	b.ReportAllocs()
	for b.Loop() {
		jobs.Start, jobs.End, jobs.Rate, jobs.Assoc = jobs.Start[:0], jobs.End[:0], jobs.Rate[:0], jobs.Assoc[:0]
		var st decay.ResolveStats
		if err := r.AppendJobs(rec, &jobs, &st); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
}
