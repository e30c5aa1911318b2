package pipeline_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/pipeline"
)

// memSource is a job input that is no file: sacct -P text held in memory,
// read by the sacct reader, which says it read all of it and what its
// SHA-256 is. It keeps the options each run opened it with.
type memSource struct {
	name   string
	data   []byte
	opened *[]ingest.JobOptions
}

func (m memSource) Name() string         { return m.name }
func (m memSource) Size() (int64, error) { return int64(len(m.data)), nil }

func (m memSource) Open(o ingest.JobOptions) (ingest.JobReader, error) {
	*m.opened = append(*m.opened, o)
	rd, err := ingest.NewSacctReader(m.name, bytes.NewReader(m.data), ingest.SacctOptions{Location: time.UTC,
		DenseTRES: o.DenseTRES, Cluster: o.Cluster, Bounds: o.Bounds, KeepPending: o.Priority, RequestColumns: o.Priority})
	if err != nil {
		return nil, err
	}
	sum := ""
	if o.Hash {
		h := sha256.Sum256(m.data)
		sum = hex.EncodeToString(h[:])
	}
	return memReader{rd, int64(len(m.data)), sum}, nil
}

type memReader struct {
	*ingest.SacctReader
	n   int64
	sum string
}

func (r memReader) BytesRead() int64 { return r.n }
func (r memReader) SHA256() string   { return r.sum }

// TestRunReadsAnyJobSource runs a night from a job source the pipeline
// knows only through ingest.JobSource, and the same night from the file
// with the same bytes: the fair share is the same, the runs table records
// each input by its name with its size and SHA-256 (the file's as
// sha256sum gives it), and the run opens every source with its settings.
func TestRunReadsAnyJobSource(t *testing.T) {
	t.Parallel()
	dir, _, end := nightlyCluster(t, 300)
	file := filepath.Join(dir, "sacct.psv")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	started := end.Add(time.Hour)
	var opened []ingest.JobOptions
	mem := memSource{name: "memory:sacct", data: data, opened: &opened}
	var hists []string
	for _, tc := range []struct {
		src  ingest.JobSource
		want record.RunInput
	}{
		{mem, record.RunInput{Path: "memory:sacct", SizeBytes: int64(len(data)), SHA256: sum}},
		{ingest.SacctFile{Path: file, Options: ingest.SacctOptions{Location: time.UTC}}, record.RunInput{Path: file, SizeBytes: int64(len(data)), SHA256: sum}},
	} {
		hist := filepath.Join(t.TempDir(), "history")
		hists = append(hists, hist)
		in := siteInputs(t, dir)
		in.Jobs = []ingest.JobSource{tc.src}
		opt := runOpts(hist, end)
		opt.Now = func() time.Time { return started }
		if _, err := pipeline.Run(context.Background(), in, opt); err != nil {
			t.Fatalf("%s: %v", tc.src.Name(), err)
		}
		h, err := history.Open(hist)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := h.ReadRuns("synth", started)
		if err != nil || len(runs) != 1 {
			t.Fatalf("%s: runs %v, %v; want one", tc.src.Name(), runs, err)
		}
		if got := runs[0].Inputs[len(runs[0].Inputs)-1]; got != tc.want {
			t.Errorf("%s: the runs table records %+v, want %+v", tc.src.Name(), got, tc.want)
		}
	}
	if a, b := sshareAt(t, hists[0], "synth", end), sshareAt(t, hists[1], "synth", end); a != b {
		t.Errorf("sshare at %s from the memory source:\n%s\nfrom the file:\n%s", end, a, b)
	}
	// A dry run reads the same source without its hash.
	opt := runOpts(filepath.Join(t.TempDir(), "dry"), end)
	opt.Now, opt.DryRun = func() time.Time { return started }, true
	in := siteInputs(t, dir)
	in.Jobs = []ingest.JobSource{mem}
	if _, err := pipeline.Run(context.Background(), in, opt); err != nil {
		t.Fatal(err)
	}
	if len(opened) != 2 {
		t.Fatalf("the memory source was opened %d times, want 2", len(opened))
	}
	bounds := ingest.TimeBounds{Min: ingest.EarliestUnix, Max: started.Add(ingest.ClockSkew).Unix()}
	for i, o := range opened {
		if o.Cluster != "synth" || o.Bounds != bounds || o.Priority || o.Hash != (i == 0) {
			t.Errorf("open %d: %+v, want cluster synth, bounds %+v, no priority, a hash only when not a dry run", i, o, bounds)
		}
	}
}
