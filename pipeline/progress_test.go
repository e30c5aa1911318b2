package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/pipeline"
)

// TestRunProgress runs with a progress callback over small blocks (so that
// it is called while the reader is still reading; `go test -race` checks
// the byte count it reports is read safely): the bytes and rows it reports
// never go backwards, never pass the totals, and end at most at them.
func TestRunProgress(t *testing.T) {
	t.Parallel()
	dir, _, end := nightlyCluster(t, 3000)
	sacct := filepath.Join(dir, "sacct.psv")
	fi, err := os.Stat(sacct)
	if err != nil {
		t.Fatal(err)
	}
	in := siteInputs(t, dir, sacct)
	in.Jobs = sacctWith([]string{sacct}, func(o *ingest.SacctOptions) { o.ChunkBytes = 16 << 10 })
	opt := runOpts(filepath.Join(t.TempDir(), "history"), end)
	var calls []pipeline.Progress
	opt.Progress = func(p pipeline.Progress) { calls = append(calls, p) }
	sum, err := pipeline.Run(context.Background(), in, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 2 {
		t.Fatalf("%d progress calls, want several", len(calls))
	}
	var prev pipeline.Progress
	for i, p := range calls {
		if p.BytesTotal != fi.Size() || p.File != sacct {
			t.Errorf("call %d: file %s of %d bytes, want %s of %d", i, p.File, p.BytesTotal, sacct, fi.Size())
		}
		if p.BytesDone < prev.BytesDone || p.Rows < prev.Rows || p.BytesDone > p.BytesTotal || p.Rows > sum.Ingest.Read {
			t.Errorf("call %d: %d bytes, %d rows after %d bytes, %d rows (totals %d bytes, %d rows)",
				i, p.BytesDone, p.Rows, prev.BytesDone, prev.Rows, p.BytesTotal, sum.Ingest.Read)
		}
		prev = p
	}
}
