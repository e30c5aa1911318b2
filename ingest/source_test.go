package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// sourceText is a sacct file of two jobs (one finished, one running) and
// a step of the first, which the reader skips.
const sourceText = hdr + boundsDone + "\n" +
	"100.batch|100|c1|gpu|normal|labA|alice|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|2024-01-01T02:00:00|01:00:00|00:00:00|COMPLETED|1|4|cpu=4,mem=16G,node=1||batch\n" +
	boundsRun + "\n"

// readSource reads src to its end with o, returning its counts and what
// it says of the bytes it read.
func readSource(t *testing.T, src JobSource, o JobOptions) (st Stats, rows int64, n int64, sum string) {
	t.Helper()
	rd, err := src.Open(o)
	if err != nil {
		t.Fatalf("Open %s: %v", src.Name(), err)
	}
	defer rd.Close()
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next %s: %v", src.Name(), err)
		}
		rows += rec.NumRows()
		rec.Release()
	}
	st, n, sum = rd.Stats(), rd.BytesRead(), rd.SHA256()
	rd.Close()
	rd.Close() // a second Close does nothing
	return st, rows, n, sum
}

// TestSacctFileSource checks a sacct file as a JobSource: its name and
// size, the rows it yields, and the bytes and SHA-256 a run records of it,
// against the file's own bytes.
func TestSacctFileSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "sacct.psv")
	if err := os.WriteFile(p, []byte(sourceText), 0o644); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(sourceText))
	want := hex.EncodeToString(h[:])
	srcs := SacctFiles([]string{p}, SacctOptions{})
	if len(srcs) != 1 || srcs[0].Name() != p {
		t.Fatalf("SacctFiles([%s]) = %v, want one source named %s", p, srcs, p)
	}
	src := srcs[0]
	if size, err := src.Size(); err != nil || size != int64(len(sourceText)) {
		t.Errorf("Size() = %d, %v; want %d", size, err, len(sourceText))
	}
	st, rows, n, sum := readSource(t, src, JobOptions{Hash: true})
	if rows != 2 || st.Read != 3 || st.Ingested != 2 || st.Skipped[SkipJobStep] != 1 || st.File != p {
		t.Errorf("read %d rows, stats %+v; want 2 rows of 3 read, 2 ingested, 1 job step, file %s", rows, st, p)
	}
	if n != int64(len(sourceText)) || sum != want {
		t.Errorf("with Hash: %d bytes, SHA-256 %s; want %d, %s", n, sum, len(sourceText), want)
	}
	if _, _, n, sum := readSource(t, src, JobOptions{}); n != int64(len(sourceText)) || sum != "" {
		t.Errorf("without Hash: %d bytes, SHA-256 %q; want %d, none", n, sum, len(sourceText))
	}

	missing := SacctFile{Path: filepath.Join(dir, "missing.psv")}
	if _, err := missing.Size(); err == nil || err.Error() != "sacct: stat "+missing.Path+": no such file or directory" {
		t.Errorf("Size of a missing file: %v", err)
	}
	st, err := ReadJobs(missing, JobOptions{}, func(arrow.RecordBatch) error { return nil })
	if err == nil || st.File != missing.Path {
		t.Errorf("ReadJobs of a missing file: stats of %q, error %v; want the file named and an error", st.File, err)
	}
}

// TestSacctFileSourcePipe reads a named pipe: its size is not known ahead
// (0), and the bytes and SHA-256 recorded are those its writer wrote.
func TestSacctFileSourcePipe(t *testing.T) {
	t.Parallel()
	p := mkfifo(t, t.TempDir(), "sacct.psv")
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		io.WriteString(w, sourceText)
		w.Close()
	}()
	src := SacctFile{Path: p}
	if size, err := src.Size(); err != nil || size != 0 {
		t.Errorf("Size() of a pipe = %d, %v; want 0", size, err)
	}
	h := sha256.Sum256([]byte(sourceText))
	st, rows, n, sum := readSource(t, src, JobOptions{Hash: true})
	if rows != 2 || st.Ingested != 2 || n != int64(len(sourceText)) || sum != hex.EncodeToString(h[:]) {
		t.Errorf("pipe: %d rows (%d ingested), %d bytes, SHA-256 %s; want 2, 2, %d, %x", rows, st.Ingested, n, sum, len(sourceText), h)
	}
}

// TestJobOptionsOnSacct checks what a caller's JobOptions change in a
// source's SacctOptions: the dense TRES when given, the cluster and the
// bounds only where the source has none, and job priority's two options.
func TestJobOptionsOnSacct(t *testing.T) {
	t.Parallel()
	run := TimeBounds{Min: EarliestUnix, Max: 1_800_000_000}
	own := TimeBounds{Min: EarliestUnix, Max: 1_700_000_000}
	tests := []struct {
		name      string
		opt       SacctOptions
		o         JobOptions
		want      SacctOptions
		wantDense []string
	}{
		{"zero options change nothing",
			SacctOptions{Cluster: "c1", Bounds: own, DenseTRES: []string{"gres/gpu"}}, JobOptions{},
			SacctOptions{Cluster: "c1", Bounds: own}, []string{"gres/gpu"}},
		{"the run's cluster and bounds fill in",
			SacctOptions{}, JobOptions{Cluster: "c2", Bounds: run},
			SacctOptions{Cluster: "c2", Bounds: run}, nil},
		{"the source's own cluster and bounds win",
			SacctOptions{Cluster: "c1", Bounds: own}, JobOptions{Cluster: "c2", Bounds: run},
			SacctOptions{Cluster: "c1", Bounds: own}, nil},
		{"bounds without an upper one are replaced",
			SacctOptions{Bounds: TimeBounds{Min: 1}}, JobOptions{Bounds: run},
			SacctOptions{Bounds: run}, nil},
		{"bounds without an upper one stay when the run gives none",
			SacctOptions{Bounds: TimeBounds{Min: 1}}, JobOptions{},
			SacctOptions{Bounds: TimeBounds{Min: 1}}, nil},
		{"dense TRES replaced; priority's columns",
			SacctOptions{DenseTRES: []string{"gres/gpu"}}, JobOptions{DenseTRES: []string{"license/matlab"}, Priority: true},
			SacctOptions{KeepPending: true, RequestColumns: true}, []string{"license/matlab"}},
	}
	for _, tt := range tests {
		got := tt.opt.with(tt.o)
		if !reflect.DeepEqual(got.DenseTRES, tt.wantDense) {
			t.Errorf("%s: DenseTRES = %v, want %v", tt.name, got.DenseTRES, tt.wantDense)
		}
		got.DenseTRES = nil
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
