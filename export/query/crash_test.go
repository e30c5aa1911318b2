package query

import (
	"context"
	"testing"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/history/historytest"
	"github.com/fairledger/fairledger/schemas"
)

// TestOpenDuckDBAfterCrash: what crashed commits leave (a stage directory
// holding a written segment and a half-written temp file, a whole
// generation 2 renamed into place but never made current) changes nothing
// a DuckDB session reads. (The history's TestCrashSafety leaves the same,
// with historytest.CrashCommits, and checks its own readers.)
func TestOpenDuckDBAfterCrash(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	if err := h.WritePartition(schemas.TableUsage, "c1", jan, sampleUsage()); err != nil {
		t.Fatal(err)
	}
	historytest.CrashCommits(t, h, historytest.OnlyFile(t, h, schemas.TableUsage, "c1", "2025-01"))

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
