package spill

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
)

// variedRows returns n rows that take every path of the encoding: each
// kind of job id (decimal, array task, het component, ids of 150 to 249
// bytes, empty, a step's), NULLs in every nullable column, running jobs,
// starts before 1970 and off the whole second, job ids and lines going
// backwards, names and TRES sets that change and that stay.
func variedRows(n int) []record.JobRow {
	i64 := func(v int64) *int64 { return &v }
	str := func(s string) *string { return &s }
	tm := func(v time.Time) *time.Time { return &v }
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := make([]record.JobRow, n)
	for i := range rows {
		raw := int64(5000 + 3*i)
		if i%13 == 6 {
			raw = int64(100 - i) // backwards, negative later on
		}
		r := record.JobRow{JobIDRaw: raw, Start: base.Add(time.Duration(i) * 37 * time.Second),
			ChargedSec: int64(i * 11), NNodes: int64(i % 4), AllocCPUs: int64(1 + i%64), BillingSlurm: int64(i % 9),
			SourceLine: int64(10 + i), MemMB: 1.5 * float64(i), NodeCount: float64(i % 3), GPU: 0.1 * float64(i%3),
			Billing: float64(i) / 8, UsageFactor: 1, User: fmt.Sprintf("user%d", i%7), Account: fmt.Sprintf("acct%d", i%3),
			Partition: []string{"cpu", "gpu"}[i/10%2], QOS: "normal", State: "COMPLETED",
			SourceFile: fmt.Sprintf("sacct-%d.txt", i/100)}
		switch i % 6 {
		case 0:
			r.JobID = fmt.Sprint(raw)
		case 1:
			r.ArrayJobID, r.ArrayTaskID = i64(raw-int64(i%5)), i64(int64(i%5))
			r.JobID = fmt.Sprintf("%d_%d", raw-int64(i%5), i%5)
		case 2:
			r.HetJobID, r.HetJobOffset = i64(raw-1), i64(1)
			r.JobID = fmt.Sprintf("%d+1", raw-1)
		case 3:
			r.JobID = fmt.Sprintf("%d.", i) + strings.Repeat("x", 150+i%100)
		case 4:
			r.JobID = ""
		case 5:
			r.JobID = fmt.Sprintf("%d.batch", raw)
		}
		if i%7 == 3 { // before 1970, off the whole second
			r.Start = time.Unix(-1_000_000-int64(i)*1000, int64(i%1000)*1000).UTC()
		}
		if i%3 != 0 {
			r.Submit = tm(r.Start.Add(-time.Duration(i%50) * time.Second))
		}
		if i%4 == 1 {
			r.Eligible = tm(r.Start.Add(-time.Second))
		}
		if i%5 == 2 {
			r.State = "RUNNING" // no end, no elapsed time
		} else {
			r.ElapsedSec = i64(int64(i % 100))
			r.End = tm(r.Start.Add(time.Duration(i%100) * time.Second))
			if i%10 == 9 {
				r.End = tm(r.Start.Add(1500 * time.Microsecond))
			}
		}
		if i%8 == 0 {
			r.SuspendedSec = i64(int64(i))
		}
		if i%2 == 0 {
			r.TimelimitMin = i64(int64(60 * (i % 3)))
		}
		if i%9 == 4 {
			r.CancelledBy = str("root")
			r.State = "CANCELLED"
		}
		if i%4 != 0 {
			r.TRES = map[string]float64{"cpu": float64(i%5 + 1), "mem": 0.5 * float64(i%3)}
		}
		if i%11 == 0 {
			r.Billing = 1e300
		}
		rows[i] = r
	}
	return rows
}

// spillRows adds rows to month of s in three calls of different sizes and
// returns the dictionary the records refer to.
func spillRows(t *testing.T, s *Jobs, month string, rows []record.JobRow) *record.JobDict {
	t.Helper()
	dict := record.NewJobDict()
	in := tableOf(dict, rows)
	idx := make([]int32, len(rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	for _, part := range [][]int32{idx[:len(idx)/3], idx[len(idx)/3 : len(idx)/2], idx[len(idx)/2:]} {
		if err := s.Add(month, in, part); err != nil {
			t.Fatal(err)
		}
	}
	return dict
}

// scanRows scans month n records at a time and returns the rows and the
// size of each chunk.
func scanRows(t *testing.T, s *Jobs, dict *record.JobDict, month string, n int) ([]record.JobRow, []int) {
	t.Helper()
	tb := record.NewJobTable(dict, 0)
	var rows []record.JobRow
	var chunks []int
	err := s.Scan(month, tb, n, func() error {
		chunks = append(chunks, len(tb.Recs))
		for i := range tb.Recs {
			rows = append(rows, tb.Row(i))
		}
		if len(tb.Recs) > 0 {
			tb.Recs[0].JobIDRaw = -42 // fn may change the chunk; the next scan does not see it
		}
		return nil
	})
	if err != nil {
		t.Fatalf("scan %s by %d: %v", month, n, err)
	}
	return rows, chunks
}

// TestScanChunks: 50 records scanned 1, 3, 50, 51 and 1000 at a time, with
// the default window and one of 64 bytes, come back as they went in, in
// chunks of n and a last of the rest; the month stays spilled (Count 50)
// for each of the scans, and Read then returns the same records.
func TestScanChunks(t *testing.T) {
	t.Parallel()
	rows := variedRows(50)
	s := testSpill(t)
	dict := spillRows(t, s, "2025-01", rows)
	for _, window := range []int{defaultWindow, 64} {
		s.window = window
		for _, c := range []struct {
			n      int
			chunks []int
		}{
			{1, repeat(1, 50)},
			{3, append(repeat(3, 16), 2)},
			{50, []int{50}},
			{51, []int{50}},
			{1000, []int{50}},
		} {
			got, chunks := scanRows(t, s, dict, "2025-01", c.n)
			if !reflect.DeepEqual(chunks, c.chunks) {
				t.Errorf("window %d, by %d: chunks %v, want %v", window, c.n, chunks, c.chunks)
			}
			if !reflect.DeepEqual(got, rows) {
				t.Errorf("window %d, by %d: rows differ:\n got %+v\nwant %+v", window, c.n, got, rows)
			}
			if n := s.Count("2025-01"); n != 50 {
				t.Errorf("window %d, by %d: Count after the scan = %d, want 50", window, c.n, n)
			}
		}
	}
	if got := readSpill(t, s, dict, "2025-01"); !reflect.DeepEqual(got, rows) {
		t.Errorf("Read after the scans:\n got %+v\nwant %+v", got, rows)
	}
}

// repeat returns n copies of v.
func repeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestScanWindowSizes: 300 records, a sixth of them with job ids of 150 to
// 249 bytes (longer than the window), read through every window size from
// the least to 700 bytes, so that records are cut by a refill at every
// place, the ids' lengths and bytes among them.
func TestScanWindowSizes(t *testing.T) {
	t.Parallel()
	rows := variedRows(300)
	s := testSpill(t)
	dict := spillRows(t, s, "2025-02", rows)
	for window := minWindow; window <= 700; window++ {
		s.window = window
		got, _ := scanRows(t, s, dict, "2025-02", 7)
		if !reflect.DeepEqual(got, rows) {
			for i := range min(len(got), len(rows)) {
				if !reflect.DeepEqual(got[i], rows[i]) {
					t.Fatalf("window %d: row %d:\n got %+v\nwant %+v", window, i, got[i], rows[i])
				}
			}
			t.Fatalf("window %d: %d rows, want %d", window, len(got), len(rows))
		}
	}
}

// TestScanEmpty: a month with no records calls fn never, and a chunk size
// below 1 is an error.
func TestScanEmpty(t *testing.T) {
	t.Parallel()
	s := testSpill(t)
	tb := record.NewJobTable(record.NewJobDict(), 0)
	called := false
	if err := s.Scan("2025-03", tb, 10, func() error { called = true; return nil }); err != nil || called {
		t.Errorf("scan of no month: err %v, fn called %v; want nil, false", err, called)
	}
	spillRows(t, s, "2025-03", variedRows(3))
	if err := s.Scan("2025-03", tb, 0, func() error { return nil }); err == nil {
		t.Error("scan by 0: no error")
	}
}

// TestScanFnError: fn's error stops the scan (no third chunk) and comes
// back as it is.
func TestScanFnError(t *testing.T) {
	t.Parallel()
	s := testSpill(t)
	dict := spillRows(t, s, "2025-04", variedRows(20))
	stop := errors.New("stop")
	calls := 0
	err := s.Scan("2025-04", record.NewJobTable(dict, 0), 5, func() error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 2 {
		t.Errorf("Scan = %v after %d calls, want stop after 2", err, calls)
	}
}

// TestScanCorrupt: a file cut in record 9, a record that does not
// decode, and a count below the file's records each give an error that
// names the month (and the record), with the default window and a small
// one. Record 9's offset is the size of a month holding the first 9
// records alone.
func TestScanCorrupt(t *testing.T) {
	t.Parallel()
	rows := variedRows(12)
	for _, window := range []int{defaultWindow, 64} {
		s := testSpill(t)
		s.window = window
		dict := spillRows(t, s, "2025-05", rows)
		spillRows(t, s, "2025-06", rows[:9])
		for _, m := range []string{"2025-05", "2025-06"} {
			if err := s.months[m].w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		cut := s.months["2025-06"].size + 1
		if err := os.Truncate(s.months["2025-05"].f.Name(), int64(cut)); err != nil {
			t.Fatal(err)
		}
		err := s.Scan("2025-05", record.NewJobTable(dict, 0), 4, func() error { return nil })
		if err == nil || !strings.HasPrefix(err.Error(), "spill 2025-05 record 9: ") || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("window %d, file cut in record 9: %v", window, err)
		}

		// Record 9's tag becomes eleven bytes with the continuation bit:
		// no varint.
		bad := make([]byte, 11)
		for i := range bad {
			bad[i] = 0xff
		}
		sf := s.months["2025-06"]
		if err := s.Add("2025-06", tableOf(dict, rows), []int32{9, 10}); err != nil {
			t.Fatal(err)
		}
		if err := sf.w.Flush(); err != nil {
			t.Fatal(err)
		}
		if _, err := sf.f.WriteAt(bad, int64(cut-1)); err != nil {
			t.Fatal(err)
		}
		err = s.Scan("2025-06", record.NewJobTable(dict, 0), 4, func() error { return nil })
		if err == nil || !strings.HasPrefix(err.Error(), "spill 2025-06 record 9: ") {
			t.Errorf("window %d, bad record 9: %v", window, err)
		}

		dict = spillRows(t, s, "2025-07", rows)
		s.months["2025-07"].n--
		err = s.Scan("2025-07", record.NewJobTable(dict, 0), 4, func() error { return nil })
		if err == nil || !strings.HasPrefix(err.Error(), "spill 2025-07: ") || !strings.Contains(err.Error(), "bytes after the last record") {
			t.Errorf("window %d, one record more than counted: %v", window, err)
		}
	}
}

// TestDrop: a dropped month is no longer listed or counted, its file is
// gone, and it scans and reads as empty; the other month stays; dropping
// an unknown month, or one twice, is no error.
func TestDrop(t *testing.T) {
	t.Parallel()
	s := testSpill(t)
	rows := variedRows(10)
	dict := spillRows(t, s, "2025-01", rows)
	spillRows(t, s, "2025-02", rows[:4])
	name := s.months["2025-01"].f.Name()
	if err := s.Drop("2025-01"); err != nil {
		t.Fatal(err)
	}
	if got := s.Months(); !reflect.DeepEqual(got, []string{"2025-02"}) {
		t.Errorf("Months() after the drop = %v, want [2025-02]", got)
	}
	if n := s.Count("2025-01"); n != 0 {
		t.Errorf("Count(2025-01) after the drop = %d, want 0", n)
	}
	if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dropped month's file: %v, want it gone", err)
	}
	if got, chunks := scanRows(t, s, dict, "2025-01", 3); got != nil || chunks != nil {
		t.Errorf("scan after the drop: %d rows in %v", len(got), chunks)
	}
	if got := readSpill(t, s, dict, "2025-01"); got != nil {
		t.Errorf("read after the drop: %d rows", len(got))
	}
	for _, m := range []string{"2025-01", "2030-12"} {
		if err := s.Drop(m); err != nil {
			t.Errorf("Drop(%s) = %v, want nil", m, err)
		}
	}
	if got := readSpill(t, s, dict, "2025-02"); !reflect.DeepEqual(got, rows[:4]) {
		t.Errorf("the other month:\n got %+v\nwant %+v", got, rows[:4])
	}
}

// TestScanAllocs: a scan allocates as much for 5,000 records as for 100
// (its window and little else): nothing a record, once the table has room.
func TestScanAllocs(t *testing.T) {
	s := testSpill(t)
	s.window = 4096 // many refills
	rows := variedRows(5000)
	dict := spillRows(t, s, "2025-01", rows[:100])
	spillRows(t, s, "2025-02", rows)
	tb := record.NewJobTable(dict, 0)
	scan := func(month string) float64 {
		return testing.AllocsPerRun(3, func() {
			if err := s.Scan(month, tb, 64, func() error { return nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
	scan("2025-02") // the table grows to its room for 64 records and their ids
	if few, many := scan("2025-01"), scan("2025-02"); many != few {
		t.Errorf("allocations: %v for 5,000 records, %v for 100", many, few)
	}
}
