package export

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/fairledger/fairledger/schemas"
)

// JobRowsFromBatch converts a billed jobs batch (schemas.Jobs plus
// schemas.BillingFields) into jobs table rows, in batch order. chargedSec[i]
// is the charged_sec of row i, which the caller computes for the month the
// rows are written to. The rows own their strings: rec may be released
// afterwards. Rows with the same TRES entries share one TRES map: treat
// it as read-only. The cluster, exit_code, job_name and billing_sacct columns are
// not part of the jobs table and are ignored.
func JobRowsFromBatch(rec arrow.Record, chargedSec []int64) ([]JobRow, error) {
	n := int(rec.NumRows())
	if len(chargedSec) != n {
		return nil, fmt.Errorf("jobs rows: %d charged_sec values for %d rows", len(chargedSec), n)
	}
	c := batchCols{rec: rec}
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
	tres := c.tresMap(schemas.ColAllocTRES)
	billing := c.float64s(schemas.ColBilling)
	billingSlurm := c.int64s(schemas.ColBillingSlurm)
	usageFactor := c.float64s(schemas.ColUsageFactor)
	sourceFile := c.str(schemas.ColSourceFile)
	sourceLine := c.int64s(schemas.ColSourceLine)
	if c.err != nil {
		return nil, c.err
	}
	for _, col := range []struct {
		name string
		a    arrow.Array
	}{{schemas.ColJobIDRaw, jobIDRaw}, {schemas.ColStart, start}, {schemas.ColNNodes, nnodes},
		{schemas.ColAllocCPUs, cpus}, {schemas.ColBilling, billing}, {schemas.ColBillingSlurm, billingSlurm},
		{schemas.ColUsageFactor, usageFactor}, {schemas.ColSourceLine, sourceLine}} {
		if col.a.NullN() > 0 {
			return nil, fmt.Errorf("jobs rows: column %q: %d nulls in a non-null column", col.name, col.a.NullN())
		}
	}

	rows := make([]JobRow, n)
	for i := range rows {
		r := &rows[i]
		r.JobID = jobID.at(i)
		r.JobIDRaw = jobIDRaw.Value(i)
		r.ArrayJobID = optInt64(arrJob, i)
		r.ArrayTaskID = optInt64(arrTask, i)
		r.HetJobID = optInt64(hetJob, i)
		r.HetJobOffset = optInt64(hetOff, i)
		r.User = user.at(i)
		r.Account = account.at(i)
		r.Partition = partition.at(i)
		r.QOS = qos.at(i)
		r.State = state.at(i)
		if !cancelledBy.null(i) {
			s := cancelledBy.at(i)
			r.CancelledBy = &s
		}
		r.Submit = submit.opt(i)
		r.Eligible = eligible.opt(i)
		r.Start = start.at(i)
		r.End = end.opt(i)
		r.ElapsedSec = optInt64(elapsed, i)
		r.ChargedSec = chargedSec[i]
		r.SuspendedSec = optInt64(suspended, i)
		r.TimelimitMin = optInt64(timelimit, i)
		r.NNodes = nnodes.Value(i)
		r.AllocCPUs = cpus.Value(i)
		r.MemMB = mem.Value(i)
		r.NodeCount = node.Value(i)
		r.GPU = gpu.Value(i)
		r.TRES = tres.at(i)
		r.Billing = billing.Value(i)
		r.BillingSlurm = billingSlurm.Value(i)
		r.UsageFactor = usageFactor.Value(i)
		r.SourceFile = sourceFile.at(i)
		r.SourceLine = sourceLine.Value(i)
	}
	return rows, nil
}

// batchCols looks columns up by name, remembering the first error so that
// JobRowsFromBatch checks once.
type batchCols struct {
	rec arrow.Record
	err error
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

// strCol reads a utf8 or dictionary<int, utf8> column; a null reads "".
// Strings are copied out of the Arrow buffers (once per dictionary entry).
type strCol struct {
	a     arrow.Array
	plain *array.String
	dict  *array.Dictionary
	names []string
}

func (s strCol) null(i int) bool { return s.a.IsNull(i) }

func (s strCol) at(i int) string {
	if s.a.IsNull(i) {
		return ""
	}
	if s.dict != nil {
		return s.names[s.dict.GetValueIndex(i)]
	}
	return strings.Clone(s.plain.Value(i))
}

func (c *batchCols) str(name string) strCol {
	a := c.col(name)
	if a == nil {
		return strCol{}
	}
	switch v := a.(type) {
	case *array.String:
		return strCol{a: a, plain: v}
	case *array.Dictionary:
		d, ok := v.Dictionary().(*array.String)
		if !ok {
			c.typeErr(name, a)
			return strCol{}
		}
		names := make([]string, d.Len())
		for k := range names {
			names[k] = strings.Clone(d.Value(k))
		}
		return strCol{a: a, dict: v, names: names}
	}
	c.typeErr(name, a)
	return strCol{}
}

// timeCol reads a timestamp column of any unit as UTC times.
type timeCol struct {
	*array.Timestamp
	unit arrow.TimeUnit
}

func (t timeCol) at(i int) time.Time { return t.Value(i).ToTime(t.unit).UTC() }

func (t timeCol) opt(i int) *time.Time {
	if t.IsNull(i) {
		return nil
	}
	v := t.at(i)
	return &v
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
	return timeCol{Timestamp: v, unit: v.DataType().(*arrow.TimestampType).Unit}
}

// mapCol reads a map<utf8, float64> column; a null or empty map reads nil.
type mapCol struct {
	m     *array.Map
	keys  *array.String
	items *array.Float64
	seen  map[string]map[string]float64 // entries, as key, → the map built for them
	key   []byte
}

// at is row i's map. Rows with the same entries in the same order share one
// map: a batch has few distinct TRES sets, and a map per row was most of
// the conversion's cost.
func (m *mapCol) at(i int) map[string]float64 {
	if m.m.IsNull(i) {
		return nil
	}
	lo, hi := m.m.ValueOffsets(i)
	if lo == hi {
		return nil
	}
	m.key = m.key[:0]
	for j := int(lo); j < int(hi); j++ {
		m.key = AppendTRESEntry(m.key, m.keys.Value(j), m.items.Value(j))
	}
	if out, ok := m.seen[string(m.key)]; ok {
		return out
	}
	out := make(map[string]float64, hi-lo)
	for j := int(lo); j < int(hi); j++ {
		out[strings.Clone(m.keys.Value(j))] = m.items.Value(j)
	}
	if m.seen == nil {
		m.seen = map[string]map[string]float64{}
	}
	m.seen[string(m.key)] = out
	return out
}

func (c *batchCols) tresMap(name string) mapCol {
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
	return mapCol{m: m, keys: keys, items: items}
}

func optInt64(a *array.Int64, i int) *int64 {
	if a.IsNull(i) {
		return nil
	}
	v := a.Value(i)
	return &v
}
