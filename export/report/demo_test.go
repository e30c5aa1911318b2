package report

import (
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/pipeline"
)

// demoData is the embedded demo cluster of `fairledger demo`.
var demoData = filepath.Join("..", "..", "cmd", "fairledger", "demodata")

var (
	demoOnce sync.Once
	demoDir  string
	demoErr  error
)

// demoHistoryDir runs the pipeline on the demo cluster's inputs exactly as
// `fairledger demo` does (`fairledger run --to 2025-04-01T00:00:00Z --tz
// UTC`, daily snapshots) and returns the history, once per test binary.
// Like the demo it records job priorities (run --priority). It skips the
// test when the demo inputs are not in the tree.
func demoHistoryDir(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(demoData, "sacct.psv.gz")); err != nil {
		t.Skipf("demo cluster inputs not found (%v)", err)
	}
	demoOnce.Do(func() {
		var dir string
		dir, demoErr = os.MkdirTemp("", "fairledger-report-demo-")
		if demoErr != nil {
			return
		}
		demoDir = filepath.Join(dir, "hist")
		demoErr = runDemo(dir, demoDir)
	})
	if demoErr != nil {
		t.Fatalf("demo history: %v", demoErr)
	}
	return demoDir
}

func runDemo(dir, hist string) error {
	in := filepath.Join(dir, "input")
	if err := os.MkdirAll(in, 0o755); err != nil {
		return err
	}
	gz, err := os.Open(filepath.Join(demoData, "sacct.psv.gz"))
	if err != nil {
		return err
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		return err
	}
	sacct := filepath.Join(in, "sacct.psv")
	out, err := os.Create(sacct)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, zr); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return runPipeline(demoData, sacct, hist, time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), true)
}

// runPipeline runs `fairledger run --to to --tz UTC` (daily snapshots),
// with --priority when priority is set, on the slurm.conf, assoc.psv and
// qos.psv of dir and a sacct file, into hist.
func runPipeline(dir, sacct, hist string, to time.Time, priority bool) error {
	conf, err := ingest.ReadSlurmConf(filepath.Join(dir, "slurm.conf"))
	if err != nil {
		return err
	}
	assoc, _, err := ingest.ReadAssocFile(filepath.Join(dir, "assoc.psv"))
	if err != nil {
		return err
	}
	qf, err := os.Open(filepath.Join(dir, "qos.psv"))
	if err != nil {
		return err
	}
	defer qf.Close()
	qos, _, err := ingest.ParseQOS("qos.psv", qf)
	if err != nil {
		return err
	}
	_, err = pipeline.Run(context.Background(),
		pipeline.Inputs{Conf: conf, Assoc: []ingest.DatedAssociations{{Assoc: assoc}}, QOS: qos,
			Jobs: ingest.SacctFiles([]string{sacct}, ingest.SacctOptions{Location: time.UTC})},
		pipeline.Options{History: hist, To: to, SnapshotEvery: 24 * time.Hour, Location: time.UTC, Version: "test", Priority: priority,
			Now: func() time.Time { return to.Add(time.Hour) }, Log: zerolog.Nop()})
	return err
}
