package encode

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/fairledger/fairledger/export/record"
	"github.com/parquet-go/parquet-go"
)

// RowGroupRows is the number of rows per Parquet row group.
const RowGroupRows = 128 * 1024

// writerOptions are the Parquet settings of every history file: zstd at
// its fastest level (zstdCodec; the jobs table's schema names a codec per
// column instead, jobsCodec) and sorting metadata. CreatedBy is fixed so
// that the bytes do not depend on the binary's build info.
func writerOptions(sortBy []string) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		parquet.Compression(historyZstd),
		parquet.MaxRowsPerRowGroup(RowGroupRows),
		parquet.CreatedBy("fairledger", "1", "parquet-go"),
	}
	if len(sortBy) > 0 {
		cols := make([]parquet.SortingColumn, len(sortBy))
		for i, c := range sortBy {
			cols[i] = parquet.Ascending(c)
		}
		opts = append(opts, parquet.SortingWriterConfig(parquet.SortingColumns(cols...)))
	}
	return opts
}

// tableWriterOptions are writerOptions plus, for the jobs table, its
// schema (jobsSchema).
func tableWriterOptions[T any](sortBy []string) []parquet.WriterOption {
	opts := writerOptions(sortBy)
	var zero T
	if _, ok := any(zero).(record.JobRow); ok {
		opts = append(opts, jobsSchema(), parquet.DataPageStatistics(false))
	}
	return opts
}

// encoder returns a function writing rows as Parquet in cmp order (as
// given when cmp is nil).
func encoder[T any](rows []T, cmp func(a, b *T) int, sortBy []string) func(io.Writer) error {
	return func(w io.Writer) error {
		pw := parquet.NewGenericWriter[T](w, tableWriterOptions[T](sortBy)...)
		var order []int32
		if cmp != nil {
			order = sortedOrder(rows, cmp)
		}
		if order == nil {
			if _, err := pw.Write(rows); err != nil {
				return err
			}
		} else {
			const chunk = 4096
			buf := make([]T, 0, chunk)
			for _, i := range order {
				buf = append(buf, rows[i])
				if len(buf) == chunk {
					if _, err := pw.Write(buf); err != nil {
						return err
					}
					buf = buf[:0]
				}
			}
			if _, err := pw.Write(buf); err != nil {
				return err
			}
		}
		return pw.Close()
	}
}

// writeBatch is the number of rows GenericWriter.Write hands its column
// buffers at a time (parquet-go's maxRowsPerWrite); a page is cut when a
// column's buffer has grown past the page size after a batch. jobsEncoder
// writes in the same batches so that its pages, and so its bytes, are the
// ones GenericWriter would write.
const writeBatch = 64

// jobsEncoder returns a function writing the records of t, in their order,
// as Parquet. For rows in record.CompareJobs order it writes exactly the bytes
// encoder(rows, record.CompareJobs, sortBy) writes (TestJobsEncoderBytes checks
// it) in a fraction of the time:
//
//   - the records have no pointers and their TRES sets are interned, so
//     the values are built by plain loops over a column at a time instead
//     of parquet-go's reflection (which also sorted every map), from
//     values built once per name and per TRES set (jobValues);
//   - the strings of the dictionary-encoded columns are interned
//     (internedStrings), and its writer's schema (jobsWriterSchema) gives
//     those columns dictionaries that find a value's index from its
//     address and a page's bounds from the strings' ranks (parquet-go
//     hashed every value and compared the strings of every page), and
//     the dictionary-encoded doubles a cache of recent values' indexes;
//   - it encodes up to GOMAXPROCS row groups at once (ConcurrentRowGroupWriter)
//     and commits them in order. A row group's bytes depend only on its
//     rows, so the file is the same as when written one group at a time.
func jobsEncoder(t *record.JobTable, sortBy []string) func(io.Writer) error {
	return func(w io.Writer) error {
		vals := newJobValues(t)
		// The writer schema replaces tableWriterOptions' jobsSchema.
		opts := append(tableWriterOptions[record.JobRow](sortBy), jobsWriterSchema(vals.strs))
		pw := parquet.NewGenericWriter[record.JobRow](w, opts...)
		leaves, err := jobLeaves(pw.Schema())
		if err != nil {
			return err
		}
		n := len(t.Recs)
		groups := (n + RowGroupRows - 1) / RowGroupRows
		workers := max(1, min(runtime.GOMAXPROCS(0), groups))
		rgs := make([]*parquet.ConcurrentRowGroupWriter, workers)
		encs := make([]jobColumns, workers)
		errs := make([]error, workers)
		for first := 0; first < groups; first += workers {
			k := min(workers, groups-first)
			var wg sync.WaitGroup
			for g := range k {
				if rgs[g] == nil {
					rgs[g] = pw.BeginRowGroup()
				}
				lo := (first + g) * RowGroupRows
				recs := t.Recs[lo:min(lo+RowGroupRows, n)]
				encs[g].t, encs[g].v, encs[g].leaves = t, vals, leaves
				wg.Go(func() { errs[g] = encs[g].writeGroup(rgs[g].ColumnWriters(), recs) })
			}
			wg.Wait()
			for g := range k {
				if errs[g] != nil {
					return errs[g]
				}
				if _, err := rgs[g].Commit(); err != nil { // empties rgs[g] for reuse
					return err
				}
			}
		}
		return pw.Close()
	}
}

// identity returns the positions 0..n-1.
func identity(n int) []int32 {
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	return order
}

// jobValues are the parquet.Values that the records of a record.JobTable share,
// built once per file: the BYTE_ARRAY value of every name, and the key and
// value columns of every TRES set the records use. The strings are
// interned (internedStrings) for the writer's dictionaries. Read-only once
// built, so the row groups' goroutines share them.
type jobValues struct {
	strs  *internedStrings // the names, then the TRES keys
	names []parquet.Value
	// tresAt[s] is where set s's values start in tresKeys and tresVals,
	// tresN[s] how many there are: one per entry, or one null for the
	// empty set.
	tresAt, tresN      []int32
	tresKeys, tresVals []parquet.Value
}

// newJobValues builds the values of t's names and of the TRES sets its
// records use.
func newJobValues(t *record.JobTable) *jobValues {
	d := t.Dict
	names := d.Names()
	v := &jobValues{tresAt: make([]int32, d.NumTRESSets()), tresN: make([]int32, d.NumTRESSets())}
	// The sets the records use, and their keys.
	var sets []uint32
	used := make([]bool, d.NumTRESSets())
	strs := slices.Clip(names)
	keyIDs := map[string]int32{}
	for k := range t.Recs {
		s := t.Recs[k].TRES
		if used[s] {
			continue
		}
		used[s] = true
		sets = append(sets, s)
		for j := range d.TRESLen(s) {
			key, _ := d.TRESEntry(s, j)
			if _, ok := keyIDs[key]; !ok {
				keyIDs[key] = int32(len(strs))
				strs = append(strs, key)
			}
		}
	}
	v.strs = internStrings(strs)
	v.names = v.strs.vals[:len(names)]
	for _, s := range sets {
		v.tresAt[s] = int32(len(v.tresKeys))
		n := d.TRESLen(s)
		v.tresN[s] = int32(max(1, n))
		if n == 0 {
			v.tresKeys = append(v.tresKeys, parquet.Value{})
			v.tresVals = append(v.tresVals, parquet.Value{})
		}
		// One value per entry: repetition level 0 for a row's first, 1 for
		// the next; definition level 1.
		for j := range n {
			k, x := d.TRESEntry(s, j)
			key, val := v.strs.vals[keyIDs[k]], parquet.DoubleValue(x)
			if j > 0 {
				key.SetRepetitionLevel(1)
				val.SetRepetitionLevel(1)
			}
			key.SetDefinitionLevel(1)
			val.SetDefinitionLevel(1)
			v.tresKeys = append(v.tresKeys, key)
			v.tresVals = append(v.tresVals, val)
		}
	}
	return v
}

// jobColumns builds the values of one batch of jobs records, column by
// column in the order of the writer schema's leaf columns (each found by
// name, see jobLeaves),
// and writes them to the column writers. Its buffer is reused between
// batches.
type jobColumns struct {
	t *record.JobTable
	v *jobValues
	// leaves are the fields of the writer's leaf columns, in order
	// (jobLeaves).
	leaves []jobField
	vals   []parquet.Value
}

// writeGroup writes recs (one row group) in batches of writeBatch rows.
func (e *jobColumns) writeGroup(cols []*parquet.ColumnWriter, recs []record.JobRec) error {
	for lo := 0; lo < len(recs); lo += writeBatch {
		if err := e.write(cols, recs[lo:min(lo+writeBatch, len(recs))]); err != nil {
			return err
		}
	}
	return nil
}

func (e *jobColumns) write(cols []*parquet.ColumnWriter, recs []record.JobRec) error {
	if len(cols) != len(e.leaves) {
		return fmt.Errorf("jobs schema has %d leaf columns, the encoder writes %d", len(cols), len(e.leaves))
	}
	for c, f := range e.leaves {
		var v []parquet.Value
		switch f {
		case jobTRESKey:
			v = e.appendTRES(e.vals[:0], recs, e.v.tresKeys)
		case jobTRESValue:
			v = e.appendTRES(e.vals[:0], recs, e.v.tresVals)
		default:
			v = slices.Grow(e.vals[:0], len(recs))[:len(recs)]
			jobColumn(v, e.t, e.v.names, recs, f)
		}
		e.vals = v
		if _, err := cols[c].WriteRowValues(v); err != nil {
			return fmt.Errorf("column %s: %w", f.path(), err)
		}
	}
	return nil
}

// jobColumn sets v[k] to the value of the leaf column of field f (other
// than the TRES map's) of recs[k], as parquet-go's GenericWriter[record.JobRow] writes it:
// timestamps in microseconds, a null at definition level 0, a set
// optional value at definition level 1; required columns need no levels.
// names are jobValues.names. (One loop per column: building values
// through a function per column took most of the encoder's own time.)
func jobColumn(v []parquet.Value, t *record.JobTable, names []parquet.Value, recs []record.JobRec, f jobField) {
	opt := func(k int, r *record.JobRec, x int64, bit uint16) {
		v[k] = parquet.Value{}
		if r.Valid&bit != 0 {
			v[k] = parquet.Int64Value(x)
			v[k].SetDefinitionLevel(1)
		}
	}
	switch f {
	case jobJobID:
		for k := range recs {
			v[k] = parquet.ByteArrayValue(t.JobID(&recs[k]))
		}
	case jobJobIDRaw:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].JobIDRaw)
		}
	case jobArrayJobID:
		for k := range recs {
			opt(k, &recs[k], recs[k].ArrayJobID, record.ValidArrayJobID)
		}
	case jobArrayTaskID:
		for k := range recs {
			opt(k, &recs[k], recs[k].ArrayTaskID, record.ValidArrayTaskID)
		}
	case jobHetJobID:
		for k := range recs {
			opt(k, &recs[k], recs[k].HetJobID, record.ValidHetJobID)
		}
	case jobHetJobOffset:
		for k := range recs {
			opt(k, &recs[k], recs[k].HetJobOffset, record.ValidHetJobOffset)
		}
	case jobUser:
		for k := range recs {
			v[k] = names[recs[k].User]
		}
	case jobAccount:
		for k := range recs {
			v[k] = names[recs[k].Account]
		}
	case jobPartition:
		for k := range recs {
			v[k] = names[recs[k].Partition]
		}
	case jobQOS:
		for k := range recs {
			v[k] = names[recs[k].QOS]
		}
	case jobState:
		for k := range recs {
			v[k] = names[recs[k].State]
		}
	case jobCancelledBy:
		for k := range recs {
			v[k] = parquet.Value{}
			if id := recs[k].CancelledBy; id > 0 {
				v[k] = names[id-1]
				v[k].SetDefinitionLevel(1)
			}
		}
	case jobSubmit:
		for k := range recs {
			opt(k, &recs[k], recs[k].Submit, record.ValidSubmit)
		}
	case jobEligible:
		for k := range recs {
			opt(k, &recs[k], recs[k].Eligible, record.ValidEligible)
		}
	case jobStart:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].Start)
		}
	case jobEnd:
		for k := range recs {
			opt(k, &recs[k], recs[k].End, record.ValidEnd)
		}
	case jobElapsedSec:
		for k := range recs {
			opt(k, &recs[k], recs[k].ElapsedSec, record.ValidElapsedSec)
		}
	case jobChargedSec:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].ChargedSec)
		}
	case jobSuspendedSec:
		for k := range recs {
			opt(k, &recs[k], recs[k].SuspendedSec, record.ValidSuspendedSec)
		}
	case jobTimelimitMin:
		for k := range recs {
			opt(k, &recs[k], recs[k].TimelimitMin, record.ValidTimelimitMin)
		}
	case jobNNodes:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].NNodes)
		}
	case jobAllocCPUs:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].AllocCPUs)
		}
	case jobMemMB:
		for k := range recs {
			v[k] = parquet.DoubleValue(recs[k].MemMB)
		}
	case jobNodeCount:
		for k := range recs {
			v[k] = parquet.DoubleValue(recs[k].NodeCount)
		}
	case jobGPU:
		for k := range recs {
			v[k] = parquet.DoubleValue(recs[k].GPU)
		}
	case jobBilling:
		for k := range recs {
			v[k] = parquet.DoubleValue(recs[k].Billing)
		}
	case jobBillingSlurm:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].BillingSlurm)
		}
	case jobUsageFactor:
		for k := range recs {
			v[k] = parquet.DoubleValue(recs[k].UsageFactor)
		}
	case jobSourceFile:
		for k := range recs {
			v[k] = names[recs[k].SourceFile]
		}
	case jobSourceLine:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].SourceLine)
		}
	default:
		panic(fmt.Sprintf("jobs column %s", f.path()))
	}
}

// appendTRES appends the TRES map's key (or value) column of recs: the
// values of each record's set, from col (jobValues.tresKeys or tresVals).
func (e *jobColumns) appendTRES(v []parquet.Value, recs []record.JobRec, col []parquet.Value) []parquet.Value {
	at, n := e.v.tresAt, e.v.tresN
	for k := range recs {
		s := recs[k].TRES
		i := at[s]
		v = append(v, col[i:i+n[s]]...)
	}
	return v
}

// stringValue is a BYTE_ARRAY value viewing s's bytes without copying them;
// the column buffers copy what they keep, and never write to the value.
func stringValue(s string) parquet.Value {
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// NewWriter returns a Parquet writer of rows T with the history's codec,
// row groups and creator, for a file outside the history (fairledger
// whatif --format parquet). The caller closes it.
func NewWriter[T any](w io.Writer) *parquet.GenericWriter[T] {
	return parquet.NewGenericWriter[T](w, writerOptions(nil)...)
}
