package ingest

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fairledger/fairledger/schemas"
)

// BenchmarkSacctParseChunk runs the block parser alone (one goroutine, no
// reading, no channels) over 4 MiB blocks of a generated sacct file of
// 50,000 allocation rows plus their steps (cached like IngestSacct5M's),
// or of the first 32 MiB of $FAIRLEDGER_PARSE_BENCH_FILE, so that the
// parser's CPU per row can be compared between versions on a busy machine.
//
//	go test ./ingest -run '^$' -bench SacctParseChunk -count 5
//	FAIRLEDGER_PARSE_BENCH_FILE=$PWD/.bench/seed7-jobs5000000-420447fc4641/sacct.psv \
//		go test ./ingest -run '^$' -bench SacctParseChunk -count 5
func BenchmarkSacctParseChunk(b *testing.B) {
	path := os.Getenv("FAIRLEDGER_PARSE_BENCH_FILE")
	if path == "" {
		path, _ = benchSacct(b, 50_000)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if len(data) > 32<<20 {
		data = data[:bytes.LastIndexByte(data[:32<<20], '\n')+1]
	}
	hdr, data, _ := bytes.Cut(data, []byte{'\n'})
	lay := &sacctLayout{dense: schemas.DenseTRESList(nil)}
	if err := lay.init(strings.Split(string(hdr), "|")); err != nil {
		b.Fatal(err)
	}
	size := int64(len(data))
	var blocks [][]byte
	for len(data) > 0 {
		cut := len(data)
		if cut > 4<<20 {
			if cut = lay.findCut(data[:4<<20]); cut <= 0 {
				b.Fatal("no record boundary in 4 MiB")
			}
		}
		blocks = append(blocks, data[:cut])
		data = data[cut:]
	}
	opt := SacctOptions{Location: time.UTC, Allocator: memory.DefaultAllocator}
	p := newSacctParser("bench.psv", lay, opt, schemas.Jobs(nil))
	var rows int64
	b.SetBytes(size)
	b.ReportAllocs()
	cpu0 := cpuSeconds()
	for b.Loop() {
		rows = 0
		for i, blk := range blocks {
			res := p.parseChunk(chunk{seq: i, line: 2, data: blk})
			if res.rec != nil {
				res.rec.Release()
			}
			rows += res.stats.Read
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rows), "rows")
	// CPU time per row is steadier than wall time on a shared machine.
	b.ReportMetric((cpuSeconds()-cpu0)*1e9/float64(rows)/float64(b.N), "cpu-ns/row")
}
