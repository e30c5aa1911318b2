package pipeline

import (
	"cmp"
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// TestMonthInPiecesMerge runs TestMerge's records through the jobs
// writer, with March's stored rows in a hot segment and one more job in a
// settled segment that the run does not load until the input gives that
// job again (a holder), and April's records running on from March: a
// finished row outlives a running one, a running one is replaced by a
// finished one, the later of two input rows wins, a row starting at to is
// left for later. Every piece size gives the rows, the usage and the
// counts of whole months; pieces of two records cut March into several
// segments.
func TestMonthInPiecesMerge(t *testing.T) {
	t.Parallel()
	mar := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	apr := mar.AddDate(0, 1, 0)
	to := apr.Add(10 * time.Hour)
	at := func(h int) *time.Time { x := mar.Add(time.Duration(h) * time.Hour); return &x }
	row := func(id int64, start int, end *time.Time, line int64, user string) record.JobRow {
		return record.JobRow{JobID: "j" + string(rune('a'+id%26)), JobIDRaw: id, Start: *at(start), End: end,
			SourceLine: line, User: user, Account: "acct", Partition: "p", AllocCPUs: 1, Billing: 1.5, UsageFactor: 1}
	}
	stored := []record.JobRow{
		row(1, 700, at(702), 100, "u1"), // finished: outlives input 11 (running)
		row(2, 701, nil, 101, "u2"),     // running: replaced by input 12 (finished)
		row(3, 702, at(703), 102, "u1"), // not in the input: stays
		row(4, 703, at(704), 103, "u3"), // replaced by input 14
		row(5, 704, nil, 104, "u2"),     // not in the input, runs into April
	}
	settled := []record.JobRow{row(9, 1, at(2), 109, "u9")} // left the hot segments; given again
	input := []record.JobRow{
		row(1, 700, nil, 11, "u1"),
		row(2, 701, at(705), 12, "u2"),
		row(4, 703, at(705), 13, "u3"), // superseded by 14, later in the input
		row(4, 703, at(706), 14, "u3"),
		row(6, 705, nil, 15, "u4"),              // new, running into April
		row(4, 704, at(706), 17, "u3"),          // same id, another start: another run
		row(9, 1, at(3), 19, "u9"),              // the holder's job, longer now
		row(10, 2, at(710), 20, "u5"),           // new, from early March into April
		row(11, 705, at(705), 21, "u6"),         // zero length
		row(12, 31*24+10, nil, 22, "u7"),        // starts at to: left for later
		row(13, 31*24+1, at(31*24+5), 23, "u1"), // April
	}
	type result struct {
		jobs    map[string][]record.JobRow
		usage   map[string][]record.UsageRow
		sum     Summary
		segs    int
		written int
	}
	run := func(piece int) result {
		h, sp := testHistory(t)
		if err := h.WritePartition(schemas.TableJobs, "c", mar, settled); err != nil {
			t.Fatal(err)
		}
		tx, err := h.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Write(schemas.TableJobs, "c", mar, record.JobTableOf(stored), true); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		dict := record.NewJobDict()
		in := record.NewJobTable(dict, 0)
		for i := range input {
			in.AppendRow(&input[i])
		}
		var marIdx, aprIdx []int32
		for i := range input {
			if input[i].Start.Before(apr) {
				marIdx = append(marIdx, int32(i))
			} else {
				aprIdx = append(aprIdx, int32(i))
			}
		}
		if err := sp.Add("2025-03", in, marIdx); err != nil {
			t.Fatal(err)
		}
		if err := sp.Add("2025-04", in, aprIdx); err != nil {
			t.Fatal(err)
		}
		if tx, err = h.Begin(); err != nil {
			t.Fatal(err)
		}
		w := &jobsWriter{tx: tx, cluster: "c", to: to.Unix(), lo: at(600).Unix(), hotFrom: to.Unix() - int64(HotWindow/time.Second),
			spill: sp, dict: dict, piece: piece}
		var res result
		if err := w.write(context.Background(), w.lo, nil, &res.sum); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		res.written, res.jobs, res.usage = w.files, map[string][]record.JobRow{}, map[string][]record.UsageRow{}
		m, err := h.ReadManifest()
		if err != nil {
			t.Fatal(err)
		}
		res.segs = len(m.Files(schemas.TableJobs, "c"))
		for _, mo := range []time.Time{mar, apr} {
			var jobs []record.JobRow
			if err := h.ReadPartition(schemas.TableJobs, "c", mo, &jobs); err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(jobs, func(a, b record.JobRow) int {
				return cmp.Or(cmp.Compare(a.User, b.User), a.Start.Compare(b.Start), cmp.Compare(a.JobIDRaw, b.JobIDRaw))
			})
			res.jobs[monthKey(mo)] = jobs
			var usage []record.UsageRow
			if err := h.ReadPartition(schemas.TableUsage, "c", mo, &usage); err != nil {
				t.Fatal(err)
			}
			res.usage[monthKey(mo)] = usage
		}
		return res
	}
	whole := run(0)
	var lines []int64
	for _, r := range whole.jobs["2025-03"] {
		lines = append(lines, r.SourceLine)
	}
	slices.Sort(lines)
	if want := []int64{12, 14, 15, 17, 19, 20, 21, 100, 102, 104}; !slices.Equal(lines, want) {
		t.Fatalf("whole months: March rows %v, want %v", lines, want)
	}
	if whole.sum.AfterTo != 1 || whole.sum.JobsWritten != 9 {
		t.Fatalf("whole months: after to %d, written %d; want 1, 9", whole.sum.AfterTo, whole.sum.JobsWritten)
	}
	for _, piece := range []int{2, 3, 4, 7} {
		got := run(piece)
		if !reflect.DeepEqual(got.jobs, whole.jobs) {
			t.Errorf("pieces of %d: jobs\n got %v\nwant %v", piece, got.jobs, whole.jobs)
		}
		if !reflect.DeepEqual(got.usage, whole.usage) {
			t.Errorf("pieces of %d: usage\n got %v\nwant %v", piece, got.usage, whole.usage)
		}
		if g, w := [3]int64{got.sum.AfterTo, got.sum.JobsWritten, got.sum.Unrecharged}, [3]int64{whole.sum.AfterTo, whole.sum.JobsWritten, whole.sum.Unrecharged}; g != w {
			t.Errorf("pieces of %d: after to, written, unrecharged %v, want %v", piece, g, w)
		}
		if piece == 2 && got.segs <= whole.segs {
			t.Errorf("pieces of 2: %d jobs segments, want more than %d", got.segs, whole.segs)
		}
	}
}
