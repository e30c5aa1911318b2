package query

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/schemas"
)

// TestOpenDuckDBAfterCrash: what crashed commits leave (a stage directory
// holding a written segment and a half-written temp file, a whole
// generation 2 renamed into place but never made current) changes nothing
// a DuckDB session reads. (The history's TestCrashSafety sets the history
// up alike and checks its own readers.)
func TestOpenDuckDBAfterCrash(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	if err := h.WritePartition(schemas.TableUsage, "c1", jan, sampleUsage()); err != nil {
		t.Fatal(err)
	}
	p := histOnlyFile(t, h, schemas.TableUsage, "c1", "2025-01")
	good, err := os.ReadFile(histPath(h, p))
	if err != nil {
		t.Fatal(err)
	}
	before, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	// A crash mid-commit: a stage directory holding a written segment and
	// a half-written temp file.
	stage := filepath.Join(h.Dir, genDir, stagePrefix+genName(2)+"-0badc0de", "usage", "cluster=c1", "month=2025-01")
	if err := os.MkdirAll(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, "part-0123456789abcdef.parquet"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, ".part-new"+tmpMarker), good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	// A crash after the rename of the stage but before the symlink
	// switch: generation 2, complete, with a second segment, never current.
	uncommitted := filepath.Join(h.Dir, genDir, genName(2))
	if err := os.MkdirAll(filepath.Join(uncommitted, "usage", "cluster=c1", "month=2025-01"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{p.Path, "usage/cluster=c1/month=2025-01/part-0123456789abcdef.parquet"} {
		if err := os.WriteFile(filepath.Join(uncommitted, filepath.FromSlash(name)), good, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m2 := before
	m2.Generation = 2
	m2.Partitions = append(slices.Clone(m2.Partitions), p)
	m2.Partitions[1].Path = "usage/cluster=c1/month=2025-01/part-0123456789abcdef.parquet"
	b, err := json.Marshal(m2)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(uncommitted, manifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}

	db, err := OpenDuckDB(context.Background(), h.Dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Query(context.Background(), "SELECT count(*) FROM usage")
	db.Close()
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != int64(3) || db.Generation != 1 {
		t.Errorf("DuckDB after crash: %+v, %v, generation %d; want 3 rows of generation 1", res, err, db.Generation)
	}
}

// TestOpenDuckDBCheckpointsOnly: a history holding only checkpoints (the
// history's TestStates writes such one) has every view, each missing and
// empty: the views see no checkpoint.
func TestOpenDuckDBCheckpointsOnly(t *testing.T) {
	t.Parallel()
	h, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"b.json", "a.json"} {
		if err := h.WriteState("c1", n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	// The views see no checkpoint: every table is missing, its view empty.
	d, err := OpenDuckDB(context.Background(), h.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tables) != 6 || len(d.Missing) != 6 {
		t.Errorf("views over checkpoints only: tables %v, missing %v", d.Tables, d.Missing)
	}
	d.Close()
}
