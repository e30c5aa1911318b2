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
	"sync"

	"github.com/fairledger/fairledger/export"
)

// spill holds the jobs records of a run on disk, one file per month of
// start, until they are merged into the jobs table month by month; so the
// run's memory does not grow with the number of jobs in its input. The
// files use a compact private encoding (varints; names and TRES sets as
// the run's export.JobDict indexes) that is written and read once, in the
// same process.
type spill struct {
	dir string
	buf []byte

	mu     sync.Mutex // guards months: read is called for several months at once
	months map[string]*spillFile
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

// add appends the records of t at the positions idx to the month's file.
func (s *spill) add(month string, t *export.JobTable, idx []int32) error {
	if len(idx) == 0 {
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
	for _, i := range idx {
		r := &t.Recs[i]
		s.buf = appendRec(s.buf[:0], r, t.JobID(r))
		if _, err := sf.w.Write(s.buf); err != nil {
			return fmt.Errorf("spill %s: %w", month, err)
		}
	}
	sf.n += len(idx)
	return nil
}

// monthKeys lists the spilled months in order.
func (s *spill) monthKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.months))
}

// maxMonth is the largest number of records spilled for one month.
func (s *spill) maxMonth() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, sf := range s.months {
		n = max(n, sf.n)
	}
	return n
}

// read appends every record spilled for month to t, in spill order, and
// removes the month's file. It may be called for different months at once,
// once add is done.
func (s *spill) read(month string, t *export.JobTable) error {
	s.mu.Lock()
	sf := s.months[month]
	delete(s.months, month)
	s.mu.Unlock()
	if sf == nil {
		return nil
	}
	defer os.Remove(sf.f.Name())
	defer sf.f.Close()
	if err := sf.w.Flush(); err != nil {
		return fmt.Errorf("spill %s: %w", month, err)
	}
	data, err := os.ReadFile(sf.f.Name())
	if err != nil {
		return fmt.Errorf("spill %s: %w", month, err)
	}
	t.Recs = slices.Grow(t.Recs, sf.n)
	d := &recDecoder{b: data}
	for i := range sf.n {
		var r export.JobRec
		id := d.rec(&r)
		if d.err != nil {
			return fmt.Errorf("spill %s record %d: %w", month, i, d.err)
		}
		t.Append(r, id)
	}
	return nil
}

// close removes the spill directory.
func (s *spill) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sf := range s.months {
		sf.f.Close()
	}
	return os.RemoveAll(s.dir)
}

// appendRec encodes r and its job id. Timestamps other than the start are
// microseconds from the start; integral floats are varints; the nullable
// columns that have a value follow the Valid bits.
func appendRec(b []byte, r *export.JobRec, jobID []byte) []byte {
	uv := func(v uint64) { b = binary.AppendUvarint(b, v) }
	i64 := func(v int64) { b = binary.AppendVarint(b, v) }
	f64 := func(v float64) { b = appendFloat(b, v) }
	opt := func(v int64, bit uint16) {
		if r.Valid&bit != 0 {
			i64(v)
		}
	}
	uv(uint64(len(jobID)))
	b = append(b, jobID...)
	uv(uint64(r.Valid))
	i64(r.JobIDRaw)
	opt(r.ArrayJobID, export.ValidArrayJobID)
	opt(r.ArrayTaskID, export.ValidArrayTaskID)
	opt(r.HetJobID, export.ValidHetJobID)
	opt(r.HetJobOffset, export.ValidHetJobOffset)
	i64(r.Start)
	opt(r.Submit-r.Start, export.ValidSubmit)
	opt(r.Eligible-r.Start, export.ValidEligible)
	opt(r.End-r.Start, export.ValidEnd)
	opt(r.ElapsedSec, export.ValidElapsedSec)
	opt(r.SuspendedSec, export.ValidSuspendedSec)
	opt(r.TimelimitMin, export.ValidTimelimitMin)
	i64(r.ChargedSec)
	i64(r.NNodes)
	i64(r.AllocCPUs)
	i64(r.BillingSlurm)
	i64(r.SourceLine)
	f64(r.MemMB)
	f64(r.NodeCount)
	f64(r.GPU)
	f64(r.Billing)
	f64(r.UsageFactor)
	for _, id := range [...]uint32{r.User, r.Account, r.Partition, r.QOS, r.State, r.SourceFile, r.CancelledBy, r.TRES} {
		uv(uint64(id))
	}
	return b
}

// appendFloat writes an integral v (|v| ≤ 2^53, not -0) as the varint
// zigzag(v)<<1, any other value as the byte 1 and its 8 bytes.
func appendFloat(b []byte, v float64) []byte {
	if v >= -(1<<53) && v <= 1<<53 && v == float64(int64(v)) && !(v == 0 && math.Signbit(v)) {
		i := int64(v)
		return binary.AppendUvarint(b, (uint64(i<<1)^uint64(i>>63))<<1)
	}
	b = append(b, 1)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// recDecoder reads what appendRec wrote, from a month's whole file in
// memory. The first error sticks.
type recDecoder struct {
	b   []byte
	err error
}

func (d *recDecoder) fail() {
	if d.err == nil {
		d.err = io.ErrUnexpectedEOF
	}
	d.b = nil
}

func (d *recDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *recDecoder) i64() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *recDecoder) f64() float64 {
	u := d.uvarint()
	switch {
	case u&1 == 0:
		u >>= 1
		return float64(int64(u>>1) ^ -int64(u&1))
	case u == 1 && len(d.b) >= 8:
		v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
		d.b = d.b[8:]
		return v
	}
	d.fail()
	return 0
}

func (d *recDecoder) u32() uint32 {
	v := d.uvarint()
	if v > math.MaxUint32 {
		d.fail()
	}
	return uint32(v)
}

// rec decodes one record into r and returns its job id, viewing the
// decoder's buffer.
func (d *recDecoder) rec(r *export.JobRec) (jobID []byte) {
	n := d.uvarint()
	if uint64(len(d.b)) < n {
		d.fail()
		return nil
	}
	jobID, d.b = d.b[:n], d.b[n:]
	r.Valid = uint16(d.uvarint())
	opt := func(dst *int64, bit uint16, base int64) {
		if r.Valid&bit != 0 {
			*dst = base + d.i64()
		}
	}
	r.JobIDRaw = d.i64()
	opt(&r.ArrayJobID, export.ValidArrayJobID, 0)
	opt(&r.ArrayTaskID, export.ValidArrayTaskID, 0)
	opt(&r.HetJobID, export.ValidHetJobID, 0)
	opt(&r.HetJobOffset, export.ValidHetJobOffset, 0)
	r.Start = d.i64()
	opt(&r.Submit, export.ValidSubmit, r.Start)
	opt(&r.Eligible, export.ValidEligible, r.Start)
	opt(&r.End, export.ValidEnd, r.Start)
	opt(&r.ElapsedSec, export.ValidElapsedSec, 0)
	opt(&r.SuspendedSec, export.ValidSuspendedSec, 0)
	opt(&r.TimelimitMin, export.ValidTimelimitMin, 0)
	r.ChargedSec = d.i64()
	r.NNodes = d.i64()
	r.AllocCPUs = d.i64()
	r.BillingSlurm = d.i64()
	r.SourceLine = d.i64()
	r.MemMB = d.f64()
	r.NodeCount = d.f64()
	r.GPU = d.f64()
	r.Billing = d.f64()
	r.UsageFactor = d.f64()
	for _, dst := range [...]*uint32{&r.User, &r.Account, &r.Partition, &r.QOS, &r.State, &r.SourceFile, &r.CancelledBy, &r.TRES} {
		*dst = d.u32()
	}
	return jobID
}
