package history_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/history/historytest"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// TestPriorityFirstLayout reads a priority file of the table's first
// layout, before submit and start rows (no at or event column, every row
// a snapshot's): its rows come back as pending rows at their snapshot.
func TestPriorityFirstLayout(t *testing.T) {
	t.Parallel()
	type firstRow struct {
		Snapshot   time.Time `parquet:"snapshot,timestamp(microsecond:utc)"`
		ComputedAt time.Time `parquet:"computed_at,timestamp(microsecond:utc)"`
		JobID      int64     `parquet:"job_id"`
		Partition  string    `parquet:"partition,dict"`
		Priority   int64     `parquet:"priority"`
	}
	snap := time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	if err := parquet.Write(&b, []firstRow{{Snapshot: snap, ComputedAt: snap.Add(-30 * time.Second), JobID: 7, Partition: "cpu", Priority: 1234}}); err != nil {
		t.Fatal(err)
	}
	h, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	historytest.CommitForeign(t, h, historytest.ForeignFile{Table: schemas.TablePriority, Cluster: "c", Month: "2025-03", Data: b.Bytes()})
	var rows []record.PriorityRow
	if err := h.ReadPartition(schemas.TablePriority, "c", time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.Event != record.EventPending || !r.At.Equal(snap) || r.Snapshot == nil || !r.Snapshot.Equal(snap) || r.JobID != 7 || r.Priority != 1234 {
		t.Errorf("read %+v, want a pending row at %s of job 7 with priority 1234", r, snap)
	}
}
