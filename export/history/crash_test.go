package history_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/export/history/historytest"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/record/recordtest"
	"github.com/fairledger/fairledger/schemas"
)

// TestCrashSafety: a commit that dies before switching the current symlink
// (a stage directory with a half-written temp file, or a whole generation
// renamed into place but never made current: historytest.CrashCommits)
// changes nothing a reader sees, and the next commit's Begin removes its
// files; aborted, that commit leaves no stage and the history as it was.
// (TestFailedWrite checks a write that fails midway, through the commit's
// internals.)
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	h := historytest.Open(t)
	if err := h.WritePartition(schemas.TableUsage, "c1", recordtest.Jan, recordtest.Usage()); err != nil {
		t.Fatal(err)
	}
	p := historytest.OnlyFile(t, h, schemas.TableUsage, "c1", "2025-01")
	good, err := os.ReadFile(historytest.Path(h, p))
	if err != nil {
		t.Fatal(err)
	}
	before, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	crashed := historytest.CrashCommits(t, h, p)

	// Readers see generation 1 only.
	var got []record.UsageRow
	if err := h.ReadPartition(schemas.TableUsage, "c1", recordtest.Jan, &got); err != nil || len(got) != 3 {
		t.Errorf("ReadPartition after crash = %d rows, %v; want 3 rows", len(got), err)
	}
	ps, err := h.Partitions(schemas.TableUsage)
	if err != nil || len(ps) != 1 || ps[0] != p {
		t.Errorf("Partitions after crash = %+v, %v; want %+v", ps, err, p)
	}
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	// Begin removed what the crashes left: only generation 1 and its own
	// stage, the one stage of generation 2 that is not the crashed one.
	if gens := historytest.Generations(t, h); !slices.Equal(gens, []string{historytest.GenName(1)}) {
		t.Errorf("after Begin the generations are %v, want only %s", gens, historytest.GenName(1))
	}
	stages, _ := filepath.Glob(filepath.Join(h.Dir, historytest.GenDir, historytest.StagePrefix+"*"))
	newStage := filepath.Join(h.Dir, historytest.GenDir, historytest.StagePrefix+historytest.GenName(2)+"-*")
	if len(stages) != 1 || stages[0] == crashed {
		t.Errorf("after Begin the stages are %v, want only the new one %s", stages, newStage)
	} else if ok, _ := filepath.Match(newStage, stages[0]); !ok {
		t.Errorf("after Begin the stage is %s, want the new one %s", stages[0], newStage)
	}
	tx.Remove(p)
	tx.Abort()
	if stages, _ := filepath.Glob(filepath.Join(h.Dir, historytest.GenDir, historytest.StagePrefix+"*")); len(stages) != 0 {
		t.Errorf("Abort left the stages %v", stages)
	}
	after, err := h.ReadManifest()
	if err != nil || !reflect.DeepEqual(after, before) {
		t.Errorf("manifest after an aborted commit = %+v, %v; want %+v", after, err, before)
	}
	if b, _ := os.ReadFile(historytest.Path(h, p)); !bytes.Equal(b, good) {
		t.Errorf("%s changed by the crashes and an aborted commit", p.Path)
	}
}
