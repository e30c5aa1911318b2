package pipeline

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fairledger/fairledger/export"
)

// spill holds the jobs rows of a run on disk, one file per month of start,
// until they are merged into the jobs table month by month; so the run's
// memory does not grow with the number of jobs in its input. The files use
// a compact private encoding (varints, NULLs kept apart from zeros) that is
// written and read once, in the same process.
type spill struct {
	dir    string
	months map[string]*spillFile
	buf    []byte
}

type spillFile struct {
	f *os.File
	w *bufio.Writer
	n int
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

// add appends rows to the month's file.
func (s *spill) add(month string, rows []export.JobRow) error {
	if len(rows) == 0 {
		return nil
	}
	sf := s.months[month]
	if sf == nil {
		f, err := os.Create(filepath.Join(s.dir, month+".bin"))
		if err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		sf = &spillFile{f: f, w: bufio.NewWriterSize(f, 1<<20)}
		s.months[month] = sf
	}
	for i := range rows {
		s.buf = appendJobRow(s.buf[:0], &rows[i])
		if _, err := sf.w.Write(s.buf); err != nil {
			return fmt.Errorf("spill %s: %w", month, err)
		}
	}
	sf.n += len(rows)
	return nil
}

// monthKeys lists the spilled months in order.
func (s *spill) monthKeys() []string {
	return slices.Sorted(maps.Keys(s.months))
}

// read returns every row spilled for month, in spill order, and removes
// the month's file.
func (s *spill) read(month string) ([]export.JobRow, error) {
	sf := s.months[month]
	if sf == nil {
		return nil, nil
	}
	delete(s.months, month)
	defer os.Remove(sf.f.Name())
	defer sf.f.Close()
	if err := sf.w.Flush(); err != nil {
		return nil, fmt.Errorf("spill %s: %w", month, err)
	}
	data, err := os.ReadFile(sf.f.Name())
	if err != nil {
		return nil, fmt.Errorf("spill %s: %w", month, err)
	}
	d := &rowDecoder{b: data, strs: map[string]string{}}
	out := make([]export.JobRow, sf.n)
	for i := range out {
		d.row(&out[i])
		if d.err != nil {
			return nil, fmt.Errorf("spill %s row %d: %w", month, i, d.err)
		}
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

// appendJobRow encodes r. Nullable values are a presence byte followed by
// the value.
func appendJobRow(b []byte, r *export.JobRow) []byte {
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	i64 := func(v int64) { b = binary.AppendVarint(b, v) }
	f64 := func(v float64) { b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v)) }
	opt := func(p *int64) {
		if p == nil {
			b = append(b, 0)
			return
		}
		b = append(b, 1)
		i64(*p)
	}
	tm := func(p *time.Time) {
		if p == nil {
			b = append(b, 0)
			return
		}
		b = append(b, 1)
		i64(p.UnixMicro())
	}
	str(r.JobID)
	i64(r.JobIDRaw)
	opt(r.ArrayJobID)
	opt(r.ArrayTaskID)
	opt(r.HetJobID)
	opt(r.HetJobOffset)
	str(r.User)
	str(r.Account)
	str(r.Partition)
	str(r.QOS)
	str(r.State)
	if r.CancelledBy == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		str(*r.CancelledBy)
	}
	tm(r.Submit)
	tm(r.Eligible)
	tm(&r.Start)
	tm(r.End)
	opt(r.ElapsedSec)
	i64(r.ChargedSec)
	opt(r.SuspendedSec)
	opt(r.TimelimitMin)
	i64(r.NNodes)
	i64(r.AllocCPUs)
	f64(r.MemMB)
	f64(r.NodeCount)
	f64(r.GPU)
	b = binary.AppendUvarint(b, uint64(len(r.TRES)))
	for k, v := range r.TRES { // any order: the decoder rebuilds the map
		str(k)
		f64(v)
	}
	f64(r.Billing)
	i64(r.BillingSlurm)
	f64(r.UsageFactor)
	str(r.SourceFile)
	i64(r.SourceLine)
	return b
}

// rowDecoder reads what appendJobRow wrote, from a month's whole file in
// memory; repeated strings (names, states, TRES keys) are interned. The
// first error sticks.
type rowDecoder struct {
	b    []byte
	strs map[string]string
	err  error
}

func (d *rowDecoder) fail() {
	if d.err == nil {
		d.err = io.ErrUnexpectedEOF
	}
	d.b = nil
}

func (d *rowDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *rowDecoder) i64() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *rowDecoder) f64() float64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *rowDecoder) flag() bool {
	if len(d.b) < 1 {
		d.fail()
		return false
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c == 1
}

// str reads a string; intern keeps one copy of each distinct value.
func (d *rowDecoder) str(intern bool) string {
	n := d.uvarint()
	if uint64(len(d.b)) < n {
		d.fail()
		return ""
	}
	raw := d.b[:n]
	d.b = d.b[n:]
	if !intern {
		return string(raw)
	}
	if s, ok := d.strs[string(raw)]; ok {
		return s
	}
	s := string(raw)
	d.strs[s] = s
	return s
}

func (d *rowDecoder) opt() *int64 {
	if !d.flag() {
		return nil
	}
	v := d.i64()
	return &v
}

func (d *rowDecoder) tm() *time.Time {
	if !d.flag() {
		return nil
	}
	t := time.UnixMicro(d.i64()).UTC()
	return &t
}

func (d *rowDecoder) row(r *export.JobRow) {
	r.JobID = d.str(false)
	r.JobIDRaw = d.i64()
	r.ArrayJobID = d.opt()
	r.ArrayTaskID = d.opt()
	r.HetJobID = d.opt()
	r.HetJobOffset = d.opt()
	r.User = d.str(true)
	r.Account = d.str(true)
	r.Partition = d.str(true)
	r.QOS = d.str(true)
	r.State = d.str(true)
	if d.flag() {
		s := d.str(true)
		r.CancelledBy = &s
	}
	r.Submit = d.tm()
	r.Eligible = d.tm()
	if t := d.tm(); t != nil {
		r.Start = *t
	}
	r.End = d.tm()
	r.ElapsedSec = d.opt()
	r.ChargedSec = d.i64()
	r.SuspendedSec = d.opt()
	r.TimelimitMin = d.opt()
	r.NNodes = d.i64()
	r.AllocCPUs = d.i64()
	r.MemMB = d.f64()
	r.NodeCount = d.f64()
	r.GPU = d.f64()
	if n := d.uvarint(); n > 0 && d.err == nil {
		r.TRES = make(map[string]float64, n)
		for range n {
			k := d.str(true)
			r.TRES[k] = d.f64()
		}
	}
	r.Billing = d.f64()
	r.BillingSlurm = d.i64()
	r.UsageFactor = d.f64()
	r.SourceFile = d.str(true)
	r.SourceLine = d.i64()
}
