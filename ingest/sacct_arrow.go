package ingest

// The Arrow side of the sacct reader: the per-block columns a parser
// appends accepted rows to (jobColumns and the column types under it) and
// their conversion into one arrow.RecordBatch per block (newRecord). The line
// parser that fills them is sacct_parse.go.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fairledger/fairledger/schemas"
)

// appendRow appends a parsed, accepted row to the columns of the block.
func (p *sacctParser) appendRow(r *sacctRow) {
	c := &p.cols
	cl := r.cluster
	if len(cl) == 0 {
		cl = p.defCl
	}
	c.cluster.append(cl)
	c.jobID.append(r.jobID)
	c.raw.append(r.raw)
	switch r.id.kind {
	case jobArrayTask:
		c.arrJob.append(r.id.id)
		c.arrTask.append(r.id.task)
		c.hetJob.appendNull()
		c.hetOff.appendNull()
	case jobArrayPending: // kept by KeepPending: the array's own record
		c.arrJob.append(r.id.id)
		c.arrTask.appendNull()
		c.hetJob.appendNull()
		c.hetOff.appendNull()
	case jobHetComponent:
		c.arrJob.appendNull()
		c.arrTask.appendNull()
		c.hetJob.append(r.id.id)
		c.hetOff.append(r.id.task)
	default:
		c.arrJob.appendNull()
		c.arrTask.appendNull()
		c.hetJob.appendNull()
		c.hetOff.appendNull()
	}
	c.user.append(r.user)
	c.account.append(r.account)
	c.partition.append(r.partition)
	c.qos.append(r.qos) // nil (no QOS column) is null
	c.state.append(r.state)
	if r.cancelledBy != nil {
		c.cancelledBy.append(r.cancelledBy)
	} else {
		c.cancelledBy.appendNull()
	}
	c.submit.appendOpt(r.submit, r.submitOK)
	c.eligible.appendOpt(r.eligible, r.eligibleOK)
	if r.startOK { // appendOpt, which appendRow is too big to inline
		c.start.append(r.start)
	} else {
		c.start.appendNull()
	}
	c.end.appendOpt(r.end, r.endOK)
	c.elapsed.appendOpt(r.elapsed, r.elapsedOK)
	c.suspended.appendOpt(r.suspended, r.suspendedOK)
	c.timelimit.appendOpt(r.timelimit, r.timelimitOK)
	c.nnodes.append(r.nnodes)
	c.cpus.append(r.cpus)
	c.exitCode.append(r.exitCode) // nil (no column) is ""
	c.jobName.append(r.jobName)
	c.tres.appendItem(&p.tresMemo, r.tres)
	c.billing.appendOpt(r.billing, r.billingOK)
	for i := range c.dense {
		c.dense[i].append(r.dense[i])
	}
	c.srcLine.append(int64(r.line))
	if q := c.req; q != nil {
		v := &p.req
		q.cpus.appendOpt(v.cpus, v.cpusOK)
		q.nodes.appendOpt(v.nodes, v.nodesOK)
		if v.tresOK {
			q.tres.markValid(len(q.tres.offsets) - 1)
			q.tres.appendEntries(&p.tresMemo, v.tres)
		} else {
			q.tres.appendNull()
		}
		q.prio.appendOpt(v.prio, v.prioOK)
		q.nice.appendOpt(v.nice, v.submitOK)
		q.parts.append(v.parts) // nil is null
		q.begin.appendOpt(v.begin, v.submitOK)
		q.hold.appendOpt(v.hold, v.submitOK)
		q.throttle.appendOpt(v.throttle, v.submitOK)
	}
	c.rows++
}

// newRecord turns the block's columns into a batch of p.schema with
// Arrow buffers from the parser's allocator: the fixed-width columns hand
// over the buffers they were appended into (see fixedColumn.prepare), the
// others are copied. The batch shares no memory with the parser, which
// reuses its other columns for the next block.
func (p *sacctParser) newRecord() arrow.RecordBatch {
	c := &p.cols
	cols := make([]arrow.Array, p.schema.NumFields())
	put := func(name string, col arrowColumn) {
		i, err := schemas.Index(p.schema, name)
		if err != nil {
			panic(err) // the schema comes from schemas.Jobs: a missing column is a programming error
		}
		d := col.arrowData(p.mem, p.schema.Field(i).Type)
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	put(schemas.ColCluster, &c.cluster)
	put(schemas.ColJobID, &c.jobID)
	put(schemas.ColJobIDRaw, &c.raw)
	put(schemas.ColArrayJobID, &c.arrJob)
	put(schemas.ColArrayTaskID, &c.arrTask)
	put(schemas.ColHetJobID, &c.hetJob)
	put(schemas.ColHetJobOffset, &c.hetOff)
	put(schemas.ColUser, &c.user)
	put(schemas.ColAccount, &c.account)
	put(schemas.ColPartition, &c.partition)
	put(schemas.ColQOS, &c.qos)
	put(schemas.ColState, &c.state)
	put(schemas.ColCancelledBy, &c.cancelledBy)
	put(schemas.ColSubmit, &c.submit)
	put(schemas.ColEligible, &c.eligible)
	put(schemas.ColStart, &c.start)
	put(schemas.ColEnd, &c.end)
	put(schemas.ColElapsedSec, &c.elapsed)
	put(schemas.ColSuspendedSec, &c.suspended)
	put(schemas.ColTimelimitMin, &c.timelimit)
	put(schemas.ColNNodes, &c.nnodes)
	put(schemas.ColAllocCPUs, &c.cpus)
	put(schemas.ColExitCode, &c.exitCode)
	put(schemas.ColJobName, &c.jobName)
	put(schemas.ColAllocTRES, &c.tres)
	put(schemas.ColAllocTRESSet, &c.tres.sets)
	put(schemas.ColBillingSacct, &c.billing)
	for i, t := range p.lay.dense {
		put(schemas.DenseTRESColumn(t), &c.dense[i])
	}
	put(schemas.ColSourceFile, constDict{value: p.name, rows: c.rows})
	put(schemas.ColSourceLine, &c.srcLine)
	if q := c.req; q != nil {
		put(schemas.ColReqCPUs, &q.cpus)
		put(schemas.ColReqNodes, &q.nodes)
		put(schemas.ColReqTRES, &q.tres)
		put(schemas.ColPrioritySacct, &q.prio)
		put(schemas.ColNice, &q.nice)
		put(schemas.ColReqPartitions, &q.parts)
		put(schemas.ColBeginRequested, &q.begin)
		put(schemas.ColHoldRequested, &q.hold)
		put(schemas.ColArrayThrottle, &q.throttle)
	}
	for i, a := range cols {
		if a == nil {
			panic(fmt.Sprintf("ingest: jobs schema column %q is not filled", p.schema.Field(i).Name))
		}
	}
	rec := array.NewRecordBatch(p.schema, cols, int64(c.rows))
	for _, a := range cols {
		a.Release()
	}
	return rec
}

// jobColumns holds the rows of the block being parsed, one slice (or a
// few) per column of the jobs schema: appending a row costs a slice append
// per column and a hash lookup (dictIndex) per dictionary column whose
// value changed since the previous row. newRecord turns them into Arrow
// arrays once per block.
type jobColumns struct {
	rows                                  int
	cluster, user, account, partition     dictColumn
	qos, state                            dictColumn
	jobID, cancelledBy, exitCode, jobName stringColumn
	raw, arrJob, arrTask, hetJob, hetOff  fixedColumn[int64]
	elapsed, suspended, timelimit         fixedColumn[int64]
	nnodes, cpus, srcLine                 fixedColumn[int64]
	submit, eligible, start, end          fixedColumn[int64] // Unix seconds
	tres                                  tresColumn
	billing                               fixedColumn[float64]
	dense                                 []fixedColumn[float64] // in sacctLayout.dense order
	req                                   *reqColumns            // nil without SacctOptions.RequestColumns
}

// reqColumns are the request columns (schemas.RequestFields).
type reqColumns struct {
	cpus, nodes, prio, nice, throttle fixedColumn[int64]
	tres                              tresColumn // appended with appendEntries: no sets
	parts                             dictColumn
	begin, hold                       boolColumn
}

func (c *jobColumns) init(dense int, req bool) {
	c.dense = make([]fixedColumn[float64], dense)
	if req {
		c.req = new(reqColumns)
	}
	c.reset()
}

func (c *jobColumns) dicts() []*dictColumn {
	return []*dictColumn{&c.cluster, &c.user, &c.account, &c.partition, &c.qos, &c.state}
}

// fixed returns the columns that hold one fixed-width value per row.
func (c *jobColumns) fixed() (ints []*fixedColumn[int64], floats []*fixedColumn[float64], codes []*fixedColumn[int32]) {
	ints = []*fixedColumn[int64]{&c.raw, &c.arrJob, &c.arrTask, &c.hetJob, &c.hetOff,
		&c.elapsed, &c.suspended, &c.timelimit, &c.nnodes, &c.cpus, &c.srcLine,
		&c.submit, &c.eligible, &c.start, &c.end}
	floats = []*fixedColumn[float64]{&c.billing}
	for i := range c.dense {
		floats = append(floats, &c.dense[i])
	}
	for _, d := range c.dicts() {
		codes = append(codes, &d.codes)
	}
	codes = append(codes, &c.tres.sets)
	if q := c.req; q != nil {
		ints = append(ints, &q.cpus, &q.nodes, &q.prio, &q.nice, &q.throttle)
		codes = append(codes, &q.parts.codes)
	}
	return ints, floats, codes
}

// prepare gives every one-value-per-row column room for rows values in a
// buffer from mem (see fixedColumn.prepare).
func (c *jobColumns) prepare(mem memory.Allocator, rows int) {
	ints, floats, codes := c.fixed()
	for _, f := range ints {
		f.prepare(mem, rows)
	}
	for _, f := range floats {
		f.prepare(mem, rows)
	}
	for _, f := range codes {
		f.prepare(mem, rows)
	}
}

// release returns the buffers of prepare that no batch took over.
func (c *jobColumns) release() {
	ints, floats, codes := c.fixed()
	for _, f := range ints {
		f.release()
	}
	for _, f := range floats {
		f.release()
	}
	for _, f := range codes {
		f.release()
	}
}

// reset empties every column for a new block, keeping the memory.
func (c *jobColumns) reset() {
	c.rows = 0
	for _, d := range c.dicts() {
		d.reset()
	}
	for _, s := range []*stringColumn{&c.jobID, &c.cancelledBy, &c.exitCode, &c.jobName} {
		s.reset()
	}
	for _, f := range []*fixedColumn[int64]{&c.raw, &c.arrJob, &c.arrTask, &c.hetJob, &c.hetOff,
		&c.elapsed, &c.suspended, &c.timelimit, &c.nnodes, &c.cpus, &c.srcLine,
		&c.submit, &c.eligible, &c.start, &c.end} {
		f.reset()
	}
	c.tres.reset()
	c.billing.reset()
	for i := range c.dense {
		c.dense[i].reset()
	}
	if q := c.req; q != nil {
		for _, f := range []*fixedColumn[int64]{&q.cpus, &q.nodes, &q.prio, &q.nice, &q.throttle} {
			f.reset()
		}
		q.tres.reset()
		q.parts.reset()
		q.begin.reset()
		q.hold.reset()
	}
}

// arrowColumn is a column that can be copied into an Arrow array of type dt.
type arrowColumn interface {
	arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data
}

// validity is a column's Arrow validity bitmap (bit i set: row i holds a
// value). It is only filled once the block's first null arrives: until
// then every row is valid and the column needs no bitmap at all.
type validity struct {
	bits  []byte
	nulls int
}

// markValid records row i, the column's next row, as valid.
func (v *validity) markValid(i int) {
	if v.nulls == 0 {
		return
	}
	if i>>3 == len(v.bits) {
		v.bits = append(v.bits, 0)
	}
	v.bits[i>>3] |= 1 << (i & 7)
}

// markNull records row i, the column's next row, as null.
func (v *validity) markNull(i int) {
	if v.nulls == 0 {
		// The first null: rows 0 to i-1 were all valid.
		v.bits = v.bits[:0]
		for j := 0; j < i>>3; j++ {
			v.bits = append(v.bits, 0xff)
		}
		if i&7 != 0 {
			v.bits = append(v.bits, 1<<(i&7)-1)
		}
	}
	if i>>3 == len(v.bits) {
		v.bits = append(v.bits, 0)
	}
	v.bits[i>>3] &^= 1 << (i & 7)
	v.nulls++
}

func (v *validity) reset() { v.nulls = 0 }

// buffer returns the bitmap of a column of n rows, or nil if it has no nulls.
func (v *validity) buffer(mem memory.Allocator, n int) *memory.Buffer {
	if v.nulls == 0 {
		return nil
	}
	return newBuffer(mem, v.bits[:bitutil.BytesForBits(int64(n))])
}

// fixedColumn is a column of fixed-width values (int64 for integers and
// timestamps, float64, int32 for dictionary codes).
//
// Between prepare and the batch, vals lives in a buffer from the batch's
// allocator (own), so that the batch takes the values over instead of a
// copy of them.
type fixedColumn[T int32 | int64 | float64] struct {
	vals []T
	own  *memory.Buffer // the buffer vals was carved from, nil if none
	validity
}

// prepare makes vals an empty slice over a new buffer from mem with room
// for rows values. Appending more than rows values moves vals back to Go
// memory, and valueBuffer then copies them as it does without prepare.
func (c *fixedColumn[T]) prepare(mem memory.Allocator, rows int) {
	c.release()
	var zero T
	c.own = memory.NewResizableBuffer(mem)
	c.own.Reserve(max(rows, 1) * int(unsafe.Sizeof(zero)))
	c.vals = arrow.GetData[T](c.own.Buf())[:0]
}

// release returns the buffer of prepare if no batch took it over.
func (c *fixedColumn[T]) release() {
	if c.own != nil {
		c.own.Release()
		c.own = nil
		c.vals = nil
	}
}

// valueBuffer returns the values as an Arrow buffer: the buffer of prepare
// itself while vals still lives in it (the column then lets go of both),
// otherwise a copy from mem.
func (c *fixedColumn[T]) valueBuffer(mem memory.Allocator) *memory.Buffer {
	if b := c.own; b != nil && unsafe.SliceData(c.vals) == unsafe.SliceData(arrow.GetData[T](b.Buf())) {
		b.ResizeNoShrink(len(arrow.GetBytes(c.vals)))
		c.own, c.vals = nil, nil
		return b
	}
	return newBuffer(mem, arrow.GetBytes(c.vals))
}

func (c *fixedColumn[T]) append(v T) {
	c.markValid(len(c.vals))
	c.vals = append(c.vals, v)
}

func (c *fixedColumn[T]) appendNull() {
	c.markNull(len(c.vals))
	c.vals = append(c.vals, 0)
}

func (c *fixedColumn[T]) appendOpt(v T, ok bool) {
	if ok {
		c.append(v)
	} else {
		c.appendNull()
	}
}

func (c *fixedColumn[T]) reset() {
	c.vals = c.vals[:0]
	c.validity.reset()
}

func (c *fixedColumn[T]) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	n := len(c.vals)
	return newData(dt, n, []*memory.Buffer{c.buffer(mem, n), c.valueBuffer(mem)}, nil, c.nulls)
}

// stringColumn is a utf8 column: the values back to back in data, row i
// in data[offsets[i]:offsets[i+1]]. A column never holds more bytes than
// its block (the values are pieces of the block's lines, or their
// lower-case copies), so the int32 offsets of Arrow's utf8 type only
// overflow for blocks of 2 GiB.
type stringColumn struct {
	offsets []int32 // one more than the rows
	data    []byte
	validity
}

// append appends v; nil, like an empty v, is the empty string.
func (c *stringColumn) append(v []byte) {
	c.markValid(len(c.offsets) - 1)
	c.data = append(c.data, v...)
	c.offsets = append(c.offsets, int32(len(c.data)))
}

func (c *stringColumn) appendNull() {
	c.markNull(len(c.offsets) - 1)
	c.offsets = append(c.offsets, int32(len(c.data)))
}

// value returns row i.
func (c *stringColumn) value(i int32) []byte { return c.data[c.offsets[i]:c.offsets[i+1]] }

func (c *stringColumn) reset() {
	c.offsets = append(c.offsets[:0], 0)
	c.data = c.data[:0]
	c.validity.reset()
}

func (c *stringColumn) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	n := len(c.offsets) - 1
	return newData(dt, n, []*memory.Buffer{c.buffer(mem, n), newBuffer(mem, arrow.GetBytes(c.offsets)), newBuffer(mem, c.data)}, nil, c.nulls)
}

// dictColumn is a dictionary<int32, utf8> column: per row a code into the
// block's dictionary, which lists the block's distinct values in order of
// first appearance. Each block starts a new dictionary, so a batch does not
// depend on which worker parsed the blocks before it.
type dictColumn struct {
	codes  fixedColumn[int32]
	values stringColumn // the dictionary
	index  dictIndex    // value → code
	last   int32        // code of the last non-null row, -1 if none
	lastK  dictKey      // its key
}

// append appends v; nil is null (an empty v is the empty string).
func (c *dictColumn) append(v []byte) {
	if v == nil {
		c.codes.appendNull()
		return
	}
	// Neighbouring rows often share a value (cluster, state, QOS):
	// comparing with the last one is cheaper than looking it up.
	key := keyOf(v)
	k := c.last
	if k < 0 || key != c.lastK || key.n > shortKey && !bytes.Equal(v, c.values.value(k)) {
		k = c.index.codeKey(v, key, &c.values)
		c.last, c.lastK = k, key
	}
	c.codes.append(k)
}

func (c *dictColumn) reset() {
	c.codes.reset()
	c.index.reset()
	c.values.reset()
	c.last = -1
}

// dictIndex finds a dictionary value's code: an open-addressing hash table
// whose slots hold codes into the dictionary itself, so that looking up a
// []byte value needs no string conversion and adding one allocates
// nothing. The hash seed only decides where codes sit in the table, never
// which code a value gets.
//
// Each slot also holds the value's dictKey, which for the short values
// of the name columns (users, accounts, partitions: at most shortKey
// bytes) is the whole value: finding one then takes a few word compares
// and no call to hash or compare bytes.
type dictIndex struct {
	seed  maphash.Seed // hashes values longer than shortKey
	mix   uint64       // seeds the hash of the others
	slots []dictSlot   // a power of two of them, at most half full
	n     int          // codes in the table
}

// dictSlot is a slot of a dictIndex: code+1 (0: empty), the value's hash,
// which saves rehashing when the table grows, and its key.
type dictSlot struct {
	key  dictKey
	hash uint32
	code int32
}

// shortKey is the length up to which a dictKey holds a whole value.
const shortKey = 16

// dictKey is a value's length and two words of its bytes: for a value of
// up to shortKey bytes, every byte is in one of the words, so equal keys
// mean equal values. Longer values must still be compared.
type dictKey struct {
	w0, w1 uint64
	n      int
}

// keyOf returns the dictKey of v: for 8 bytes or more its first and last
// eight (overlapping when fewer than 16), for 4 to 7 its first and last
// four, below that its first, middle and last byte.
func keyOf(v []byte) dictKey {
	n := len(v)
	switch {
	case n >= 8:
		return dictKey{binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[n-8:]), n}
	case n >= 4:
		return dictKey{uint64(binary.LittleEndian.Uint32(v)), uint64(binary.LittleEndian.Uint32(v[n-4:])), n}
	case n > 0:
		return dictKey{uint64(v[0]) | uint64(v[n/2])<<8 | uint64(v[n-1])<<16, 0, n}
	}
	return dictKey{n: 0}
}

// hash returns the hash of the value whose key is k.
func (x *dictIndex) hash(v []byte, k dictKey) uint64 {
	if k.n > shortKey {
		return maphash.Bytes(x.seed, v)
	}
	// A multiply-mix of the key's words, as wyhash does it.
	hi, lo := bits.Mul64(k.w0^x.mix, k.w1^uint64(k.n)*0x9e3779b97f4a7c15^0xa0761d6478bd642f)
	return hi ^ lo
}

// code returns the code of v in values, appending v to values (the
// dictionary) first if it is not there yet.
func (x *dictIndex) code(v []byte, values *stringColumn) int32 {
	return x.codeKey(v, keyOf(v), values)
}

// codeKey is code for a v whose key is k.
func (x *dictIndex) codeKey(v []byte, k dictKey, values *stringColumn) int32 {
	if len(x.slots) == 0 {
		x.grow()
	}
	h := x.hash(v, k)
	if c := x.find(v, k, h, values); c >= 0 {
		return c
	}
	return x.insert(v, k, h, values)
}

// lookup returns the code of v in values, -1 if v is not there.
func (x *dictIndex) lookup(v []byte, values *stringColumn) int32 {
	if x.n == 0 {
		return -1
	}
	k := keyOf(v)
	return x.find(v, k, x.hash(v, k), values)
}

// find returns the code of v (key k, hash h), -1 if v is not there.
func (x *dictIndex) find(v []byte, k dictKey, h uint64, values *stringColumn) int32 {
	mask := len(x.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.code == 0 {
			return -1
		}
		if s.key == k && (k.n <= shortKey || bytes.Equal(values.value(s.code-1), v)) {
			return s.code - 1
		}
	}
}

// add appends v, which must not be in values yet, to values and returns
// its code.
func (x *dictIndex) add(v []byte, values *stringColumn) int32 {
	if len(x.slots) == 0 {
		x.grow()
	}
	k := keyOf(v)
	return x.insert(v, k, x.hash(v, k), values)
}

// insert is add for a v whose key and hash are k and h.
func (x *dictIndex) insert(v []byte, k dictKey, h uint64, values *stringColumn) int32 {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	mask := len(x.slots) - 1
	i := int(h) & mask
	for x.slots[i].code != 0 {
		i = (i + 1) & mask
	}
	c := int32(x.n)
	x.slots[i] = dictSlot{key: k, hash: uint32(h), code: c + 1}
	x.n++
	values.append(v)
	return c
}

// grow doubles the table (or makes the first one) and re-inserts the
// codes by their stored hashes.
func (x *dictIndex) grow() {
	old := x.slots
	if len(old) == 0 {
		x.seed = maphash.MakeSeed()
		x.mix = maphash.Bytes(x.seed, nil) // a random word
		x.slots = make([]dictSlot, 64)
		return
	}
	x.slots = make([]dictSlot, 2*len(old))
	mask := len(x.slots) - 1
	for _, s := range old {
		if s.code == 0 {
			continue
		}
		i := int(s.hash) & mask
		for x.slots[i].code != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = s
	}
}

// reset empties the table for a new block, keeping its size.
func (x *dictIndex) reset() {
	clear(x.slots)
	x.n = 0
}

func (c *dictColumn) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	return dictData(mem, dt, &c.codes, &c.values)
}

// dictData builds a dictionary array's data from its codes and dictionary.
func dictData(mem memory.Allocator, dt arrow.DataType, codes *fixedColumn[int32], values *stringColumn) *array.Data {
	dict := values.arrowData(mem, dt.(*arrow.DictionaryType).ValueType)
	defer dict.Release()
	n := len(codes.vals)
	bufs := []*memory.Buffer{codes.buffer(mem, n), codes.valueBuffer(mem)}
	d := array.NewDataWithDictionary(dt, n, bufs, codes.nulls, 0, dict)
	releaseBuffers(bufs)
	return d
}

// constDict is a dictionary column holding the same value in every row
// (source_file).
type constDict struct {
	value string
	rows  int
}

func (c constDict) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	values := stringColumn{offsets: []int32{0, int32(len(c.value))}, data: []byte(c.value)}
	codes := fixedColumn[int32]{vals: make([]int32, c.rows)} // code 0 in every row
	return dictData(mem, dt, &codes, &values)
}

// tresColumn is the alloc_tres map<utf8, float64> column: row i holds the
// entries offsets[i] to offsets[i+1] of keys and vals, in input order.
// Alongside it, sets is the alloc_tres_set column: the block's memo items
// numbered in order of first appearance, so that rows with the same
// AllocTRES string share a number. The memo may be emptied in the middle
// of a block; a string then gets a second number, which the column allows.
type tresColumn struct {
	offsets []int32 // one more than the rows
	keys    stringColumn
	vals    fixedColumn[float64]
	sets    fixedColumn[int32]
	block   uint64 // counts resets, so that no item's setBlock is current before it is numbered
	nsets   int32  // the numbers handed out in this block
	validity
}

// appendItem appends a row holding the entries of item k of m. Keys and
// values are never null, so their validity bitmaps need no update.
func (c *tresColumn) appendItem(m *tresMemo, k int32) {
	it := &m.items[k]
	if it.setBlock != c.block {
		it.set, it.setBlock = c.nsets, c.block
		c.nsets++
	}
	c.sets.append(it.set)
	// appendEntries' body, written out: this runs for every ingested row,
	// and the call cost the default sacct path some 3% of its CPU time.
	base := int32(len(c.keys.data))
	c.keys.data = append(c.keys.data, m.names[it.names:it.namesEnd]...)
	for _, e := range m.ends[it.entries:it.entriesEnd] {
		c.keys.offsets = append(c.keys.offsets, base+e)
	}
	c.vals.vals = append(c.vals.vals, m.vals[it.entries:it.entriesEnd]...)
	c.offsets = append(c.offsets, int32(len(c.vals.vals)))
}

// appendEntries appends a row holding the entries of item k of m, without
// numbering it (req_tres, whose numbers are not kept: the items' numbers
// are alloc_tres_set's). It leaves the validity to the caller: alloc_tres
// is never null, and req_tres marks its valid rows itself.
func (c *tresColumn) appendEntries(m *tresMemo, k int32) {
	it := &m.items[k]
	base := int32(len(c.keys.data))
	c.keys.data = append(c.keys.data, m.names[it.names:it.namesEnd]...)
	for _, e := range m.ends[it.entries:it.entriesEnd] {
		c.keys.offsets = append(c.keys.offsets, base+e)
	}
	c.vals.vals = append(c.vals.vals, m.vals[it.entries:it.entriesEnd]...)
	c.offsets = append(c.offsets, int32(len(c.vals.vals)))
}

// appendNull appends a null row (req_tres of a record without ReqTRES).
func (c *tresColumn) appendNull() {
	c.markNull(len(c.offsets) - 1)
	c.offsets = append(c.offsets, int32(len(c.vals.vals)))
}

func (c *tresColumn) reset() {
	c.validity.reset()
	c.offsets = append(c.offsets[:0], 0)
	c.keys.reset()
	c.vals.reset()
	c.sets.reset()
	c.block++ // never 0, the setBlock of a new item
	c.nsets = 0
}

func (c *tresColumn) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	mt := dt.(*arrow.MapType)
	keys := c.keys.arrowData(mem, mt.KeyType())
	vals := c.vals.arrowData(mem, mt.ItemType())
	entries := newData(mt.Elem(), len(c.vals.vals), []*memory.Buffer{nil}, []arrow.ArrayData{keys, vals}, 0)
	n := len(c.offsets) - 1
	return newData(mt, n, []*memory.Buffer{c.buffer(mem, n), newBuffer(mem, arrow.GetBytes(c.offsets))}, []arrow.ArrayData{entries}, c.nulls)
}

// boolColumn is a boolean column: the values one bit each, as Arrow holds
// them.
type boolColumn struct {
	bits []byte
	n    int
	validity
}

// appendOpt appends v, or a null when ok is false.
func (c *boolColumn) appendOpt(v, ok bool) {
	if ok {
		c.markValid(c.n)
	} else {
		c.markNull(c.n)
	}
	if c.n>>3 == len(c.bits) {
		c.bits = append(c.bits, 0)
	}
	if ok && v {
		c.bits[c.n>>3] |= 1 << (c.n & 7)
	} else {
		c.bits[c.n>>3] &^= 1 << (c.n & 7)
	}
	c.n++
}

func (c *boolColumn) reset() {
	c.bits = c.bits[:0]
	c.n = 0
	c.validity.reset()
}

func (c *boolColumn) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	bufs := []*memory.Buffer{c.buffer(mem, c.n), newBuffer(mem, c.bits[:bitutil.BytesForBits(int64(c.n))])}
	return newData(dt, c.n, bufs, nil, c.nulls)
}

// newBuffer copies b into a buffer from mem.
func newBuffer(mem memory.Allocator, b []byte) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(b))
	copy(buf.Bytes(), b)
	return buf
}

// newData is array.NewData that takes over the caller's references to
// buffers and children.
func newData(dt arrow.DataType, n int, buffers []*memory.Buffer, children []arrow.ArrayData, nulls int) *array.Data {
	d := array.NewData(dt, n, buffers, children, nulls, 0)
	releaseBuffers(buffers)
	for _, c := range children {
		c.Release()
	}
	return d
}

func releaseBuffers(bufs []*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}
