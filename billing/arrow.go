package billing

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fairledger/fairledger/schemas"
)

// Reasons under which Apply bills a row without slurm.conf weights.
const (
	// ReasonSacctBilling: the job's partition is not in slurm.conf; B is the
	// billing= value sacct reported (already truncated by Slurm).
	ReasonSacctBilling = "partition not in slurm.conf: used sacct billing="
	// ReasonCPUCount: the job's partition is not in slurm.conf and sacct has
	// no billing= either; B is the allocated CPU count.
	ReasonCPUCount = "partition not in slurm.conf and no sacct billing=: used CPU count"
)

// Stats accounts for every row Apply billed:
// Rows == Weighted + CPUCount + Σ Fallback.
type Stats struct {
	// Rows is the number of rows billed.
	Rows int64
	// Weighted counts rows billed with their partition's TRESBillingWeights.
	Weighted int64
	// CPUCount counts rows of partitions without TRESBillingWeights, billed
	// the CPU count as Slurm does.
	CPUCount int64
	// Fallback counts rows not billed from slurm.conf, per reason
	// (ReasonSacctBilling, ReasonCPUCount). Nil when there are none.
	Fallback map[string]int64
	// UnknownQOS counts rows whose QOS the usage-factor lookup did not
	// know, per QOS name: they are charged with UsageFactor 1, Slurm's
	// factor for a job without a QOS (_apply_new_usage in
	// src/plugins/priority/multifactor/priority_multifactor.c). Nil when
	// there are none.
	UnknownQOS map[string]int64
}

// QOSFactor returns the UsageFactor of a QOS, and whether the QOS is known
// at all; for an unknown one the factor is ignored and 1 is used.
type QOSFactor func(qos string) (factor float64, known bool)

// Add accumulates o into s (for totals over many batches).
func (s *Stats) Add(o Stats) {
	s.Rows += o.Rows
	s.Weighted += o.Weighted
	s.CPUCount += o.CPUCount
	for _, r := range o.Reasons() {
		s.addFallback(r, o.Fallback[r])
	}
	for _, q := range o.UnknownQOSNames() {
		s.addUnknownQOS(q, o.UnknownQOS[q])
	}
}

// UnknownQOSNames returns the names in UnknownQOS, sorted.
func (s Stats) UnknownQOSNames() []string {
	out := make([]string, 0, len(s.UnknownQOS))
	for q := range s.UnknownQOS {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

// UnknownQOSRows is the number of rows of every unknown QOS.
func (s Stats) UnknownQOSRows() int64 {
	var n int64
	for _, c := range s.UnknownQOS {
		n += c
	}
	return n
}

func (s *Stats) addUnknownQOS(name string, n int64) {
	if n == 0 {
		return
	}
	if s.UnknownQOS == nil {
		s.UnknownQOS = make(map[string]int64)
	}
	s.UnknownQOS[name] += n
}

// Reasons returns the fallback reasons present, sorted, for deterministic
// reporting.
func (s Stats) Reasons() []string {
	out := make([]string, 0, len(s.Fallback))
	for r := range s.Fallback {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

func (s *Stats) addFallback(reason string, n int64) {
	if n == 0 {
		return
	}
	if s.Fallback == nil {
		s.Fallback = make(map[string]int64)
	}
	s.Fallback[reason] += n
}

// Apply bills one jobs batch (schemas.Jobs with the dense columns
// t.DenseTRES()) and returns a new record: rec's columns followed by
// schemas.BillingFields() — billing (B), billing_slurm (Truncate(B)) and
// usage_factor. rec is not modified or released; the caller releases the
// result.
//
// The partition and qos dictionaries are mapped once per batch. A row whose
// partition (or a null one) is not in the table gets B = billing_sacct, or
// the CPU count when that is null too, and is counted in Stats.Fallback.
// usageFactor returns a QOS's UsageFactor; it is called once per distinct
// QOS name of the batch and its result normalised with UsageFactor (negative
// → 1). A nil usageFactor, and a null qos, give 1. A QOS it does not know
// gives 1 too, and its rows are counted in Stats.UnknownQOS.
//
// Apply fails, returning a nil record, when a column it needs is missing,
// has the wrong type, or (for the dense TRES columns) holds nulls, and when
// rec already has a billing column.
func (t *Table) Apply(mem memory.Allocator, rec arrow.RecordBatch, usageFactor QOSFactor) (arrow.RecordBatch, Stats, error) {
	schema := rec.Schema()
	for _, f := range schemas.BillingFields() {
		if schema.HasField(f.Name) {
			return nil, Stats{}, fmt.Errorf("apply billing: batch already has column %q", f.Name)
		}
	}
	n := int(rec.NumRows())

	partDict, err := dictColumn(rec, schemas.ColPartition)
	if err != nil {
		return nil, Stats{}, err
	}
	qosDict, err := dictColumn(rec, schemas.ColQOS)
	if err != nil {
		return nil, Stats{}, err
	}
	sacct, err := float64Column(rec, schemas.ColBillingSacct)
	if err != nil {
		return nil, Stats{}, err
	}
	cols := make([][]float64, len(t.dense))
	for j, tres := range t.dense {
		a, err := float64Column(rec, schemas.DenseTRESColumn(tres))
		if err != nil {
			return nil, Stats{}, err
		}
		if a.NullN() > 0 {
			return nil, Stats{}, fmt.Errorf("apply billing: column %q: %d null values in a dense TRES column", schemas.DenseTRESColumn(tres), a.NullN())
		}
		cols[j] = a.Float64Values()
	}

	// Map the dictionaries once: dictionary code → table index / factor.
	partOf := make([]int32, partDict.Dictionary().Len())
	partNames := partDict.Dictionary().(*array.String)
	for k := range partOf {
		partOf[k] = -1
		if partNames.IsValid(k) {
			partOf[k] = t.PartitionIndex(partNames.Value(k))
		}
	}
	qosNames := qosDict.Dictionary().(*array.String)
	factorOf := make([]float64, qosNames.Len())
	var unknown []bool // by code; nil when every QOS is known
	for k := range factorOf {
		factorOf[k] = 1
		if usageFactor != nil && qosNames.IsValid(k) {
			f, known := usageFactor(qosNames.Value(k))
			if known {
				factorOf[k] = UsageFactor(f)
			} else {
				if unknown == nil {
					unknown = make([]bool, len(factorOf))
				}
				unknown[k] = true
			}
		}
	}
	part, err := mapCodes(partDict, partOf, schemas.ColPartition)
	if err != nil {
		return nil, Stats{}, err
	}
	qos, err := codes(qosDict, len(factorOf), schemas.ColQOS)
	if err != nil {
		return nil, Stats{}, err
	}

	bBuf, b := newFloat64Buffer(mem, n)
	ufBuf, uf := newFloat64Buffer(mem, n)
	slurmBuf := memory.NewResizableBuffer(mem)
	slurmBuf.Resize(n * arrow.Int64SizeBytes)
	bs := arrow.Int64Traits.CastFromBytes(slurmBuf.Bytes())[:n]

	st := Stats{Rows: int64(n)}
	cpu := cols[0]
	sacctVals := sacct.Float64Values()
	var bySacct, byCPU int64
	for i, p := range part {
		switch {
		case p >= 0 && t.noWeights[p]:
			st.CPUCount++
		case p >= 0:
			st.Weighted++
		case sacct.IsValid(i):
			b[i] = sacctVals[i]
			bySacct++
		default:
			b[i] = cpu[i]
			byCPU++
		}
	}
	st.addFallback(ReasonSacctBilling, bySacct)
	st.addFallback(ReasonCPUCount, byCPU)
	if unknown != nil {
		rows := make([]int64, len(unknown))
		for _, c := range qos {
			if c >= 0 && unknown[c] {
				rows[c]++
			}
		}
		for k, n := range rows {
			// Clone: the name points into the batch's buffers.
			st.addUnknownQOS(strings.Clone(qosNames.Value(k)), n)
		}
	}

	Billable(b, part, cols, t)
	Truncate(bs, b)
	UsageFactors(uf, qos, factorOf)

	fields := append(append([]arrow.Field(nil), schema.Fields()...), schemas.BillingFields()...)
	md := schema.Metadata()
	outSchema := arrow.NewSchema(fields, &md)
	newCols := []arrow.Array{
		newArray(arrow.PrimitiveTypes.Float64, n, bBuf),
		newArray(arrow.PrimitiveTypes.Int64, n, slurmBuf),
		newArray(arrow.PrimitiveTypes.Float64, n, ufBuf),
	}
	all := append(append([]arrow.Array(nil), rec.Columns()...), newCols...)
	out := array.NewRecordBatch(outSchema, all, int64(n))
	for _, a := range newCols {
		a.Release()
	}
	return out, st, nil
}

// dictColumn returns the named dictionary<int32, utf8> column of rec.
func dictColumn(rec arrow.RecordBatch, name string) (*array.Dictionary, error) {
	d, _, _, err := schemas.DictStringColumn(rec, name)
	if err != nil {
		return nil, fmt.Errorf("apply billing: %w", err)
	}
	return d, nil
}

// float64Column returns the named float64 column of rec.
func float64Column(rec arrow.RecordBatch, name string) (*array.Float64, error) {
	a, err := schemas.RecordColumn[*array.Float64](rec, name, "float64")
	if err != nil {
		return nil, fmt.Errorf("apply billing: %w", err)
	}
	return a, nil
}

// codes returns the dictionary code of each row, -1 for null rows, checking
// each code against the dictionary length.
func codes(d *array.Dictionary, dictLen int, name string) ([]int32, error) {
	out := make([]int32, d.Len())
	if idx, ok := d.Indices().(*array.Int32); ok && d.NullN() == 0 {
		copy(out, idx.Int32Values())
	} else {
		for i := range out {
			if d.IsNull(i) {
				out[i] = -1
				continue
			}
			out[i] = int32(d.GetValueIndex(i))
		}
	}
	for i, c := range out {
		if int(c) >= dictLen || c < -1 {
			return nil, fmt.Errorf("apply billing: column %q row %d: dictionary code %d out of range [0,%d)", name, i, c, dictLen)
		}
	}
	return out, nil
}

// mapCodes returns, per row, to[code], or -1 for null rows.
func mapCodes(d *array.Dictionary, to []int32, name string) ([]int32, error) {
	c, err := codes(d, len(to), name)
	if err != nil {
		return nil, err
	}
	for i, k := range c {
		if k >= 0 {
			c[i] = to[k]
		}
	}
	return c, nil
}

// newFloat64Buffer allocates an n-value float64 buffer from mem and returns
// it with a slice over its memory.
func newFloat64Buffer(mem memory.Allocator, n int) (*memory.Buffer, []float64) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * arrow.Float64SizeBytes)
	return buf, arrow.Float64Traits.CastFromBytes(buf.Bytes())[:n]
}

// newArray wraps a filled, non-null value buffer as an array and hands the
// buffer's reference over to it.
func newArray(dt arrow.DataType, n int, buf *memory.Buffer) arrow.Array {
	data := array.NewData(dt, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	a := array.MakeFromData(data)
	data.Release()
	return a
}
