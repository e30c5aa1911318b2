package pipeline

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export"
)

// spill holds the jobs rows of a run on disk, one uncompressed Parquet file per
// month of start (Parquet keeps NULLs apart from zeros), until they are merged into the jobs table month by month; so the
// run's memory does not grow with the number of jobs in its input.
type spill struct {
	dir    string
	months map[string]*spillFile
}

type spillFile struct {
	f  *os.File
	bw *bufio.Writer
	w  *parquet.GenericWriter[export.JobRow]
	n  int
}

const spillPrefix = ".spill-"

// newSpill creates a spill directory in the history (the same disk as the
// output, which is large; /tmp may be small).
func newSpill(history string) (*spill, error) {
	dir, err := os.MkdirTemp(history, spillPrefix)
	if err != nil {
		return nil, fmt.Errorf("spill directory: %w", err)
	}
	return &spill{dir: dir, months: map[string]*spillFile{}}, nil
}

// removeStaleSpills deletes the spill directories of killed runs. Call it
// under the history lock.
func removeStaleSpills(history string) error {
	entries, err := os.ReadDir(history)
	if err != nil {
		return fmt.Errorf("clean spill directories: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), spillPrefix) {
			if err := os.RemoveAll(filepath.Join(history, e.Name())); err != nil {
				return fmt.Errorf("clean spill directories: %w", err)
			}
		}
	}
	return nil
}

// add appends rows to the month's stream.
func (s *spill) add(month string, rows []export.JobRow) error {
	if len(rows) == 0 {
		return nil
	}
	sf := s.months[month]
	if sf == nil {
		f, err := os.Create(filepath.Join(s.dir, month+".parquet"))
		if err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		sf = &spillFile{f: f, bw: bw, w: parquet.NewGenericWriter[export.JobRow](bw)}
		s.months[month] = sf
	}
	if _, err := sf.w.Write(rows); err != nil {
		return fmt.Errorf("spill %s: %w", month, err)
	}
	sf.n += len(rows)
	return nil
}

// monthKeys lists the spilled months in order.
func (s *spill) monthKeys() []string {
	return slices.Sorted(maps.Keys(s.months))
}

// read returns every row spilled for month, in spill order, and frees the
// month's file.
func (s *spill) read(month string) ([]export.JobRow, error) {
	sf := s.months[month]
	if sf == nil {
		return nil, nil
	}
	delete(s.months, month)
	defer os.Remove(sf.f.Name())
	err := sf.w.Close()
	if err == nil {
		err = sf.bw.Flush()
	}
	if cerr := sf.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("spill %s: %w", month, err)
	}
	out, err := parquet.ReadFile[export.JobRow](sf.f.Name())
	if err != nil {
		return nil, fmt.Errorf("spill %s: %w", month, err)
	}
	return out, nil
}

// close removes the spill directory.
func (s *spill) close() error {
	for _, sf := range s.months {
		sf.f.Close()
	}
	return os.RemoveAll(s.dir)
}
