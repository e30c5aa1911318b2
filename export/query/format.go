package query

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// This file renders query values the way DuckDB prints them (its VARCHAR
// cast): DECIMAL with all its scale digits, TIMESTAMP without a zone,
// INTERVAL as "1 day 02:00:00", LIST [1, 2], STRUCT {'a': 1}, MAP {k=v}.
// The driver returns a time.Time for every date and time type and a []byte
// for BLOB and UUID, so the column's type name (DatabaseTypeName) decides
// how those print; for nested types it also gives the struct field order.

// colType is a DuckDB type parsed from the driver's type name, e.g.
// "STRUCT("a" INTEGER, "b" DECIMAL(10,3)[])".
type colType struct {
	// name is the base name: INTEGER, DECIMAL, TIMESTAMPTZ, ...; LIST and
	// ARRAY for "T[]" and "T[n]"; STRUCT, MAP, UNION; "" when unknown.
	name   string
	elem   *colType   // LIST, ARRAY
	key    *colType   // MAP
	val    *colType   // MAP
	fields []colField // STRUCT, UNION: in declaration order
}

// colField is a STRUCT field or a UNION member.
type colField struct {
	name string
	typ  *colType
}

// unknownType is used when a type name is missing or does not parse: the
// value's Go type then decides how it prints.
var unknownType = &colType{}

// parseColType parses a type name as the driver spells it; a name it does
// not understand gives unknownType.
func parseColType(s string) *colType {
	p := typeParser{s: s}
	t := p.parse()
	if p.bad || p.i != len(s) {
		return unknownType
	}
	return t
}

type typeParser struct {
	s   string
	i   int
	bad bool
}

func (p *typeParser) accept(tok string) bool {
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *typeParser) expect(tok string) {
	if !p.accept(tok) {
		p.bad = true
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *typeParser) ident() string {
	start := p.i
	for p.i < len(p.s) && isIdentByte(p.s[p.i]) {
		p.i++
	}
	if p.i == start {
		p.bad = true
	}
	return p.s[start:p.i]
}

// fieldName reads a field name: "quoted" with "" for a quote, or bare.
func (p *typeParser) fieldName() string {
	if !p.accept(`"`) {
		return p.ident()
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		if c != '"' {
			b.WriteByte(c)
			continue
		}
		if !p.accept(`"`) {
			return b.String()
		}
		b.WriteByte('"')
	}
	p.bad = true
	return b.String()
}

func (p *typeParser) parse() *colType {
	if p.bad {
		return unknownType
	}
	t := &colType{name: p.ident()}
	if p.accept("(") {
		switch t.name {
		case "STRUCT", "UNION":
			for !p.bad {
				name := p.fieldName()
				p.expect(" ")
				t.fields = append(t.fields, colField{name: name, typ: p.parse()})
				if !p.accept(", ") {
					break
				}
			}
		case "MAP":
			t.key = p.parse()
			p.expect(", ")
			t.val = p.parse()
		default: // DECIMAL(w,s): the value carries its own scale
			for p.i < len(p.s) && p.s[p.i] != ')' {
				p.i++
			}
		}
		p.expect(")")
	}
	for !p.bad && p.accept("[") {
		name := "LIST"
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			name = "ARRAY"
		}
		p.expect("]")
		t = &colType{name: name, elem: t}
	}
	return t
}

// child returns t's element, key or value type, or unknownType.
func child(t *colType) *colType {
	if t == nil {
		return unknownType
	}
	return t
}

// textValue renders v as DuckDB prints it. nested is true inside a LIST,
// STRUCT or MAP, where DuckDB quotes a scalar whose text would be
// ambiguous (see quoteNested). NULL is "NULL".
func textValue(t *colType, v any, nested bool) string {
	var b strings.Builder
	writeText(&b, t, v, nested)
	return b.String()
}

func writeText(b *strings.Builder, t *colType, v any, nested bool) {
	switch x := v.(type) {
	case nil:
		b.WriteString("NULL")
		return
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeText(b, child(t.elem), e, true)
		}
		b.WriteByte(']')
		return
	case map[string]any:
		if t.name == "JSON" || t.name == "VARCHAR" {
			break // a parsed JSON value
		}
		b.WriteByte('{')
		for i, f := range structFields(t, x) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteAlways(f.name))
			b.WriteString(": ")
			writeText(b, child(f.typ), x[f.name], true)
		}
		b.WriteByte('}')
		return
	case duckdb.OrderedMap:
		keys, vals := x.Keys(), x.Values()
		b.WriteByte('{')
		for i := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeText(b, child(t.key), keys[i], true)
			b.WriteByte('=')
			writeText(b, child(t.val), vals[i], true)
		}
		b.WriteByte('}')
		return
	case duckdb.Union:
		// DuckDB prints a union as its member, unquoted even when nested.
		writeText(b, unionMember(t, x.Tag), x.Value, false)
		return
	}
	s := scalarText(t, v)
	if nested {
		s = quoteNested(s)
	}
	b.WriteString(s)
}

// structFields gives a STRUCT's fields in declaration order; without a
// type (or if the type does not match), the value's keys sorted.
func structFields(t *colType, m map[string]any) []colField {
	if t.name == "STRUCT" && len(t.fields) == len(m) {
		return t.fields
	}
	fs := make([]colField, 0, len(m))
	for k := range m {
		fs = append(fs, colField{name: k, typ: unknownType})
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].name < fs[j].name })
	return fs
}

func unionMember(t *colType, tag string) *colType {
	for _, f := range t.fields {
		if f.name == tag {
			return child(f.typ)
		}
	}
	return unknownType
}

// scalarText renders a value that is not a LIST, STRUCT, MAP or UNION.
func scalarText(t *colType, v any) string {
	if t.name == "JSON" {
		if s, err := marshalJSON(v); err == nil {
			return s
		}
	}
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return formatFloat(x, 64)
	case float32:
		return formatFloat(float64(x), 32)
	case *big.Int:
		return x.String()
	case duckdb.Decimal:
		return decimalText(x)
	case duckdb.Interval:
		return intervalText(x)
	case time.Time:
		return timeText(t.name, x)
	case []byte:
		if t.name == "UUID" && len(x) == 16 {
			return uuidText(x)
		}
		return blobText(x)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x)
	case fmt.Stringer: // duckdb.Bit inside a nested value
		return x.String()
	}
	// A JSON column's parsed value, or anything else: compact JSON.
	if s, err := marshalJSON(v); err == nil {
		return s
	}
	return fmt.Sprint(v)
}

// formatFloat writes a float as DuckDB casts it to VARCHAR (bits 32 or
// 64): the shortest digits that read back to the same value, in positional
// form with at least one decimal (10.0, 0.0001, -0.0) when the decimal
// exponent is in [-4, 16), otherwise in scientific form with a signed
// two-digit-or-more exponent (1e+16, 1.234e-05); and DuckDB's spellings of
// the non-finite values.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	sci := strconv.FormatFloat(f, 'e', -1, bits) // d[.ddd]e±XX
	mant, exps, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(exps)
	if exp < -4 || exp >= 16 {
		return mant + "e" + exps
	}
	s := strconv.FormatFloat(f, 'f', -1, bits)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// decimalText writes the unscaled Value with the point Scale digits from
// the right, keeping every scale digit as DuckDB does (849.0, 0.05).
func decimalText(d duckdb.Decimal) string {
	if d.Value == nil {
		return "NULL"
	}
	digits := new(big.Int).Abs(d.Value).String()
	scale := int(d.Scale)
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if d.Value.Sign() < 0 {
		return "-" + digits
	}
	return digits
}

// intervalText writes DuckDB's interval form: "1 year 2 months 3 days
// 04:05:06.5"; parts that are zero are left out, all zero is "00:00:00".
func intervalText(iv duckdb.Interval) string {
	var parts []string
	unit := func(n int64, name string) {
		if n == 0 {
			return
		}
		s := strconv.FormatInt(n, 10) + " " + name
		if n != 1 && n != -1 {
			s += "s"
		}
		parts = append(parts, s)
	}
	unit(int64(iv.Months/12), "year")
	unit(int64(iv.Months%12), "month")
	unit(int64(iv.Days), "day")
	if iv.Micros != 0 || len(parts) == 0 {
		sign, us := "", iv.Micros
		if us < 0 {
			sign = "-"
		}
		// Work on the magnitude as uint64: -MinInt64 does not fit an int64.
		mag := uint64(us)
		if us < 0 {
			mag = -mag
		}
		sec := mag / 1e6
		parts = append(parts, fmt.Sprintf("%s%02d:%02d:%02d%s", sign, sec/3600, sec/60%60, sec%60,
			fraction(int(mag%1e6)*1000)))
	}
	return strings.Join(parts, " ")
}

// fraction is ".ddd" for ns nanoseconds with trailing zeros cut, "" for 0.
func fraction(ns int) string {
	if ns == 0 {
		return ""
	}
	return "." + strings.TrimRight(fmt.Sprintf("%09d", ns), "0")
}

// The driver's time for DuckDB's infinite timestamps and dates.
var (
	infTimestamp    = time.UnixMicro(math.MaxInt64).UTC()
	negInfTimestamp = time.UnixMicro(-math.MaxInt64).UTC()
	infDate         = time.Date(5881580, time.July, 11, 0, 0, 0, 0, time.UTC)
	negInfDate      = time.Date(-5877641, time.June, 24, 0, 0, 0, 0, time.UTC)
)

// timeText writes a date or time value as DuckDB does for its type: DATE
// 2025-01-01, TIME 13:45:00, TIMETZ 13:45:00+02, TIMESTAMP 2025-01-31
// 23:00:00 (fractions only when non-zero). TIMESTAMPTZ (the history's
// timestamps) and unknown types are RFC 3339 in UTC, with an explicit Z.
func timeText(typ string, t time.Time) string {
	switch {
	case t.Equal(infTimestamp) || t.Equal(infDate):
		return "infinity"
	case t.Equal(negInfTimestamp) || t.Equal(negInfDate):
		return "-infinity"
	}
	switch typ {
	case "DATE":
		return dateText(t)
	case "TIME":
		return clockText(t)
	case "TIMETZ":
		_, off := t.Zone()
		sign := "+"
		if off < 0 {
			sign, off = "-", -off
		}
		s := clockText(t) + sign + fmt.Sprintf("%02d", off/3600)
		if off%3600 != 0 {
			s += fmt.Sprintf(":%02d", off/60%60)
		}
		if off%60 != 0 {
			s += fmt.Sprintf(":%02d", off%60)
		}
		return s
	case "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS":
		return dateText(t) + " " + clockText(t)
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// dateText writes yyyy-mm-dd; years before 1 are "(BC)" years as DuckDB
// prints them (Go's year 0 is 1 BC).
func dateText(t time.Time) string {
	y, m, d := t.Date()
	if y <= 0 {
		return fmt.Sprintf("%04d-%02d-%02d (BC)", 1-y, int(m), d)
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, int(m), d)
}

func clockText(t time.Time) string {
	return fmt.Sprintf("%02d:%02d:%02d%s", t.Hour(), t.Minute(), t.Second(), fraction(t.Nanosecond()))
}

func uuidText(u []byte) string {
	h := hex.EncodeToString(u)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// blobText writes a BLOB as DuckDB does: printable ASCII as is, other
// bytes and ' " \ as \xHH.
func blobText(p []byte) string {
	var b strings.Builder
	for _, c := range p {
		if c >= 0x20 && c <= 0x7e && c != '\'' && c != '"' && c != '\\' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, `\x%02X`, c)
	}
	return b.String()
}

// quoteNested quotes a scalar inside a nested value when DuckDB does: it is
// empty, spells NULL, starts or ends with white space, or holds one of
// " ' ( ) , : = [ ] { }.
func quoteNested(s string) string {
	if s == "" || strings.EqualFold(s, "NULL") || isSpace(s[0]) || isSpace(s[len(s)-1]) ||
		strings.ContainsAny(s, `"'(),:=[]{}`) {
		return quoteAlways(s)
	}
	return s
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// quoteAlways wraps s in single quotes with \ and ' escaped by a backslash,
// as DuckDB writes struct field names and quoted nested scalars.
func quoteAlways(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, `'`, `\'`) + "'"
}

// jsonValue renders v as JSON: numbers (DECIMAL with its exact digits) and
// booleans as such, LIST as an array, STRUCT and MAP as objects (keys in
// DuckDB's order; a MAP key as its text), a JSON column as itself, and
// every other value as a string of its DuckDB text (dates, intervals,
// BLOBs). Non-finite floats are the strings "inf", "-inf" and "nan".
func jsonValue(t *colType, v any) string {
	var b strings.Builder
	writeJSON(&b, t, v)
	return b.String()
}

func writeJSON(b *strings.Builder, t *colType, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		fmt.Fprint(b, x)
	case *big.Int:
		b.WriteString(x.String())
	case duckdb.Decimal:
		b.WriteString(decimalText(x))
	case float64:
		writeJSONFloat(b, x, 64)
	case float32:
		writeJSONFloat(b, float64(x), 32)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSON(b, child(t.elem), e)
		}
		b.WriteByte(']')
	case map[string]any:
		if t.name == "JSON" || t.name == "VARCHAR" {
			writeJSONRaw(b, v)
			return
		}
		b.WriteByte('{')
		for i, f := range structFields(t, x) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(jsonString(f.name))
			b.WriteString(": ")
			writeJSON(b, child(f.typ), x[f.name])
		}
		b.WriteByte('}')
	case duckdb.OrderedMap:
		keys, vals := x.Keys(), x.Values()
		b.WriteByte('{')
		for i := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(jsonString(textValue(child(t.key), keys[i], false)))
			b.WriteString(": ")
			writeJSON(b, child(t.val), vals[i])
		}
		b.WriteByte('}')
	case duckdb.Union:
		writeJSON(b, unionMember(t, x.Tag), x.Value)
	case string:
		if t.name == "JSON" {
			writeJSONRaw(b, v)
			return
		}
		b.WriteString(jsonString(x))
	default:
		if t.name == "JSON" {
			writeJSONRaw(b, v)
			return
		}
		b.WriteString(jsonString(scalarText(t, v)))
	}
}

func writeJSONFloat(b *strings.Builder, f float64, bits int) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		b.WriteString(strconv.Quote(formatFloat(f, bits)))
		return
	}
	b.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
}

// writeJSONRaw writes a JSON column's value (parsed by the driver) back.
func writeJSONRaw(b *strings.Builder, v any) {
	s, err := marshalJSON(v)
	if err != nil {
		s = jsonString(fmt.Sprint(v))
	}
	b.WriteString(s)
}

// marshalJSON is json.Marshal without HTML escaping (< stays <), with
// DEL and the C1 controls (U+0080–U+009F) escaped as \u007f … \u009f
// like the C0 controls json escapes itself: the JSON stays exact and no
// control character of a value reaches a terminal (docs/bad-input.md,
// "Hostile names").
func marshalJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return escapeJSONControls(strings.TrimSuffix(buf.String(), "\n")), nil
}

// escapeJSONControls escapes DEL and the C1 controls of encoded JSON:
// outside strings JSON holds only ASCII punctuation, digits and letters,
// so every one of them is inside a string, where \u00HH is the same
// character.
func escapeJSONControls(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r >= 0x7f && r <= 0x9f }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 0x7f && r <= 0x9f {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	q, err := marshalJSON(s)
	if err != nil { // a string always encodes
		panic(err)
	}
	return q
}
