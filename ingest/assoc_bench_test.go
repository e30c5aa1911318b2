package ingest

import (
	"bytes"
	"testing"

	"github.com/fairledger/fairledger/internal/synth"
)

// BenchmarkReadAssoc100k parses the association dump of
// BenchmarkPipelineAssoc100k (10,000 labs with 9 users each on average,
// 102,619 associations, generated in memory) as ReadAssocFile does, and
// reports associations per second.
//
//	go test ./ingest -run '^$' -bench ReadAssoc100k -benchtime 10x
func BenchmarkReadAssoc100k(b *testing.B) {
	var buf bytes.Buffer
	if err := synth.New(synth.Options{Seed: 1, Labs: 10_000, UsersPerLab: 9}).WriteAssoc(&buf); err != nil {
		b.Fatal(err)
	}
	data := buf.String()
	var rows int
	b.ReportAllocs()
	for b.Loop() {
		a, _, err := ParseAssoc("assoc.psv", bytes.NewReader([]byte(data)))
		if err != nil {
			b.Fatal(err)
		}
		rows = len(a.Rows)
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "assocs/s")
}
