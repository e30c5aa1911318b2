package historytest_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/encode"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/history/historytest"
	"github.com/fairledger/fairledger/export/record/recordtest"
	"github.com/fairledger/fairledger/schemas"
)

// TestLayout: the names historytest holds are those the store writes. A
// history after three commits has the current symlink on gen/00000003
// (GenDir, GenName), a manifest there (ManifestFile), and two generations
// (KeepGenerations); a commit's stage is gen/.stage-00000004-<hex>
// (StagePrefix), and a segment being written in it is a dot file with
// TmpMarker in its name.
func TestLayout(t *testing.T) {
	t.Parallel()
	h := historytest.Open(t)
	for i := range 3 {
		month := time.Date(2025, time.Month(1+i), 1, 0, 0, 0, 0, time.UTC)
		if err := h.WritePartition(schemas.TableUsage, "c1", month, recordtest.Usage()); err != nil {
			t.Fatal(err)
		}
	}
	target, err := os.Readlink(filepath.Join(h.Dir, history.CurrentLink))
	if want := filepath.Join(historytest.GenDir, "00000003"); err != nil || target != want {
		t.Errorf("current -> %q, %v; want %q", target, err, want)
	}
	if historytest.GenName(3) != "00000003" {
		t.Errorf("GenName(3) = %q, want 00000003", historytest.GenName(3))
	}
	if _, err := os.Stat(filepath.Join(h.Dir, target, historytest.ManifestFile)); err != nil {
		t.Errorf("no %s in the committed generation: %v", historytest.ManifestFile, err)
	}
	if gens := historytest.Generations(t, h); !slices.Equal(gens, []string{"00000002", "00000003"}) ||
		len(gens) != historytest.KeepGenerations {
		t.Errorf("generations after three commits: %v, want the %d newest", gens, historytest.KeepGenerations)
	}
	p := historytest.OnlyFile(t, h, schemas.TableUsage, "c1", "2025-02")
	if _, err := os.Stat(historytest.Path(h, p)); err != nil {
		t.Errorf("Path(%s): %v", p.Path, err)
	}

	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort()
	st, err := encode.NewSnapshotTrees(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := tx.NewSnapshotSegments("c1", time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), st)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Abort()
	stages, err := filepath.Glob(filepath.Join(h.Dir, historytest.GenDir, historytest.StagePrefix+historytest.GenName(4)+"-*"))
	if err != nil || len(stages) != 1 {
		t.Fatalf("stages of generation 4: %v, %v; want one", stages, err)
	}
	tmp, err := filepath.Glob(filepath.Join(stages[0], "fairshare", "cluster=c1", "month=2025-03", ".*"+historytest.TmpMarker+"*"))
	if err != nil || len(tmp) != 1 {
		t.Errorf("temp files of a segment being written: %v, %v; want one", tmp, err)
	}
}
