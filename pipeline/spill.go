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
	"strconv"
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
	f    *os.File
	w    *bufio.Writer
	n    int
	prev recPrev // the last record written
}

// recPrev holds the fields of the record before that the spill encoding
// stores as differences: a month's records come in input order, in which
// neighbours have close starts, job ids and lines.
type recPrev struct {
	start, raw, line int64
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
		s.buf = appendRec(s.buf[:0], r, t.JobID(r), &sf.prev)
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
		id := d.rec(&r, &d.prev)
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

// appendRec encodes r and its job id, given the record before it in the
// same file (prev, which it updates). Timestamps are times (appendTime):
// the start as the difference from the previous record's start, the
// others from the start. The job_id_raw and the source line are
// differences from the previous record's; the job id is its length plus
// one and its bytes, or 0 when it is job_id_raw in decimal (most jobs);
// integral floats are varints; the nullable columns that have a value
// follow the Valid bits. A 5 M-job year spills some 50 bytes a record.
func appendRec(b []byte, r *export.JobRec, jobID []byte, prev *recPrev) []byte {
	uv := func(v uint64) { b = binary.AppendUvarint(b, v) }
	i64 := func(v int64) { b = binary.AppendVarint(b, v) }
	f64 := func(v float64) { b = appendFloat(b, v) }
	opt := func(v int64, bit uint16) {
		if r.Valid&bit != 0 {
			i64(v)
		}
	}
	optTime := func(v int64, bit uint16) {
		if r.Valid&bit != 0 {
			b = appendTime(b, v-r.Start)
		}
	}
	if isDecimal(jobID, r.JobIDRaw) {
		uv(0)
	} else {
		uv(uint64(len(jobID)) + 1)
		b = append(b, jobID...)
	}
	uv(uint64(r.Valid))
	i64(r.JobIDRaw - prev.raw)
	opt(r.ArrayJobID, export.ValidArrayJobID)
	opt(r.ArrayTaskID, export.ValidArrayTaskID)
	opt(r.HetJobID, export.ValidHetJobID)
	opt(r.HetJobOffset, export.ValidHetJobOffset)
	b = appendTime(b, r.Start-prev.start)
	optTime(r.Submit, export.ValidSubmit)
	optTime(r.Eligible, export.ValidEligible)
	optTime(r.End, export.ValidEnd)
	opt(r.ElapsedSec, export.ValidElapsedSec)
	opt(r.SuspendedSec, export.ValidSuspendedSec)
	opt(r.TimelimitMin, export.ValidTimelimitMin)
	i64(r.ChargedSec)
	i64(r.NNodes)
	i64(r.AllocCPUs)
	i64(r.BillingSlurm)
	i64(r.SourceLine - prev.line)
	f64(r.MemMB)
	f64(r.NodeCount)
	f64(r.GPU)
	f64(r.Billing)
	f64(r.UsageFactor)
	for _, id := range [...]uint32{r.User, r.Account, r.Partition, r.QOS, r.State, r.SourceFile, r.CancelledBy, r.TRES} {
		uv(uint64(id))
	}
	*prev = recPrev{r.Start, r.JobIDRaw, r.SourceLine}
	return b
}

// appendTime writes a difference of times in microseconds: whole seconds
// (sacct's) as the varint zigzag(seconds)<<1, others as zigzag(µs)<<1 | 1.
func appendTime(b []byte, us int64) []byte {
	if us%1e6 == 0 {
		return binary.AppendUvarint(b, zigzag(us/1e6)<<1)
	}
	return binary.AppendUvarint(b, zigzag(us)<<1|1)
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// isDecimal reports whether id is v printed in decimal (no sign or leading
// zeros unless v is 0; a negative v never matches).
func isDecimal(id []byte, v int64) bool {
	if v < 0 || len(id) == 0 || len(id) > 19 {
		return false
	}
	var buf [20]byte
	return string(strconv.AppendInt(buf[:0], v, 10)) == string(id)
}

// appendFloat writes an integral v (|v| ≤ 2^53, not -0) as the varint
// zigzag(v)<<1, any other value as the byte 1 and its 8 bytes.
func appendFloat(b []byte, v float64) []byte {
	if v >= -(1<<53) && v <= 1<<53 && v == float64(int64(v)) && !(v == 0 && math.Signbit(v)) {
		return binary.AppendUvarint(b, zigzag(int64(v))<<1)
	}
	b = append(b, 1)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// recDecoder reads what appendRec wrote, from a month's whole file in
// memory. The first error sticks.
type recDecoder struct {
	b    []byte
	err  error
	prev recPrev
	id   [20]byte // a job id that is job_id_raw in decimal
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
		return float64(unzigzag(u >> 1))
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

// time reads what appendTime wrote.
func (d *recDecoder) time() int64 {
	u := d.uvarint()
	if u&1 == 0 {
		return unzigzag(u>>1) * 1e6
	}
	return unzigzag(u >> 1)
}

// rec decodes one record into r, given the record before it (prev, which
// it updates), and returns its job id, viewing the decoder's buffer or
// its id array (valid until the next call).
func (d *recDecoder) rec(r *export.JobRec, prev *recPrev) (jobID []byte) {
	n := d.uvarint() // the id's length plus one; 0: job_id_raw in decimal
	if n > 0 {
		if uint64(len(d.b)) < n-1 {
			d.fail()
			return nil
		}
		jobID, d.b = d.b[:n-1], d.b[n-1:]
	}
	r.Valid = uint16(d.uvarint())
	opt := func(dst *int64, bit uint16) {
		if r.Valid&bit != 0 {
			*dst = d.i64()
		}
	}
	optTime := func(dst *int64, bit uint16) {
		if r.Valid&bit != 0 {
			*dst = r.Start + d.time()
		}
	}
	r.JobIDRaw = prev.raw + d.i64()
	opt(&r.ArrayJobID, export.ValidArrayJobID)
	opt(&r.ArrayTaskID, export.ValidArrayTaskID)
	opt(&r.HetJobID, export.ValidHetJobID)
	opt(&r.HetJobOffset, export.ValidHetJobOffset)
	r.Start = prev.start + d.time()
	optTime(&r.Submit, export.ValidSubmit)
	optTime(&r.Eligible, export.ValidEligible)
	optTime(&r.End, export.ValidEnd)
	opt(&r.ElapsedSec, export.ValidElapsedSec)
	opt(&r.SuspendedSec, export.ValidSuspendedSec)
	opt(&r.TimelimitMin, export.ValidTimelimitMin)
	r.ChargedSec = d.i64()
	r.NNodes = d.i64()
	r.AllocCPUs = d.i64()
	r.BillingSlurm = d.i64()
	r.SourceLine = prev.line + d.i64()
	r.MemMB = d.f64()
	r.NodeCount = d.f64()
	r.GPU = d.f64()
	r.Billing = d.f64()
	r.UsageFactor = d.f64()
	for _, dst := range [...]*uint32{&r.User, &r.Account, &r.Partition, &r.QOS, &r.State, &r.SourceFile, &r.CancelledBy, &r.TRES} {
		*dst = d.u32()
	}
	*prev = recPrev{r.Start, r.JobIDRaw, r.SourceLine}
	if n == 0 && d.err == nil {
		jobID = strconv.AppendInt(d.id[:0], r.JobIDRaw, 10)
	}
	return jobID
}
