package spill

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fairledger/fairledger/export/record"
)

// Jobs holds the jobs records of a run on disk, one file per month of
// start, until they are merged into the jobs table month by month; so the
// run's memory does not grow with the number of jobs in its input. The
// files use a compact private encoding (varints; names and TRES sets as
// the run's record.JobDict indexes) that is written and read back in the
// same process. A huge month can be scanned in chunks (Scan) and its
// sorted chunks kept as runs (WriteRun) for a merge.
type Jobs struct {
	dir    string
	buf    []byte
	window int // the size of Scan's and RunReader's read window

	mu     sync.Mutex // guards months, runs and free: Read is called for several months at once
	months map[string]*spillFile
	runs   map[*Run]struct{} // the runs written and not yet closed
	free   [][]byte          // Read's buffers, kept for the next month's file
}

type spillFile struct {
	f    *os.File
	w    *bufio.Writer
	n    int
	size int     // bytes written
	prev recPrev // the last record written
}

// recPrev holds the fields of the record before that the spill encoding
// stores as differences (a month's records come in input order, in which
// neighbours have close starts, job ids and lines) or leaves out when
// unchanged (names: the source file, often the partition, QOS and state).
type recPrev struct {
	start, raw, line int64
	names            [numNames]uint32
}

// numNames is the number of JobDict indexes in a record: user, account,
// partition, QOS, state, source file, cancelled_by and TRES set.
const numNames = 8

const spillPrefix = ".spill-"

// New creates a spill directory in the history directory history (the
// same disk as the output, which is large; /tmp may be small).
func New(history string) (*Jobs, error) {
	dir, err := os.MkdirTemp(history, spillPrefix)
	if err != nil {
		return nil, fmt.Errorf("spill directory: %w", err)
	}
	return &Jobs{dir: dir, window: defaultWindow, months: map[string]*spillFile{}, runs: map[*Run]struct{}{}}, nil
}

// RemoveStale deletes the spill directories that killed runs left in the
// history directory history. Call it under the history lock.
func RemoveStale(history string) error {
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

// Add appends the records of t at the positions idx to the file of month
// (a month key, YYYY-MM).
func (s *Jobs) Add(month string, t *record.JobTable, idx []int32) error {
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
	// Records are encoded into s.buf and handed to the writer some
	// hundred kilobytes at a time rather than one by one.
	b := s.buf[:0]
	for k, i := range idx {
		r := &t.Recs[i]
		b = appendRec(b, r, t.JobID(r), &sf.prev)
		if len(b) >= spillChunk || k == len(idx)-1 {
			if _, err := sf.w.Write(b); err != nil {
				return fmt.Errorf("spill %s: %w", month, err)
			}
			sf.size += len(b)
			b = b[:0]
		}
	}
	s.buf = b
	sf.n += len(idx)
	return nil
}

// spillChunk is how many encoded bytes Add collects before writing them.
const spillChunk = 256 << 10

// Months lists the spilled months in order.
func (s *Jobs) Months() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.months))
}

// Count is the number of records spilled for month and not yet read or
// dropped (Scan leaves them).
func (s *Jobs) Count(month string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sf := s.months[month]; sf != nil {
		return sf.n
	}
	return 0
}

// Read appends every record spilled for month to t, in spill order, and
// removes the month's file. It may be called for different months at once,
// once Add is done.
func (s *Jobs) Read(month string, t *record.JobTable) error {
	sf := s.take(month)
	if sf == nil {
		return nil
	}
	defer os.Remove(sf.f.Name())
	defer sf.f.Close()
	if err := sf.w.Flush(); err != nil {
		return fmt.Errorf("spill %s: %w", month, err)
	}
	// The file is read back through the descriptor it was written with,
	// into a buffer kept from an earlier month: a fresh buffer for every
	// month cost a page fault per 4 KiB of it.
	data := s.buffer(sf.size)
	defer s.release(data)
	if _, err := sf.f.ReadAt(data, 0); err != nil {
		return fmt.Errorf("spill %s: %w", month, err)
	}
	d := &recDecoder{b: data}
	if err := d.appendTo(t, sf.n); err != nil {
		return fmt.Errorf("spill %s record %d: %w", month, d.n, err)
	}
	if left := d.left(); left != 0 {
		return fmt.Errorf("spill %s: %d bytes after the last record", month, left)
	}
	return nil
}

// Scan reads the records spilled for month in spill order, n at a time:
// for each chunk it empties t (Reset), appends the chunk's records to it
// with their job ids, and calls fn, which may read and change them. An
// error from fn ends the scan and is returned as it is. fn is not called
// for a month with no records.
//
// Scan leaves the month spilled (Count still counts it), so that it can
// be scanned again; Read or Drop removes it. It reads the file through a
// window of a fixed size (1 MiB; larger only for a record that does not
// fit), not the whole file at once. Like Read it may be called for
// different months at once, once Add is done for the month.
func (s *Jobs) Scan(month string, t *record.JobTable, n int, fn func() error) error {
	if n < 1 {
		return fmt.Errorf("spill %s: scan %d records at a time", month, n)
	}
	s.mu.Lock()
	sf := s.months[month]
	s.mu.Unlock()
	if sf == nil {
		return nil
	}
	if err := sf.w.Flush(); err != nil {
		return fmt.Errorf("spill %s: %w", month, err)
	}
	d := newFileDecoder(sf.f, int64(sf.size), s.window)
	for d.n < sf.n {
		t.Reset()
		if err := d.appendTo(t, min(n, sf.n-d.n)); err != nil {
			return fmt.Errorf("spill %s record %d: %w", month, d.n, err)
		}
		if left := d.left(); d.n == sf.n && left != 0 {
			return fmt.Errorf("spill %s: %d bytes after the last record", month, left)
		}
		if err := fn(); err != nil {
			return err
		}
	}
	return nil
}

// take removes month from the spill's months and returns its file (nil
// for none), for Read and Drop.
func (s *Jobs) take(month string) *spillFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	sf := s.months[month]
	delete(s.months, month)
	return sf
}

// Drop removes month's records and file without reading them. Dropping a
// month that holds none does nothing.
func (s *Jobs) Drop(month string) error {
	sf := s.take(month)
	if sf == nil {
		return nil
	}
	err := sf.f.Close()
	if rerr := os.Remove(sf.f.Name()); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("drop spill %s: %w", month, err)
	}
	return nil
}

// buffer returns a buffer of n bytes for Read, reusing a released one
// when there is one.
func (s *Jobs) buffer(n int) []byte {
	s.mu.Lock()
	var b []byte
	if k := len(s.free); k > 0 {
		b, s.free = s.free[k-1], s.free[:k-1]
	}
	s.mu.Unlock()
	return slices.Grow(b[:0], n)[:n]
}

// release hands a buffer from buffer back for reuse.
func (s *Jobs) release(b []byte) {
	s.mu.Lock()
	s.free = append(s.free, b)
	s.mu.Unlock()
}

// Close closes the spill's files, those of its open RunReaders included,
// and removes its directory with its months and runs.
func (s *Jobs) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sf := range s.months {
		sf.f.Close()
	}
	for r := range s.runs {
		if r.f != nil {
			r.f.Close()
			r.f = nil
		}
	}
	clear(s.runs)
	return os.RemoveAll(s.dir)
}

// Kinds of job id, in the low two bits of a record's first varint: most
// ids are job_id_raw in decimal or an array task's "<array job>_<task>",
// and are left out.
const (
	idDecimal = iota // job_id_raw in decimal
	idArray          // array_job_id "_" array_task_id, both in decimal
	idHet            // het_job_id "+" het_job_offset, both in decimal
	idBytes          // its length and bytes follow
)

// maxRecLen bounds a record's encoding without its job id's bytes: 27
// varints of at most 10 bytes, one of them up to 3, and the names byte.
const maxRecLen = 27*10 + 1

// appendRec encodes r and its job id, given the record before it in the
// same file (prev, which it updates). The record opens with the varint
// Valid<<2 | the id's kind, then the id's length and bytes when they are
// not implied by the kind. Integers are (zigzag) varints and times are
// putTime differences: job_id_raw, the start and the source line from
// the previous record's; the array and het job ids from job_id_raw; the
// submit time from the start, eligible from the submit time (or the
// start) and the end from the start plus the elapsed time (or the start),
// so that a job whose elapsed time is its end minus its start spends one
// byte on its end. Floats are putFloat's. The names and the TRES set
// follow a byte with a bit per index that differs from the previous
// record's; only those are written. A 5 M-job year spills some 36 bytes
// a record (51 in the encoding before).
func appendRec(b []byte, r *record.JobRec, jobID []byte, prev *recPrev) []byte {
	n := len(b)
	b = slices.Grow(b, maxRecLen+len(jobID))
	o := b[n : n+maxRecLen+len(jobID)] // written by index: no append's bookkeeping per field
	v := r.Valid
	kind := idBytes
	switch {
	case isDecimal(jobID, r.JobIDRaw):
		kind = idDecimal
	case v&(record.ValidArrayJobID|record.ValidArrayTaskID) == record.ValidArrayJobID|record.ValidArrayTaskID &&
		isPair(jobID, r.ArrayJobID, '_', r.ArrayTaskID):
		kind = idArray
	case v&(record.ValidHetJobID|record.ValidHetJobOffset) == record.ValidHetJobID|record.ValidHetJobOffset &&
		isPair(jobID, r.HetJobID, '+', r.HetJobOffset):
		kind = idHet
	}
	p := putUvarint(o, 0, uint64(v)<<2|uint64(kind))
	if kind == idBytes {
		p = putUvarint(o, p, uint64(len(jobID)))
		p += copy(o[p:], jobID)
	}
	p = putVarint(o, p, r.JobIDRaw-prev.raw)
	if v&record.ValidArrayJobID != 0 {
		p = putVarint(o, p, r.ArrayJobID-r.JobIDRaw)
	}
	if v&record.ValidArrayTaskID != 0 {
		p = putVarint(o, p, r.ArrayTaskID)
	}
	if v&record.ValidHetJobID != 0 {
		p = putVarint(o, p, r.HetJobID-r.JobIDRaw)
	}
	if v&record.ValidHetJobOffset != 0 {
		p = putVarint(o, p, r.HetJobOffset)
	}
	p = putTime(o, p, r.Start-prev.start)
	base := r.Start
	if v&record.ValidSubmit != 0 {
		p = putTime(o, p, r.Submit-base)
		base = r.Submit
	}
	if v&record.ValidEligible != 0 {
		p = putTime(o, p, r.Eligible-base)
	}
	base = r.Start
	if v&record.ValidElapsedSec != 0 {
		p = putVarint(o, p, r.ElapsedSec)
		base += r.ElapsedSec * 1e6 // wraps alike when read back
	}
	if v&record.ValidEnd != 0 {
		p = putTime(o, p, r.End-base)
	}
	if v&record.ValidSuspendedSec != 0 {
		p = putVarint(o, p, r.SuspendedSec)
	}
	if v&record.ValidTimelimitMin != 0 {
		p = putVarint(o, p, r.TimelimitMin)
	}
	p = putVarint(o, p, r.ChargedSec)
	p = putVarint(o, p, r.NNodes)
	p = putVarint(o, p, r.AllocCPUs)
	p = putVarint(o, p, r.BillingSlurm)
	p = putVarint(o, p, r.SourceLine-prev.line)
	p = putFloat(o, p, r.MemMB)
	p = putFloat(o, p, r.NodeCount)
	p = putFloat(o, p, r.GPU)
	p = putFloat(o, p, r.Billing)
	p = putFloat(o, p, r.UsageFactor)
	names := [numNames]uint32{r.User, r.Account, r.Partition, r.QOS, r.State, r.SourceFile, r.CancelledBy, r.TRES}
	mask := p
	p++
	var changed byte
	for k, id := range names {
		if id != prev.names[k] {
			changed |= 1 << k
			p = putUvarint(o, p, uint64(id))
		}
	}
	o[mask] = changed
	*prev = recPrev{r.Start, r.JobIDRaw, r.SourceLine, names}
	return b[:n+p]
}

// putUvarint writes v at o[p:] as binary.PutUvarint does and returns the
// position after it; one byte, the common case, inline.
func putUvarint(o []byte, p int, v uint64) int {
	if v < 0x80 {
		o[p] = byte(v)
		return p + 1
	}
	return p + binary.PutUvarint(o[p:], v)
}

// putVarint writes v as the uvarint zigzag(v).
func putVarint(o []byte, p int, v int64) int { return putUvarint(o, p, zigzag(v)) }

// putTime writes a difference of times in microseconds: whole seconds
// (sacct's) as the varint zigzag(seconds)<<1, others as zigzag(µs)<<1 | 1.
func putTime(o []byte, p int, us int64) int {
	if us%1e6 == 0 {
		return putUvarint(o, p, zigzag(us/1e6)<<1)
	}
	return putUvarint(o, p, zigzag(us)<<1|1)
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// isDecimal reports whether id is v printed in decimal, as
// strconv.AppendInt prints it.
func isDecimal(id []byte, v int64) bool {
	w, ok := parseDecimal(id)
	return ok && w == v
}

// parseDecimal reads b as an int64 printed by strconv.AppendInt: an
// optional minus, then digits with no leading zero (but "0"); ok is false
// for anything else, "-0" and values out of range included.
func parseDecimal(b []byte) (v int64, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 || (b[0] == '0' && (len(b) > 1 || neg)) {
		return 0, false
	}
	var u uint64 // 19 digits fit
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	case neg && u <= 1<<63:
		return -int64(u), true // -(1<<63) wraps to itself
	}
	return 0, false
}

// isPair reports whether id is a and b printed in decimal (as
// strconv.AppendInt does) with sep between them.
func isPair(id []byte, a int64, sep byte, b int64) bool {
	k := bytes.IndexByte(id, sep)
	if k < 0 {
		return false
	}
	x, ok1 := parseDecimal(id[:k])
	y, ok2 := parseDecimal(id[k+1:])
	return ok1 && ok2 && x == a && y == b
}

// appendPair appends a, sep and b in decimal.
func appendPair(dst []byte, a int64, sep byte, b int64) []byte {
	dst = strconv.AppendInt(dst, a, 10)
	dst = append(dst, sep)
	return strconv.AppendInt(dst, b, 10)
}

// putFloat writes v in one of three forms, told apart by the low two bits
// of a varint: an integral v (|v| ≤ 2^53, not -0) as zigzag(v)<<2; a v
// whose bits with their bytes reversed, r, are below 2^62 (a short
// mantissa: 0.5, 6.25; the low mantissa byte is then below 0x40) as
// r<<2 | 1; any other value as the byte 3 and its 8 bytes.
func putFloat(o []byte, p int, v float64) int {
	if v >= -(1<<53) && v <= 1<<53 && v == float64(int64(v)) && !(v == 0 && math.Signbit(v)) {
		return putUvarint(o, p, zigzag(int64(v))<<2)
	}
	if r := bits.ReverseBytes64(math.Float64bits(v)); r < 1<<62 {
		return putUvarint(o, p, r<<2|1)
	}
	o[p] = 3
	binary.LittleEndian.PutUint64(o[p+1:], math.Float64bits(v))
	return p + 9
}

// recDecoder reads what appendRec wrote: from a month's whole file in
// memory (b, read up to p), or from a file through a window (b holds the
// file's bytes up to off, those before p read). The first error sticks
// and ends the input.
type recDecoder struct {
	b    []byte
	p    int
	n    int // the records read
	err  error
	prev recPrev
	id   [41]byte // a job id implied by its kind

	src  io.ReaderAt // the file read through the window b; nil when b is the whole input
	off  int64       // the file's bytes before off are in b or read
	size int64       // the file's length
}

// Sizes of the read window of a file: a fixed size, not the file's, so
// that reading a month of millions of records or several runs at once
// takes little memory.
const (
	defaultWindow = 1 << 20
	// minWindow holds a record's first two varints (its tag and its job
	// id's length), from which fill learns how long the record may be.
	minWindow = 2 * binary.MaxVarintLen64
)

// newFileDecoder returns a decoder reading the first size bytes of f
// through a window of window bytes (fewer for a smaller file, at least
// minWindow).
func newFileDecoder(f io.ReaderAt, size int64, window int) recDecoder {
	w := max(int(min(int64(window), size)), minWindow)
	return recDecoder{b: make([]byte, 0, w), src: f, size: size}
}

// appendTo appends the next k records to t, with their job ids, and
// returns the decoder's error if one of them cannot be read.
func (d *recDecoder) appendTo(t *record.JobTable, k int) error {
	t.Recs = slices.Grow(t.Recs, k)
	for range k {
		r := t.AppendZero()
		id := d.rec(r, &d.prev)
		if d.err != nil {
			t.Recs = t.Recs[:len(t.Recs)-1]
			return d.err
		}
		t.SetJobID(r, id)
	}
	return nil
}

// left is the number of input bytes not yet read.
func (d *recDecoder) left() int64 { return int64(len(d.b)-d.p) + d.size - d.off }

// getUvarint reads a uvarint at b[p:] and returns it and the position
// after it; one byte, the common case, inline. On bad input it returns
// len(b)+1, and so does every later read from there.
func getUvarint(b []byte, p int) (uint64, int) {
	if p < len(b) && b[p] < 0x80 {
		return uint64(b[p]), p + 1
	}
	return getUvarintLong(b, p)
}

func getUvarintLong(b []byte, p int) (uint64, int) {
	if p+1 < len(b) && b[p+1] < 0x80 { // two bytes: a name's index, a time
		return uint64(b[p]&0x7f) | uint64(b[p+1])<<7, p + 2
	}
	if p >= len(b) {
		return 0, len(b) + 1
	}
	v, n := binary.Uvarint(b[p:])
	if n <= 0 {
		return 0, len(b) + 1
	}
	return v, p + n
}

// getVarint reads what putVarint wrote.
func getVarint(b []byte, p int) (int64, int) {
	u, p := getUvarint(b, p)
	return unzigzag(u), p
}

// getTime reads what putTime wrote.
func getTime(b []byte, p int) (int64, int) {
	u, p := getUvarint(b, p)
	if u&1 == 0 {
		return unzigzag(u>>1) * 1e6, p
	}
	return unzigzag(u >> 1), p
}

// getFloat reads what putFloat wrote.
func getFloat(b []byte, p int) (float64, int) {
	u, p := getUvarint(b, p)
	switch {
	case u&3 == 0:
		return float64(unzigzag(u >> 2)), p
	case u&3 == 1:
		return math.Float64frombits(bits.ReverseBytes64(u >> 2)), p
	case u == 3 && p <= len(b) && len(b)-p >= 8:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[p:])), p + 8
	}
	return 0, len(b) + 1
}

// rec decodes one record into r, which must be zero, given the record
// before it (prev, which it updates), and returns its job id, viewing the
// decoder's buffer or its id array (valid until the next call).
func (d *recDecoder) rec(r *record.JobRec, prev *recPrev) []byte {
	if d.err != nil {
		return nil
	}
	jobID, p := decodeRec(d.b, d.p, r, prev, &d.id)
	if p > len(d.b) {
		return d.recAfterFill(r, prev)
	}
	d.p = p
	d.n++
	return jobID
}

// recAfterFill is rec for a record that is not whole in the window (or is
// bad): it moves the window on to the record, or grows it, and decodes
// the record again (decodeRec has left prev as it was) until it reads or
// the file has no more.
func (d *recDecoder) recAfterFill(r *record.JobRec, prev *recPrev) []byte {
	for d.off < d.size {
		if err := d.fill(); err != nil {
			d.err = err
			return nil
		}
		*r = record.JobRec{}
		jobID, p := decodeRec(d.b, d.p, r, prev, &d.id)
		if p <= len(d.b) {
			d.p = p
			d.n++
			return jobID
		}
	}
	d.err, d.p = io.ErrUnexpectedEOF, len(d.b)
	return nil
}

// errBadRecord is a record that does not decode although the window holds
// as many bytes as its encoding may take.
var errBadRecord = errors.New("bad record")

// fill moves the window on: the unread bytes to its front, then the file's
// next bytes after them. A window that holds nothing but unread bytes
// already holds part of a record longer than it: fill grows it to the
// longest encoding the record's first varints allow (or the rest of the
// file), and returns errBadRecord when it holds that much already. A file
// shorter than size ends the input where it ends.
func (d *recDecoder) fill() error {
	unread := d.b[d.p:]
	if d.p == 0 && len(d.b) == cap(d.b) {
		need := min(recLenBound(unread), uint64(len(unread))+uint64(d.size-d.off))
		if need <= uint64(len(unread)) {
			return errBadRecord
		}
		d.b = append(make([]byte, 0, need), unread...)
	} else {
		d.b = d.b[:copy(d.b[:cap(d.b)], unread)]
	}
	d.p = 0
	k := int(min(int64(cap(d.b)-len(d.b)), d.size-d.off))
	m, err := d.src.ReadAt(d.b[len(d.b):len(d.b)+k], d.off)
	d.b, d.off = d.b[:len(d.b)+m], d.off+int64(m)
	if m < k {
		if err != io.EOF {
			return err
		}
		d.size = d.off
	}
	return nil
}

// recLenBound bounds the length of the record whose encoding b starts
// with: maxRecLen, plus the varint of its job id's length and the id's
// bytes when they are stored; 0 when b does not start like a record.
func recLenBound(b []byte) uint64 {
	tag, p := getUvarint(b, 0)
	if p > len(b) {
		return 0
	}
	if tag&3 != idBytes {
		return maxRecLen
	}
	n, p := getUvarint(b, p)
	if p > len(b) {
		return 0
	}
	return maxRecLen + binary.MaxVarintLen64 + min(n, 1<<62)
}

// decodeRec is rec on the record at b[p:]; it returns the position after
// the record, or len(b)+1 for bad input, a record cut short included,
// and then leaves prev as it was (so that a reader can read the rest of
// the record and decode it again). It keeps its position in a
// local variable rather than the decoder, so that it can stay in a
// register.
func decodeRec(b []byte, p int, r *record.JobRec, prev *recPrev, idBuf *[41]byte) (jobID []byte, end int) {
	bad := len(b) + 1
	tag, p := getUvarint(b, p)
	if tag>>2 > math.MaxUint16 {
		return nil, bad
	}
	kind := tag & 3
	if kind == idBytes {
		var n uint64
		n, p = getUvarint(b, p)
		if p > len(b) || uint64(len(b)-p) < n {
			return nil, bad
		}
		jobID, p = b[p:p+int(n)], p+int(n)
	}
	v := uint16(tag >> 2)
	var x int64
	r.Valid = v
	x, p = getVarint(b, p)
	r.JobIDRaw = prev.raw + x
	if v&record.ValidArrayJobID != 0 {
		x, p = getVarint(b, p)
		r.ArrayJobID = r.JobIDRaw + x
	}
	if v&record.ValidArrayTaskID != 0 {
		r.ArrayTaskID, p = getVarint(b, p)
	}
	if v&record.ValidHetJobID != 0 {
		x, p = getVarint(b, p)
		r.HetJobID = r.JobIDRaw + x
	}
	if v&record.ValidHetJobOffset != 0 {
		r.HetJobOffset, p = getVarint(b, p)
	}
	x, p = getTime(b, p)
	r.Start = prev.start + x
	base := r.Start
	if v&record.ValidSubmit != 0 {
		x, p = getTime(b, p)
		r.Submit = base + x
		base = r.Submit
	}
	if v&record.ValidEligible != 0 {
		x, p = getTime(b, p)
		r.Eligible = base + x
	}
	base = r.Start
	if v&record.ValidElapsedSec != 0 {
		r.ElapsedSec, p = getVarint(b, p)
		base += r.ElapsedSec * 1e6
	}
	if v&record.ValidEnd != 0 {
		x, p = getTime(b, p)
		r.End = base + x
	}
	if v&record.ValidSuspendedSec != 0 {
		r.SuspendedSec, p = getVarint(b, p)
	}
	if v&record.ValidTimelimitMin != 0 {
		r.TimelimitMin, p = getVarint(b, p)
	}
	r.ChargedSec, p = getVarint(b, p)
	r.NNodes, p = getVarint(b, p)
	r.AllocCPUs, p = getVarint(b, p)
	r.BillingSlurm, p = getVarint(b, p)
	x, p = getVarint(b, p)
	r.SourceLine = prev.line + x
	r.MemMB, p = getFloat(b, p)
	r.NodeCount, p = getFloat(b, p)
	r.GPU, p = getFloat(b, p)
	r.Billing, p = getFloat(b, p)
	r.UsageFactor, p = getFloat(b, p)
	if p >= len(b) {
		return nil, bad
	}
	names := prev.names
	changed := b[p]
	p++
	for c := changed; c != 0; c &= c - 1 { // the set bits only
		var id uint64
		id, p = getUvarint(b, p)
		if id > math.MaxUint32 {
			return nil, bad
		}
		names[bits.TrailingZeros8(c)&(numNames-1)] = uint32(id)
	}
	if p > len(b) {
		return nil, bad
	}
	r.User, r.Account, r.Partition, r.QOS = names[0], names[1], names[2], names[3]
	r.State, r.SourceFile, r.CancelledBy, r.TRES = names[4], names[5], names[6], names[7]
	*prev = recPrev{r.Start, r.JobIDRaw, r.SourceLine, names}
	switch kind {
	case idDecimal:
		jobID = strconv.AppendInt(idBuf[:0], r.JobIDRaw, 10)
	case idArray:
		jobID = appendPair(idBuf[:0], r.ArrayJobID, '_', r.ArrayTaskID)
	case idHet:
		jobID = appendPair(idBuf[:0], r.HetJobID, '+', r.HetJobOffset)
	}
	return jobID, p
}
