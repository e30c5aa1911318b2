package ingest

import (
	"bytes"
	"testing"

	"github.com/fairledger/fairledger/schemas"
)

// FuzzSacctRequest reads any input with KeepPending and RequestColumns:
// no panic, every record accounted for, and the rows without a start are
// exactly those Stats.NeverStarted counts.
// Run: go test -run '^$' -fuzz FuzzSacctRequest -fuzztime 30s ./ingest/
func FuzzSacctRequest(f *testing.F) {
	f.Add([]byte(reqFile))
	f.Add([]byte(pendFile))
	f.Add([]byte("JobID|User|Account|Partition|Start|End|State|AllocTRES|SubmitLine|WorkDir\n" +
		"1|u|a|p|1700000000|1700000100|COMPLETED|cpu=1|sbatch -p x job.sh|/home/u|x\n"))
	f.Add([]byte("JobID|User|Account|Partition|Start|End|State|AllocTRES|ReqNodes|SubmitLine\n" +
		"5+1|u|a|p|None|Unknown|CANCELLED|cpu=1|1.50K|srun -p a x : -p b y\n5_[1-3]|u|a|p|Unknown|Unknown|PENDING||2K|sbatch --nice\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		opt := SacctOptions{ChunkBytes: 64, Workers: 2, MaxRecordBytes: 256, KeepPending: true, RequestColumns: true}
		r, err := NewSacctReader("f.txt", bytes.NewReader(data), opt)
		if err != nil {
			return
		}
		defer r.Close()
		var rows, noStart int64
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			rows += rec.NumRows()
			i, err := schemas.Index(rec.Schema(), schemas.ColStart)
			if err != nil {
				t.Fatal(err)
			}
			noStart += int64(rec.Column(i).NullN())
			rec.Release()
		}
		st := r.Stats()
		if !st.Balanced() || st.Ingested != rows || st.NeverStarted != noStart {
			t.Fatalf("stats %s never started %d; %d rows, %d without a start", st.String(), st.NeverStarted, rows, noStart)
		}
	})
}
