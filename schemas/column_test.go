package schemas

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestRecordColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "d", Type: DictString()},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	rb.Field(0).(*array.Float64Builder).Append(1.5)
	_ = rb.Field(1).(*array.BinaryDictionaryBuilder).AppendString("labA")
	rb.Field(2).(*array.StringBuilder).Append("x")
	rec := rb.NewRecordBatch()
	defer rec.Release()

	f, err := RecordColumn[*array.Float64](rec, "f", "float64")
	if err != nil || f.Value(0) != 1.5 {
		t.Errorf("RecordColumn(f) = %v, %v", f, err)
	}
	if _, err := RecordColumn[*array.Float64](rec, "s", "float64"); err == nil || err.Error() != `column "s" is utf8, want float64` {
		t.Errorf("RecordColumn(s) error = %v", err)
	}
	if _, err := RecordColumn[*array.Float64](rec, "nope", "float64"); err == nil || err.Error() != `schema has no column "nope"` {
		t.Errorf("RecordColumn(nope) error = %v", err)
	}
	_, codes, names, err := DictStringColumn(rec, "d")
	if err != nil || len(codes) != 1 || names.Value(int(codes[0])) != "labA" {
		t.Errorf("DictStringColumn(d) = %v, %v, %v", codes, names, err)
	}
	if _, _, _, err := DictStringColumn(rec, "s"); err == nil || err.Error() != `column "s" is utf8, want dictionary<int32, utf8>` {
		t.Errorf("DictStringColumn(s) error = %v", err)
	}
}
