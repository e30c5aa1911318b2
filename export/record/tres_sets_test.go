package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/schemas"
)

// withoutColumn returns rec without the named column (rec itself,
// retained, when it has none).
func withoutColumn(rec arrow.RecordBatch, name string) arrow.RecordBatch {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		rec.Retain()
		return rec
	}
	var fields []arrow.Field
	var cols []arrow.Array
	for i, f := range rec.Schema().Fields() {
		if i != idx[0] {
			fields = append(fields, f)
			cols = append(cols, rec.Column(i))
		}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

// withColumn returns rec with the named column replaced by (or, if rec
// has none, extended with) a.
func withColumn(rec arrow.RecordBatch, name string, a arrow.Array) arrow.RecordBatch {
	fields := rec.Schema().Fields()
	cols := rec.Columns()
	f := arrow.Field{Name: name, Type: a.DataType(), Nullable: a.NullN() > 0}
	if idx := rec.Schema().FieldIndices(name); len(idx) > 0 {
		fields = append([]arrow.Field(nil), fields...)
		cols = append([]arrow.Array(nil), cols...)
		fields[idx[0]], cols[idx[0]] = f, a
	} else {
		fields = append(fields, f)
		cols = append(append([]arrow.Array(nil), cols...), a)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

// tablePair holds two tables fed the same batches: numbered through
// alloc_tres_set, and without that column (every row read from its
// entries, the path AppendBatch took before the column existed).
type tablePair struct{ sets, rows *JobTable }

func newTablePair() tablePair {
	return tablePair{NewJobTable(NewJobDict(), 0), NewJobTable(NewJobDict(), 0)}
}

// append adds rec to both tables and checks they agree: the same records
// (the same TRES set ids among them) and the same dictionary.
func (p tablePair) append(t *testing.T, what string, rec arrow.RecordBatch) {
	t.Helper()
	if len(rec.Schema().FieldIndices(schemas.ColAllocTRESSet)) == 0 {
		t.Fatalf("%s: the batch has no %s column", what, schemas.ColAllocTRESSet)
	}
	plain := withoutColumn(rec, schemas.ColAllocTRESSet)
	defer plain.Release()
	base := len(p.rows.Recs)
	if err := p.sets.AppendBatch(rec); err != nil {
		t.Fatalf("%s: AppendBatch: %v", what, err)
	}
	if err := p.rows.AppendBatch(plain); err != nil {
		t.Fatalf("%s: AppendBatch without set numbers: %v", what, err)
	}
	if !reflect.DeepEqual(p.sets.Recs[base:], p.rows.Recs[base:]) {
		for i := base; i < len(p.rows.Recs); i++ {
			if p.sets.Recs[i] != p.rows.Recs[i] {
				t.Fatalf("%s: record %d = %+v, want %+v", what, i, p.sets.Recs[i], p.rows.Recs[i])
			}
		}
		t.Fatalf("%s: records differ", what)
	}
	a, b := p.sets.Dict, p.rows.Dict
	if !reflect.DeepEqual(a.sets, b.sets) || !reflect.DeepEqual(a.entries, b.entries) || !reflect.DeepEqual(a.names, b.names) {
		t.Fatalf("%s: dictionaries differ: %d sets, want %d", what, len(a.sets), len(b.sets))
	}
}

// randomTRESPool are TRES maps for random batches: empty ones, the same
// entries in two orders, the same keys with other values, a repeated key.
func randomTRESPool() []jobSpec {
	pool := []jobSpec{
		{tres: map[string]float64{}},
		{entries: []tresEntry{}},
		{tres: map[string]float64{"cpu": 4, "mem": 16384, "node": 1}},
		{entries: []tresEntry{{"node", 1}, {"cpu", 4}, {"mem", 16384}}},
		{tres: map[string]float64{"cpu": 8, "mem": 16384, "node": 1}},
		{tres: map[string]float64{"cpu": 4, "mem": 16384, "node": 1, "billing": 4}},
		{entries: []tresEntry{{"cpu", 2}, {"cpu", 4}, {"node", 1}}},
		{tres: map[string]float64{"cpu": 16, "gres/gpu": 2, "gres/gpu:a100": 2, "node": 1}},
		{tres: map[string]float64{"cpu": 0.5}},
		{tres: map[string]float64{"cpux": 4, "mem": 16384, "node": 1}},
	}
	for i := range 40 {
		pool = append(pool, jobSpec{tres: map[string]float64{"cpu": float64(i + 1), "node": float64(i%3 + 1)}})
	}
	return pool
}

func randomSpecs(rng *rand.Rand, pool []jobSpec, n int) []jobSpec {
	start := int64(1735776000)
	specs := make([]jobSpec, n)
	for i := range specs {
		s := pool[rng.IntN(len(pool))]
		if rng.IntN(3) == 0 && i > 0 { // runs of one set, as in sacct's order
			s = specs[i-1]
		}
		s.jobID, s.raw, s.user, s.account, s.state, s.start = "j", int64(i), "u", "a", "RUNNING", &start
		specs[i] = s
	}
	return specs
}

// TestAppendBatchTRESSets feeds random batches to AppendBatch with and
// without alloc_tres_set: the records and the dictionary must not depend
// on the column, also for sliced batches and other valid numberings.
func TestAppendBatchTRESSets(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	pool := randomTRESPool()
	p := newTablePair()
	for b := range 20 {
		n := 1 + rng.IntN(3000)
		rec := buildBatch(t, mem, randomSpecs(rng, pool, n))
		p.append(t, "batch", rec)
		if n > 10 {
			s := rec.NewSlice(3, int64(n-5))
			p.append(t, "slice", s)
			s.Release()
		}
		// Every row its own number, or numbers skipping some, or two
		// numbers for each set: all valid.
		sets := rec.Column(rec.Schema().FieldIndices(schemas.ColAllocTRESSet)[0]).(*array.Int32)
		ib := array.NewInt32Builder(mem)
		for i := range n {
			switch b % 3 {
			case 0:
				ib.Append(int32(i))
			case 1:
				ib.Append(2*sets.Value(i) + 7)
			default:
				ib.Append(2*sets.Value(i) + int32(i%2))
			}
		}
		a := ib.NewArray()
		ib.Release()
		renum := withColumn(rec, schemas.ColAllocTRESSet, a)
		a.Release()
		p.append(t, "renumbered", renum)
		renum.Release()
		rec.Release()
	}
}

// TestAppendBatchTRESSetsBad checks that a malformed alloc_tres_set is an
// error and adds nothing.
func TestAppendBatchTRESSetsBad(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(3, 4))
	rec := buildBatch(t, mem, randomSpecs(rng, randomTRESPool(), 4))
	defer rec.Release()
	for _, tc := range []struct {
		what string
		a    func() arrow.Array
		err  string
	}{
		{"negative", func() arrow.Array {
			b := array.NewInt32Builder(mem)
			defer b.Release()
			b.AppendValues([]int32{0, 1, -1, 0}, nil)
			return b.NewArray()
		}, `jobs rows: column "alloc_tres_set": negative value -1`},
		{"null", func() arrow.Array {
			b := array.NewInt32Builder(mem)
			defer b.Release()
			b.AppendValues([]int32{0, 1, 0, 0}, []bool{true, true, false, true})
			return b.NewArray()
		}, `jobs rows: column "alloc_tres_set": 1 nulls in a non-null column`},
		{"int64", func() arrow.Array {
			b := array.NewInt64Builder(mem)
			defer b.Release()
			b.AppendValues([]int64{0, 1, 2, 3}, nil)
			return b.NewArray()
		}, `jobs rows: column "alloc_tres_set" has type int64`},
	} {
		a := tc.a()
		bad := withColumn(rec, schemas.ColAllocTRESSet, a)
		a.Release()
		tb := NewJobTable(NewJobDict(), 0)
		err := tb.AppendBatch(bad)
		bad.Release()
		if err == nil || err.Error() != tc.err {
			t.Errorf("%s: AppendBatch error = %v, want %s", tc.what, err, tc.err)
		}
		if len(tb.Recs) != 0 {
			t.Errorf("%s: a failed AppendBatch added %d records", tc.what, len(tb.Recs))
		}
	}
}

// TestAppendBatchTRESSetsSacct reads every sacct file of testdata with
// ingest, in small blocks and in one, and checks AppendBatch gives the
// same records and dictionary with the parser's alloc_tres_set as without.
func TestAppendBatchTRESSetsSacct(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sacct", "*"))
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".json") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, chunk := range []int{256, 1 << 20} {
			opt := ingest.SacctOptions{ChunkBytes: chunk, Workers: 2}
			if !bytes.Contains(data[:bytes.IndexByte(data, '\n')+1], []byte("JobID")) {
				opt.Fields = []string{"xdmod"} // the headerless files of testdata
			}
			if appendSacct(t, filepath.Base(f), data, opt) > 0 {
				read++
			}
		}
	}
	if read < 16 {
		t.Errorf("read %d testdata files with rows in both blockings, want at least 16 (8 files)", read)
	}
}

// TestAppendBatchTRESSetsMemoReset reads a block with more distinct
// AllocTRES strings than the parser keeps, so that its memo is emptied
// within the block and strings come back under new numbers.
func TestAppendBatchTRESSetsMemoReset(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("JobID|User|Account|Partition|Start|End|State|AllocTRES|NNodes|AllocCPUS\n")
	for i := range 12000 {
		cpus := i % 5000
		if i%3 == 0 {
			cpus = i % 7
		}
		fmt.Fprintf(&b, "%d|u|a|p|2024-01-01T00:00:00|2024-01-01T00:20:00|COMPLETED|cpu=%d,mem=%dM,node=1|1|%d\n", i+1, cpus, cpus*1000, cpus)
	}
	if n := appendSacct(t, "memo.psv", []byte(b.String()), ingest.SacctOptions{ChunkBytes: 16 << 20, Workers: 1}); n != 12000 {
		t.Errorf("read %d rows, want 12000", n)
	}
}

// appendSacct reads a sacct file with ingest into a tablePair and returns
// the number of rows.
func appendSacct(t *testing.T, name string, data []byte, opt ingest.SacctOptions) int {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Allocator = mem
	r, err := ingest.NewSacctReader(name, bytes.NewReader(data), opt)
	var fe *ingest.FileError
	if errors.As(err, &fe) {
		return 0 // a file a run refuses whole (a column missing): no batch
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer r.Close()
	p := newTablePair()
	rows := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return rows
		}
		if errors.As(err, &fe) && rows == 0 {
			return 0
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		billed := withBillingColumns(mem, rec)
		rec.Release()
		p.append(t, name, billed)
		rows += int(billed.NumRows())
		billed.Release()
	}
}

// withBillingColumns appends schemas.BillingFields to rec, all 0 (1 for
// the usage factor), as AppendBatch requires them.
func withBillingColumns(mem memory.Allocator, rec arrow.RecordBatch) arrow.RecordBatch {
	n := int(rec.NumRows())
	fb := array.NewFloat64Builder(mem)
	defer fb.Release()
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	fb.AppendValues(make([]float64, n), nil)
	billing := fb.NewArray()
	defer billing.Release()
	ib.AppendValues(make([]int64, n), nil)
	slurm := ib.NewArray()
	defer slurm.Release()
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	fb.AppendValues(ones, nil)
	uf := fb.NewArray()
	defer uf.Release()
	fields := append(append([]arrow.Field(nil), rec.Schema().Fields()...), schemas.BillingFields()...)
	cols := append(append([]arrow.Array(nil), rec.Columns()...), billing, slurm, uf)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
}
