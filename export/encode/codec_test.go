package encode

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// TestZstdCodecBytes: the history's codec compresses to exactly the bytes
// of parquet-go's zstd codec at its fastest level, decompresses them back,
// and does so from several goroutines at once.
func TestZstdCodecBytes(t *testing.T) {
	t.Parallel()
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

// TestSnappyCodec: what snappyCodec compresses, parquet-go's SNAPPY codec
// (the reference Snappy block decoder) decompresses back, and the other
// way round; the repetitive input shrinks; and a dst with room is used.
func TestSnappyCodec(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(7, 9))
	noise := make([]byte, 300_000)
	for i := range noise {
		noise[i] = byte(rnd.IntN(16))
	}
	rep := bytes.Repeat([]byte("cpu=4,mem=16G,"), 5000)
	inputs := [][]byte{nil, []byte("a"), rep, noise}
	var ours snappyCodec
	if ours.CompressionCodec() != format.Snappy {
		t.Fatalf("codec %v, want SNAPPY", ours.CompressionCodec())
	}
	for _, in := range inputs {
		got, err := ours.Encode(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		back, err := parquet.Snappy.Decode(nil, got)
		if err != nil || !bytes.Equal(back, in) {
			t.Errorf("%d bytes: parquet-go decoded %d bytes (%v)", len(in), len(back), err)
		}
		ref, err := parquet.Snappy.Encode(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		back, err = ours.Decode(make([]byte, 0, 8), ref)
		if err != nil || !bytes.Equal(back, in) {
			t.Errorf("%d bytes: decoded parquet-go's block to %d bytes (%v)", len(in), len(back), err)
		}
	}
	got, _ := ours.Encode(nil, rep)
	if len(got) > len(rep)/10 {
		t.Errorf("%d repetitive bytes compressed to %d", len(rep), len(got))
	}
	dst := make([]byte, 0, 1<<20)
	got, _ = ours.Encode(dst, noise)
	if &got[0] != &dst[:1][0] {
		t.Error("Encode did not use dst's memory")
	}
	if _, err := ours.Decode(nil, []byte{0xff}); err == nil {
		t.Error("Decode of a broken block: no error")
	}
}
