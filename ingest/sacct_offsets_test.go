package ingest

import (
	"fmt"
	"math/rand/v2"
	"testing"
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
		w := uint64(0)
		for j := 7; j >= 0; j-- {
			w = w<<8 | uint64(tt.in[j])
		}
		if got := pipeByteMask(w); got != tt.want {
			t.Errorf("pipeByteMask(%q) = %#b, want %#b", tt.in, got, tt.want)
		}
	}
}

// TestFieldOffsetsLong checks records longer than the 64-byte blocks,
// pipes at every position of a block and of the tail, against byteOffsets.
func TestFieldOffsetsLong(t *testing.T) {
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
