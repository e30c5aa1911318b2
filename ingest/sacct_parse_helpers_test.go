package ingest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fairledger/fairledger/schemas"
)

// Tests for the helpers behind the sacct parser's fast paths. Expected
// values are worked out by hand in the comments.

func TestZeroBytes(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want uint64 }{
		{0, 0x8080808080808080},
		{0x0101010101010101, 0},
		// Bytes, lowest first: 00 ff 00 ff 00 ff 00 ff.
		{0xff00ff00ff00ff00, 0x0080008000800080},
		// 01 00 00 00 00 00 00 01: only the six middle bytes are zero.
		{0x0100000000000001, 0x0080808080808000},
		// 00 01 00 00 00 00 00 00: the borrow out of byte 0 must not
		// mark the 01 in byte 1 (the shorter trick does).
		{0x0000000000000100, 0x8080808080800080},
		// 80 00 ... 00 80: a high bit set is not a zero byte.
		{0x8000000000000080, 0x0080808080808000},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%#016x", tt.in), func(t *testing.T) {
			if got := zeroBytes(tt.in); got != tt.want {
				t.Errorf("zeroBytes(%#016x) = %#016x, want %#016x", tt.in, got, tt.want)
			}
		})
	}
}

func TestFieldOffsets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []int
	}{
		{"", []int{-1, 0}},
		{"abc", []int{-1, 3}},
		{"a|bc||d", []int{-1, 1, 4, 5, 7}},
		// '|' at 7 (end of the first word), six in the second word (10-15),
		// and 16 and 18 in the tail read byte by byte.
		{"0123456|89|||||||x|", []int{-1, 7, 10, 11, 12, 13, 14, 15, 16, 18, 19}},
		{"||||||||", []int{-1, 0, 1, 2, 3, 4, 5, 6, 7, 8}},
		// Bytes one bit away from '|' (0x7c): '}' 0x7d, 0xfc, '{' 0x7b.
		{"}}}}\xfc\xfc\xfc|}}}{\xfc\xfc\xfc\xfc", []int{-1, 7, 16}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got := fieldOffsets(nil, []byte(tt.in))
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("fieldOffsets(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	// It appends to what it is given.
	if got := fieldOffsets([]int{9}, []byte("x|y")); fmt.Sprint(got) != "[9 -1 1 3]" {
		t.Errorf("fieldOffsets onto [9] = %v, want [9 -1 1 3]", got)
	}
}

func TestNthField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		i    int
		want string
	}{
		{"a|bc|d", 0, "a"},
		{"a|bc|d", 1, "bc"},
		{"a|bc|d", 2, "d"},
		{"|x", 0, ""},
		{"|x", 1, "x"},
		{"123.batch", 0, "123.batch"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q field %d", tt.in, tt.i), func(t *testing.T) {
			if got := string(nthField([]byte(tt.in), tt.i)); got != tt.want {
				t.Errorf("nthField(%q, %d) = %q, want %q", tt.in, tt.i, got, tt.want)
			}
		})
	}
}

func TestIsStepID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		i    int
		want bool
	}{
		{"123.batch|x", 0, true},
		{"123|x.y", 0, false}, // the '.' is in another field
		{"a|123.0|z", 1, true},
		{"a|123|z.", 1, false},
		{"|x.", 0, false}, // an empty JobID is no step
		{"1.0", 0, true},
		{"123_4|.", 0, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q field %d", tt.in, tt.i), func(t *testing.T) {
			if got := isStepID([]byte(tt.in), tt.i); got != tt.want {
				t.Errorf("isStepID(%q, %d) = %v, want %v", tt.in, tt.i, got, tt.want)
			}
		})
	}
}

func TestParseHMS(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
		ok   bool
		err  string
	}{
		{"01:02:03", 3723, true, ""}, // 3600 + 2*60 + 3
		{"23:59:59", 86399, true, ""},
		{"00:00:00", 0, true, ""},
		{"24:00:00", 0, true, "hour out of range"},
		{"00:60:00", 0, true, "minute out of range"},
		{"00:00:60", 0, true, "second out of range"},
		// Other layouts are left to parseElapsed's general code.
		{"1:02:03", 0, false, ""},
		{"01-02:03", 0, false, ""},
		{"0a:00:00", 0, false, ""},
		{"02:03", 0, false, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, ok, err := parseHMS([]byte(tt.in))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tt.want || ok != tt.ok || gotErr != tt.err {
				t.Errorf("parseHMS(%q) = %d, %v, %q; want %d, %v, %q", tt.in, got, ok, gotErr, tt.want, tt.ok, tt.err)
			}
		})
	}
	// Through parseElapsed, with days: 2*86400 + 3*3600 + 4*60 + 5.
	if got, err := parseElapsed([]byte("2-03:04:05")); got != 183845 || err != nil {
		t.Errorf("parseElapsed(2-03:04:05) = %d, %v; want 183845", got, err)
	}
	if _, err := parseElapsed([]byte("1-25:00:00")); err == nil || err.Error() != "hour out of range" {
		t.Errorf("parseElapsed(1-25:00:00) error = %v, want hour out of range", err)
	}
}

func TestAppendTRESName(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"gres/GPU:A100", "gres/gpu:a100"},
		{"mem", "mem"},
		// No ASCII capital: kept as it is, even with a non-ASCII one.
		{"Énergie", "Énergie"},
		// An ASCII capital: lower-cased like bytes.ToLower, É (U+00C9)
		// included.
		{"ÉNERGIE", "énergie"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			if got := string(appendTRESName([]byte("x:"), []byte(tt.in))); got != "x:"+tt.want {
				t.Errorf("appendTRESName(%q) = %q, want %q", tt.in, got, "x:"+tt.want)
			}
		})
	}
}

func TestDictIndex(t *testing.T) {
	t.Parallel()
	var values stringColumn
	values.reset()
	var x dictIndex
	if k := x.lookup([]byte("b"), &values); k != -1 {
		t.Fatalf("lookup in an empty index = %d, want -1", k)
	}
	// Codes in order of first appearance; "" is a value like any other.
	for _, tt := range []struct {
		v    string
		want int32
	}{{"b", 0}, {"a", 1}, {"b", 0}, {"", 2}, {"c", 3}, {"a", 1}, {"", 2}} {
		if k := x.code([]byte(tt.v), &values); k != tt.want {
			t.Errorf("code(%q) = %d, want %d", tt.v, k, tt.want)
		}
	}
	var got []string
	for i := int32(0); i < 4; i++ {
		got = append(got, string(values.value(i)))
	}
	if fmt.Sprint(got) != "[b a  c]" {
		t.Errorf("dictionary = %q, want [b a \"\" c]", got)
	}
	if k := x.lookup([]byte("zz"), &values); k != -1 {
		t.Errorf("lookup(zz) = %d, want -1", k)
	}
	// Growing past the first table keeps every code.
	for i := 0; i < 1000; i++ {
		if k := x.code([]byte(fmt.Sprintf("user%d", i)), &values); k != int32(4+i) {
			t.Fatalf("code(user%d) = %d, want %d", i, k, 4+i)
		}
	}
	for i := 0; i < 1000; i++ {
		if k := x.lookup([]byte(fmt.Sprintf("user%d", i)), &values); k != int32(4+i) {
			t.Fatalf("lookup(user%d) = %d, want %d", i, k, 4+i)
		}
	}
	if n := len(x.slots); n&(n-1) != 0 || n < 2*1004 {
		t.Errorf("%d slots for 1004 codes, want a power of two at least twice as many", n)
	}
	// A new block starts a new dictionary.
	x.reset()
	values.reset()
	if k := x.lookup([]byte("b"), &values); k != -1 {
		t.Errorf("lookup(b) after reset = %d, want -1", k)
	}
	if k := x.code([]byte("c"), &values); k != 0 {
		t.Errorf("code(c) after reset = %d, want 0", k)
	}
}

func newTestParser(t *testing.T, header string, dense []string) *sacctParser {
	t.Helper()
	lay := &sacctLayout{dense: schemas.DenseTRESList(dense)}
	if err := lay.init(strings.Split(header, "|")); err != nil {
		t.Fatal(err)
	}
	opt := SacctOptions{Location: time.UTC, Allocator: memory.DefaultAllocator, DenseTRES: dense}
	return newSacctParser("t.psv", lay, opt, schemas.Jobs(dense))
}

func TestTRESMemo(t *testing.T) {
	t.Parallel()
	// Dense TRES: cpu, mem, node, gres/gpu (the defaults), gres/gpu:a100.
	p := newTestParser(t, "JobID|AllocTRES", []string{"gres/gpu:a100"})
	m := &p.tresMemo
	text := "billing=4,CPU=4,energy=9,gres/gpu:A100=2,mem=16G,node=1"
	k, perr := p.addTRES([]byte(text))
	if perr != nil || k != 0 {
		t.Fatalf("addTRES = %d, %v; want 0", k, perr)
	}
	it := m.items[0]
	// energy is dropped; names are lower-cased; 16G of mem is 16384 MiB.
	var names []string
	start := int32(0)
	for _, end := range m.ends[it.entries:it.entriesEnd] {
		names = append(names, string(m.names[it.names+int(start):it.names+int(end)]))
		start = end
	}
	if got := fmt.Sprint(names, m.vals[it.entries:it.entriesEnd]); got != "[billing cpu gres/gpu:a100 mem node] [4 4 2 16384 1]" {
		t.Errorf("entries = %s", got)
	}
	if !it.billingOK || it.billing != 4 || !it.hasCPU || !it.hasNode {
		t.Errorf("item = %+v, want billing 4, cpu and node", it)
	}
	// Dense: cpu 4, mem 16384, node 1, gres/gpu 2 (the typed GPUs, as
	// there is no untyped count), gres/gpu:a100 2.
	if got := fmt.Sprint(m.dense[it.dense : it.dense+5]); got != "[4 16384 1 2 2]" {
		t.Errorf("dense = %s, want [4 16384 1 2 2]", got)
	}
	// A bad string is rejected and leaves the memo as it was.
	nNames, nVals, nDense := len(m.names), len(m.vals), len(m.dense)
	if _, perr := p.addTRES([]byte("cpu=1,mem=lots")); perr == nil || perr.Error() != `ingest t.psv: AllocTRES="mem=lots": not a TRES count` {
		t.Errorf("addTRES(mem=lots) error = %v", perr)
	}
	if len(m.items) != 1 || len(m.names) != nNames || len(m.vals) != nVals || len(m.dense) != nDense || m.texts.offsets[len(m.texts.offsets)-1] != int32(len(text)) {
		t.Errorf("memo changed by a rejected string: %d items", len(m.items))
	}
	if k := m.index.lookup([]byte(text), &m.texts); k != 0 {
		t.Errorf("lookup = %d, want 0", k)
	}
	if k := m.index.lookup([]byte("cpu=1,mem=lots"), &m.texts); k != -1 {
		t.Errorf("lookup of the rejected string = %d, want -1", k)
	}
	// Two rows of item 0 in the alloc_tres column.
	var c tresColumn
	c.reset()
	c.appendItem(m, 0)
	c.appendItem(m, 0)
	var keys []string
	for i := int32(0); i < 10; i++ {
		keys = append(keys, string(c.keys.value(i)))
	}
	if got := fmt.Sprint(c.offsets, keys, c.vals.vals); got != "[0 5 10] [billing cpu gres/gpu:a100 mem node billing cpu gres/gpu:a100 mem node] [4 4 2 16384 1 4 4 2 16384 1]" {
		t.Errorf("column = %s", got)
	}
}

func TestTRESMemoBounded(t *testing.T) {
	t.Parallel()
	p := newTestParser(t, "JobID|AllocTRES", nil)
	m := &p.tresMemo
	for i := 0; i < maxTRESMemo; i++ {
		if k, perr := p.addTRES([]byte(fmt.Sprintf("cpu=%d", i))); k != int32(i) || perr != nil {
			t.Fatalf("addTRES(cpu=%d) = %d, %v", i, k, perr)
		}
	}
	// The memo is full: the next string starts it afresh.
	if k, _ := p.addTRES([]byte("cpu=99999")); k != 0 || len(m.items) != 1 {
		t.Errorf("addTRES past the bound = %d with %d items, want 0 with 1", k, len(m.items))
	}
	// So does a string after more than maxTRESMemoBytes of text.
	long := "cpu=1" + strings.Repeat(",", maxTRESMemoBytes)
	if k, _ := p.addTRES([]byte(long)); k != 1 {
		t.Errorf("addTRES(long) = %d, want 1", k)
	}
	if k, _ := p.addTRES([]byte("cpu=2")); k != 0 || len(m.items) != 1 {
		t.Errorf("addTRES after a long string = %d with %d items, want 0 with 1", k, len(m.items))
	}
}

// TestParseTimeMemo parses timestamps in an order that moves between the
// two remembered dates and a third one; each is checked against its Unix
// time worked out from 2024-01-01T00:00:00Z = 1704067200.
func TestParseTimeMemo(t *testing.T) {
	t.Parallel()
	c := newLocalClock(time.UTC)
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{"2024-01-01T00:00:00", 1704067200, ""},
		{"2024-01-02T01:02:03", 1704067200 + 86400 + 3723, ""},
		{"2024-01-01T12:00:00", 1704067200 + 43200, ""},
		{"2024-01-02T00:00:00", 1704067200 + 86400, ""},
		// 31 days of January and 28 of February: 59 days on.
		{"2024-02-29T23:59:59", 1704067200 + 59*86400 + 86399, ""},
		{"2024-01-01T00:00:01", 1704067200 + 1, ""},
		// Errors in the time of day of a remembered date.
		{"2024-01-01T24:00:00", 0, "hour out of range"},
		{"2024-01-01T00:60:00", 0, "minute out of range"},
		{"2024-01-01T00:00:61", 0, "second out of range"},
		{"2024-01-01T0x:00:00", 0, errTimeSyntax.Error()},
		// A bad date is never remembered.
		{"2024-02-30T00:00:00", 0, "day out of range"},
		{"2024-02-30T00:00:00", 0, "day out of range"},
		// The leap second sacct can print.
		{"2024-01-01T23:59:60", 1704067200 + 86400, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, kind, err := c.parseTime([]byte(tt.in))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("parseTime(%q) error = %v, want %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || kind != timeSet || got != tt.want {
				t.Errorf("parseTime(%q) = %d, %d, %v; want %d", tt.in, got, kind, err, tt.want)
			}
		})
	}
}

func TestParseTimeMemoZone(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	c := newLocalClock(ny)
	tests := []struct {
		in   string
		want int64
	}{
		// EDT (UTC-4): 2024-07-01T00:00:00Z is 1704067200 + 182 days
		// (31+29+31+30+31+30) = 1719792000; 12:00 EDT is 16:00Z.
		{"2024-07-01T12:00:00", 1719792000 + 16*3600},
		{"2024-07-01T12:30:00", 1719792000 + 16*3600 + 1800}, // the same hour
		// EST (UTC-5): 12:00 EST is 17:00Z.
		{"2024-01-01T12:00:00", 1704067200 + 17*3600},
		{"2024-07-01T12:59:59", 1719792000 + 16*3600 + 3599},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			if got, _, err := c.parseTime([]byte(tt.in)); err != nil || got != tt.want {
				t.Errorf("parseTime(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestSacctStepShortcut checks that a job step is only skipped on sight of
// its JobID when its line is a well-formed record: a step with a stray '|'
// goes through '|' recovery (and is then skipped), one with too few fields
// is rejected as before.
func TestSacctStepShortcut(t *testing.T) {
	t.Parallel()
	step := "100.batch|100.batch|c1||||||2024-01-01T01:00:00|2024-01-01T01:00:00|2024-01-01T02:00:00|01:00:00|00:00:00|COMPLETED|1|4|cpu=4|01:00:00|"
	in := hdr +
		step + "batch\n" +
		step + "my|name\n" +
		"100.0|100.0|c1\n"
	res := readAll(t, "s.txt", []byte(in), SacctOptions{})
	if res.stats.Read != 3 || res.stats.Skipped[SkipJobStep] != 2 || res.stats.Rejected != 1 {
		t.Errorf("stats = %s, want read=3 rejected=1 skipped[job step]=2", res.stats.String())
	}
	if want := "ingest s.txt:4: too few fields: 3 of 19"; fmt.Sprint(res.rejects) != "["+want+"]" {
		t.Errorf("rejects = %q, want %q", res.rejects, want)
	}
}

func TestStartsWithPipeLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"a|b\nc", true},
		{"abc\nx|y", false}, // the '|' is on the second line
		{"abc", false},
		{"|", true},
		{"\n|", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			if got := startsWithPipeLine([]byte(tt.in)); got != tt.want {
				t.Errorf("startsWithPipeLine(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplitRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header, rec string
		want        string // the fields as get sees them, or the error
	}{
		{"JobID|User|JobName", "1|u|j", "[1 u j]"},
		{"JobID|User|JobName", "1|u", "ingest t.psv: too few fields: 2 of 3"},
		// The extra '|' can only belong to the free-text JobName.
		{"JobID|User|JobName", "1|u|a|b", "[1 u a|b]"},
		// sacct -p: every line ends with '|', and the empty piece after
		// it is not a field.
		{"JobID|User|", "1|u|", "[1 u]"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.rec), func(t *testing.T) {
			p := newTestParser(t, tt.header, nil)
			p.rec = []byte(tt.rec)
			p.pos = fieldOffsets(nil, p.rec)
			var perr *ParseError
			p.split, perr = p.splitRecord()
			got := ""
			if perr != nil {
				got = perr.Error()
			} else {
				var fields []string
				for _, c := range []sacctCol{colJobID, colUser, colJobName} {
					if p.has(c) {
						fields = append(fields, string(p.get(c)))
					}
				}
				got = fmt.Sprint(fields)
			}
			if got != tt.want {
				t.Errorf("%s / %q: got %s, want %s", tt.header, tt.rec, got, tt.want)
			}
		})
	}
}
