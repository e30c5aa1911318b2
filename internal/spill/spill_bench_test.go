package spill

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/internal/benchtest"
	"github.com/fairledger/fairledger/schemas"
)

// spillBenchTable reads March 2024 of the history BenchmarkPipelineYear5M
// leaves in $FAIRLEDGER_BENCH_DIR/history-year5m (some 410,000 jobs) and
// puts the rows back in input order (source file, line), as the spill
// sees them, with charged_sec 0. It skips b when that history is missing.
func spillBenchTable(b *testing.B) *record.JobTable {
	b.Helper()
	h, err := history.Open(filepath.Join(os.Getenv("FAIRLEDGER_BENCH_DIR"), "history-year5m"))
	if err != nil {
		b.Skipf("no history: %v", err)
	}
	var rows []record.JobRow
	if err := h.ReadPartition(schemas.TableJobs, "synth", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), &rows); err != nil || len(rows) == 0 {
		b.Skipf("no month to spill: %v", err)
	}
	slices.SortStableFunc(rows, func(x, y record.JobRow) int {
		return cmp.Or(cmp.Compare(x.SourceFile, y.SourceFile), cmp.Compare(x.SourceLine, y.SourceLine))
	})
	t := record.NewJobTable(record.NewJobDict(), len(rows))
	for i := range rows {
		rows[i].ChargedSec = 0
		t.AppendRow(&rows[i])
	}
	return t
}

// BenchmarkSpill spills a realistic month of jobs in batches of 200,000
// records and reads it back, reporting the spill's bytes and the CPU time (user and system) a record.
//
//	FAIRLEDGER_BENCH_DIR=... go test ./internal/spill -run '^$' -bench 'Spill$' -benchtime 10x -cpu 1
func BenchmarkSpill(b *testing.B) {
	t := spillBenchTable(b)
	idx := make([]int32, len(t.Recs))
	for i := range idx {
		idx[i] = int32(i)
	}
	back := record.NewJobTable(t.Dict, len(t.Recs))
	var size int64
	cpu0 := benchtest.CPUTime()
	b.ResetTimer()
	for b.Loop() {
		s, err := New(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		for lo := 0; lo < len(idx); lo += 200_000 {
			if err := s.Add("2024-03", t, idx[lo:min(lo+200_000, len(idx))]); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.months["2024-03"].w.Flush(); err != nil {
			b.Fatal(err)
		}
		fi, err := s.months["2024-03"].f.Stat()
		if err != nil {
			b.Fatal(err)
		}
		size = fi.Size()
		back.Reset()
		if err := s.Read("2024-03", back); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	if len(back.Recs) != len(t.Recs) {
		b.Fatalf("%d records back, want %d", len(back.Recs), len(t.Recs))
	}
	b.ReportMetric(float64(size)/float64(len(t.Recs)), "B/rec")
	b.ReportMetric(float64((benchtest.CPUTime()-cpu0).Nanoseconds())/float64(b.N)/float64(len(t.Recs)), "cpu-ns/rec")
}

// BenchmarkSpillCodec encodes a realistic month of records into memory
// and decodes them, without the file and the table: the codec's own CPU
// time a record.
//
//	FAIRLEDGER_BENCH_DIR=... go test ./internal/spill -run '^$' -bench 'SpillCodec' -benchtime 20x -cpu 1
func BenchmarkSpillCodec(b *testing.B) {
	t := spillBenchTable(b)
	var buf []byte
	b.Run("encode", func(b *testing.B) {
		cpu0 := benchtest.CPUTime()
		for b.Loop() {
			var prev recPrev
			buf = buf[:0]
			for i := range t.Recs {
				r := &t.Recs[i]
				buf = appendRec(buf, r, t.JobID(r), &prev)
			}
		}
		b.ReportMetric(float64((benchtest.CPUTime()-cpu0).Nanoseconds())/float64(b.N)/float64(len(t.Recs)), "cpu-ns/rec")
	})
	b.Run("decode", func(b *testing.B) {
		cpu0 := benchtest.CPUTime()
		for b.Loop() {
			d := &recDecoder{b: buf}
			for range t.Recs {
				var r record.JobRec
				d.rec(&r, &d.prev)
			}
			if d.err != nil {
				b.Fatal(d.err)
			}
		}
		b.ReportMetric(float64((benchtest.CPUTime()-cpu0).Nanoseconds())/float64(b.N)/float64(len(t.Recs)), "cpu-ns/rec")
	})
}
