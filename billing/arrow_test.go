package billing

import (
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fairledger/fairledger/schemas"
)

// jobRow is the part of a jobs-batch row billing reads; every other column
// gets a placeholder.
type jobRow struct {
	partition string
	noPart    bool // null partition
	qos       string
	noQOS     bool // null qos
	sacct     float64
	noSacct   bool // null billing_sacct
	tres      map[string]float64
}

// buildJobs builds a schemas.Jobs(extra) record from rows.
func buildJobs(mem memory.Allocator, extra []string, rows []jobRow) arrow.RecordBatch {
	schema := schemas.Jobs(extra)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i, f := range schema.Fields() {
		fb := b.Field(i)
		for _, r := range rows {
			switch fb := fb.(type) {
			case *array.BinaryDictionaryBuilder:
				switch {
				case f.Name == schemas.ColPartition && r.noPart, f.Name == schemas.ColQOS && r.noQOS:
					fb.AppendNull()
				case f.Name == schemas.ColPartition:
					_ = fb.AppendString(r.partition)
				case f.Name == schemas.ColQOS:
					_ = fb.AppendString(r.qos)
				default:
					_ = fb.AppendString("x")
				}
			case *array.StringBuilder:
				fb.Append("")
			case *array.Int64Builder:
				fb.Append(0)
			case *array.TimestampBuilder:
				fb.Append(0)
			case *array.MapBuilder:
				fb.Append(true) // empty map
			case *array.Int32Builder:
				fb.Append(0) // alloc_tres_set: every row's map is the same empty one
			case *array.Float64Builder:
				if f.Name == schemas.ColBillingSacct {
					if r.noSacct {
						fb.AppendNull()
					} else {
						fb.Append(r.sacct)
					}
					continue
				}
				tres, _ := schemas.IsDenseTRESColumn(f.Name)
				fb.Append(r.tres[tres])
			default:
				panic("buildJobs: unexpected builder for " + f.Name)
			}
		}
	}
	return b.NewRecordBatch()
}

func column[T any](t *testing.T, rec arrow.RecordBatch, name string, values func(arrow.Array) []T) []T {
	t.Helper()
	i, err := schemas.Index(rec.Schema(), name)
	if err != nil {
		t.Fatal(err)
	}
	return values(rec.Column(i))
}

func float64s(a arrow.Array) []float64 { return a.(*array.Float64).Float64Values() }
func int64s(a arrow.Array) []int64     { return a.(*array.Int64).Int64Values() }

func testTable(t *testing.T) *Table {
	t.Helper()
	tab, err := Compile([]Partition{
		{Name: "gpu", TRESBillingWeights: "CPU=1.0,Mem=0.25G,GRES/gpu=2.0,license/lic1=1.5"},
		{Name: "cpu"},
	}, nil, docTracked)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// applyRows are hand-worked billing vectors (TestBillableDoc) and the two fallbacks; want* are worked out in
// TestApply.
var applyRows = []jobRow{
	{partition: "gpu", qos: "normal", sacct: 4, tres: map[string]float64{"cpu": 1, "mem": 8192, "node": 1, "license/lic1": 1}},  // B3
	{partition: "cpu", qos: "half", sacct: 4, tres: map[string]float64{"cpu": 4, "mem": 16384, "node": 1, "gres/gpu": 1}},       // B1
	{partition: "gone", qos: "neg", sacct: 7, tres: map[string]float64{"cpu": 2, "mem": 100}},                                   // sacct fallback
	{partition: "gone", noQOS: true, noSacct: true, tres: map[string]float64{"cpu": 12}},                                        // CPU fallback
	{partition: "gpu", qos: "normal", sacct: 5, tres: map[string]float64{"cpu": 1, "mem": 10240, "node": 1, "license/lic1": 1}}, // B4
	{noPart: true, qos: "half", sacct: 9.0, tres: map[string]float64{"cpu": 3}},                                                 // null partition
}

// qosFactor knows "half" and "neg" (and "" as Slurm's jobs without a QOS);
// "normal" is not in its table.
func qosFactor(q string) (float64, bool) {
	switch q {
	case "half":
		return 0.5, true
	case "neg":
		return -1, true // unset → 1, as _apply_new_usage charges it
	case "":
		return 1, true
	}
	return 7, false // ignored: an unknown QOS is charged 1
}

func TestApply(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tab := testTable(t)
	rec := buildJobs(mem, []string{"license/lic1"}, applyRows)
	defer rec.Release()

	out, st, err := tab.Apply(mem, rec, qosFactor)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()

	wantB := []float64{4.5, 4, 7, 12, 5, 9}
	wantBS := []int64{4, 4, 7, 12, 5, 9}
	wantUF := []float64{1, 0.5, 1, 1, 1, 0.5}
	if got := column(t, out, schemas.ColBilling, float64s); !reflect.DeepEqual(got, wantB) {
		t.Errorf("Apply billing = %v, want %v", got, wantB)
	}
	if got := column(t, out, schemas.ColBillingSlurm, int64s); !reflect.DeepEqual(got, wantBS) {
		t.Errorf("Apply billing_slurm = %v, want %v", got, wantBS)
	}
	if got := column(t, out, schemas.ColUsageFactor, float64s); !reflect.DeepEqual(got, wantUF) {
		t.Errorf("Apply usage_factor = %v, want %v", got, wantUF)
	}
	// Rows 1 and 5 are of QOS normal, unknown to qosFactor: factor 1
	// (wantUF), counted.
	wantSt := Stats{Rows: 6, Weighted: 2, CPUCount: 1, Fallback: map[string]int64{ReasonSacctBilling: 2, ReasonCPUCount: 1},
		UnknownQOS: map[string]int64{"normal": 2}}
	if !reflect.DeepEqual(st, wantSt) {
		t.Errorf("Apply stats = %+v, want %+v", st, wantSt)
	}
	var total Stats
	total.Add(st)
	total.Add(Stats{Rows: 3, Weighted: 3, UnknownQOS: map[string]int64{"gone": 1, "normal": 1}})
	if got, want := total.UnknownQOS, map[string]int64{"gone": 1, "normal": 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("Stats.Add UnknownQOS = %v, want %v", got, want)
	}
	if got, want := total.UnknownQOSNames(), []string{"gone", "normal"}; !reflect.DeepEqual(got, want) {
		t.Errorf("UnknownQOSNames = %q, want %q", got, want)
	}
	if got := total.UnknownQOSRows(); got != 4 {
		t.Errorf("UnknownQOSRows = %d, want 4", got)
	}

	// Schema: the input's fields, then BillingFields; input columns shared.
	in := rec.Schema().Fields()
	want := append(append([]arrow.Field(nil), in...), schemas.BillingFields()...)
	if got := out.Schema().Fields(); !reflect.DeepEqual(got, want) {
		t.Errorf("Apply schema = %v, want %v", got, want)
	}
	for i := range in {
		if out.Column(i) != rec.Column(i) {
			t.Errorf("Apply column %d (%s) is a copy, want the input array", i, in[i].Name)
		}
	}
}

func TestApplySlice(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tab := testTable(t)
	rec := buildJobs(mem, []string{"license/lic1"}, applyRows)
	defer rec.Release()
	sl := rec.NewSlice(1, 5) // rows B1, sacct fallback, CPU fallback, B4
	defer sl.Release()

	out, st, err := tab.Apply(mem, sl, nil) // nil factor: all 1
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got, want := column(t, out, schemas.ColBilling, float64s), []float64{4, 7, 12, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("Apply(slice) billing = %v, want %v", got, want)
	}
	if got, want := column(t, out, schemas.ColUsageFactor, float64s), []float64{1, 1, 1, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("Apply(slice) usage_factor = %v, want %v", got, want)
	}
	if st.Rows != 4 || st.Weighted != 1 || st.CPUCount != 1 || st.Fallback[ReasonSacctBilling] != 1 || st.Fallback[ReasonCPUCount] != 1 {
		t.Errorf("Apply(slice) stats = %+v, want 4 rows: 1 weighted, 1 CPU count, 1+1 fallback", st)
	}
}

func TestApplyErrors(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tab := testTable(t)

	// The batch lacks the dense license column the table needs.
	noLic := buildJobs(mem, nil, applyRows[:1])
	defer noLic.Release()
	if out, _, err := tab.Apply(mem, noLic, nil); err == nil || !strings.Contains(err.Error(), `no column "tres:license/lic1"`) {
		t.Errorf("Apply(no license column) = %v, %v, want error naming tres:license/lic1", out, err)
	}

	// Billing twice.
	rec := buildJobs(mem, []string{"license/lic1"}, applyRows[:1])
	defer rec.Release()
	once, _, err := tab.Apply(mem, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer once.Release()
	if out, _, err := tab.Apply(mem, once, nil); err == nil || !strings.Contains(err.Error(), `already has column "billing"`) {
		t.Errorf("Apply(billed batch) = %v, %v, want already-has-column error", out, err)
	}
}

func TestStatsAdd(t *testing.T) {
	t.Parallel()
	var s Stats
	s.Add(Stats{Rows: 3, Weighted: 2, Fallback: map[string]int64{ReasonCPUCount: 1}})
	s.Add(Stats{Rows: 2, CPUCount: 1, Fallback: map[string]int64{ReasonSacctBilling: 1}})
	want := Stats{Rows: 5, Weighted: 2, CPUCount: 1, Fallback: map[string]int64{ReasonCPUCount: 1, ReasonSacctBilling: 1}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Stats.Add = %+v, want %+v", s, want)
	}
	if got, want := s.Reasons(), []string{ReasonCPUCount, ReasonSacctBilling}; !reflect.DeepEqual(got, want) {
		t.Errorf("Stats.Reasons() = %q, want %q", got, want)
	}
}

func TestApplyEmpty(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tab := testTable(t)
	rec := buildJobs(mem, []string{"license/lic1"}, nil)
	defer rec.Release()
	out, st, err := tab.Apply(mem, rec, qosFactor)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out.NumRows() != 0 || out.NumCols() != rec.NumCols()+3 || st.Rows != 0 || st.Fallback != nil {
		t.Errorf("Apply(empty) = %d rows, %d cols, %+v; want 0 rows, %d cols, zero stats", out.NumRows(), out.NumCols(), st, rec.NumCols()+3)
	}
}
