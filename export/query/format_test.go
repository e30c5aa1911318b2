package query

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

func orderedMap(kv ...any) duckdb.OrderedMap {
	var m duckdb.OrderedMap
	for i := 0; i < len(kv); i += 2 {
		m.Set(kv[i], kv[i+1])
	}
	return m
}

func dec(v int64, scale uint8) duckdb.Decimal {
	return duckdb.Decimal{Width: 18, Scale: scale, Value: big.NewInt(v)}
}

// nines38 is 10^38 - 1, the largest DECIMAL(38,s) unscaled value.
var nines38, _ = new(big.Int).SetString("99999999999999999999999999999999999999", 10)

// formatCases pair a value, as the driver returns it, with its column type
// name and the text and JSON expected. The texts are DuckDB's documented
// output forms (its VARCHAR cast), written by hand.
var formatCases = []struct {
	name, typ string
	v         any
	text      string
	json      string
}{
	{"decimal", "DECIMAL(10,3)", dec(123456, 3), "123.456", "123.456"},
	{"decimal keeps scale digits", "DECIMAL(21,1)", dec(8490, 1), "849.0", "849.0"},
	{"decimal below one", "DECIMAL(4,2)", dec(-5, 2), "-0.05", "-0.05"},
	{"decimal zero", "DECIMAL(4,2)", dec(0, 2), "0.00", "0.00"},
	{"decimal scale 0", "DECIMAL(18,0)", dec(-42, 0), "-42", "-42"},
	{"decimal beyond float64", "DECIMAL(38,10)",
		duckdb.Decimal{Width: 38, Scale: 10, Value: nines38},
		"9999999999999999999999999999.9999999999", "9999999999999999999999999999.9999999999"},
	{"timestamp", "TIMESTAMP", time.Date(2025, 1, 31, 23, 0, 0, 0, time.UTC), "2025-01-31 23:00:00", `"2025-01-31 23:00:00"`},
	{"timestamp fraction", "TIMESTAMP", time.Date(2025, 1, 31, 23, 0, 0, 500000000, time.UTC), "2025-01-31 23:00:00.5", `"2025-01-31 23:00:00.5"`},
	{"timestamp micros", "TIMESTAMP", time.Date(2025, 1, 31, 23, 0, 0, 123000, time.UTC), "2025-01-31 23:00:00.000123", `"2025-01-31 23:00:00.000123"`},
	{"timestamp_ns", "TIMESTAMP_NS", time.Date(2025, 1, 31, 23, 0, 0, 123456789, time.UTC), "2025-01-31 23:00:00.123456789", `"2025-01-31 23:00:00.123456789"`},
	{"timestamp BC", "TIMESTAMP", time.Date(-44, 3, 15, 10, 0, 0, 0, time.UTC), "0045-03-15 (BC) 10:00:00", `"0045-03-15 (BC) 10:00:00"`},
	{"timestamp infinity", "TIMESTAMP", time.UnixMicro(math.MaxInt64).UTC(), "infinity", `"infinity"`},
	{"timestamptz keeps RFC 3339", "TIMESTAMPTZ", time.Date(2025, 1, 31, 23, 0, 0, 0, time.UTC), "2025-01-31T23:00:00Z", `"2025-01-31T23:00:00Z"`},
	{"timestamptz fraction", "TIMESTAMPTZ", time.Date(2025, 1, 31, 23, 0, 0, 250000000, time.UTC), "2025-01-31T23:00:00.25Z", `"2025-01-31T23:00:00.25Z"`},
	{"date", "DATE", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), "2025-01-01", `"2025-01-01"`},
	{"date BC", "DATE", time.Date(-44, 3, 15, 0, 0, 0, 0, time.UTC), "0045-03-15 (BC)", `"0045-03-15 (BC)"`},
	{"date -infinity", "DATE", time.Date(-5877641, 6, 24, 0, 0, 0, 0, time.UTC), "-infinity", `"-infinity"`},
	{"time", "TIME", time.Date(1, 1, 1, 13, 45, 0, 0, time.UTC), "13:45:00", `"13:45:00"`},
	{"time fraction", "TIME", time.Date(1, 1, 1, 13, 45, 0, 250000000, time.UTC), "13:45:00.25", `"13:45:00.25"`},
	{"timetz", "TIMETZ", time.Date(1, 1, 1, 13, 45, 0, 0, time.FixedZone("", 2*3600)), "13:45:00+02", `"13:45:00+02"`},
	{"timetz minutes", "TIMETZ", time.Date(1, 1, 1, 13, 45, 0, 0, time.FixedZone("", -(5*3600+30*60))), "13:45:00-05:30", `"13:45:00-05:30"`},
	{"interval hours", "INTERVAL", duckdb.Interval{Micros: 4 * 3600e6}, "04:00:00", `"04:00:00"`},
	{"interval day", "INTERVAL", duckdb.Interval{Days: 1, Micros: 2 * 3600e6}, "1 day 02:00:00", `"1 day 02:00:00"`},
	{"interval month", "INTERVAL", duckdb.Interval{Months: 1}, "1 month", `"1 month"`},
	{"interval all parts", "INTERVAL", duckdb.Interval{Months: 14, Days: 3, Micros: 100*3600e6 + 1.5e6}, "1 year 2 months 3 days 100:00:01.5", `"1 year 2 months 3 days 100:00:01.5"`},
	{"interval negative", "INTERVAL", duckdb.Interval{Months: -13, Days: -1, Micros: -1}, "-1 year -1 month -1 day -00:00:00.000001", `"-1 year -1 month -1 day -00:00:00.000001"`},
	{"interval zero", "INTERVAL", duckdb.Interval{}, "00:00:00", `"00:00:00"`},
	{"map", "MAP(VARCHAR, BIGINT)", orderedMap("billing", int64(2), "cpu", int64(1), "node", int64(1)),
		"{billing=2, cpu=1, node=1}", `{"billing": 2, "cpu": 1, "node": 1}`},
	{"map quoted key, NULL value", "MAP(VARCHAR, VARCHAR)", orderedMap("a=b", "c,d", "e", nil),
		"{'a=b'='c,d', e=NULL}", `{"a=b": "c,d", "e": null}`},
	{"map integer keys", "MAP(INTEGER, DATE)", orderedMap(int32(1), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)),
		"{1=2025-01-01}", `{"1": "2025-01-01"}`},
	{"list", "INTEGER[]", []any{int32(1), int32(2)}, "[1, 2]", "[1, 2]"},
	{"empty list", "INTEGER[]", []any{}, "[]", "[]"},
	{"array", "INTEGER[2]", []any{int32(1), int32(2)}, "[1, 2]", "[1, 2]"},
	{"list of strings", "VARCHAR[]", []any{"a", "b,c", nil, "", " x", "null", "it's", `a\b`, "x y"},
		`[a, 'b,c', NULL, '', ' x', 'null', 'it\'s', a\b, x y]`, `["a", "b,c", null, "", " x", "null", "it's", "a\\b", "x y"]`},
	{"list of timestamps", "TIMESTAMP[]", []any{time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), nil},
		"['2025-01-01 00:00:00', NULL]", `["2025-01-01 00:00:00", null]`},
	{"list of decimals", "DECIMAL(5,2)[]", []any{dec(150, 2)}, "[1.50]", "[1.50]"},
	{"nested list", "INTEGER[][]", []any{[]any{int32(1)}, []any{int32(2), int32(3)}}, "[[1], [2, 3]]", "[[1], [2, 3]]"},
	{"struct", "STRUCT(\"a\" INTEGER)", map[string]any{"a": int32(1)}, "{'a': 1}", `{"a": 1}`},
	{"struct in field order", `STRUCT("z" VARCHAR, "a" DECIMAL(11,1)[], "it's" INTEGER, "q""x" BOOLEAN)`,
		map[string]any{"a": []any{dec(15, 1), dec(20, 1)}, "z": "x y", "it's": nil, `q"x`: true},
		`{'z': x y, 'a': [1.5, 2.0], 'it\'s': NULL, 'q"x': true}`, `{"z": "x y", "a": [1.5, 2.0], "it's": null, "q\"x": true}`},
	{"struct of struct", `STRUCT("x" STRUCT("y" VARCHAR))`, map[string]any{"x": map[string]any{"y": "q"}}, "{'x': {'y': q}}", `{"x": {"y": "q"}}`},
	{"union", `UNION("num" INTEGER, "s" VARCHAR)`, duckdb.Union{Tag: "s", Value: "a,b"}, "a,b", `"a,b"`},
	{"blob", "BLOB", []byte{0xaa, 'A', 0, 0x7f, ' ', '~', '\'', '"', '\\'}, `\xAAA\x00\x7F ~\x27\x22\x5C`, `"\\xAAA\\x00\\x7F ~\\x27\\x22\\x5C"`},
	{"uuid", "UUID", []byte{0x5c, 0x1d, 0x2f, 0x7a, 0x11, 0x11, 0x42, 0x22, 0x83, 0x33, 0x94, 0x44, 0x55, 0x55, 0x66, 0x66},
		"5c1d2f7a-1111-4222-8333-944455556666", `"5c1d2f7a-1111-4222-8333-944455556666"`},
	{"hugeint", "HUGEINT", new(big.Int).Lsh(big.NewInt(1), 100), "1267650600228229401496703205376", "1267650600228229401496703205376"},
	{"double", "DOUBLE", 0.5, "0.5", "0.5"},
	{"double inf", "DOUBLE", math.Inf(1), "inf", `"inf"`},
	{"float", "FLOAT", float32(0.1), "0.1", "0.1"},
	// Text: DuckDB's (x)::VARCHAR, as DuckDB 1.5.5 printed it: positional
	// with a decimal for exponents -4..15, scientific otherwise. JSON: the
	// shortest %g form, scientific from exponent 6 (any JSON number will do).
	{"double integral", "DOUBLE", 10.0, "10.0", "10"},
	{"double negative zero", "DOUBLE", math.Copysign(0, -1), "-0.0", "-0"},
	{"double 1e15", "DOUBLE", 1e15, "1000000000000000.0", "1e+15"},
	{"double 1e16", "DOUBLE", 1e16, "1e+16", "1e+16"},
	{"double large", "DOUBLE", 123456789012345678.0, "1.2345678901234568e+17", "1.2345678901234568e+17"},
	{"double 1e-4", "DOUBLE", 0.0001, "0.0001", "0.0001"},
	{"double small", "DOUBLE", 0.00001234, "1.234e-05", "1.234e-05"},
	{"float integral", "FLOAT", float32(123456789), "123456790.0", "1.2345679e+08"},
	{"float 1e16", "FLOAT", float32(1e16), "1e+16", "1e+16"},
	{"boolean", "BOOLEAN", false, "false", "false"},
	{"varchar", "VARCHAR", `he said "<hi>"`, `he said "<hi>"`, `"he said \"<hi>\""`},
	{"json", "JSON", map[string]any{"a": []any{1.0, 2.0}}, `{"a":[1,2]}`, `{"a":[1,2]}`},
	{"bit", "BIT", "0101", "0101", `"0101"`},
}

func TestTextValue(t *testing.T) {
	t.Parallel()
	for _, c := range formatCases {
		if got := textValue(parseColType(c.typ), c.v, false); got != c.text {
			t.Errorf("%s: textValue(%s, %#v) = %s, want %s", c.name, c.typ, c.v, got, c.text)
		}
	}
}

func TestJSONValue(t *testing.T) {
	t.Parallel()
	for _, c := range formatCases {
		if got := jsonValue(parseColType(c.typ), c.v); got != c.json {
			t.Errorf("%s: jsonValue(%s, %#v) = %s, want %s", c.name, c.typ, c.v, got, c.json)
		}
	}
}

func TestParseColType(t *testing.T) {
	t.Parallel()
	ty := parseColType(`MAP(VARCHAR, STRUCT("a b" DECIMAL(10,3)[2], "c""d" TIMESTAMP)[])`)
	if ty.name != "MAP" || ty.key.name != "VARCHAR" || ty.val.name != "LIST" {
		t.Fatalf("map = %+v", ty)
	}
	st := ty.val.elem
	if st.name != "STRUCT" || len(st.fields) != 2 || st.fields[0].name != "a b" || st.fields[1].name != `c"d` ||
		st.fields[0].typ.name != "ARRAY" || st.fields[0].typ.elem.name != "DECIMAL" || st.fields[1].typ.name != "TIMESTAMP" {
		t.Errorf("struct = %+v", st)
	}
	for _, bad := range []string{"", "STRUCT(", "MAP(INTEGER)", `STRUCT("a INTEGER)`, "INTEGER[", "INTEGER junk"} {
		if got := parseColType(bad); got != unknownType {
			t.Errorf("parseColType(%q) = %+v, want unknown", bad, got)
		}
	}
}

// A value without a type (or with a type name that does not parse) still
// prints by its Go type; times as RFC 3339 UTC.
func TestTextValueUntyped(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    any
		want string
	}{
		{map[string]any{"b": int64(2), "a": int64(1)}, "{'a': 1, 'b': 2}"},
		{time.Date(2025, 1, 1, 1, 0, 0, 0, time.FixedZone("", 3600)), "2025-01-01T00:00:00Z"},
		{[]any{"x", dec(5, 1)}, "[x, 0.5]"},
	} {
		if got := textValue(unknownType, c.v, false); got != c.want {
			t.Errorf("textValue(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
}

func TestWriteResultNull(t *testing.T) {
	t.Parallel()
	r := &Result{Columns: []string{"user", "n"}, Types: []string{"VARCHAR", "DECIMAL(4,1)"},
		Rows: [][]any{{"", dec(5, 1)}, {nil, nil}}}
	for format, want := range map[string]string{
		FormatTable: "user  n\n      0.5\nNULL  NULL\n",
		FormatCSV:   "user,n\n\"\",0.5\n,\n",
		FormatJSON:  "[\n  {\"user\": \"\", \"n\": 0.5},\n  {\"user\": null, \"n\": null}\n]\n",
	} {
		var out bytes.Buffer
		if err := WriteResult(&out, r, format); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("%s = %q, want %q", format, out.String(), want)
		}
	}
}

// TestWriteResultDuckDB runs one value of each type through DuckDB and
// checks the text against DuckDB's own VARCHAR cast of the same value (an
// independent rendering), and the JSON against hand-written forms.
func TestWriteResultDuckDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := OpenDuckDB(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct{ expr, json string }{
		{"0.5 * 1698", "849.0"},
		{"123.456::DECIMAL(10,3)", "123.456"},
		{"(-0.05)::DECIMAL(4,2)", "-0.05"},
		{"99999999999999999999999999999999999999::DECIMAL(38,0)", "99999999999999999999999999999999999999"},
		{"TIMESTAMP '2025-01-31 23:00:00'", `"2025-01-31 23:00:00"`},
		{"TIMESTAMP '2025-01-31 23:00:00.000123'", `"2025-01-31 23:00:00.000123"`},
		{"TIMESTAMP_NS '2025-01-31 23:00:00.123456789'", `"2025-01-31 23:00:00.123456789"`},
		{"TIMESTAMP_MS '2025-01-31 23:00:00.12'", `"2025-01-31 23:00:00.12"`},
		{"TIMESTAMP_S '2025-01-31 23:00:00'", `"2025-01-31 23:00:00"`},
		{"TIMESTAMP '-0044-03-15 10:00:00'", `"0045-03-15 (BC) 10:00:00"`},
		{"'infinity'::TIMESTAMP", `"infinity"`},
		{"DATE '2025-01-01'", `"2025-01-01"`},
		{"'-infinity'::DATE", `"-infinity"`},
		{"TIME '13:45:00'", `"13:45:00"`},
		{"TIMETZ '13:45:00+02:30'", `"13:45:00+02:30"`},
		{"INTERVAL 4 HOUR", `"04:00:00"`},
		{"INTERVAL '1 day 2 hours'", `"1 day 02:00:00"`},
		{"INTERVAL 1 MONTH", `"1 month"`},
		{"INTERVAL '-13 months -1 day 2 hours'", `"-1 year -1 month -1 day 02:00:00"`},
		{"INTERVAL 0 SECOND", `"00:00:00"`},
		{"map {'billing': 2, 'cpu': 1, 'node': 1}", `{"billing": 2, "cpu": 1, "node": 1}`},
		{"map {'a=b': 'c,d', 'e': NULL}", `{"a=b": "c,d", "e": null}`},
		{"[1, 2]", "[1, 2]"},
		{"[1, 2]::INTEGER[2]", "[1, 2]"},
		{"['a', 'b,c', NULL, '', ' x', 'null', 'it''s', 'a\\b']", `["a", "b,c", null, "", " x", "null", "it's", "a\\b"]`},
		{"[TIMESTAMP '2025-01-01', NULL]", `["2025-01-01 00:00:00", null]`},
		{"[INTERVAL 1 HOUR]", `["01:00:00"]`},
		{"{'z': 'x y', 'a': [1.5, 2], 'm': map {1: DATE '2025-01-01'}}", `{"z": "x y", "a": [1.5, 2.0], "m": {"1": "2025-01-01"}}`},
		{`struct_pack("it's" := 1, "q""x" := 2)`, `{"it's": 1, "q\"x": 2}`},
		{"union_value(s := 'a,b')", `"a,b"`},
		{"'\\xAA\\x41\\x00\\x27\\x22\\x5C'::BLOB", `"\\xAAA\\x00\\x27\\x22\\x5C"`},
		{"'5c1d2f7a-1111-4222-8333-944455556666'::UUID", `"5c1d2f7a-1111-4222-8333-944455556666"`},
		{"170141183460469231731687303715884105727::HUGEINT", "170141183460469231731687303715884105727"},
		{"'0101'::BIT", `"0101"`},
		{"'x'::ENUM('x', 'y')", `"x"`},
		{"true", "true"},
	} {
		res, err := d.Query(ctx, "SELECT "+c.expr+" AS v, ("+c.expr+")::VARCHAR AS s")
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		typ := parseColType(res.Types[0])
		want, ok := res.Rows[0][1].(string)
		if !ok {
			t.Errorf("%s: DuckDB's text = %#v", c.expr, res.Rows[0][1])
			continue
		}
		if got := textValue(typ, res.Rows[0][0], false); got != want {
			t.Errorf("%s (%s): text %s, DuckDB prints %s", c.expr, res.Types[0], got, want)
		}
		if got := jsonValue(typ, res.Rows[0][0]); got != c.json {
			t.Errorf("%s (%s): json %s, want %s", c.expr, res.Types[0], got, c.json)
		}
	}
	// TIMESTAMPTZ keeps RFC 3339 with its Z (DuckDB would print the
	// session's zone, which depends on the machine).
	res, err := d.Query(ctx, "SELECT TIMESTAMPTZ '2025-01-31 23:00:00+00' AS v, NULL AS n")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteResult(&out, res, FormatTable); err != nil {
		t.Fatal(err)
	}
	if want := "v                     n\n2025-01-31T23:00:00Z  NULL\n"; out.String() != want {
		t.Errorf("table = %q, want %q", out.String(), want)
	}
}

func TestQuerySeveralStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := OpenDuckDB(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, q := range []string{"SELECT 1; SELECT 2", "SET VARIABLE x = 1; SELECT 2;"} {
		if _, err := d.Query(ctx, q); !errors.Is(err, errSeveralStatements) {
			t.Errorf("Query(%q): err = %v, want %v", q, err, errSeveralStatements)
		}
	}
	// One statement, with a trailing semicolon or one inside a string.
	for q, want := range map[string]any{"SELECT 1 AS a;\n": int32(1), "SELECT 'a;b' AS a ;": "a;b"} {
		res, err := d.Query(ctx, q)
		if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != want {
			t.Errorf("Query(%q) = %+v, %v; want %v", q, res, err, want)
		}
	}
	// A single statement with an error keeps DuckDB's message.
	if _, err := d.Query(ctx, "SELECT * FROM nowhere; "); err == nil || errors.Is(err, errSeveralStatements) {
		t.Errorf("bad query: err = %v", err)
	}
}
