package encode

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestInternedStrings checks that a value of internedStrings is told by its
// address, and only a value viewing the same bytes with the same length.
func TestInternedStrings(t *testing.T) {
	t.Parallel()
	strs := []string{"b", "", "a", "abcdefghijklmnopq", "Z", "ab"}
	in := internStrings(strs)
	for i, s := range strs {
		if got := string(in.vals[i].ByteArray()); got != s {
			t.Errorf("vals[%d] = %q, want %q", i, got, s)
		}
		if got := in.id(&in.vals[i]); got != int32(i) {
			t.Errorf("id(vals[%d] %q) = %d, want %d", i, s, got, i)
		}
	}
	// Byte order: "" < "Z" < "a" < "ab" < "abcdefghijklmnopq" < "b".
	if want := []int32{5, 0, 2, 4, 1, 3}; !slices.Equal(in.ranks, want) {
		t.Errorf("ranks = %v, want %v", in.ranks, want)
	}
	long := in.vals[3].ByteArray()
	others := map[string]parquet.Value{
		"equal bytes elsewhere": parquet.ByteArrayValue([]byte("a")),
		"a prefix":              parquet.ByteArrayValue(long[:2]),
		"a suffix":              parquet.ByteArrayValue(long[8:]),
		"null":                  {},
	}
	for name, v := range others {
		if got := in.id(&v); got != -1 {
			t.Errorf("id(%s) = %d, want -1", name, got)
		}
	}
}

// TestInternedDict checks internedDict and its column buffer against what
// parquet-go's own dictionary does with the same values, and against
// indexes and bounds worked out by hand: indexes in the order values are
// first seen, bounds in byte order, values not of the interned strings
// hashed as usual.
func TestInternedDict(t *testing.T) {
	t.Parallel()
	strs := []string{"b", "", "a", "zz", "b"} // "b" twice, as a name and a TRES key can be
	in := internStrings(strs)
	typ := parquet.ByteArrayType
	dict := internedType{typ, in}.NewDictionary(0, 0, typ.NewValues(nil, nil))
	ref := typ.NewDictionary(0, 0, typ.NewValues(nil, nil))
	insert := func(values []parquet.Value, wantIndexes []int32) {
		t.Helper()
		got, want := make([]int32, len(values)), make([]int32, len(values))
		dict.Insert(got, values)
		ref.Insert(want, values)
		if !slices.Equal(got, wantIndexes) || !slices.Equal(want, wantIndexes) {
			t.Fatalf("indexes = %v, parquet-go's %v, want %v", got, want, wantIndexes)
		}
	}
	type bound struct {
		indexes  []int32
		min, max string
	}
	checkBounds := func(bounds []bound) {
		t.Helper()
		for _, b := range bounds {
			min, max := dict.Bounds(b.indexes)
			rmin, rmax := ref.Bounds(b.indexes)
			if string(min.ByteArray()) != b.min || string(max.ByteArray()) != b.max ||
				!parquet.Equal(min, rmin) || !parquet.Equal(max, rmax) {
				t.Errorf("Bounds(%v) = %q, %q; parquet-go's %q, %q; want %q, %q", b.indexes,
					min.ByteArray(), max.ByteArray(), rmin.ByteArray(), rmax.ByteArray(), b.min, b.max)
			}
		}
	}
	// Interned values only: bounds from the ranks.
	insert([]parquet.Value{in.vals[0], in.vals[2], in.vals[0], in.vals[1], in.vals[4], in.vals[2]}, []int32{0, 1, 0, 2, 0, 1})
	checkBounds([]bound{
		{[]int32{0}, "b", "b"},
		{[]int32{0, 1}, "a", "b"},
		{[]int32{1, 2, 0}, "", "b"},
		{[]int32{0, 0, 2}, "", "b"},
	})
	// A value from elsewhere is hashed; bounds compare the strings.
	insert([]parquet.Value{parquet.ByteArrayValue([]byte("c")), in.vals[3], in.vals[0]}, []int32{3, 4, 0})
	checkBounds([]bound{
		{[]int32{0, 3, 1}, "a", "c"},
		{[]int32{4, 2}, "", "zz"},
	})

	// Without an outside value the bounds come from the ranks.
	dict.Reset()
	col := dict.Type().NewColumnBuffer(3, 0)
	if n, err := col.WriteValues([]parquet.Value{in.vals[3], in.vals[0], in.vals[3], in.vals[2]}); n != 4 || err != nil {
		t.Fatalf("WriteValues = %d, %v", n, err)
	}
	page := col.Page()
	data := page.Data()
	if got, want := data.Int32(), []int32{0, 1, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("page indexes after Reset = %v, want %v", got, want)
	}
	min, max, ok := page.Bounds()
	if !ok || string(min.ByteArray()) != "a" || string(max.ByteArray()) != "zz" || min.Column() != 3 || max.Column() != 3 {
		t.Errorf("page Bounds = %q (column %d), %q (column %d), %v; want \"a\", \"zz\" of column 3",
			min.ByteArray(), min.Column(), max.ByteArray(), max.Column(), ok)
	}
	if got := dict.Len(); got != 3 {
		t.Errorf("dictionary holds %d values, want 3", got)
	}
}

// TestInternedDictPage checks the dictionary internedDict keeps without
// hashing: equal strings of strs (ids 0 and 4) share one index, and its
// Len, Size, Index and dictionary page are those of parquet-go's own
// dictionary fed the same values, before and after a value not of strs
// moves its values into the hashed one, and after Reset.
func TestInternedDictPage(t *testing.T) {
	t.Parallel()
	strs := []string{"b", "", "a", "zz", "b"}
	in := internStrings(strs)
	typ := parquet.ByteArrayType
	dict := internedType{typ, in}.NewDictionary(2, 0, typ.NewValues(nil, nil))
	ref := typ.NewDictionary(2, 0, typ.NewValues(nil, nil))
	same := func(step string, values []parquet.Value, wantIndexes []int32, wantLen int) {
		t.Helper()
		got, want := make([]int32, len(values)), make([]int32, len(values))
		dict.Insert(got, values)
		ref.Insert(want, values)
		if !slices.Equal(got, wantIndexes) || !slices.Equal(want, wantIndexes) {
			t.Fatalf("%s: indexes = %v, parquet-go's %v, want %v", step, got, want, wantIndexes)
		}
		if dict.Len() != wantLen || ref.Len() != wantLen || dict.Size() != ref.Size() {
			t.Errorf("%s: Len %d, Size %d; parquet-go's %d, %d; want Len %d", step, dict.Len(), dict.Size(), ref.Len(), ref.Size(), wantLen)
		}
		for i := range int32(wantLen) {
			if g, w := dict.Index(i), ref.Index(i); string(g.ByteArray()) != string(w.ByteArray()) {
				t.Errorf("%s: Index(%d) = %q, parquet-go's %q", step, i, g.ByteArray(), w.ByteArray())
			}
		}
		gv, wv := dict.Page().Data(), ref.Page().Data()
		gb, goff := gv.ByteArray()
		wb, woff := wv.ByteArray()
		if string(gb) != string(wb) || !slices.Equal(goff, woff) || dict.Page().NumValues() != ref.Page().NumValues() {
			t.Errorf("%s: dictionary page %q %v, parquet-go's %q %v", step, gb, goff, wb, woff)
		}
	}
	same("interned", []parquet.Value{in.vals[4], in.vals[2], in.vals[0], in.vals[1], in.vals[3]}, []int32{0, 1, 0, 2, 3}, 4)
	same("outside", []parquet.Value{parquet.ByteArrayValue([]byte("c")), in.vals[0], in.vals[3]}, []int32{4, 0, 3}, 5)
	same("hashed", []parquet.Value{in.vals[1], parquet.ByteArrayValue([]byte("d"))}, []int32{2, 5}, 6)
	dict.Reset()
	ref.Reset()
	same("after Reset", []parquet.Value{in.vals[3], in.vals[0], in.vals[4]}, []int32{0, 1, 1}, 2)
}

// wordDicts returns a cachedWordDict of typ, parquet-go's own dictionary
// of typ, and insert, which inserts values into both and fails t unless
// they give the same indexes, and wantIndexes unless it is nil.
func wordDicts(t *testing.T, typ parquet.Type) (dict, ref parquet.Dictionary, insert func(values []parquet.Value, wantIndexes []int32)) {
	dict = cachedWordType{typ}.NewDictionary(0, 0, typ.NewValues(nil, nil))
	ref = typ.NewDictionary(0, 0, typ.NewValues(nil, nil))
	insert = func(values []parquet.Value, wantIndexes []int32) {
		t.Helper()
		got, want := make([]int32, len(values)), make([]int32, len(values))
		dict.Insert(got, values)
		ref.Insert(want, values)
		if !slices.Equal(got, want) || wantIndexes != nil && !slices.Equal(got, wantIndexes) {
			t.Fatalf("indexes = %v, parquet-go's %v, want %v", got, want, wantIndexes)
		}
	}
	return dict, ref, insert
}

// valuesOf returns xs as parquet values made by value.
func valuesOf[T any](value func(T) parquet.Value, xs []T) []parquet.Value {
	vs := make([]parquet.Value, len(xs))
	for i, x := range xs {
		vs[i] = value(x)
	}
	return vs
}

// TestCachedDoubleDict checks cachedWordDict against parquet-go's own
// dictionary and against indexes worked out by hand: values are told apart
// by their bits (so 0 and -0 differ and a NaN equals itself), in the order
// first seen, also when more values than the cache holds evict each other.
func TestCachedDoubleDict(t *testing.T) {
	t.Parallel()
	dict, ref, insert := wordDicts(t, parquet.DoubleType)
	doubles := func(fs ...float64) []parquet.Value { return valuesOf(parquet.DoubleValue, fs) }
	insert(doubles(1, 2, 1, math.NaN(), 0, math.Copysign(0, -1), 2, math.NaN()), []int32{0, 1, 0, 2, 3, 4, 1, 2})
	insert(doubles(2, 5, 1), []int32{1, 5, 0}) // one call: a new value among cached ones
	// 10,000 values, twice over, through a cache of 4,096.
	many := make([]float64, 10000)
	for i := range many {
		many[i] = float64(i) * 0.25
	}
	insert(doubles(many...), nil)
	insert(doubles(many...), nil)
	// 6 values before, and 9,996 of the 10,000 new (0, 1, 2 and 5 were in).
	if got := dict.Len(); got != 10002 {
		t.Errorf("dictionary holds %d values, want 10002", got)
	}
	// After a Reset the cache must not hand out old indexes.
	insert(doubles(1e6, 2e6), []int32{10002, 10003})
	dict.Reset()
	ref.Reset()
	insert(doubles(2e6, 1e6), []int32{0, 1})
}

// TestCachedWordDictInt64 checks cachedWordDict on an INT64 column
// against parquet-go's own dictionary and against indexes worked out by
// hand: in the order first seen, negative values included, also when
// more values than the cache holds evict each other.
func TestCachedWordDictInt64(t *testing.T) {
	t.Parallel()
	dict, ref, insert := wordDicts(t, parquet.Int64Type)
	ints := func(xs ...int64) []parquet.Value { return valuesOf(parquet.Int64Value, xs) }
	insert(ints(60, 1440, 60, -1, 0, math.MinInt64, 1440), []int32{0, 1, 0, 2, 3, 4, 1})
	insert(ints(-1, 4320, 60), []int32{2, 5, 0})
	many := make([]int64, 10000)
	for i := range many {
		many[i] = int64(i) - 1500
	}
	insert(ints(many...), nil)
	insert(ints(many...), nil)
	// 6 values before; -1, 0, 60, 1440 and 4320 were in, so 9,995 of the
	// 10,000 (-1500 to 8499) are new.
	if got := dict.Len(); got != 10001 {
		t.Errorf("dictionary holds %d values, want 10001", got)
	}
	dict.Reset()
	ref.Reset()
	insert(ints(4320, 60), []int32{0, 1})
}

// TestJobsWriterSchema checks that the jobs encoder's writer gives
// exactly the dictionary-encoded string columns internedType and the
// dictionary-encoded double and int64 columns cachedWordType, and
// describes the same file as jobsSchema.
func TestJobsWriterSchema(t *testing.T) {
	t.Parallel()
	s := jobsWriterSchema(internStrings(nil))
	var interned, cached []string
	for _, path := range s.Columns() {
		leaf, _ := s.Lookup(path...)
		switch leaf.Node.Type().(type) {
		case internedType:
			interned = append(interned, strings.Join(path, "."))
		case cachedWordType:
			cached = append(cached, strings.Join(path, "."))
		}
	}
	if want := []string{"user", "account", "partition", "qos", "state", "tres.key_value.key", "source_file"}; !slices.Equal(interned, want) {
		t.Errorf("interned columns %v, want %v", interned, want)
	}
	if want := []string{"timelimit_min", "alloc_cpus", "mem_mb", "node_count", "gpu", "tres.key_value.value", "billing",
		"billing_slurm", "usage_factor"}; !slices.Equal(cached, want) {
		t.Errorf("cached double columns %v, want %v", cached, want)
	}
	if got, want := s.String(), jobsSchema().String(); got != want {
		t.Errorf("writer schema\n%s\nwant jobsSchema\n%s", got, want)
	}
}
