package spill

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
)

// TestSpillRoundTrip: rows come back from the spill exactly, NULLs apart
// from zeros (array task 0, a zero elapsed), in order, per month;
// February, the smaller month, is read into January's buffer.
func TestSpillRoundTrip(t *testing.T) {
	t.Parallel()
	zero, seven := int64(0), int64(7)
	by := "1234"
	start := time.Date(2025, 1, 31, 23, 59, 59, 0, time.UTC)
	end := start.Add(90 * time.Second)
	rows := []record.JobRow{
		{JobID: "10_0", JobIDRaw: 11, ArrayJobID: &seven, ArrayTaskID: &zero, User: "u", Account: "a",
			Partition: "p", QOS: "normal", State: "CANCELLED", CancelledBy: &by, Submit: &start, Start: start,
			End: &end, ElapsedSec: &zero, ChargedSec: 90, NNodes: 1, AllocCPUs: 4, MemMB: 1024.5, NodeCount: 1,
			GPU: 2, TRES: map[string]float64{"cpu": 4, "gres/gpu": 2, "mem": 1024.5}, Billing: 6.25,
			BillingSlurm: 6, UsageFactor: 0.5, SourceFile: "s.psv", SourceLine: 3},
		{JobID: "12", JobIDRaw: 12, User: "u", Account: "a", Start: start.Add(time.Hour), State: "RUNNING",
			SourceFile: "s.psv", SourceLine: 4},
	}
	s := testSpill(t)
	dict := record.NewJobDict()
	in := tableOf(dict, rows)
	if err := s.Add("2025-01", in, []int32{0}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("2025-02", in, []int32{1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("2025-01", in, []int32{1}); err != nil {
		t.Fatal(err)
	}
	if got := readSpill(t, s, dict, "2025-01"); !reflect.DeepEqual(got, rows) {
		t.Errorf("January:\n got %+v\nwant %+v", got, rows)
	}
	if got := readSpill(t, s, dict, "2025-02"); !reflect.DeepEqual(got, rows[1:]) {
		t.Errorf("February: %+v", got)
	}
	if got := readSpill(t, s, dict, "2025-03"); got != nil {
		t.Errorf("unknown month: %v", got)
	}
}

// TestSpillCounts: Months and Count follow what was added and not yet
// read. Three records go to January in two adds, one to February: the
// months are January and February, March holds none; once January is read
// it counts 0 and is no longer listed.
func TestSpillCounts(t *testing.T) {
	t.Parallel()
	s := testSpill(t)
	dict := record.NewJobDict()
	start := time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)
	var rows []record.JobRow
	for i := range 4 {
		rows = append(rows, record.JobRow{JobID: fmt.Sprint(20 + i), JobIDRaw: int64(20 + i), User: "u", Account: "a",
			Start: start.Add(time.Duration(i) * time.Hour), State: "RUNNING", SourceFile: "s.psv", SourceLine: int64(i + 1)})
	}
	in := tableOf(dict, rows)
	for _, a := range []struct {
		month string
		idx   []int32
	}{{"2025-01", []int32{0, 1}}, {"2025-02", []int32{2}}, {"2025-01", []int32{3}}} {
		if err := s.Add(a.month, in, a.idx); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Months(); !reflect.DeepEqual(got, []string{"2025-01", "2025-02"}) {
		t.Errorf("Months() = %v, want [2025-01 2025-02]", got)
	}
	for _, c := range []struct {
		month string
		want  int
	}{{"2025-01", 3}, {"2025-02", 1}, {"2025-03", 0}} {
		if got := s.Count(c.month); got != c.want {
			t.Errorf("Count(%s) = %d, want %d", c.month, got, c.want)
		}
	}
	if got := readSpill(t, s, dict, "2025-01"); len(got) != 3 {
		t.Fatalf("January read back %d records, want 3", len(got))
	}
	if got := s.Count("2025-01"); got != 0 {
		t.Errorf("Count(2025-01) after its read = %d, want 0", got)
	}
	if got := s.Months(); !reflect.DeepEqual(got, []string{"2025-02"}) {
		t.Errorf("Months() after January's read = %v, want [2025-02]", got)
	}
}

// testSpill returns a new spill that is closed when the test ends.
func testSpill(t *testing.T) *Jobs {
	t.Helper()
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// tableOf returns rows as a table using dict.
func tableOf(dict *record.JobDict, rows []record.JobRow) *record.JobTable {
	tb := record.NewJobTable(dict, len(rows))
	for i := range rows {
		tb.AppendRow(&rows[i])
	}
	return tb
}

// readSpill reads month's records back as rows.
func readSpill(t *testing.T, s *Jobs, dict *record.JobDict, month string) []record.JobRow {
	t.Helper()
	tb := record.NewJobTable(dict, 0)
	if err := s.Read(month, tb); err != nil {
		t.Fatalf("read %s: %v", month, err)
	}
	var rows []record.JobRow
	for i := range tb.Recs {
		rows = append(rows, tb.Row(i))
	}
	return rows
}

// TestSpillValues: floats keep every bit (integral ones take the short
// form, -0, fractions, huge values, infinities and NaN the long one);
// timestamps before the start survive the delta encoding; rows sharing a
// TRES map, or holding equal maps, read back equal maps.
func TestSpillValues(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	before := start.Add(-36 * time.Hour)
	shared := map[string]float64{"cpu": 2, "mem": 0.5}
	vals := []float64{0, math.Copysign(0, -1), 0.1, -5, 1 << 53, 1<<53 + 2, -(1 << 53), 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	var rows []record.JobRow
	for i, v := range vals {
		rows = append(rows, record.JobRow{JobID: "j", JobIDRaw: int64(i), Start: start, Submit: &before,
			MemMB: v, NodeCount: -v, GPU: v, Billing: v, UsageFactor: v, TRES: shared})
	}
	rows[1].TRES = map[string]float64{"mem": 0.5, "cpu": 2} // equal contents, another map
	rows[2].TRES = map[string]float64{"cpu": 2, "mem": -0.5}
	rows[3].TRES = map[string]float64{}
	s := testSpill(t)
	idx := make([]int32, len(rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	dict := record.NewJobDict()
	if err := s.Add("2025-05", tableOf(dict, rows), idx); err != nil {
		t.Fatal(err)
	}
	got := readSpill(t, s, dict, "2025-05")
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for i, r := range got {
		w := rows[i]
		if !same(r.MemMB, w.MemMB) || !same(r.NodeCount, w.NodeCount) || !same(r.GPU, w.GPU) ||
			!same(r.Billing, w.Billing) || !same(r.UsageFactor, w.UsageFactor) {
			t.Errorf("row %d: floats %v %v %v %v %v, want %v", i, r.MemMB, r.NodeCount, r.GPU, r.Billing, r.UsageFactor, w.MemMB)
		}
		if r.Submit == nil || !r.Submit.Equal(before) || !r.Start.Equal(start) {
			t.Errorf("row %d: submit %v start %v", i, r.Submit, r.Start)
		}
		if len(w.TRES) == 0 {
			if r.TRES != nil {
				t.Errorf("row %d: TRES %v, want none", i, r.TRES)
			}
		} else if !reflect.DeepEqual(r.TRES, w.TRES) {
			t.Errorf("row %d: TRES %v, want %v", i, r.TRES, w.TRES)
		}
	}
}

// TestSpillDifferences: the fields stored as differences from the record
// before (start, job_id_raw, source line) and from the start (the other
// times) come back exactly when they go backwards, before 1970 or off the
// whole second, and a job id is only left out when it is job_id_raw in
// decimal.
func TestSpillDifferences(t *testing.T) {
	t.Parallel()
	at := func(sec, us int64) time.Time { return time.Unix(sec, us*1000).UTC() }
	ptr := func(v time.Time) *time.Time { return &v }
	rows := []record.JobRow{
		{JobID: "123", JobIDRaw: 123, Start: at(1_700_000_000, 0), End: ptr(at(1_700_000_100, 0)), SourceLine: 10},
		{JobID: "0123", JobIDRaw: 123, Start: at(1_699_990_000, 0), SourceLine: 3},                  // leading zero; earlier start
		{JobID: "", JobIDRaw: 7, Start: at(-86_401, 0), Submit: ptr(at(-90_000, 0)), SourceLine: 4}, // empty id; before 1970
		{JobID: "-5", JobIDRaw: -5, Start: at(1_700_000_000, 250), End: ptr(at(1_700_000_001, 999_999)), // off the second
			Eligible: ptr(at(1_699_999_999, 1)), SourceLine: 1 << 40},
		{JobID: "0", JobIDRaw: 0, Start: at(0, 0), SourceLine: 0},
		{JobID: "10_0", JobIDRaw: 11, Start: at(1_700_000_000, 0), SourceLine: 2},
		{JobID: "9223372036854775807", JobIDRaw: 1<<63 - 1, Start: at(1_700_000_000, 0), SourceLine: 5},
	}
	s := testSpill(t)
	dict := record.NewJobDict()
	in := tableOf(dict, rows)
	for i := range rows { // one record a call: the differences span calls
		if err := s.Add("2025-01", in, []int32{int32(i)}); err != nil {
			t.Fatal(err)
		}
	}
	got := readSpill(t, s, dict, "2025-01")
	if len(got) != len(rows) {
		t.Fatalf("%d rows back, want %d", len(got), len(rows))
	}
	for i := range rows {
		if !reflect.DeepEqual(got[i], rows[i]) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], rows[i])
		}
	}
	// A decimal id ("-5" too, as strconv prints -5) is left out (kind 0 in
	// the low bits of the first varint); others are kind 3, their length
	// and bytes.
	for i, want := range []uint64{idDecimal, idBytes, idBytes, idDecimal, idDecimal, idBytes, idDecimal} {
		r := &in.Recs[i]
		b := appendRec(nil, r, in.JobID(r), &recPrev{})
		if tag, _ := binary.Uvarint(b); tag&3 != want {
			t.Errorf("row %d (%q, %d): id kind %d, want %d", i, rows[i].JobID, rows[i].JobIDRaw, tag&3, want)
		}
	}
}

// TestSpillJobIDKinds: an array task's "<array job>_<task>" and a het
// component's "<het job>+<offset>" are left out of the spill and rebuilt;
// ids that only look like them (a leading zero, the wrong separator, a
// missing array task id) are stored as bytes; all read back exactly.
func TestSpillJobIDKinds(t *testing.T) {
	t.Parallel()
	i64 := func(v int64) *int64 { return &v }
	start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	rows := []record.JobRow{
		{JobID: "100_7", JobIDRaw: 108, ArrayJobID: i64(100), ArrayTaskID: i64(7)},
		{JobID: "200+1", JobIDRaw: 201, HetJobID: i64(200), HetJobOffset: i64(1)},
		{JobID: "100_07", JobIDRaw: 109, ArrayJobID: i64(100), ArrayTaskID: i64(7)},
		{JobID: "100+7", JobIDRaw: 110, ArrayJobID: i64(100), ArrayTaskID: i64(7)},
		{JobID: "100_7", JobIDRaw: 111, ArrayJobID: i64(100)},
		{JobID: "-3_-4", JobIDRaw: 5, ArrayJobID: i64(-3), ArrayTaskID: i64(-4)},
		{JobID: "9223372036854775807_9223372036854775807", JobIDRaw: 1, ArrayJobID: i64(1<<63 - 1), ArrayTaskID: i64(1<<63 - 1)},
		{JobID: "", JobIDRaw: 112, HetJobID: i64(0), HetJobOffset: i64(0)},
		// An end read from the start plus an elapsed time whose microseconds overflow.
		{JobID: "113", JobIDRaw: 113, ElapsedSec: i64(1 << 62), End: &start},
	}
	wantKind := []uint64{idArray, idHet, idBytes, idBytes, idBytes, idArray, idArray, idBytes, idDecimal}
	for i := range rows {
		rows[i].Start = start
	}
	s := testSpill(t)
	dict := record.NewJobDict()
	in := tableOf(dict, rows)
	idx := make([]int32, len(rows))
	prev := recPrev{}
	for i := range rows {
		idx[i] = int32(i)
		r := &in.Recs[i]
		b := appendRec(nil, r, in.JobID(r), &prev)
		if tag, _ := binary.Uvarint(b); tag&3 != wantKind[i] {
			t.Errorf("row %d (%q): id kind %d, want %d", i, rows[i].JobID, tag&3, wantKind[i])
		}
	}
	if err := s.Add("2025-03", in, idx); err != nil {
		t.Fatal(err)
	}
	got := readSpill(t, s, dict, "2025-03")
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("read back:\n got %+v\nwant %+v", got, rows)
	}
}

// TestSpillFloatForms: putFloat's three forms, byte for byte, from the
// encoding's definition worked by hand.
func TestSpillFloatForms(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    float64
		want []byte
	}{
		{0, []byte{0}},           // zigzag(0)<<2
		{-1, []byte{4}},          // zigzag(-1) = 1, <<2
		{25, []byte{0xC8, 0x01}}, // zigzag(25) = 50, <<2 = 200: two varint bytes
		// 0.5 is 0x3FE0000000000000; reversed, 0xE03F; <<2|1 = 0x380FD.
		{0.5, []byte{0xFD, 0x81, 0x0E}},
		// 0.1 is 0x3FB999999999999A: its low byte 0x9A ≥ 0x40, so raw.
		{0.1, []byte{3, 0x9A, 0x99, 0x99, 0x99, 0x99, 0x99, 0xB9, 0x3F}},
		// -0 is 0x8000000000000000; reversed, 0x80; <<2|1 = 0x201.
		{math.Copysign(0, -1), []byte{0x81, 0x04}},
	} {
		want := c.want
		var o [10]byte
		got := o[:putFloat(o[:], 0, c.v)]
		if string(got) != string(want) {
			t.Errorf("putFloat(%v) = % x, want % x", c.v, got, want)
		}
		if back, p := getFloat(got, 0); math.Float64bits(back) != math.Float64bits(c.v) || p != len(got) {
			t.Errorf("getFloat(% x) = %v (%d of %d bytes), want %v", got, back, p, len(got), c.v)
		}
	}
}

// TestSpillNamesUnchanged: a record whose names and TRES set are those of
// the record before writes one byte of zero bits for them, and a changed
// name is written alone; both read back.
func TestSpillNamesUnchanged(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	rows := []record.JobRow{
		{JobID: "1", JobIDRaw: 1, Start: start, User: "u", Account: "a", Partition: "p", QOS: "q", State: "COMPLETED", SourceFile: "f"},
		{JobID: "2", JobIDRaw: 2, Start: start, User: "u", Account: "a", Partition: "p", QOS: "q", State: "COMPLETED", SourceFile: "f"},
		{JobID: "3", JobIDRaw: 3, Start: start, User: "v", Account: "a", Partition: "p", QOS: "q", State: "COMPLETED", SourceFile: "f"},
	}
	dict := record.NewJobDict()
	in := tableOf(dict, rows)
	var prev recPrev
	var sizes []int
	for i := range in.Recs {
		r := &in.Recs[i]
		sizes = append(sizes, len(appendRec(nil, r, in.JobID(r), &prev)))
	}
	// Record 2: tag, raw, start, charged, nnodes, cpus, billing_slurm,
	// line, five floats, the names byte: 14 bytes. Record 3 adds the new
	// user's index (< 128): 15.
	if sizes[1] != 14 || sizes[2] != 15 {
		t.Errorf("record sizes %v, want [_ 14 15]", sizes)
	}
	s := testSpill(t)
	if err := s.Add("2025-04", in, []int32{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if got := readSpill(t, s, dict, "2025-04"); !reflect.DeepEqual(got, rows) {
		t.Errorf("read back:\n got %+v\nwant %+v", got, rows)
	}
}

// TestParseDecimal: exactly the forms strconv.AppendInt prints.
func TestParseDecimal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"-7", -7, true}, {"4711", 4711, true},
		{"9223372036854775807", 1<<63 - 1, true}, {"-9223372036854775808", -1 << 63, true},
		{"", 0, false}, {"-", 0, false}, {"-0", 0, false}, {"007", 0, false}, {"+7", 0, false},
		{"1a", 0, false}, {"1_2", 0, false}, {"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false}, {"12345678901234567890", 0, false},
	} {
		got, ok := parseDecimal([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("parseDecimal(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestSpillTruncated: every proper prefix of a record is an error, not a
// panic or a record.
func TestSpillTruncated(t *testing.T) {
	t.Parallel()
	i64 := func(v int64) *int64 { return &v }
	start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	rows := []record.JobRow{{JobID: "x9", JobIDRaw: 1 << 40, ArrayJobID: i64(3), ArrayTaskID: i64(4), HetJobID: i64(5),
		HetJobOffset: i64(6), Start: start, Submit: &start, Eligible: &start, End: &start, ElapsedSec: i64(300),
		SuspendedSec: i64(1), TimelimitMin: i64(60), NNodes: 2, AllocCPUs: 300, MemMB: 0.1, NodeCount: 0.5, GPU: 1,
		Billing: 1e300, UsageFactor: 2, User: "u", Account: "a", Partition: "p", QOS: "q", State: "s", SourceFile: "f",
		SourceLine: 9, TRES: map[string]float64{"cpu": 300}}}
	in := tableOf(record.NewJobDict(), rows)
	r := &in.Recs[0]
	b := appendRec(nil, r, in.JobID(r), &recPrev{})
	for n := range len(b) {
		var got record.JobRec
		d := recDecoder{b: b[:n]}
		if id := d.rec(&got, &recPrev{}); d.err == nil {
			t.Errorf("%d of %d bytes: no error (id %q)", n, len(b), id)
		}
	}
	var got record.JobRec
	d := recDecoder{b: b}
	if id := d.rec(&got, &recPrev{}); d.err != nil || string(id) != "x9" || d.p != len(b) {
		t.Errorf("whole record: id %q, err %v, %d of %d bytes", id, d.err, d.p, len(b))
	}
}

// TestSpillManyChunks: a month of more than spillChunk bytes, added in
// batches of different sizes, comes back whole and in order.
func TestSpillManyChunks(t *testing.T) {
	t.Parallel()
	const n = 300_000 // some 20 bytes a record: several chunks and a part
	s := testSpill(t)
	dict := record.NewJobDict()
	in := record.NewJobTable(dict, n)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		in.AppendRow(&record.JobRow{JobID: fmt.Sprintf("j%d", i), JobIDRaw: int64(i), User: "u", Account: "a",
			Start: start.Add(time.Duration(i) * time.Second), State: "RUNNING", SourceFile: "s.psv",
			SourceLine: int64(i)})
	}
	for lo, step := 0, 1; lo < n; lo, step = lo+step, step*3 {
		idx := make([]int32, 0, step)
		for i := lo; i < min(lo+step, n); i++ {
			idx = append(idx, int32(i))
		}
		if err := s.Add("2025-01", in, idx); err != nil {
			t.Fatal(err)
		}
	}
	if sf := s.months["2025-01"]; sf.size < 2*spillChunk {
		t.Fatalf("%d bytes written before the read, want over %d", sf.size, 2*spillChunk)
	}
	back := record.NewJobTable(dict, 0)
	if err := s.Read("2025-01", back); err != nil {
		t.Fatal(err)
	}
	if len(back.Recs) != n {
		t.Fatalf("%d records back, want %d", len(back.Recs), n)
	}
	for i := range back.Recs {
		r := &back.Recs[i]
		if r.JobIDRaw != int64(i) || r.SourceLine != int64(i) || string(back.JobID(r)) != fmt.Sprintf("j%d", i) ||
			r.Start != start.Add(time.Duration(i)*time.Second).UnixMicro() {
			t.Fatalf("record %d: %+v, job id %q", i, *r, back.JobID(r))
		}
	}
}
