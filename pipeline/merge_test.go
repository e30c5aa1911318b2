package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/internal/spill"
	"github.com/fairledger/fairledger/schemas"
)

// TestMerge: fresh rows replace the table's rows of the same (job_id_raw,
// start) unless the table's row is finished and the fresh one running; the
// later of two fresh rows wins; rows starting at or after to are dropped;
// charged_sec runs to the end or to. The writer merged a month before.
func TestMerge(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	to := t0.Add(10 * time.Hour)
	at := func(h int) *time.Time { x := t0.Add(time.Duration(h) * time.Hour); return &x }
	row := func(id int64, start int, end *time.Time, line int64) record.JobRow {
		return record.JobRow{JobIDRaw: id, Start: *at(start), End: end, SourceLine: line}
	}
	old := []record.JobRow{
		row(1, 0, at(2), 100),  // finished: outlives fresh 11 (running)
		row(2, 1, nil, 101),    // running: replaced by fresh 12 (finished)
		row(3, 2, at(3), 102),  // not in the input: stays
		row(4, 3, at(4), 103),  // replaced by fresh 14
		row(5, 4, at(12), 104), // not in the input, ends after to
	}
	fresh := []record.JobRow{
		row(1, 0, nil, 11),
		row(2, 1, at(5), 12),
		row(4, 3, at(5), 13), // superseded by 14, later in the input
		row(4, 3, at(6), 14),
		row(6, 5, nil, 15),   // new, running
		row(7, 10, nil, 16),  // starts at to: dropped
		row(4, 4, at(6), 17), // same id, another start: another run
	}
	w := &jobsWriter{to: to.Unix()}
	// merge reuses its scratch from month to month: merge a larger month
	// first, of which every record is kept.
	var before []record.JobRow
	for id := range int64(20) {
		before = append(before, row(100+id, 0, at(1), 200+id))
	}
	var mj monthJobs
	tb := record.NewJobTable(record.NewJobDict(), 0)
	for i := range before {
		tb.AppendRow(&before[i])
	}
	w.merge(tb, 0, len(tb.Recs), &mj)
	if len(tb.Recs) != len(before) || mj.written != int64(len(before)) {
		t.Fatalf("the month before: %d records, written %d; want %d", len(tb.Recs), mj.written, len(before))
	}
	mj = monthJobs{}
	tb = record.NewJobTable(record.NewJobDict(), 0)
	for _, rows := range [][]record.JobRow{old, fresh} {
		for i := range rows {
			tb.AppendRow(&rows[i])
		}
	}
	w.merge(tb, len(old), len(tb.Recs), &mj)
	charged := map[int64]int64{} // source line → charged hours
	var lines []int64
	for _, r := range tb.Recs {
		lines = append(lines, r.SourceLine)
		charged[r.SourceLine] = r.ChargedSec / 3600
	}
	slices.Sort(lines)
	if want := []int64{12, 14, 15, 17, 100, 102, 104}; !slices.Equal(lines, want) {
		t.Fatalf("rows %v, want %v", lines, want)
	}
	wantCharged := map[int64]int64{12: 4, 14: 3, 15: 5, 17: 2, 100: 2, 102: 1, 104: 6}
	for line, h := range wantCharged {
		if charged[line] != h {
			t.Errorf("row %d charged %d h, want %d", line, charged[line], h)
		}
	}
	// Written counts the distinct runs of the input before to: 1, 2, 4@3, 6, 4@4.
	if mj.written != 5 || mj.afterTo != 1 {
		t.Errorf("written %d, after to %d; want 5, 1", mj.written, mj.afterTo)
	}
}

// testHistory opens a history in a temporary directory with a spill
// beside it, closed when the test ends.
func testHistory(t *testing.T) (*history.Store, *spill.Jobs) {
	t.Helper()
	dir := t.TempDir()
	h, err := history.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := spill.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	return h, sp
}

// TestMonthsStopsOnCancel: a cancelled run stops the month pipeline with
// the context's error instead of writing on (or hanging).
func TestMonthsStopsOnCancel(t *testing.T) {
	t.Parallel()
	h, sp := testHistory(t)
	jan := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	months := []time.Time{jan, jan.AddDate(0, 1, 0), jan.AddDate(0, 2, 0)}
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort()
	w := &jobsWriter{tx: tx, cluster: "c", to: months[2].Unix(), spill: sp, rewritten: map[string]bool{}, changeAt: math.MaxInt64}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.months(ctx, months, map[string]bool{}, nil, &Summary{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if w.files != 0 {
		t.Errorf("%d files written after the cancel", w.files)
	}
}

// TestMonthsRewritesSeveralMonths runs four months through the jobs
// writer, each with an old jobs segment that brings names and a TRES set
// the dictionary has not seen, so the dictionary grows while the month
// before is encoded (run it with -race). The old rows were charged one
// hour of their two (as by a run that ended in the middle of them), so
// every segment is rewritten with its rows charged their full two hours,
// and every month gets a usage segment of the recomputed days.
func TestMonthsRewritesSeveralMonths(t *testing.T) {
	t.Parallel()
	h, sp := testHistory(t)
	jan := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var months []time.Time
	for i := range 4 {
		months = append(months, jan.AddDate(0, i, 0))
	}
	to := months[3].AddDate(0, 0, 20)
	fresh := map[string]bool{}
	want := map[string][]record.JobRow{}
	for i, m := range months {
		var rows []record.JobRow
		for j := range 3 {
			start := m.Add(time.Duration(j+1) * time.Hour)
			end := start.Add(2 * time.Hour)
			rows = append(rows, record.JobRow{JobID: fmt.Sprint(100*i + j), JobIDRaw: int64(100*i + j),
				User: fmt.Sprintf("u%d-%d", i, j), Account: fmt.Sprintf("acct%d", i), Partition: "p", QOS: "normal",
				State: "COMPLETED", SourceFile: fmt.Sprintf("f%d", i), Start: start, End: &end, ChargedSec: 3600,
				AllocCPUs: 2, Billing: 2, UsageFactor: 1, TRES: map[string]float64{"cpu": 2, fmt.Sprintf("gres/m%d", i): 1}})
		}
		if err := h.WritePartition(schemas.TableJobs, "c", m, rows); err != nil {
			t.Fatal(err)
		}
		fresh[monthKey(m)] = true
		for k := range rows {
			rows[k].ChargedSec = 7200
		}
		want[monthKey(m)] = rows
	}
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	w := &jobsWriter{tx: tx, cluster: "c", to: to.Unix(), hotFrom: to.Unix() - int64(HotWindow/time.Second), spill: sp,
		dict: record.NewJobDict(), rewritten: map[string]bool{}, changeAt: math.MaxInt64}
	if err := w.months(context.Background(), months, fresh, w.segments(), &Summary{}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if w.files != 8 {
		t.Errorf("%d files written, want 8 (4 jobs, 4 usage)", w.files)
	}
	for _, m := range months {
		var got []record.JobRow
		if err := h.ReadPartition(schemas.TableJobs, "c", m, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want[monthKey(m)]) {
			t.Errorf("%s jobs:\n got %v\nwant %v", monthKey(m), got, want[monthKey(m)])
		}
		var usage []record.UsageRow
		if err := h.ReadPartition(schemas.TableUsage, "c", m, &usage); err != nil {
			t.Fatal(err)
		}
		if len(usage) != 3 || usage[0].CPUSec != 2*7200 {
			t.Errorf("%s usage %v, want 3 rows of 14400 CPU-s", monthKey(m), usage)
		}
	}
}
