package record

import (
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/fairledger/fairledger/schemas"
)

// AppendBatch adds the rows of a billed jobs batch (schemas.Jobs plus
// schemas.BillingFields) in batch order, with charged_sec 0 (the caller
// sets it for the month the rows are written to). A null name reads "".
// The cluster, exit_code, job_name and billing_sacct columns are not part
// of the jobs table and are ignored. The table keeps no reference to rec.
// On error nothing is added.
func (t *JobTable) AppendBatch(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	c := batchCols{rec: rec, dict: t.Dict}
	jobID := c.str(schemas.ColJobID)
	jobIDRaw := c.int64s(schemas.ColJobIDRaw)
	arrJob := c.int64s(schemas.ColArrayJobID)
	arrTask := c.int64s(schemas.ColArrayTaskID)
	hetJob := c.int64s(schemas.ColHetJobID)
	hetOff := c.int64s(schemas.ColHetJobOffset)
	user := c.str(schemas.ColUser)
	account := c.str(schemas.ColAccount)
	partition := c.str(schemas.ColPartition)
	qos := c.str(schemas.ColQOS)
	state := c.str(schemas.ColState)
	cancelledBy := c.str(schemas.ColCancelledBy)
	submit := c.times(schemas.ColSubmit)
	eligible := c.times(schemas.ColEligible)
	start := c.times(schemas.ColStart)
	end := c.times(schemas.ColEnd)
	elapsed := c.int64s(schemas.ColElapsedSec)
	suspended := c.int64s(schemas.ColSuspendedSec)
	timelimit := c.int64s(schemas.ColTimelimitMin)
	nnodes := c.int64s(schemas.ColNNodes)
	cpus := c.int64s(schemas.ColAllocCPUs)
	mem := c.float64s(schemas.DenseTRESColumn("mem"))
	node := c.float64s(schemas.DenseTRESColumn("node"))
	gpu := c.float64s(schemas.DenseTRESColumn("gres/gpu"))
	tres := c.tresMap(schemas.ColAllocTRES, schemas.ColAllocTRESSet)
	billing := c.float64s(schemas.ColBilling)
	billingSlurm := c.int64s(schemas.ColBillingSlurm)
	usageFactor := c.float64s(schemas.ColUsageFactor)
	sourceFile := c.str(schemas.ColSourceFile)
	sourceLine := c.int64s(schemas.ColSourceLine)
	if c.err != nil {
		return c.err
	}
	for _, col := range []struct {
		name string
		a    arrow.Array
	}{{schemas.ColJobIDRaw, jobIDRaw}, {schemas.ColStart, start.Timestamp}, {schemas.ColNNodes, nnodes},
		{schemas.ColAllocCPUs, cpus}, {schemas.ColBilling, billing}, {schemas.ColBillingSlurm, billingSlurm},
		{schemas.ColUsageFactor, usageFactor}, {schemas.ColSourceLine, sourceLine}} {
		if col.a.NullN() > 0 {
			return fmt.Errorf("jobs rows: column %q: %d nulls in a non-null column", col.name, col.a.NullN())
		}
	}

	// Rows go in blocks: first each name column's indexes for the block,
	// a tight loop per column, then the records, filled where they lie in
	// t.Recs rather than built and copied in.
	base := len(t.Recs)
	t.Recs = slices.Grow(t.Recs, n)[:base+n]
	var names [6][appendBlock]uint32
	cols := [6]*strCol{&user, &account, &partition, &qos, &state, &sourceFile}
	mem64, node64, gpu64 := mem.Float64Values(), node.Float64Values(), gpu.Float64Values()
	billing64, usage64 := billing.Float64Values(), usageFactor.Float64Values()
	raw64, nnodes64, cpus64 := jobIDRaw.Int64Values(), nnodes.Int64Values(), cpus.Int64Values()
	bslurm64, line64 := billingSlurm.Int64Values(), sourceLine.Int64Values()
	for lo := 0; lo < n; lo += appendBlock {
		hi := min(lo+appendBlock, n)
		for k, col := range cols {
			col.fill(names[k][:hi-lo], lo)
		}
		for i := lo; i < hi; i++ {
			r := &t.Recs[base+i]
			// The TRES set and then the names in this order, as they were
			// looked up when records were built one at a time: a name new
			// to the dictionary gets the same index.
			tresID := tres.at(i)
			var nm [6]uint32
			for k := range nm {
				if nm[k] = names[k][i-lo]; nm[k] == inRowOrder {
					nm[k] = cols[k].at(i)
				}
			}
			*r = JobRec{JobIDRaw: raw64[i], Start: start.at(i),
				NNodes: nnodes64[i], AllocCPUs: cpus64[i], MemMB: mem64[i], NodeCount: node64[i],
				GPU: gpu64[i], TRES: tresID, Billing: billing64[i], BillingSlurm: bslurm64[i],
				UsageFactor: usage64[i], SourceLine: line64[i],
				User: nm[0], Account: nm[1], Partition: nm[2], QOS: nm[3], State: nm[4], SourceFile: nm[5]}
			optInt64(arrJob, i, r, &r.ArrayJobID, ValidArrayJobID)
			optInt64(arrTask, i, r, &r.ArrayTaskID, ValidArrayTaskID)
			optInt64(hetJob, i, r, &r.HetJobID, ValidHetJobID)
			optInt64(hetOff, i, r, &r.HetJobOffset, ValidHetJobOffset)
			submit.opt(i, r, &r.Submit, ValidSubmit)
			eligible.opt(i, r, &r.Eligible, ValidEligible)
			end.opt(i, r, &r.End, ValidEnd)
			optInt64(elapsed, i, r, &r.ElapsedSec, ValidElapsedSec)
			optInt64(suspended, i, r, &r.SuspendedSec, ValidSuspendedSec)
			optInt64(timelimit, i, r, &r.TimelimitMin, ValidTimelimitMin)
			if !cancelledBy.a.IsNull(i) {
				r.CancelledBy = cancelledBy.at(i) + 1
			}
			id := jobID.bytes(i)
			r.idOff, r.idLen = uint32(len(t.ids)), uint32(len(id))
			t.ids = append(t.ids, id...)
		}
	}
	return nil
}

// appendBlock is how many rows AppendBatch takes at a time: the name
// indexes of a block stay in the first-level cache.
const appendBlock = 512

// inRowOrder stands, in strCol.fill's output, for a value that may add a
// name to the dictionary (a null, or any value of a utf8 column): the
// caller looks it up with at, in row order.
const inRowOrder = math.MaxUint32

// batchCols looks columns up by name, remembering the first error so that
// AppendBatch checks once.
type batchCols struct {
	rec  arrow.RecordBatch
	dict *JobDict
	err  error
}

func (c *batchCols) col(name string) arrow.Array {
	if c.err != nil {
		return nil
	}
	i, err := schemas.Index(c.rec.Schema(), name)
	if err != nil {
		c.err = fmt.Errorf("jobs rows: %w", err)
		return nil
	}
	return c.rec.Column(i)
}

func (c *batchCols) typeErr(name string, a arrow.Array) {
	if c.err == nil {
		c.err = fmt.Errorf("jobs rows: column %q has type %s", name, a.DataType())
	}
}

func (c *batchCols) int64s(name string) *array.Int64 {
	a := c.col(name)
	if a == nil {
		return nil
	}
	v, ok := a.(*array.Int64)
	if !ok {
		c.typeErr(name, a)
	}
	return v
}

func (c *batchCols) float64s(name string) *array.Float64 {
	a := c.col(name)
	if a == nil {
		return nil
	}
	v, ok := a.(*array.Float64)
	if !ok {
		c.typeErr(name, a)
	}
	return v
}

// strCol reads a utf8 or dictionary<int, utf8> column as JobDict indexes
// (looked up once per dictionary entry); a null reads "".
type strCol struct {
	a     arrow.Array
	plain *array.String
	dict  *array.Dictionary
	codes []int32  // dict's indexes when they are int32 (as ingest makes them)
	ids   []uint32 // dictionary entry → JobDict index
	jd    *JobDict
}

// fill sets out[k] to the JobDict index of value lo+k of a dictionary
// column, or to inRowOrder for a null and for every value of a utf8
// column.
func (s *strCol) fill(out []uint32, lo int) {
	switch {
	case s.codes != nil && s.a.NullN() == 0:
		codes := s.codes[lo : lo+len(out)]
		for k, c := range codes {
			out[k] = s.ids[c]
		}
	case s.dict != nil:
		for k := range out {
			if s.a.IsNull(lo + k) {
				out[k] = inRowOrder
			} else {
				out[k] = s.ids[s.dict.GetValueIndex(lo+k)]
			}
		}
	default:
		for k := range out {
			out[k] = inRowOrder
		}
	}
}

func (s strCol) at(i int) uint32 {
	switch {
	case s.a.IsNull(i):
		return s.jd.Name("")
	case s.dict != nil:
		return s.ids[s.dict.GetValueIndex(i)]
	}
	return s.jd.nameBytes(s.bytes(i))
}

// bytes is a plain column's value i (nil for a null), viewing rec's buffer.
func (s strCol) bytes(i int) []byte {
	if s.a.IsNull(i) {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s.plain.Value(i)), len(s.plain.Value(i)))
}

func (c *batchCols) str(name string) strCol {
	a := c.col(name)
	if a == nil {
		return strCol{}
	}
	switch v := a.(type) {
	case *array.String:
		return strCol{a: a, plain: v, jd: c.dict}
	case *array.Dictionary:
		d, ok := v.Dictionary().(*array.String)
		if !ok {
			c.typeErr(name, a)
			return strCol{}
		}
		ids := make([]uint32, d.Len())
		for k := range ids {
			ids[k] = c.dict.Name(d.Value(k))
		}
		var codes []int32
		if i32, ok := v.Indices().(*array.Int32); ok {
			codes = i32.Int32Values()
		}
		return strCol{a: a, dict: v, codes: codes, ids: ids, jd: c.dict}
	}
	c.typeErr(name, a)
	return strCol{}
}

// timeCol reads a timestamp column of any unit as Unix microseconds.
type timeCol struct {
	*array.Timestamp
	perSec int64
}

func (t timeCol) at(i int) int64 { return microsOf(int64(t.Value(i)), t.perSec) }

// opt sets *dst and r's valid bit unless value i is null.
func (t timeCol) opt(i int, r *JobRec, dst *int64, bit uint16) {
	if !t.IsNull(i) {
		*dst, r.Valid = t.at(i), r.Valid|bit
	}
}

func (c *batchCols) times(name string) timeCol {
	a := c.col(name)
	if a == nil {
		return timeCol{}
	}
	v, ok := a.(*array.Timestamp)
	if !ok {
		c.typeErr(name, a)
		return timeCol{}
	}
	var perSec int64
	switch v.DataType().(*arrow.TimestampType).Unit {
	case arrow.Second:
		perSec = 1
	case arrow.Millisecond:
		perSec = 1e3
	case arrow.Microsecond:
		perSec = 1e6
	default:
		perSec = 1e9
	}
	return timeCol{Timestamp: v, perSec: perSec}
}

// mapCol reads a map<utf8, float64> column as JobDict TRES sets; a null or
// empty map is the empty set. A batch has few distinct TRES sets (about
// 1,400 in 200k rows), so a row's entries are hashed as they lie in the
// arrays and compared with those of the first row that had the hash; they
// are sorted and interned only the first time. (Building a key of the
// entries for a map lookup took three times as long.)
//
// When the batch numbers its maps (schemas.ColAllocTRESSet, as ingest
// does), only the first row of each number is read that way; every other
// row takes its set from its number, without looking at its entries.
type mapCol struct {
	m       *array.Map
	keys    *array.String
	items   *array.Float64
	keyOffs []int32 // keys' value offsets into keyData
	keyData []byte
	jd      *JobDict
	seed    maphash.Seed
	seen    map[uint64]tresRows // by hash: the first row's entries
	slow    map[string]uint32   // sets whose hash another set had first
	key     []byte
	last    tresRows // the last non-empty row's entries and set
	sets    []int32  // the batch's alloc_tres_set, nil if it has none
	setIDs  []uint32 // alloc_tres_set number → its set + 1, 0 until its first row
}

// tresRows are a batch's entries [lo, hi) and their set.
type tresRows struct {
	lo, hi int
	id     uint32
}

func (m *mapCol) at(i int) uint32 {
	if m.sets != nil {
		k := m.sets[i]
		if id := m.setIDs[k]; id != 0 {
			return id - 1
		}
		id := m.row(i)
		m.setIDs[k] = id + 1
		return id
	}
	return m.row(i)
}

// row reads the set of row i from its entries.
func (m *mapCol) row(i int) uint32 {
	if m.m.IsNull(i) {
		return 0
	}
	lo64, hi64 := m.m.ValueOffsets(i)
	lo, hi := int(lo64), int(hi64)
	if lo == hi {
		return 0
	}
	// A job often has the TRES of the job before it (3 in 10 in sacct's
	// order): that costs one comparison, no hashing.
	if m.last.hi > m.last.lo && m.same(m.last.lo, m.last.hi, lo, hi) {
		return m.last.id
	}
	id := m.lookup(lo, hi)
	m.last = tresRows{lo, hi, id}
	return id
}

// lookup finds or interns the set of the entries [lo, hi).
func (m *mapCol) lookup(lo, hi int) uint32 {
	h := m.hash(lo, hi)
	first, ok := m.seen[h]
	if ok && m.same(first.lo, first.hi, lo, hi) {
		return first.id
	}
	if ok { // another set has this hash: look the entries up by their bytes
		m.key = m.key[:0]
		for j := lo; j < hi; j++ {
			m.key = AppendTRESEntry(m.key, m.keys.Value(j), m.items.Value(j))
		}
		if id, ok := m.slow[string(m.key)]; ok {
			return id
		}
	}
	d := m.jd
	d.scratch = d.scratch[:0]
	for j := lo; j < hi; j++ {
		e := tresEntry{m.keys.Value(j), m.items.Value(j)}
		if k := slices.IndexFunc(d.scratch, func(x tresEntry) bool { return x.key == e.key }); k >= 0 {
			d.scratch[k] = e // a repeated key: the last value wins
		} else {
			d.scratch = append(d.scratch, e)
		}
	}
	id := d.internScratch()
	if ok {
		m.slow[string(m.key)] = id
	} else {
		m.seen[h] = tresRows{lo, hi, id}
	}
	return id
}

// hash hashes the entries [lo, hi): their keys' bytes and lengths and their
// values' bits.
func (m *mapCol) hash(lo, hi int) uint64 {
	h := maphash.Bytes(m.seed, m.keyData[m.keyOffs[lo]:m.keyOffs[hi]])
	for j := lo; j < hi; j++ {
		h = (h ^ math.Float64bits(m.items.Value(j))) * 0x9e3779b97f4a7c15
		h ^= uint64(m.keyOffs[j+1] - m.keyOffs[j])
	}
	return h
}

// same reports whether the entries [alo, ahi) and [blo, bhi) have the same
// keys and bit-identical values in the same order.
func (m *mapCol) same(alo, ahi, blo, bhi int) bool {
	if ahi-alo != bhi-blo {
		return false
	}
	for k := range ahi - alo {
		a, b := alo+k, blo+k
		if math.Float64bits(m.items.Value(a)) != math.Float64bits(m.items.Value(b)) ||
			m.keyOffs[a+1]-m.keyOffs[a] != m.keyOffs[b+1]-m.keyOffs[b] {
			return false
		}
	}
	return string(m.keyData[m.keyOffs[alo]:m.keyOffs[ahi]]) == string(m.keyData[m.keyOffs[blo]:m.keyOffs[bhi]])
}

// tresMap reads the map column name, numbered by the int32 column setName
// if the batch has one (see mapCol).
func (c *batchCols) tresMap(name, setName string) mapCol {
	a := c.col(name)
	if a == nil {
		return mapCol{}
	}
	m, ok := a.(*array.Map)
	if !ok {
		c.typeErr(name, a)
		return mapCol{}
	}
	keys, ok1 := m.Keys().(*array.String)
	items, ok2 := m.Items().(*array.Float64)
	if !ok1 || !ok2 {
		c.typeErr(name, a)
		return mapCol{}
	}
	var data []byte
	if b := keys.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	mc := mapCol{m: m, keys: keys, items: items, keyOffs: keys.ValueOffsets(), keyData: data, jd: c.dict,
		seed: maphash.MakeSeed(), seen: map[uint64]tresRows{}, slow: map[string]uint32{}}
	mc.sets, mc.setIDs = c.tresSets(setName)
	return mc
}

// tresSets returns the values of the optional int32 column name and a
// zeroed table with one entry per number they use, or nils when the batch
// has no such column or its numbers are too sparse to be worth a table
// (then every row is read from its entries).
func (c *batchCols) tresSets(name string) ([]int32, []uint32) {
	if c.err != nil || len(c.rec.Schema().FieldIndices(name)) == 0 {
		return nil, nil
	}
	a := c.col(name)
	v, ok := a.(*array.Int32)
	if !ok {
		c.typeErr(name, a)
		return nil, nil
	}
	if v.NullN() > 0 {
		c.err = fmt.Errorf("jobs rows: column %q: %d nulls in a non-null column", name, v.NullN())
		return nil, nil
	}
	sets := v.Int32Values()
	hi := int32(-1)
	for _, k := range sets {
		if k < 0 {
			c.err = fmt.Errorf("jobs rows: column %q: negative value %d", name, k)
			return nil, nil
		}
		hi = max(hi, k)
	}
	if int(hi) >= 4*len(sets)+1<<16 {
		return nil, nil
	}
	return sets, make([]uint32, int(hi)+1)
}

// optInt64 sets *dst and r's valid bit unless a's value i is null.
func optInt64(a *array.Int64, i int, r *JobRec, dst *int64, bit uint16) {
	if !a.IsNull(i) {
		*dst, r.Valid = a.Value(i), r.Valid|bit
	}
}
