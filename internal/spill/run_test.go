package spill

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/export/record"
)

// writeRun writes tb as a run of s.
func writeRun(t *testing.T, s *Jobs, tb *record.JobTable) *Run {
	t.Helper()
	r, err := s.WriteRun(tb)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// openRun opens r for reading.
func openRun(t *testing.T, r *Run) *RunReader {
	t.Helper()
	rr, err := r.Reader()
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// readRun reads rr to its end into a table using dict (as a merge copies
// the records it keeps) and returns them as rows, and rr's error.
func readRun(rr *RunReader, dict *record.JobDict) ([]record.JobRow, error) {
	back := record.NewJobTable(dict, 0)
	for rr.Next() {
		back.Append(*rr.Rec(), rr.JobID())
	}
	var rows []record.JobRow
	for i := range back.Recs {
		rows = append(rows, back.Row(i))
	}
	return rows, rr.Err()
}

// TestRunRoundTrip: 300 varied records (NULLs, running jobs, array and
// het ids, ids longer than the window, starts before 1970) written as a
// run come back in order through a 64-byte window, and so do a slice of
// them and a sorted table; closing the reader removes the file, and a run
// is read once.
func TestRunRoundTrip(t *testing.T) {
	t.Parallel()
	rows := variedRows(300)
	s := testSpill(t)
	s.window = 64
	dict := record.NewJobDict()
	in := tableOf(dict, rows)
	r := writeRun(t, s, in)
	if r.Len() != 300 {
		t.Errorf("Len() = %d, want 300", r.Len())
	}
	if _, err := os.Stat(r.path); err != nil {
		t.Fatalf("the run's file: %v", err)
	}
	rr := openRun(t, r)
	back := record.NewJobTable(dict, 0)
	for rr.Next() {
		back.Append(*rr.Rec(), rr.JobID())
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	var got []record.JobRow
	for i := range back.Recs {
		got = append(got, back.Row(i))
	}
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("read back:\n got %+v\nwant %+v", got, rows)
	}
	// The records themselves, null fields' zeros included, are those of
	// the table written, appended alike.
	written := record.NewJobTable(dict, 0)
	for i := range in.Recs {
		written.Append(in.Recs[i], in.JobID(&in.Recs[i]))
	}
	if !reflect.DeepEqual(back.Recs, written.Recs) {
		t.Error("the records read back differ from those written")
	}
	if rr.Next() || rr.JobID() != nil || rr.Err() != nil {
		t.Errorf("Next after the end: a record, or id %q, err %v", rr.JobID(), rr.Err())
	}
	if err := rr.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the run's file after Close: %v, want it gone", err)
	}
	if err := rr.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, err := r.Reader(); err == nil {
		t.Error("second Reader: no error")
	}

	rr = openRun(t, writeRun(t, s, in.Slice(100, 200)))
	if got, err := readRun(rr, dict); err != nil || !reflect.DeepEqual(got, rows[100:200]) {
		t.Errorf("slice 100-200: err %v, rows equal %v", err, reflect.DeepEqual(got, rows[100:200]))
	}
	rr.Close()

	sorted := tableOf(dict, rows)
	sorted.Sort()
	var want []record.JobRow
	for i := range sorted.Recs {
		want = append(want, sorted.Row(i))
	}
	rr = openRun(t, writeRun(t, s, sorted))
	if got, err := readRun(rr, dict); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("sorted table: err %v, rows in the table's order %v", err, reflect.DeepEqual(got, want))
	}
	rr.Close()
	if left, _ := os.ReadDir(s.dir); len(left) != 0 {
		t.Errorf("files left once the runs are read: %v", left)
	}
}

// TestRunHugeID: a record whose job id (2 MiB) is longer than the writer's
// buffer and the reader's window, between two short ones.
func TestRunHugeID(t *testing.T) {
	t.Parallel()
	rows := variedRows(3)
	rows[1].JobID = strings.Repeat("h", 2<<20)
	s := testSpill(t)
	s.window = 64
	dict := record.NewJobDict()
	rr := openRun(t, writeRun(t, s, tableOf(dict, rows)))
	defer rr.Close()
	got, err := readRun(rr, dict)
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Errorf("err %v, rows equal %v", err, reflect.DeepEqual(got, rows))
	}
}

// TestRunInterleaved: two runs read a record of one, two of the other,
// and so on (as a k-way merge reads), through small windows, each come
// back whole and in order.
func TestRunInterleaved(t *testing.T) {
	t.Parallel()
	rows := variedRows(400)
	s := testSpill(t)
	s.window = 100
	dict := record.NewJobDict()
	in := tableOf(dict, rows)
	a, b := openRun(t, writeRun(t, s, in.Slice(0, 150))), openRun(t, writeRun(t, s, in.Slice(150, 400)))
	defer a.Close()
	defer b.Close()
	back := record.NewJobTable(dict, 0)
	var gotA, gotB []record.JobRow
	take := func(rr *RunReader, got *[]record.JobRow) bool {
		if !rr.Next() {
			return false
		}
		back.Reset()
		back.Append(*rr.Rec(), rr.JobID())
		*got = append(*got, back.Row(0))
		return true
	}
	for moreA, moreB := true, true; moreA || moreB; {
		moreA = moreA && take(a, &gotA)
		moreB = moreB && take(b, &gotB)
		moreB = moreB && take(b, &gotB)
	}
	if a.Err() != nil || b.Err() != nil {
		t.Fatalf("errors %v, %v", a.Err(), b.Err())
	}
	if !reflect.DeepEqual(gotA, rows[:150]) {
		t.Errorf("run A: %d rows, equal %v", len(gotA), reflect.DeepEqual(gotA, rows[:150]))
	}
	if !reflect.DeepEqual(gotB, rows[150:]) {
		t.Errorf("run B: %d rows, equal %v", len(gotB), reflect.DeepEqual(gotB, rows[150:]))
	}
}

// TestRunEmpty: an empty table makes a run of no records.
func TestRunEmpty(t *testing.T) {
	t.Parallel()
	s := testSpill(t)
	r := writeRun(t, s, record.NewJobTable(record.NewJobDict(), 0))
	rr := openRun(t, r)
	if r.Len() != 0 || rr.Next() || rr.Err() != nil {
		t.Errorf("Len %d, Next true or err %v", r.Len(), rr.Err())
	}
	if err := rr.Close(); err != nil {
		t.Error(err)
	}
}

// TestRunCorrupt: a run with fewer records than its Len, more, or cut in
// record 9 (whose offset is the size of a run of the first 9 records)
// reports it in Err, naming the run's file and the record.
func TestRunCorrupt(t *testing.T) {
	t.Parallel()
	rows := variedRows(12)
	for _, window := range []int{defaultWindow, 64} {
		s := testSpill(t)
		s.window = window
		dict := record.NewJobDict()
		in := tableOf(dict, rows)
		check := func(what string, r *Run, wantRecs int, want string) {
			t.Helper()
			rr := openRun(t, r)
			defer rr.Close()
			n := 0
			for rr.Next() {
				n++
			}
			err := rr.Err()
			if n != wantRecs || err == nil || !strings.HasPrefix(err.Error(), "spill run-") || !strings.Contains(err.Error(), want) {
				t.Errorf("window %d, %s: %d records, then %v; want %d, then %q", window, what, n, err, wantRecs, want)
			}
		}
		r := writeRun(t, s, in)
		r.n++
		check("one record fewer than Len", r, 12, "record 12 of 13: unexpected EOF")
		r = writeRun(t, s, in)
		r.n--
		check("one record more than Len", r, 11, "bytes after the last record")
		cut := writeRun(t, s, in.Slice(0, 9)).size + 1
		r = writeRun(t, s, in)
		if err := os.Truncate(r.path, cut); err != nil {
			t.Fatal(err)
		}
		check("cut in record 9", r, 9, "record 9 of 12: unexpected EOF")
	}
}

// TestRunSpillClose: the spill's Close closes the file of a run being
// read and removes the runs, read or not; the reader's Close then does
// nothing, and the unread run cannot be opened.
func TestRunSpillClose(t *testing.T) {
	t.Parallel()
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in := tableOf(record.NewJobDict(), variedRows(10))
	reading, unread := writeRun(t, s, in), writeRun(t, s, in)
	rr := openRun(t, reading)
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := rr.f.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("the reader's file after the spill's Close: %v, want closed", err)
	}
	if _, err := os.Stat(s.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the spill directory after Close: %v, want it gone", err)
	}
	if err := rr.Close(); err != nil {
		t.Errorf("reader's Close after the spill's = %v, want nil", err)
	}
	if _, err := unread.Reader(); err == nil {
		t.Error("Reader of a run of a closed spill: no error")
	}
}

// TestRunReaderAllocs: Next allocates nothing, refills of its window
// included.
func TestRunReaderAllocs(t *testing.T) {
	s := testSpill(t)
	s.window = 1024 // many refills; no record needs more
	rows := variedRows(5000)
	rr := openRun(t, writeRun(t, s, tableOf(record.NewJobDict(), rows)))
	defer rr.Close()
	if a := testing.AllocsPerRun(4000, func() {
		if !rr.Next() {
			t.Fatal(rr.Err())
		}
	}); a != 0 {
		t.Errorf("%v allocations a record, want 0", a)
	}
}
