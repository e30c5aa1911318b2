package record

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fairledger/fairledger/schemas"
)

// billedSchema is a jobs batch as billing.Apply returns it.
func billedSchema() *arrow.Schema {
	s := schemas.Jobs(nil)
	return arrow.NewSchema(append(s.Fields(), schemas.BillingFields()...), nil)
}

// jobSpec is one row of a test batch; nil pointers are nulls.
type jobSpec struct {
	jobID                    string
	raw                      int64
	arrJob, arrTask          *int64
	user, account, part, qos string
	state                    string
	cancelledBy              *string
	submit, start, end       *int64 // Unix seconds
	elapsed                  *int64
	nnodes, cpus             int64
	tres                     map[string]float64 // also fills the dense columns
	entries                  []tresEntry        // when set: the TRES map's entries, in this order
	billing                  float64
	billingSlurm             int64
	usageFactor              float64
	sourceLine               int64
}

// buildBatch builds a billed jobs batch from specs, column by column. Its
// alloc_tres_set numbers the specs' TRES maps as ingest does: by first
// appearance, the same number for the same entries in the same order.
func buildBatch(t testing.TB, mem memory.Allocator, specs []jobSpec) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, billedSchema())
	defer b.Release()
	sets := map[string]int32{}
	for i, f := range b.Schema().Fields() {
		fb := b.Field(i)
		for _, s := range specs {
			switch f.Name {
			case schemas.ColCluster:
				fb.(*array.BinaryDictionaryBuilder).AppendString("c1")
			case schemas.ColJobID:
				fb.(*array.StringBuilder).Append(s.jobID)
			case schemas.ColJobIDRaw:
				fb.(*array.Int64Builder).Append(s.raw)
			case schemas.ColArrayJobID:
				appendOpt(fb.(*array.Int64Builder), s.arrJob)
			case schemas.ColArrayTaskID:
				appendOpt(fb.(*array.Int64Builder), s.arrTask)
			case schemas.ColHetJobID, schemas.ColHetJobOffset, schemas.ColSuspendedSec, schemas.ColTimelimitMin:
				fb.AppendNull()
			case schemas.ColUser:
				fb.(*array.BinaryDictionaryBuilder).AppendString(s.user)
			case schemas.ColAccount:
				fb.(*array.BinaryDictionaryBuilder).AppendString(s.account)
			case schemas.ColPartition:
				fb.(*array.BinaryDictionaryBuilder).AppendString(s.part)
			case schemas.ColQOS:
				if s.qos == "" {
					fb.AppendNull()
				} else {
					fb.(*array.BinaryDictionaryBuilder).AppendString(s.qos)
				}
			case schemas.ColState:
				fb.(*array.BinaryDictionaryBuilder).AppendString(s.state)
			case schemas.ColCancelledBy:
				if s.cancelledBy == nil {
					fb.AppendNull()
				} else {
					fb.(*array.StringBuilder).Append(*s.cancelledBy)
				}
			case schemas.ColSubmit, schemas.ColEligible:
				appendTS(fb.(*array.TimestampBuilder), s.submit)
			case schemas.ColStart:
				appendTS(fb.(*array.TimestampBuilder), s.start)
			case schemas.ColEnd:
				appendTS(fb.(*array.TimestampBuilder), s.end)
			case schemas.ColElapsedSec:
				appendOpt(fb.(*array.Int64Builder), s.elapsed)
			case schemas.ColNNodes:
				fb.(*array.Int64Builder).Append(s.nnodes)
			case schemas.ColAllocCPUs:
				fb.(*array.Int64Builder).Append(s.cpus)
			case schemas.ColExitCode, schemas.ColJobName:
				fb.(*array.StringBuilder).Append("x")
			case schemas.ColAllocTRES:
				mb := fb.(*array.MapBuilder)
				mb.Append(true)
				if s.entries != nil {
					for _, e := range s.entries {
						mb.KeyBuilder().(*array.StringBuilder).Append(e.key)
						mb.ItemBuilder().(*array.Float64Builder).Append(e.val)
					}
					continue
				}
				for _, k := range sortedKeys(s.tres) {
					mb.KeyBuilder().(*array.StringBuilder).Append(k)
					mb.ItemBuilder().(*array.Float64Builder).Append(s.tres[k])
				}
			case schemas.ColAllocTRESSet:
				key := specEntriesKey(s)
				k, ok := sets[key]
				if !ok {
					k = int32(len(sets))
					sets[key] = k
				}
				fb.(*array.Int32Builder).Append(k)
			case schemas.ColBillingSacct:
				fb.AppendNull()
			case schemas.ColSourceFile:
				fb.(*array.BinaryDictionaryBuilder).AppendString("sacct.txt")
			case schemas.ColSourceLine:
				fb.(*array.Int64Builder).Append(s.sourceLine)
			case schemas.ColBilling:
				fb.(*array.Float64Builder).Append(s.billing)
			case schemas.ColBillingSlurm:
				fb.(*array.Int64Builder).Append(s.billingSlurm)
			case schemas.ColUsageFactor:
				fb.(*array.Float64Builder).Append(s.usageFactor)
			default:
				tres, ok := schemas.IsDenseTRESColumn(f.Name)
				if !ok {
					t.Fatalf("test batch: unhandled column %s", f.Name)
				}
				fb.(*array.Float64Builder).Append(s.tres[tres])
			}
		}
	}
	return b.NewRecordBatch()
}

// specEntriesKey spells out the entries of s's TRES map in the order
// buildBatch appends them.
func specEntriesKey(s jobSpec) string {
	key := ""
	if s.entries != nil {
		for _, e := range s.entries {
			key += fmt.Sprintf("%q=%v,", e.key, math.Float64bits(e.val))
		}
		return key
	}
	for _, k := range sortedKeys(s.tres) {
		key += fmt.Sprintf("%q=%v,", k, math.Float64bits(s.tres[k]))
	}
	return key
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func appendOpt(b *array.Int64Builder, v *int64) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.Append(*v)
}

func appendTS(b *array.TimestampBuilder, v *int64) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.Append(arrow.Timestamp(*v))
}

// TestAppendBatch checks the records of a billed batch against values read
// off the specs: nulls stay nulls, timestamps become microseconds, equal
// TRES sets given in any order share one set, a repeated key keeps its
// last value.
func TestAppendBatch(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// 1735776000 = 2025-01-02T00:00:00Z; 1735779600 = one hour later.
	start, end := int64(1735776000), int64(1735779600)
	rec := buildBatch(t, mem, []jobSpec{
		{jobID: "101_3", raw: 104, arrJob: ptr[int64](101), arrTask: ptr[int64](3), user: "bob", account: "physics",
			part: "gpu", qos: "normal", state: "COMPLETED", submit: ptr(start - 60), start: &start, end: &end,
			elapsed: ptr[int64](3600), nnodes: 1, cpus: 8,
			tres:    map[string]float64{"cpu": 8, "mem": 32768, "node": 1, "gres/gpu": 2, "gres/gpu:a100": 2},
			billing: 24.5, billingSlurm: 24, usageFactor: 1, sourceLine: 2},
		{jobID: "99", raw: 99, user: "alice", account: "chem", part: "cpu", state: "CANCELLED",
			cancelledBy: ptr("1000"), start: &start, nnodes: 2, cpus: 64,
			tres:    map[string]float64{"cpu": 64, "node": 2},
			billing: 64, billingSlurm: 64, usageFactor: 0.5, sourceLine: 9},
		{jobID: "100", raw: 100, user: "alice", account: "chem", part: "cpu", state: "RUNNING", start: &start,
			nnodes: 2, cpus: 64, tres: map[string]float64{"cpu": 64, "node": 2},
			entries: []tresEntry{{"node", 2}, {"cpu", 1}, {"cpu", 64}}, billing: 64, billingSlurm: 64,
			usageFactor: 0.5, sourceLine: 10},
	})
	tb := NewJobTable(NewJobDict(), 0)
	err := tb.AppendBatch(rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Recs) != 3 {
		t.Fatalf("AppendBatch added %d records, want 3", len(tb.Recs))
	}
	if tb.Recs[1].TRES != tb.Recs[2].TRES {
		t.Errorf("TRES sets of equal maps = %d and %d, want one set", tb.Recs[1].TRES, tb.Recs[2].TRES)
	}
	if r := tb.Recs[0]; r.Start != 1735776000_000000 || r.Submit != 1735775940_000000 || r.End != 1735779600_000000 ||
		r.Valid != ValidArrayJobID|ValidArrayTaskID|ValidSubmit|ValidEligible|ValidEnd|ValidElapsedSec {
		t.Errorf("record 0: start %d submit %d end %d valid %b", r.Start, r.Submit, r.End, r.Valid)
	}
	got := []JobRow{tb.Row(0), tb.Row(1), tb.Row(2)}
	st, en, sub := ts("2025-01-02T00:00:00Z", 0), ts("2025-01-02T01:00:00Z", 0), ts("2025-01-01T23:59:00Z", 0)
	want := []JobRow{
		{JobID: "101_3", JobIDRaw: 104, ArrayJobID: ptr[int64](101), ArrayTaskID: ptr[int64](3), User: "bob",
			Account: "physics", Partition: "gpu", QOS: "normal", State: "COMPLETED", Submit: &sub, Eligible: &sub,
			Start: st, End: &en, ElapsedSec: ptr[int64](3600), NNodes: 1, AllocCPUs: 8,
			MemMB: 32768, NodeCount: 1, GPU: 2,
			TRES:    map[string]float64{"cpu": 8, "mem": 32768, "node": 1, "gres/gpu": 2, "gres/gpu:a100": 2},
			Billing: 24.5, BillingSlurm: 24, UsageFactor: 1, SourceFile: "sacct.txt", SourceLine: 2},
		{JobID: "99", JobIDRaw: 99, User: "alice", Account: "chem", Partition: "cpu", QOS: "", State: "CANCELLED",
			CancelledBy: ptr("1000"), Start: st, NNodes: 2, AllocCPUs: 64, NodeCount: 2,
			TRES: map[string]float64{"cpu": 64, "node": 2}, Billing: 64, BillingSlurm: 64, UsageFactor: 0.5,
			SourceFile: "sacct.txt", SourceLine: 9},
		{JobID: "100", JobIDRaw: 100, User: "alice", Account: "chem", Partition: "cpu", QOS: "", State: "RUNNING",
			Start: st, NNodes: 2, AllocCPUs: 64, NodeCount: 2,
			TRES: map[string]float64{"cpu": 64, "node": 2}, Billing: 64, BillingSlurm: 64, UsageFactor: 0.5,
			SourceFile: "sacct.txt", SourceLine: 10},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AppendBatch rows =\n%+v\nwant\n%+v", got, want)
	}
}

func TestAppendBatchErrors(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	start := int64(0)
	rec := buildBatch(t, mem, []jobSpec{{jobID: "1", raw: 1, user: "u", account: "a", state: "RUNNING", start: &start}})
	defer rec.Release()
	// An unbilled batch lacks the billing column.
	unbilled := array.NewRecordBatch(schemas.Jobs(nil), rec.Columns()[:len(schemas.Jobs(nil).Fields())], rec.NumRows())
	defer unbilled.Release()
	tb := NewJobTable(NewJobDict(), 0)
	if err := tb.AppendBatch(unbilled); err == nil {
		t.Errorf("AppendBatch of an unbilled batch succeeded, want an error")
	}
	if len(tb.Recs) != 0 {
		t.Errorf("a failed AppendBatch added %d records", len(tb.Recs))
	}
}

// TestTRESHashCollision makes two different TRES sets share a hash, as if
// the hash had collided, and checks each row still gets its own set, the
// second time too (from the lookup by bytes).
func TestTRESHashCollision(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	start := int64(1735776000)
	a := map[string]float64{"cpu": 4, "node": 1}
	b := map[string]float64{"cpu": 8, "node": 1}
	rec := buildBatch(t, mem, []jobSpec{
		{jobID: "1", raw: 1, user: "u", account: "a", state: "RUNNING", start: &start, tres: a},
		{jobID: "2", raw: 2, user: "u", account: "a", state: "RUNNING", start: &start, tres: b},
	})
	defer rec.Release()
	c := &batchCols{rec: rec, dict: NewJobDict()}
	m := c.tresMap(schemas.ColAllocTRES, "") // no set numbers: every row is read from its entries
	if c.err != nil {
		t.Fatal(c.err)
	}
	idA := m.at(0)
	lo0, hi0 := m.m.ValueOffsets(0)
	lo, hi := m.m.ValueOffsets(1)
	m.seen[m.hash(int(lo), int(hi))] = m.seen[m.hash(int(lo0), int(hi0))] // row 1's hash now names row 0's set
	for range 2 {
		idB := m.at(1)
		if idB == idA {
			t.Fatalf("row 1 got row 0's set %d", idA)
		}
		if got := c.dict.TRESMap(idB); !reflect.DeepEqual(got, b) {
			t.Errorf("row 1's set = %v, want %v", got, b)
		}
	}
	if got := m.at(0); got != idA {
		t.Errorf("row 0 again: set %d, want %d", got, idA)
	}
}
