package spill

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fairledger/fairledger/export/record"
)

// Run is a sorted run: a table's records, in the table's order, in a file
// of the spill's directory, written once (WriteRun) and read back once,
// in order (Reader), as the pieces of a k-way merge.
type Run struct {
	s    *Jobs
	path string
	n    int
	size int64

	// Guarded by s.mu:
	f    *os.File // the file while a RunReader has it open
	read bool     // Reader has been called
}

// runBuffer is the size of WriteRun's buffered writer.
const runBuffer = 1 << 20

// WriteRun writes the records of t, in t's order and with their job ids,
// to a new run in the spill's directory. The run's file is removed by its
// RunReader's Close, or by the spill's Close.
func (s *Jobs) WriteRun(t *record.JobTable) (*Run, error) {
	f, err := os.CreateTemp(s.dir, "run-*.bin")
	if err != nil {
		return nil, fmt.Errorf("spill run: %w", err)
	}
	size, err := writeRecs(f, t)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("spill %s: %w", filepath.Base(f.Name()), err)
	}
	r := &Run{s: s, path: f.Name(), n: len(t.Recs), size: size}
	s.mu.Lock()
	s.runs[r] = struct{}{}
	s.mu.Unlock()
	return r, nil
}

// writeRecs writes t's records to f, encoded one after the other from a
// zero recPrev, and returns the bytes written. Each record is encoded
// straight into the writer's buffer.
func writeRecs(f io.Writer, t *record.JobTable) (int64, error) {
	w := bufio.NewWriterSize(f, runBuffer)
	var prev recPrev
	var size int64
	for i := range t.Recs {
		r := &t.Recs[i]
		id := t.JobID(r)
		if w.Available() < maxRecLen+binary.MaxVarintLen64+len(id) && w.Buffered() > 0 {
			if err := w.Flush(); err != nil {
				return 0, err
			}
		}
		b := appendRec(w.AvailableBuffer(), r, id, &prev)
		if _, err := w.Write(b); err != nil {
			return 0, err
		}
		size += int64(len(b))
	}
	return size, w.Flush()
}

// Len is the number of records in r.
func (r *Run) Len() int { return r.n }

// name is r's file name, for errors.
func (r *Run) name() string { return filepath.Base(r.path) }

// Reader opens r for reading its records back, in order, through a
// window of a fixed size. A run is read once: a second call is an error.
func (r *Run) Reader() (*RunReader, error) {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.read {
		return nil, fmt.Errorf("spill %s: read twice", r.name())
	}
	f, err := os.Open(r.path)
	if err != nil {
		return nil, fmt.Errorf("spill run: %w", err)
	}
	r.read, r.f = true, f
	return &RunReader{run: r, f: f, d: newFileDecoder(f, r.size, s.window)}, nil
}

// RunReader reads a run's records back in order, one at a time:
//
//	for rr.Next() {
//		t.Append(*rr.Rec(), rr.JobID())
//	}
//	if err := rr.Err(); err != nil { ... }
//
// Its memory is its window, whatever the run's length. Several may be
// read at once, each from one goroutine.
type RunReader struct {
	run *Run
	f   *os.File // nil once closed
	d   recDecoder
	rec record.JobRec
	id  []byte
	err error
}

// Next reads the next record; it returns false at the end of the run or
// on an error (see Err).
func (rr *RunReader) Next() bool {
	rr.id = nil
	if rr.err != nil || rr.f == nil {
		return false
	}
	d := &rr.d
	if d.n == rr.run.n {
		if left := d.left(); left != 0 {
			rr.err = fmt.Errorf("spill %s: %d bytes after the last record", rr.run.name(), left)
		}
		return false
	}
	rr.rec = record.JobRec{}
	id := d.rec(&rr.rec, &d.prev)
	if d.err != nil {
		rr.err = fmt.Errorf("spill %s record %d of %d: %w", rr.run.name(), d.n, rr.run.n, d.err)
		return false
	}
	rr.id = id
	return true
}

// Rec returns the record Next read, valid until the next call of Next. Its
// job id is JobID, not the record's own (which only a JobTable sets): to
// keep the record, append it to a table with t.Append(*rr.Rec(),
// rr.JobID()).
func (rr *RunReader) Rec() *record.JobRec { return &rr.rec }

// JobID returns the job id of the record Next read, valid until the next
// call of Next.
func (rr *RunReader) JobID() []byte { return rr.id }

// Err returns the error that ended the reading, if any: a record that
// does not decode, fewer records than the run's Len, or bytes after them.
func (rr *RunReader) Err() error { return rr.err }

// Close closes the run's file and removes it. After the spill's Close it
// does nothing.
func (rr *RunReader) Close() error {
	if rr.f == nil {
		return nil
	}
	r, f := rr.run, rr.f
	rr.f, rr.d.b, rr.id = nil, nil, nil
	s := r.s
	s.mu.Lock()
	open := r.f != nil // false when the spill's Close has closed it
	r.f = nil
	delete(s.runs, r)
	s.mu.Unlock()
	if !open {
		return nil
	}
	err := f.Close()
	if rerr := os.Remove(r.path); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("close spill %s: %w", r.name(), err)
	}
	return nil
}
