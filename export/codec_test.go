package export

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"

	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// TestZstdCodecBytes: the history's codec compresses to exactly the bytes
// of parquet-go's zstd codec at its fastest level, decompresses them back,
// and does so from several goroutines at once.
func TestZstdCodecBytes(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 5))
	inputs := [][]byte{nil, []byte("a"), bytes.Repeat([]byte("cpu=4,mem=16G,"), 5000)}
	noise := make([]byte, 300_000)
	for i := range noise {
		noise[i] = byte(rnd.IntN(16)) // compressible, not trivially
	}
	inputs = append(inputs, noise)
	ref := &pqzstd.Codec{Level: pqzstd.SpeedFastest}
	ours := newZstdCodec(2)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, in := range inputs {
				want, err := ref.Encode(nil, in)
				if err != nil {
					t.Error(err)
					return
				}
				got, err := ours.Encode(make([]byte, 0, 16), in)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%d bytes: compressed %d bytes (%v), parquet-go %d", len(in), len(got), err, len(want))
					return
				}
				back, err := ours.Decode(nil, got)
				if err != nil || !bytes.Equal(back, in) {
					t.Errorf("%d bytes: decoded %d bytes (%v)", len(in), len(back), err)
				}
			}
		})
	}
	wg.Wait()
}
