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
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fairledger/fairledger/export"
)

// spill holds the jobs rows of a run on disk, one file per month of start,
// until they are merged into the jobs table month by month; so the run's
// memory does not grow with the number of jobs in its input. The files use
// a compact private encoding (varints, NULLs kept apart from zeros) that is
// written and read once, in the same process.
type spill struct {
	dir  string
	buf  []byte
	dict spillDict

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
	return &spill{dir: dir, months: map[string]*spillFile{}, dict: newSpillDict()}, nil
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

// add appends the rows at the positions idx to the month's file.
func (s *spill) add(month string, rows []export.JobRow, idx []int32) error {
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
	clear(s.dict.byMap) // map identities are only stable while rows lives
	for _, i := range idx {
		s.buf = s.dict.appendRow(s.buf[:0], &rows[i])
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

// read returns every row spilled for month, in spill order, and removes
// the month's file. It may be called for different months at once, once
// add is done.
func (s *spill) read(month string) ([]export.JobRow, error) {
	s.mu.Lock()
	sf := s.months[month]
	delete(s.months, month)
	s.mu.Unlock()
	if sf == nil {
		return nil, nil
	}
	defer os.Remove(sf.f.Name())
	defer sf.f.Close()
	if err := sf.w.Flush(); err != nil {
		return nil, fmt.Errorf("spill %s: %w", month, err)
	}
	data, err := os.ReadFile(sf.f.Name())
	if err != nil {
		return nil, fmt.Errorf("spill %s: %w", month, err)
	}
	d := &rowDecoder{b: data, d: &s.dict}
	out := make([]export.JobRow, sf.n)
	ids := make([]byte, 0, 16*sf.n)
	ends := make([]int, sf.n)
	for i := range out {
		ids = append(ids, d.row(&out[i])...)
		if d.err != nil {
			return nil, fmt.Errorf("spill %s row %d: %w", month, i, d.err)
		}
		ends[i] = len(ids)
	}
	all, from := string(ids), 0 // one allocation for the month's job ids
	for i, end := range ends {
		out[i].JobID, from = all[from:end], end
	}
	return out, nil
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

// spillDict holds what the rows of a spill share: their names and TRES
// maps are written as indexes into it, once each. add fills it (one
// goroutine); read decodes with it, for several months at once, after the
// last add.
type spillDict struct {
	ids     map[string]uint32 // name → index in strs
	strs    []string
	tresIDs map[string]uint32 // canonical encoding of a TRES map → index in tres
	tres    []map[string]float64

	byMap   map[uintptr]uint32 // TRES map identity → index, within one add call
	entries []tresEntry
	key     []byte
}

type tresEntry struct {
	key string
	val float64
}

func newSpillDict() spillDict {
	return spillDict{ids: map[string]uint32{}, tresIDs: map[string]uint32{}, byMap: map[uintptr]uint32{}}
}

func (d *spillDict) strID(s string) uint64 {
	id, ok := d.ids[s]
	if !ok {
		id = uint32(len(d.strs))
		d.ids[s] = id
		d.strs = append(d.strs, s)
	}
	return uint64(id)
}

// tresID is the index of m's contents. Rows of one batch share their TRES
// maps (export.JobRowsFromBatch), so a map seen before in the same add call
// is found by identity without reading it.
func (d *spillDict) tresID(m map[string]float64) uint64 {
	if len(m) == 0 {
		return 0
	}
	ptr := reflect.ValueOf(m).Pointer()
	if id, ok := d.byMap[ptr]; ok {
		return uint64(id)
	}
	d.entries = d.entries[:0]
	for k, v := range m {
		d.entries = append(d.entries, tresEntry{k, v})
	}
	slices.SortFunc(d.entries, func(a, b tresEntry) int { return strings.Compare(a.key, b.key) })
	d.key = d.key[:0]
	for _, e := range d.entries {
		d.key = export.AppendTRESEntry(d.key, e.key, e.val)
	}
	id, ok := d.tresIDs[string(d.key)]
	if !ok {
		if len(d.tres) == 0 {
			d.tres = append(d.tres, nil) // index 0: no TRES
		}
		id = uint32(len(d.tres))
		d.tresIDs[string(d.key)] = id
		d.tres = append(d.tres, maps.Clone(m))
	}
	d.byMap[ptr] = id
	return uint64(id)
}

// appendRow encodes r. Names and TRES maps are dictionary indexes; the
// other timestamps are microseconds from the start; integral floats are
// varints. Nullable values are a presence byte followed by the value.
func (d *spillDict) appendRow(b []byte, r *export.JobRow) []byte {
	uv := func(v uint64) { b = binary.AppendUvarint(b, v) }
	i64 := func(v int64) { b = binary.AppendVarint(b, v) }
	f64 := func(v float64) { b = appendFloat(b, v) }
	opt := func(p *int64) {
		if p == nil {
			b = append(b, 0)
			return
		}
		b = append(b, 1)
		i64(*p)
	}
	start := r.Start.UnixMicro()
	tm := func(p *time.Time) {
		if p == nil {
			b = append(b, 0)
			return
		}
		b = append(b, 1)
		i64(p.UnixMicro() - start)
	}
	uv(uint64(len(r.JobID)))
	b = append(b, r.JobID...)
	i64(r.JobIDRaw)
	opt(r.ArrayJobID)
	opt(r.ArrayTaskID)
	opt(r.HetJobID)
	opt(r.HetJobOffset)
	uv(d.strID(r.User))
	uv(d.strID(r.Account))
	uv(d.strID(r.Partition))
	uv(d.strID(r.QOS))
	uv(d.strID(r.State))
	if r.CancelledBy == nil {
		uv(0)
	} else {
		uv(d.strID(*r.CancelledBy) + 1)
	}
	i64(start)
	tm(r.Submit)
	tm(r.Eligible)
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
	uv(d.tresID(r.TRES))
	f64(r.Billing)
	i64(r.BillingSlurm)
	f64(r.UsageFactor)
	uv(d.strID(r.SourceFile))
	i64(r.SourceLine)
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

// arena hands out pointers to values stored in shared chunks, so that a
// month's optional fields cost a few allocations instead of one each.
type arena[T any] struct{ chunk []T }

func (a *arena[T]) new(v T) *T {
	if len(a.chunk) == cap(a.chunk) {
		a.chunk = make([]T, 0, 4096)
	}
	a.chunk = append(a.chunk, v)
	return &a.chunk[len(a.chunk)-1]
}

// rowDecoder reads what appendRow wrote, from a month's whole file in
// memory. Rows with equal TRES share the dictionary's map. The first error
// sticks.
type rowDecoder struct {
	b     []byte
	d     *spillDict
	ints  arena[int64]
	times arena[time.Time]
	strs  arena[string]
	err   error
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

func (d *rowDecoder) flag() bool {
	if len(d.b) < 1 {
		d.fail()
		return false
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c == 1
}

// bytes reads a length-prefixed byte string, without copying it.
func (d *rowDecoder) bytes() []byte {
	n := d.uvarint()
	if uint64(len(d.b)) < n {
		d.fail()
		return nil
	}
	raw := d.b[:n]
	d.b = d.b[n:]
	return raw
}

// str reads a dictionary index.
func (d *rowDecoder) str() string {
	id := d.uvarint()
	if id >= uint64(len(d.d.strs)) {
		d.fail()
		return ""
	}
	return d.d.strs[id]
}

func (d *rowDecoder) opt() *int64 {
	if !d.flag() {
		return nil
	}
	return d.ints.new(d.i64())
}

func (d *rowDecoder) tm(start int64) *time.Time {
	if !d.flag() {
		return nil
	}
	return d.times.new(time.UnixMicro(start + d.i64()).UTC())
}

// row decodes one row into r, except its JobID, whose bytes it returns.
func (d *rowDecoder) row(r *export.JobRow) (jobID []byte) {
	jobID = d.bytes()
	r.JobIDRaw = d.i64()
	r.ArrayJobID = d.opt()
	r.ArrayTaskID = d.opt()
	r.HetJobID = d.opt()
	r.HetJobOffset = d.opt()
	r.User = d.str()
	r.Account = d.str()
	r.Partition = d.str()
	r.QOS = d.str()
	r.State = d.str()
	if id := d.uvarint(); id > 0 {
		if id > uint64(len(d.d.strs)) {
			d.fail()
		} else {
			r.CancelledBy = d.strs.new(d.d.strs[id-1])
		}
	}
	start := d.i64()
	r.Start = time.UnixMicro(start).UTC()
	r.Submit = d.tm(start)
	r.Eligible = d.tm(start)
	r.End = d.tm(start)
	r.ElapsedSec = d.opt()
	r.ChargedSec = d.i64()
	r.SuspendedSec = d.opt()
	r.TimelimitMin = d.opt()
	r.NNodes = d.i64()
	r.AllocCPUs = d.i64()
	r.MemMB = d.f64()
	r.NodeCount = d.f64()
	r.GPU = d.f64()
	if id := d.uvarint(); id > 0 {
		if id >= uint64(len(d.d.tres)) {
			d.fail()
		} else {
			r.TRES = d.d.tres[id]
		}
	}
	r.Billing = d.f64()
	r.BillingSlurm = d.i64()
	r.UsageFactor = d.f64()
	r.SourceFile = d.str()
	r.SourceLine = d.i64()
	return jobID
}
