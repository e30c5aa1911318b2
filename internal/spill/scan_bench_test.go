package spill

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
)

// benchRecs is the size of the synthetic month the read benchmarks spill.
const benchRecs = 1 << 20

// synthTable returns n made-up records in input order, as the spill sees
// them: starts a few seconds apart, lines counting up, most ids job_id_raw
// in decimal, every fifth an array task, every fiftieth an id of its own;
// a few dozen users and accounts, a handful of partitions, QOS, states and
// TRES sets; a tenth of the jobs still running.
func synthTable(n int) *record.JobTable {
	d := record.NewJobDict()
	t := record.NewJobTable(d, n)
	var users, accounts, parts, qos, states []uint32
	for i := range 60 {
		users = append(users, d.Name("user"+strconv.Itoa(i)))
	}
	for i := range 25 {
		accounts = append(accounts, d.Name("acct"+strconv.Itoa(i)))
	}
	for _, p := range []string{"cpu", "gpu", "bigmem", "debug"} {
		parts = append(parts, d.Name(p))
	}
	for _, q := range []string{"normal", "high", "low"} {
		qos = append(qos, d.Name(q))
	}
	for _, s := range []string{"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED"} {
		states = append(states, d.Name(s))
	}
	running := d.Name("RUNNING")
	src := d.Name("sacct-2024-03.txt")
	var tres []uint32
	for i := range 12 {
		tres = append(tres, d.TRESSet(map[string]float64{"cpu": float64(int(1) << (i % 6)), "mem": float64(1000 * (i + 1)), "node": 1}))
	}
	start := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	var id []byte
	for i := range n {
		x := uint64(i)*0x9E3779B97F4A7C15 + 1 // a cheap scramble for the varied fields
		raw := int64(4_000_000 + i)
		start += int64(x>>60) * 1e6
		r := record.JobRec{JobIDRaw: raw, Start: start, Submit: start - int64(x>>50&1023)*1e6,
			Eligible: start - int64(x>>45&31)*1e6, ChargedSec: int64(x >> 40 & 0xffff), NNodes: 1 + int64(x>>30&3),
			AllocCPUs: 1 << (x >> 20 & 7), BillingSlurm: int64(x >> 12 & 255), SourceLine: int64(i + 2),
			MemMB: float64(1000 * (1 + x>>8&15)), NodeCount: 1, GPU: float64(x >> 4 & 1), Billing: float64(x>>12&255) / 4,
			UsageFactor: 1, User: users[x%60], Account: accounts[x%25], Partition: parts[x>>3&3],
			QOS: qos[x>>5%3], State: states[x>>7&3], SourceFile: src, TRES: tres[x>>9%12], TimelimitMin: 60,
			Valid: record.ValidSubmit | record.ValidEligible | record.ValidElapsedSec | record.ValidTimelimitMin}
		r.ElapsedSec = r.ChargedSec
		if i%10 == 3 {
			r.State = running
		} else {
			r.End = r.Start + r.ElapsedSec*1e6
			r.Valid |= record.ValidEnd
		}
		id = strconv.AppendInt(id[:0], raw, 10)
		switch {
		case i%50 == 7:
			id = append(id, ".extern"...)
		case i%5 == 1:
			r.ArrayJobID, r.ArrayTaskID = raw-int64(x>>56), int64(x>>56)
			r.Valid |= record.ValidArrayJobID | record.ValidArrayTaskID
			id = append(strconv.AppendInt(id[:0], r.ArrayJobID, 10), '_')
			id = strconv.AppendInt(id, r.ArrayTaskID, 10)
		}
		t.Append(r, id)
	}
	return t
}

// spillSynth spills t's records to s as month.
func spillSynth(b *testing.B, s *Jobs, t *record.JobTable, month string) {
	b.Helper()
	idx := make([]int32, len(t.Recs))
	for i := range idx {
		idx[i] = int32(i)
	}
	if err := s.Add(month, t, idx); err != nil {
		b.Fatal(err)
	}
	if err := s.months[month].w.Flush(); err != nil {
		b.Fatal(err)
	}
}

// benchSpill returns a new spill that is closed when b ends.
func benchSpill(b *testing.B) *Jobs {
	b.Helper()
	s, err := New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkRead reads a synthetic month of a million records back into a
// table (the whole file in one buffer). Read removes the month, so each
// round spills it again, with the timer stopped, to the same spill (whose
// read buffer is reused, as from month to month in a run).
//
//	go test ./internal/spill -run '^$' -bench 'Read$' -benchtime 10x -cpu 1
func BenchmarkRead(b *testing.B) {
	t := synthTable(benchRecs)
	back := record.NewJobTable(t.Dict, len(t.Recs))
	s := benchSpill(b)
	var size int
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		spillSynth(b, s, t, "2024-03")
		size = s.months["2024-03"].size
		back.Reset()
		b.StartTimer()
		if err := s.Read("2024-03", back); err != nil {
			b.Fatal(err)
		}
	}
	if len(back.Recs) != len(t.Recs) {
		b.Fatalf("%d records back, want %d", len(back.Recs), len(t.Recs))
	}
	b.SetBytes(int64(size))
	b.ReportMetric(float64(size)/float64(len(t.Recs)), "B/rec")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(t.Recs)), "ns/rec")
}

// BenchmarkScan scans a synthetic month of a million records 100,000 at a
// time through the default window of 1 MiB. The month stays spilled, so
// every round reads the same file.
//
//	go test ./internal/spill -run '^$' -bench 'Scan$' -benchtime 10x -cpu 1
func BenchmarkScan(b *testing.B) {
	t := synthTable(benchRecs)
	s := benchSpill(b)
	spillSynth(b, s, t, "2024-03")
	size := s.months["2024-03"].size
	chunk := record.NewJobTable(t.Dict, 100_000)
	n := 0
	count := func() error { n += len(chunk.Recs); return nil }
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		n = 0
		if err := s.Scan("2024-03", chunk, 100_000, count); err != nil {
			b.Fatal(err)
		}
	}
	if n != len(t.Recs) {
		b.Fatalf("%d records scanned, want %d", n, len(t.Recs))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(t.Recs)), "ns/rec")
}

// BenchmarkRunRead reads a run of a million synthetic records back one at
// a time through the default window, as a merge does. A run is read once,
// so each round writes it again with the timer stopped.
//
//	go test ./internal/spill -run '^$' -bench 'RunRead$' -benchtime 10x -cpu 1
func BenchmarkRunRead(b *testing.B) {
	t := synthTable(benchRecs)
	s := benchSpill(b)
	var size int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r, err := s.WriteRun(t)
		if err != nil {
			b.Fatal(err)
		}
		size = r.size
		b.StartTimer()
		rr, err := r.Reader()
		if err != nil {
			b.Fatal(err)
		}
		n, nodes := 0, int64(0)
		for rr.Next() {
			nodes += rr.Rec().NNodes // touch the record
			n++
		}
		if nodes < 0 {
			b.Fatalf("%d nodes", nodes)
		}
		if err := rr.Err(); err != nil {
			b.Fatal(err)
		}
		if err := rr.Close(); err != nil {
			b.Fatal(err)
		}
		if n != len(t.Recs) {
			b.Fatalf("%d records read, want %d", n, len(t.Recs))
		}
	}
	b.SetBytes(size)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(t.Recs)), "ns/rec")
}

// BenchmarkWriteRun writes a million synthetic records as a run (and
// removes it, with the timer stopped).
//
//	go test ./internal/spill -run '^$' -bench 'WriteRun$' -benchtime 10x -cpu 1
func BenchmarkWriteRun(b *testing.B) {
	t := synthTable(benchRecs)
	s := benchSpill(b)
	var size int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := s.WriteRun(t)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		size = r.size
		if err := os.Remove(r.path); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.SetBytes(size)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(t.Recs)), "ns/rec")
}
