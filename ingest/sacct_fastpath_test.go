package ingest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fairledger/fairledger/schemas"
)

// byteOffsets is fieldOffsets written the obvious way, one byte at a time:
// the reference the word-at-a-time scan is checked against.
func byteOffsets(rec []byte) []int {
	pos := []int{-1}
	for i, c := range rec {
		if c == '|' {
			pos = append(pos, i)
		}
	}
	return append(pos, len(rec))
}

func TestPipeByteMask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string // eight bytes
		want uint64
	}{
		{"abcdefgh", 0},
		{"|bcdefgh", 0b00000001},
		{"abcdefg|", 0b10000000},
		{"||||||||", 0xff},
		// '}' (0x7d), '{' (0x7b), 0xfc and '\\' (0x5c) differ from '|'
		// (0x7c) in one bit.
		{"}|{\xfc|\\|a", 0b01010010},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			w := uint64(0)
			for j := 7; j >= 0; j-- {
				w = w<<8 | uint64(tt.in[j])
			}
			if got := pipeByteMask(w); got != tt.want {
				t.Errorf("pipeByteMask(%q) = %#b, want %#b", tt.in, got, tt.want)
			}
		})
	}
}

// TestFieldOffsetsLong checks records longer than the 64-byte blocks,
// pipes at every position of a block and of the tail, against byteOffsets.
func TestFieldOffsetsLong(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("|}{\xfc\\a0\n|")
	for n := 0; n < 300; n++ {
		for try := 0; try < 20; try++ {
			rec := make([]byte, n)
			for i := range rec {
				rec[i] = alphabet[rng.IntN(len(alphabet))]
			}
			got := fieldOffsets([]int{7}, rec)
			want := append([]int{7}, byteOffsets(rec)...)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("fieldOffsets(%q) = %v, want %v", rec, got, want)
			}
		}
	}
	// Records whose capacity runs on past their end, over bytes that are
	// all '|': none of those may count.
	for n := 0; n < 200; n++ {
		for extra := 0; extra < 80; extra += 7 {
			buf := make([]byte, n+extra)
			for i := range buf {
				buf[i] = '|'
				if i < n {
					buf[i] = alphabet[rng.IntN(len(alphabet))]
				}
			}
			rec := buf[:n]
			got := fieldOffsets(nil, rec)
			if want := byteOffsets(rec); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("fieldOffsets(%q, capacity %d) = %v, want %v", rec, cap(rec), got, want)
			}
		}
	}
	// A '|' alone at each position of a 200-byte record.
	for at := 0; at < 200; at++ {
		rec := make([]byte, 200)
		for i := range rec {
			rec[i] = 'x'
		}
		rec[at] = '|'
		if got, want := fieldOffsets(nil, rec), []int{-1, at, 200}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("fieldOffsets(one '|' at %d) = %v, want %v", at, got, want)
		}
	}
}

func TestKeyOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want dictKey
	}{
		{"", dictKey{}},
		{"a", dictKey{0x616161, 0, 1}},
		{"ab", dictKey{0x626261, 0, 2}},
		{"abc", dictKey{0x636261, 0, 3}},
		// First four and last four bytes, little-endian.
		{"abcd", dictKey{0x64636261, 0x64636261, 4}},
		{"abcdefg", dictKey{0x64636261, 0x67666564, 7}},
		{"abcdefgh", dictKey{0x6867666564636261, 0x6867666564636261, 8}},
		// "abcdefghij": bytes 0-7 and 2-9.
		{"abcdefghij", dictKey{0x6867666564636261, 0x6a69686766656463, 10}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			if got := keyOf([]byte(tt.in)); got != tt.want {
				t.Errorf("keyOf(%q) = %#x, want %#x", tt.in, got, tt.want)
			}
		})
	}
}

// TestDictIndexKeys checks values that share a key's words: short ones
// that differ in length only, long ones that differ only between their
// first and last eight bytes.
func TestDictIndexKeys(t *testing.T) {
	t.Parallel()
	var values stringColumn
	values.reset()
	var x dictIndex
	vals := []string{
		"aaaaaaaa", "aaaaaaaaa", "aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaa",
		"lab_one_X_member", "lab_one_Y_member", "lab_one__X__member", "lab_one__Y__member",
		"aa", "aaa", "aba", "a", "",
	}
	for i, v := range vals {
		if k := x.code([]byte(v), &values); k != int32(i) {
			t.Errorf("code(%q) = %d, want %d (a new value)", v, k, i)
		}
	}
	for i, v := range vals {
		if k := x.lookup([]byte(v), &values); k != int32(i) {
			t.Errorf("lookup(%q) = %d, want %d", v, k, i)
		}
	}
	// The same through a dictColumn, whose last-value shortcut must not
	// take one long value for another.
	var c dictColumn
	c.reset()
	for _, v := range []string{"lab_one__X__member", "lab_one__Y__member", "lab_one__Y__member", "lab_one__X__member"} {
		c.append([]byte(v))
	}
	if got := fmt.Sprint(c.codes.vals); got != "[0 1 1 0]" {
		t.Errorf("dictColumn codes = %s, want [0 1 1 0]", got)
	}
}

// TestFixedColumnOutgrown appends more values than a column was prepared
// for: they leave the allocator's buffer for Go memory and are copied back
// into a new one, and no buffer is left behind either way.
func TestFixedColumnOutgrown(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, n := range []int{0, 3, 8, 9, 100} {
		t.Run(fmt.Sprintf("%d values", n), func(t *testing.T) {
			var c fixedColumn[int64]
			c.reset()
			c.prepare(mem, 8)
			for i := 0; i < n; i++ {
				c.append(int64(i * 3))
			}
			b := c.valueBuffer(mem)
			got := arrow.GetData[int64](b.Bytes())
			if len(got) != n {
				t.Errorf("%d values: buffer holds %d", n, len(got))
			}
			for i, v := range got {
				if v != int64(i*3) {
					t.Errorf("%d values: value %d = %d, want %d", n, i, v, i*3)
				}
			}
			b.Release()
			c.release()
		})
	}
}

// TestSacctRowsEstimate parses a block of job steps only, which makes the
// parser expect few rows from the next block, then a block of 300 jobs: its
// batch must equal the one a fresh parser makes of that block alone.
func TestSacctRowsEstimate(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const header = "JobID|User|Account|Partition|Start|End|Elapsed|State|AllocTRES"
	var steps, jobs strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&steps, "%d.batch|u|a|p|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|COMPLETED|cpu=1\n", 100+i)
	}
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&jobs, "%d|u%d|a%d|p|2024-01-01T00:00:%02d|2024-01-01T01:00:00|00:59:00|COMPLETED|cpu=%d,mem=1G\n", 1000+i, i%7, i%5, i%60, i%3+1)
	}
	newParser := func() *sacctParser {
		lay := &sacctLayout{dense: schemas.DenseTRESList(nil)}
		if err := lay.init(strings.Split(header, "|")); err != nil {
			t.Fatal(err)
		}
		opt := SacctOptions{Location: time.UTC, Allocator: mem}
		return newSacctParser("est.psv", lay, opt, schemas.Jobs(nil))
	}
	p := newParser()
	if res := p.parseChunk(chunk{seq: 0, line: 2, data: []byte(steps.String())}); res.rec != nil || res.stats.Skipped[SkipJobStep] != 200 {
		t.Fatalf("steps block: stats %s, batch %v", res.stats.String(), res.rec != nil)
	}
	got := p.parseChunk(chunk{seq: 1, line: 202, data: []byte(jobs.String())})
	want := newParser().parseChunk(chunk{seq: 1, line: 202, data: []byte(jobs.String())})
	if got.rec == nil || want.rec == nil {
		t.Fatalf("no batch: got %v, want %v", got.rec != nil, want.rec != nil)
	}
	defer got.rec.Release()
	defer want.rec.Release()
	if got.rec.NumRows() != 300 || !array.RecordEqual(got.rec, want.rec) {
		t.Errorf("batch after a block of steps (%d rows) differs from a fresh parser's (%d rows)", got.rec.NumRows(), want.rec.NumRows())
	}
}

// TestClockDigits checks the word-at-a-time clockDigits against digits2,
// pair by pair, on every byte value in every position.
func TestClockDigits(t *testing.T) {
	t.Parallel()
	ref := func(b []byte) (int, int, int, bool) {
		h, ok1 := digits2(b[0:2])
		m, ok2 := digits2(b[3:5])
		s, ok3 := digits2(b[6:8])
		if !(ok1 && ok2 && ok3) {
			return 0, 0, 0, false
		}
		return h, m, s, true
	}
	check := func(b []byte) {
		h, m, s, ok := clockDigits(b)
		wh, wm, ws, wok := ref(b)
		if h != wh || m != wm || s != ws || ok != wok {
			t.Fatalf("clockDigits(%q) = %d, %d, %d, %v; want %d, %d, %d, %v", b, h, m, s, ok, wh, wm, ws, wok)
		}
	}
	check([]byte("23:59:60"))
	check([]byte("00:00:00"))
	check([]byte("99x99y99"))
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			b := []byte("12:34:56")
			b[pos] = byte(c)
			check(b)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100000; i++ {
		b := []byte("00:00:00")
		for j := range b {
			if rng.IntN(4) == 0 {
				b[j] = byte(rng.IntN(256))
			} else {
				b[j] = byte('0' + rng.IntN(10))
			}
		}
		check(b)
	}
}
