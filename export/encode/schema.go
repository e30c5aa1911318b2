package encode

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
)

// jobsSchema is the jobs table's Parquet schema: record.JobRow's, with encodings
// its struct tags cannot give (parquet-go refuses "delta" on a pointer
// field): DELTA_BINARY_PACKED for the INT64 columns (ids, counts,
// timestamps) but three below, dictionary encoding for the TRES map's keys and values and
// for the resource amounts (mem_mb, node_count, gpu, usage_factor). On a
// month of the 5 M-job benchmark this makes the jobs encoder a quarter
// cheaper and the file 6 % smaller: the pages that zstd compresses shrink.
// billing is dictionary encoded too: it is TRESBillingWeights applied to
// an allocation, so it takes about as many values as there are TRES sets
// and partitions (762 in the benchmark's March, 763 in its year), and
// its pages went from 3264 KB of PLAIN doubles (736 KB after zstd) to
// 487 KB of dictionary and indexes (473 KB after zstd) a month; the
// month's encoder took 0.252-0.304 CPU-s against 0.273-0.304 before.
// So are three INT64 columns of few values: timelimit_min (11 in that
// March), alloc_cpus (25) and billing_slurm (350), which shrink the month
// from 17.25 MB to 16.49 MB; with cachedWordDict (parquet-go's int64
// dictionary hashes every value) the month's encoder took 0.283-0.291
// CPU-s against 0.290-0.309 as DELTA_BINARY_PACKED.
// DELTA_BYTE_ARRAY for job_id: in the table's order, a job id mostly
// shares its leading digits with the one before (an array's tasks, all
// of them), so the column's pages shrink from 3295 KB (parquet-go's
// DELTA_LENGTH_BYTE_ARRAY) to 1766 KB a month before zstd, which then takes 5.5 ms instead of 21.7 ms for 1243 KB
// instead of 1203 KB (the encoder as a whole, 4 % less CPU).
// Columns, types and nullability are unchanged; any Parquet reader reads
// these encodings. Each column also declares its compression codec
// (jobsCodec), which the file records per column chunk.
func jobsSchema() *parquet.Schema {
	s := parquet.SchemaOf(record.JobRow{})
	dict := map[string]bool{"tres/key_value/key": true, "tres/key_value/value": true,
		"mem_mb": true, "node_count": true, "gpu": true, "usage_factor": true, "billing": true, "timelimit_min": true, "alloc_cpus": true, "billing_slurm": true}
	leaf := func(path string, f parquet.Field) parquet.Field {
		switch {
		case dict[path]:
			f = encodedField{f, &parquet.RLEDictionary}
		case path == "job_id":
			f = encodedField{f, &parquet.DeltaByteArray}
		case f.Type().Kind() == parquet.Int64:
			f = encodedField{f, &parquet.DeltaBinaryPacked}
		}
		return compressedField{f, jobsCodec(path)}
	}
	return parquet.NewSchema(s.Name(), fieldsNode{s, mapLeaves(s.Fields(), "", leaf)})
}

// jobsCodec is the compression of the jobs table's leaf column path:
// historyZstd where it pays, SNAPPY (snappyCodec) where that is cheaper
// than zstd and compresses as well or better, none where no codec gains.
//
// The numbers are from March 2024 of the 5 M-job benchmark year (407,869
// rows, 4 row groups): each column's pages written uncompressed, then
// compressed page by page with historyZstd, snappyCodec and parquet-go's
// SNAPPY (the "better" mode), in KB and in ms of one thread's CPU per
// month (150 repetitions):
//
//	               |        size (KB)           |     CPU (ms)
//	column         |  raw  zstd  snappy better  | zstd snappy better  codec
//	end            | 2077  2077  2077   2077    | 0.20  0.13  1.64    none
//	elapsed_sec    | 1002  1002  1002   1002    | 0.00  0.08  0.35    none
//	charged_sec    | 1002  1002  1002   1002    | 0.09  0.08  1.00    none
//	job_id_raw     |  890   880   829    814    | 1.02  0.50  2.33    snappy
//	source_line    |  892   884   835    814    | 0.85  0.42  2.48    snappy
//	billing_slurm  |  549   536   510    498    | 1.06  0.36  1.25    snappy
//	submit         | 2054  1967  1792   1744    | 4.40  1.30  4.50    snappy
//	eligible       | 2054  1962  1789   1743    | 4.72  1.35  4.48    snappy
//	start          | 1844  1583  1637   1545    | 9.16  1.57  6.32    snappy
//	timelimit_min  |  757   621   630    596    | 4.58  0.74  2.37    snappy
//	alloc_cpus     |  505   472   460    448    | 1.82  0.38  1.28    snappy
//	array_job_id   |  283   165   144    134    | 0.67  0.22  0.50    snappy
//	array_task_id  |  130   112   101     94    | 0.34  0.10  0.28    snappy
//	het_job_id     |   47    40    41     39    | 0.18  0.02  0.10    snappy
//	job_id (DLBA)  | 3295  1203  2406   1935    |21.70  5.39 13.13    zstd
//	job_id (DBA)   | 1766  1243  1666      -    | 5.53  1.60     -    zstd
//	billing        | 3263   736   910    843    |15.30  4.09  6.65    zstd
//	billing (dict) |  487   473     -      -    |    -     -     -    zstd
//	tres values    | 2237  1023  1360   1137    |14.07  3.89  8.06    zstd
//	tres keys      |  895   138   182    161    | 3.05  0.67  1.61    zstd
//
// (job_id was DELTA_LENGTH_BYTE_ARRAY, DLBA, and is DELTA_BYTE_ARRAY, DBA:
// see jobsSchema; billing was PLAIN and is dictionary encoded, its row
// measured on the pipeline's file, not by the 150 repetitions.) The snappy
// and none columns are DELTA_BINARY_PACKED INT64s (timelimit_min,
// alloc_cpus and billing_slurm were measured so; they are dictionary
// encoded now and stay snappy). What is
// left of such a column is bit-packed, with no bytes at all for a
// miniblock of equal steps, so the runs a real cluster has (an array's
// tasks submitted and started together, a user's jobs of one shape and
// time limit) shrink before any codec sees them, and a codec finds little
// but repeated byte strings, which snappy matches about as well as zstd's
// fastest level (on the benchmark, better for all but start and
// timelimit_min). Where no codec gains, none costs nothing.
// zstd stays where it pays and where real data could compress well: the
// job ids as strings, the float columns (billing, the TRES map, the
// resources, dictionary-encoded or not), and the dictionary indexes of
// the name columns (partition, qos and state gain nothing on the
// benchmark's shuffled names, but a user's long runs of jobs give their
// indexes runs that zstd shrinks; they cost under 0.1 ms a month).
// Written whole (BenchmarkWriteJobsMonth, -cpu 1), the month's file went
// from 17.87 MB to 17.46 MB and from 0.366-0.371 to 0.321-0.326 CPU-s.
//
// The usage and fairshare tables stay all zstd: every usage column gains
// 40-89 %, and the fairshare columns that gain nothing on the benchmark
// (raw_usage, norm_usage, effectv_usage, level_fs: 0.1 ms of zstd each a
// month) are, on a real cluster, full of the zeros of idle users.
func jobsCodec(path string) compress.Codec {
	switch path {
	case "end", "elapsed_sec", "charged_sec":
		return &parquet.Uncompressed
	case "job_id_raw", "source_line", "billing_slurm", "submit", "eligible", "start", "timelimit_min", "alloc_cpus",
		"array_job_id", "array_task_id", "het_job_id":
		return snappyCodec{}
	}
	return historyZstd
}

// jobsWriterSchema is jobsSchema with internedType for the
// dictionary-encoded BYTE_ARRAY columns (user, account, ..., the TRES
// keys), whose values are strs', and cachedWordType for the
// dictionary-encoded DOUBLE and INT64 ones (mem_mb, ..., the TRES values,
// timelimit_min, ...): the schema of the jobs encoder's writer. It
// describes the same file.
func jobsWriterSchema(strs *internedStrings) *parquet.Schema {
	s := jobsSchema()
	leaf := func(_ string, f parquet.Field) parquet.Field {
		if f.Encoding() == nil {
			return f
		}
		switch f.Encoding().Encoding() {
		//lint:ignore SA1019 a field may carry either dictionary encoding; the deprecated one is matched, not written
		case format.RLEDictionary, format.PlainDictionary:
			switch f.Type().Kind() {
			case parquet.ByteArray:
				return typedField{f, internedType{f.Type(), strs}}
			case parquet.Double, parquet.Int64:
				return typedField{f, cachedWordType{f.Type()}}
			}
		}
		return f
	}
	return parquet.NewSchema(s.Name(), fieldsNode{s, mapLeaves(s.Fields(), "", leaf)})
}

// mapLeaves returns fields with each leaf replaced by leaf(p, field),
// where p is its slash-separated path.
func mapLeaves(fields []parquet.Field, prefix string, leaf func(string, parquet.Field) parquet.Field) []parquet.Field {
	out := make([]parquet.Field, len(fields))
	for i, f := range fields {
		p := prefix + f.Name()
		if f.Leaf() {
			out[i] = leaf(p, f)
		} else {
			out[i] = fieldsField{f, mapLeaves(f.Fields(), p+"/", leaf)}
		}
	}
	return out
}

// encodedField is a leaf field with another encoding.
type encodedField struct {
	parquet.Field
	enc encoding.Encoding
}

func (f encodedField) Encoding() encoding.Encoding { return f.enc }

// compressedField is a leaf field with its own compression codec (what
// parquet.Compressed does for a node).
type compressedField struct {
	parquet.Field
	codec compress.Codec
}

func (f compressedField) Compression() compress.Codec { return f.codec }

// typedField is a leaf field with another type.
type typedField struct {
	parquet.Field
	typ parquet.Type
}

func (f typedField) Type() parquet.Type { return f.typ }

// fieldsField is a group field with other child fields.
type fieldsField struct {
	parquet.Field
	fields []parquet.Field
}

func (f fieldsField) Fields() []parquet.Field { return f.fields }

// fieldsNode is a root node with other child fields.
type fieldsNode struct {
	parquet.Node
	fields []parquet.Field
}

func (n fieldsNode) Fields() []parquet.Field { return n.fields }

// CheckSchema compares one Parquet schema (a row type's, or a written
// file's) with its table definition: the columns in order, their types and
// nullability.
func CheckSchema(t schemas.Table, s *parquet.Schema) error {
	fields := s.Fields()
	var errs []error
	if len(fields) != len(t.Columns) {
		errs = append(errs, fmt.Errorf("table %s: Parquet schema has %d columns, schemas.Tables %d", t.Name, len(fields), len(t.Columns)))
	}
	for i := 0; i < len(fields) && i < len(t.Columns); i++ {
		f, c := fields[i], t.Columns[i]
		if f.Name() != c.Name {
			errs = append(errs, fmt.Errorf("table %s: column %d is %q, want %q", t.Name, i, f.Name(), c.Name))
			continue
		}
		if got := nodeType(f); got != c.Type {
			errs = append(errs, fmt.Errorf("table %s: column %s has type %s, want %s", t.Name, c.Name, got, c.Type))
		}
		if f.Optional() != c.Nullable {
			errs = append(errs, fmt.Errorf("table %s: column %s nullable = %v, want %v", t.Name, c.Name, f.Optional(), c.Nullable))
		}
	}
	return errors.Join(errs...)
}

// nodeType spells a Parquet node's type the way schemas.Type does.
func nodeType(n parquet.Node) schemas.Type {
	var lt format.LogicalTypeValue
	if l := n.Type().LogicalType(); l != nil {
		lt = l.Value
	}
	if !n.Leaf() {
		switch lt.(type) {
		case *format.MapType:
			kf := n.Fields()[0].Fields()
			return schemas.Type("MAP<" + string(nodeType(kf[0])) + "," + string(nodeType(kf[1])) + ">")
		case *format.ListType:
			elem := n.Fields()[0].Fields()[0]
			return schemas.Type("LIST<" + string(nodeType(elem)) + ">")
		}
		parts := make([]string, 0, len(n.Fields()))
		for _, f := range n.Fields() {
			parts = append(parts, f.Name()+":"+string(nodeType(f)))
		}
		return schemas.Type("STRUCT<" + strings.Join(parts, ",") + ">")
	}
	switch n.Type().Kind() {
	case parquet.Boolean:
		return schemas.TypeBool
	case parquet.Int32:
		if it, ok := lt.(*format.IntType); lt == nil || ok && it.BitWidth == 32 && it.IsSigned {
			return schemas.TypeInt32
		}
	case parquet.Int64:
		if it, ok := lt.(*format.IntType); lt == nil || ok && it.BitWidth == 64 && it.IsSigned {
			return schemas.TypeInt64
		}
		if ts, ok := lt.(*format.TimestampType); ok && ts.IsAdjustedToUTC {
			if _, micros := ts.Unit.Value.(*format.MicroSeconds); micros {
				return schemas.TypeTimestamp
			}
		}
	case parquet.Double:
		return schemas.TypeDouble
	case parquet.ByteArray:
		if _, ok := lt.(*format.StringType); ok {
			return schemas.TypeString
		}
	}
	return schemas.Type(n.Type().String())
}

// The jobs encoder's writer (jobsWriterSchema) gives its dictionary-encoded
// columns the column types below, which index values without parquet-go's
// hashing. parquet-go (v0.32.0) has no way to write indexes into a
// dictionary, and its Dictionary and ColumnBuffer interfaces have
// unexported methods, so these types embed parquet-go's own values, which
// provide those, and override the methods that writing calls. The values
// of a column reach them only through ColumnBuffer.WriteValues, the path of
// ColumnWriter.WriteRowValues; GenericWriter.Write takes the unexported
// path, so jobsWriterSchema is for the jobs encoder only. The bytes written
// are those of the columns' own types: TestJobsEncoderBytes compares them
// with GenericWriter's.

// internedStrings are the distinct strings the jobs encoder writes to the
// dictionary-encoded BYTE_ARRAY columns (a record.JobDict's names, then the TRES
// keys), copied into one buffer so that a value's address tells which
// string it holds: each string starts at a multiple of 8 bytes of buf, and
// the slots of different strings do not overlap (an empty string has one
// of its own too). Read-only once built.
type internedStrings struct {
	buf   []byte
	vals  []parquet.Value // per string: a BYTE_ARRAY value viewing buf
	lens  []int32         // per string: its length
	ids   []int32         // per 8-byte slot of buf: the string starting there, or -1
	ranks []int32         // per string: its rank in byte order (equal strings share one)
	canon []int32         // per string: the first of the strings equal to it
}

// internStrings copies strs into an internedStrings.
func internStrings(strs []string) *internedStrings {
	n := 0
	for _, s := range strs {
		n += len(s)/8 + 1
	}
	in := &internedStrings{buf: make([]byte, 8*n), vals: make([]parquet.Value, len(strs)),
		lens: make([]int32, len(strs)), ids: make([]int32, n), ranks: make([]int32, len(strs))}
	for i := range in.ids {
		in.ids[i] = -1
	}
	slot := 0
	for i, s := range strs {
		off := 8 * slot
		copy(in.buf[off:], s)
		in.vals[i] = parquet.ByteArrayValue(in.buf[off : off+len(s) : off+len(s)+1])
		in.lens[i] = int32(len(s))
		in.ids[slot] = int32(i)
		slot += len(s)/8 + 1
	}
	byStr := make([]int32, len(strs))
	for i := range byStr {
		byStr[i] = int32(i)
	}
	slices.SortStableFunc(byStr, func(a, b int32) int { return strings.Compare(strs[a], strs[b]) })
	in.canon = make([]int32, len(strs))
	for r, i := range byStr {
		in.ranks[i] = int32(r)
		in.canon[i] = i
		if r > 0 && strs[byStr[r-1]] == strs[i] {
			in.canon[i] = in.canon[byStr[r-1]]
			in.ranks[i] = in.ranks[byStr[r-1]]
		}
	}
	return in
}

// id returns the string *v views, or -1 for a value that does not view
// buf the way vals[id] does. (It takes a pointer: copying a Value to call
// its methods cost more than all the rest.)
func (in *internedStrings) id(v *parquet.Value) int32 {
	b := v.ByteArray()
	off := uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(in.buf)))
	if off >= uintptr(len(in.buf)) || off%8 != 0 {
		return -1
	}
	id := in.ids[off/8]
	if id < 0 || int(in.lens[id]) != len(b) {
		return -1
	}
	return id
}

// internedType is the type of a dictionary-encoded BYTE_ARRAY column whose
// values are strs': its dictionary (internedDict) finds a value's index
// from its address instead of hashing its bytes, and a page's bounds from
// the strings' ranks instead of comparing them.
type internedType struct {
	parquet.Type
	strs *internedStrings
}

func (t internedType) NewDictionary(columnIndex, numValues int, data encoding.Values) parquet.Dictionary {
	return &internedDict{Dictionary: t.Type.NewDictionary(columnIndex, numValues, data), typ: t.Type, column: columnIndex, strs: t.strs}
}

// internedDict is the dictionary of an internedType column, indexed by
// string. While every value inserted since the last Reset is one of strs
// it keeps the dictionary itself, as the list of the strings' ids in index
// order, and hashes nothing: a value of strs costs two slice reads once it
// is in the dictionary and an append when it is new (a row group of a
// 100,000-association tree's snapshots brings some 100,000 new user names
// to the dictionary, which parquet-go hashed one by one). Page builds
// parquet-go's dictionary page from the list. The first value not of strs
// moves the list into the parquet-go dictionary it embeds, which from
// then on until Reset holds the values and hashes the new ones as
// parquet-go does. Either way the indexes, the dictionary page and the
// bounds are parquet-go's.
type internedDict struct {
	parquet.Dictionary
	typ    parquet.Type // of the values
	column int
	strs   *internedStrings
	index  []int32 // per canonical string of strs: its index in the dictionary plus one, or 0
	ranks  []int32 // per index of the dictionary: its string's rank in strs
	list   []int32 // per index of the dictionary: its string's id (while !hashed)
	size   int64   // the bytes of the values in list
	// The values and offsets of the page Page builds, reused from row
	// group to row group (a page stays valid until Reset).
	pageValues  []byte
	pageOffsets []uint32
	// hashed is set once a value not of strs was inserted: the embedded
	// dictionary holds the values, and Bounds compares the strings.
	hashed bool
}

// Type is the type of the dictionary's indexes.
func (d *internedDict) Type() parquet.Type { return indexType{d.Dictionary.Type(), d} }

// Insert sets indexes[i] to the index of values[i], adding the values
// that are new.
func (d *internedDict) Insert(indexes []int32, values []parquet.Value) {
	if d.index == nil {
		d.index = make([]int32, len(d.strs.lens))
	}
	// A value viewing the same bytes as the one before (a snapshot's
	// algorithm, partition and source file, a lab's account on its users'
	// rows) has its index.
	var last *byte
	lastLen := 0
	for i := range values {
		b := values[i].ByteArray()
		if p := unsafe.SliceData(b); p != nil && p == last && len(b) == lastLen {
			indexes[i] = indexes[i-1]
			continue
		}
		last, lastLen = unsafe.SliceData(b), len(b)
		id := d.strs.id(&values[i])
		if id < 0 {
			d.hash()
			d.Dictionary.Insert(indexes[i:i+1], values[i:i+1])
			continue
		}
		id = d.strs.canon[id]
		if x := d.index[id]; x > 0 {
			indexes[i] = x - 1
			continue
		}
		if d.hashed {
			d.Dictionary.Insert(indexes[i:i+1], values[i:i+1])
		} else {
			indexes[i] = int32(len(d.list))
			d.list = append(d.list, id)
			d.size += int64(d.strs.lens[id])
		}
		d.index[id] = indexes[i] + 1
		if int(indexes[i]) == len(d.ranks) {
			d.ranks = append(d.ranks, d.strs.ranks[id])
		}
	}
}

// hash moves the dictionary's values into the embedded parquet-go
// dictionary, in index order, which holds and indexes them from then on.
func (d *internedDict) hash() {
	if d.hashed {
		return
	}
	d.hashed = true
	if len(d.list) == 0 {
		return
	}
	vals := make([]parquet.Value, len(d.list))
	for k, id := range d.list {
		vals[k] = d.strs.vals[id]
	}
	d.Dictionary.Insert(make([]int32, len(vals)), vals) // new values: indexes 0, 1, ...
	d.list, d.size = d.list[:0], 0
}

// Len is the number of values in the dictionary.
func (d *internedDict) Len() int {
	if d.hashed {
		return d.Dictionary.Len()
	}
	return len(d.list)
}

// Size is the bytes of the values in the dictionary.
func (d *internedDict) Size() int64 {
	if d.hashed {
		return d.Dictionary.Size()
	}
	return d.size
}

// Index returns the value at index i.
func (d *internedDict) Index(i int32) parquet.Value {
	if d.hashed {
		return d.Dictionary.Index(i)
	}
	return d.strs.vals[d.list[i]]
}

// Lookup sets values[k] to the value at indexes[k] (reading; writing never
// calls it).
func (d *internedDict) Lookup(indexes []int32, values []parquet.Value) {
	d.hash()
	d.Dictionary.Lookup(indexes, values)
}

// Page is the dictionary page: parquet-go's page of the values in index
// order.
func (d *internedDict) Page() parquet.Page {
	if d.hashed {
		return d.Dictionary.Page()
	}
	values := slices.Grow(d.pageValues[:0], int(d.size))
	offsets := append(slices.Grow(d.pageOffsets[:0], len(d.list)+1), 0)
	for _, id := range d.list {
		values = append(values, d.strs.vals[id].ByteArray()...)
		offsets = append(offsets, uint32(len(values)))
	}
	d.pageValues, d.pageOffsets = values, offsets
	return d.typ.NewDictionary(d.column, len(d.list), encoding.ByteArrayValues(values, offsets)).Page()
}

// Bounds returns the least and greatest value of indexes in byte order.
func (d *internedDict) Bounds(indexes []int32) (min, max parquet.Value) {
	if d.hashed {
		return d.Dictionary.Bounds(indexes)
	}
	if len(indexes) == 0 {
		return min, max
	}
	lo, hi := indexes[0], indexes[0]
	rlo, rhi := d.ranks[lo], d.ranks[lo]
	for _, x := range indexes[1:] {
		switch r := d.ranks[x]; {
		case r < rlo:
			lo, rlo = x, r
		case r > rhi:
			hi, rhi = x, r
		}
	}
	return d.strs.vals[d.list[lo]], d.strs.vals[d.list[hi]]
}

// Reset empties the dictionary for the next row group.
func (d *internedDict) Reset() {
	if d.hashed {
		d.Dictionary.Reset()
	}
	clear(d.index)
	d.ranks, d.list, d.size = d.ranks[:0], d.list[:0], 0
	d.hashed = false
}

// cachedWordType is the type of a dictionary-encoded DOUBLE or INT64
// column whose dictionary (cachedWordDict) remembers the indexes of recent
// values. Both kinds hold a value in 64 bits (Value.Uint64), which is
// what parquet-go's dictionaries of both key their hash tables by.
type cachedWordType struct{ parquet.Type }

func (t cachedWordType) NewDictionary(columnIndex, numValues int, data encoding.Values) parquet.Dictionary {
	return &cachedWordDict{Dictionary: t.Type.NewDictionary(columnIndex, numValues, data)}
}

// cachedWordDict is parquet-go's dictionary of a cachedWordType column
// behind a direct-mapped cache from a value's bits (which is what
// parquet-go's hash table keys) to its index. Its table costs a call per
// row of a repeated column (the TRES values); the cache, a few loads per
// value.
//
// The cache has 4,096 slots (64 KiB a column writer): on the benchmark's
// March 2024 (about 1,740 distinct TRES values over its 4 row groups),
// 256 slots missed 4.6 % of the TRES values, 1,024 missed 2.2 % and 4,096
// miss 0.36 %, and every row holding a miss costs a call into parquet-go's
// hash table.
type cachedWordDict struct {
	parquet.Dictionary
	slots [1 << wordSlotBits]wordSlot
	// The positions, values and indexes of the values missing from the
	// cache, reused between calls.
	missAt        []int32
	missed        []parquet.Value
	missedIndexes []int32
}

// wordSlot is an entry of cachedWordDict's cache.
type wordSlot struct {
	bits  uint64
	index int32 // plus one; 0 is empty
}

// wordSlotBits is the log2 of the number of slots of cachedWordDict's cache.
const wordSlotBits = 12

// slot is the cache entry of a value's bits.
func (d *cachedWordDict) slot(bits uint64) *wordSlot {
	return &d.slots[(bits*0x9E3779B97F4A7C15)>>(64-wordSlotBits)] // Fibonacci hashing
}

// Type is the type of the dictionary's indexes.
func (d *cachedWordDict) Type() parquet.Type { return indexType{d.Dictionary.Type(), d} }

// Insert sets indexes[i] to the index of values[i], adding the values
// that are new. Values missing from the cache go to parquet-go's
// dictionary in one call, in order: those found are in the dictionary
// already, so the new values get the indexes they get without the cache.
func (d *cachedWordDict) Insert(indexes []int32, values []parquet.Value) {
	d.missAt, d.missed = d.missAt[:0], d.missed[:0]
	for i := range values {
		v := &values[i]
		bits := v.Uint64()
		if s := d.slot(bits); s.index > 0 && s.bits == bits {
			indexes[i] = s.index - 1
			continue
		}
		d.missAt = append(d.missAt, int32(i))
		d.missed = append(d.missed, *v)
	}
	if len(d.missAt) == 0 {
		return
	}
	d.missedIndexes = slices.Grow(d.missedIndexes[:0], len(d.missAt))[:len(d.missAt)]
	d.Dictionary.Insert(d.missedIndexes, d.missed)
	for k, i := range d.missAt {
		x := d.missedIndexes[k]
		indexes[i] = x
		bits := d.missed[k].Uint64()
		*d.slot(bits) = wordSlot{bits, x + 1}
	}
}

// Reset empties the dictionary for the next row group.
func (d *cachedWordDict) Reset() {
	d.Dictionary.Reset()
	d.slots = [len(d.slots)]wordSlot{}
}

// indexType is the type of the indexes into an internedDict or a
// cachedWordDict: parquet-go's, whose column buffers are indexColumns.
type indexType struct {
	parquet.Type
	dict parquet.Dictionary
}

// EstimateNumValues is the number of indexes in size bytes. (parquet-go's
// type of indexes takes the estimate of the values' type, which made the
// column buffers of a page grow a few times.)
func (t indexType) EstimateNumValues(size int) int { return size / 4 }

func (t indexType) NewColumnBuffer(columnIndex, numValues int) parquet.ColumnBuffer {
	// A page is cut once the buffer reaches its size, after a batch.
	return &indexColumn{ColumnBuffer: t.Type.NewColumnBuffer(columnIndex, 0), typ: t.Type, dict: t.dict,
		column: columnIndex, indexes: make([]int32, 0, numValues+writeBatch)}
}

// indexColumn is a column buffer of indexes into dict. The ColumnBuffer it
// embeds (parquet-go's, left empty) only lends it the unexported methods.
type indexColumn struct {
	parquet.ColumnBuffer
	typ     parquet.Type
	dict    parquet.Dictionary
	column  int
	indexes []int32
}

func (c *indexColumn) WriteValues(values []parquet.Value) (int, error) {
	n := len(c.indexes)
	c.indexes = slices.Grow(c.indexes, len(values))[:n+len(values)]
	c.dict.Insert(c.indexes[n:], values)
	return len(values), nil
}

// Page is parquet-go's page of the indexes, with the dictionary's Bounds.
func (c *indexColumn) Page() parquet.Page {
	return indexPage{c.typ.NewPage(c.column, len(c.indexes), encoding.Int32Values(c.indexes)), c.dict}
}

func (c *indexColumn) Dictionary() parquet.Dictionary { return c.dict }
func (c *indexColumn) Reset()                         { c.indexes = c.indexes[:0] }
func (c *indexColumn) Len() int                       { return len(c.indexes) }
func (c *indexColumn) Cap() int                       { return cap(c.indexes) }
func (c *indexColumn) NumValues() int64               { return int64(len(c.indexes)) }
func (c *indexColumn) Size() int64                    { return 4 * int64(len(c.indexes)) }
func (c *indexColumn) Swap(i, j int)                  { c.indexes[i], c.indexes[j] = c.indexes[j], c.indexes[i] }

func (c *indexColumn) Less(i, j int) bool {
	return c.typ.Compare(c.dict.Index(c.indexes[i]), c.dict.Index(c.indexes[j])) < 0
}

func (c *indexColumn) Clone() parquet.ColumnBuffer {
	clone := *c
	clone.indexes = slices.Clone(c.indexes)
	return &clone
}

// errNotRead is the error of the methods that read an indexColumn back,
// which writing does not call.
var errNotRead = errors.New("jobs encoder: a dictionary index column buffer is written, not read")

func (c *indexColumn) ReadValuesAt([]parquet.Value, int64) (int, error)  { return 0, errNotRead }
func (c *indexColumn) ReadRowAt(parquet.Row, int64) (parquet.Row, error) { return nil, errNotRead }
func (c *indexColumn) ColumnIndex() (parquet.ColumnIndex, error)         { return nil, errNotRead }
func (c *indexColumn) OffsetIndex() (parquet.OffsetIndex, error)         { return nil, errNotRead }
func (c *indexColumn) BloomFilter() parquet.BloomFilter                  { return nil }
func (c *indexColumn) Pages() parquet.Pages                              { return notReadPages{} }

// notReadPages are the pages of an indexColumn: none can be read.
type notReadPages struct{}

func (notReadPages) ReadPage() (parquet.Page, error) { return nil, errNotRead }
func (notReadPages) SeekToRow(int64) error           { return errNotRead }
func (notReadPages) Close() error                    { return nil }

// indexPage is parquet-go's page of indexes into dict, with dict's Bounds.
type indexPage struct {
	parquet.Page
	dict parquet.Dictionary
}

// Bounds returns what parquet-go's page returns: the dictionary's bounds
// of the page's indexes, as values of the page's column.
func (p indexPage) Bounds() (min, max parquet.Value, ok bool) {
	data := p.Data()
	indexes := data.Int32()
	if len(indexes) == 0 {
		return min, max, false
	}
	min, max = p.dict.Bounds(indexes)
	return min.Level(0, 0, p.Column()), max.Level(0, 0, p.Column()), true
}
