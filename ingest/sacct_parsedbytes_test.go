package ingest

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestSacctParsedBytes checks that ParsedBytes counts the bytes of the
// blocks Next has returned: each count ends on a record boundary of the
// input, counts never fall, and after io.EOF they cover the whole input
// after the header, however far the reader read ahead.
func TestSacctParsedBytes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(recordsHeader + "\n")
	header := b.Len()
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "%d|%d|c0|p0|q0|acct%d|user%d|2024-01-01T00:00:00|2024-01-01T00:00:00|%d|%d|00:10:00||COMPLETED|1|1|cpu=1|UNLIMITED|0:0|job %d\n",
			1000+i, 1000+i, i%3, i%5, 1704067200+i*60, 1704067200+i*60+600, i)
	}
	data := []byte(b.String())
	for _, opt := range []SacctOptions{{Workers: 1, ChunkBytes: 1 << 20}, {Workers: 3, ChunkBytes: 500}} {
		t.Run(fmt.Sprintf("workers %d, block bytes %d", opt.Workers, opt.ChunkBytes), func(t *testing.T) {
			r, err := NewSacctReader("parsed.psv", bytes.NewReader(data), opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.ParsedBytes(); got != 0 {
				t.Errorf("workers %d, block bytes %d: ParsedBytes before Next = %d, want 0", opt.Workers, opt.ChunkBytes, got)
			}
			var last int64
			for {
				rec, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rec.Release()
				got := r.ParsedBytes()
				if got <= last || got > int64(len(data)-header) || data[header+int(got)-1] != '\n' {
					t.Errorf("workers %d, block bytes %d: ParsedBytes = %d after %d: not a later record boundary",
						opt.Workers, opt.ChunkBytes, got, last)
				}
				last = got
			}
			if got, want := r.ParsedBytes(), int64(len(data)-header); got != want {
				t.Errorf("workers %d, block bytes %d: ParsedBytes at EOF = %d, want %d", opt.Workers, opt.ChunkBytes, got, want)
			}
			if st := r.Stats(); st.Read != 300 {
				t.Errorf("workers %d, block bytes %d: Read = %d, want 300", opt.Workers, opt.ChunkBytes, st.Read)
			}
			r.Close()
		})
	}
}
