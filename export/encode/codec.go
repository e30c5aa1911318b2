package encode

import (
	"fmt"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
)

// zstdCodec is the history's Parquet compression: zstd at its fastest
// level, with the options of parquet-go's zstd codec, so it writes the same
// bytes as that codec at that level. (On the 5 M-job year the default level
// cost 1.6 CPU-s more for a history 6 % smaller: 248 MB against 264 MB.) Each zstd encoder allocates a 16 MiB history buffer. parquet-go's
// codec keeps its encoders in a sync.Pool of its own, so every file written
// with a new codec (and every file after a garbage collection) paid for new
// ones: 0.77 GB of allocations per million jobs. This codec keeps them in a
// fixed pool that the collector leaves alone.
type zstdCodec struct {
	encoders chan *zstd.Encoder
	decoders chan *zstd.Decoder
}

var _ compress.Codec = (*zstdCodec)(nil)

// historyZstd is the one codec every history file is written with: a cache
// of encoders, like a sync.Pool, which changes no output.
var historyZstd = newZstdCodec(8)

// newZstdCodec keeps up to size idle encoders and decoders.
func newZstdCodec(size int) *zstdCodec {
	return &zstdCodec{encoders: make(chan *zstd.Encoder, size), decoders: make(chan *zstd.Decoder, size)}
}

func (c *zstdCodec) String() string { return "ZSTD" }

func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode compresses src into dst's memory.
func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	var e *zstd.Encoder
	select {
	case e = <-c.encoders:
	default:
		var err error
		e, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false))
		if err != nil {
			return dst, fmt.Errorf("zstd encoder: %w", err)
		}
	}
	out := e.EncodeAll(src, dst[:0])
	select {
	case c.encoders <- e:
	default: // the pool is full: let the collector have it
	}
	return out, nil
}

// Decode decompresses src into dst's memory.
func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	var d *zstd.Decoder
	select {
	case d = <-c.decoders:
	default:
		var err error
		d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return dst, fmt.Errorf("zstd decoder: %w", err)
		}
	}
	out, err := d.DecodeAll(src, dst[:0])
	select {
	case c.decoders <- d:
	default:
		d.Close()
	}
	return out, err
}

// snappyCodec is SNAPPY by klauspost/compress's fastest Snappy-compatible
// encoder (s2.EncodeSnappy). parquet-go's SNAPPY codec encodes with its
// "better" mode, which allocates 0.5 MiB of hash tables a page and took
// four times as long on the jobs table's delta-encoded columns for 3-5 %
// smaller pages (jobsCodec gives the numbers). Both write the standard
// Snappy block format, so every reader decodes either.
type snappyCodec struct{}

var _ compress.Codec = snappyCodec{}

func (snappyCodec) String() string { return "SNAPPY" }

func (snappyCodec) CompressionCodec() format.CompressionCodec { return format.Snappy }

// Encode compresses src into dst's memory when it has room for the
// largest block src can give (s2.MaxEncodedLen), else into a new slice.
func (snappyCodec) Encode(dst, src []byte) ([]byte, error) {
	return s2.EncodeSnappy(dst, src), nil
}

// Decode decompresses src into dst's memory.
func (snappyCodec) Decode(dst, src []byte) ([]byte, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return dst, fmt.Errorf("snappy block: %w", err)
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	out, err := s2.Decode(dst[:n], src)
	if err != nil {
		return dst, fmt.Errorf("snappy block: %w", err)
	}
	return out, nil
}
