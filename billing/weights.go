package billing

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/fairledger/fairledger/internal/treslist"
	"github.com/fairledger/fairledger/schemas"
)

// Sentinel causes of a TRESBillingWeights item error; test with errors.Is.
var (
	// ErrSyntax: the item is not TYPE[/NAME]=NUMBER[UNIT].
	ErrSyntax = errors.New("want TYPE[/NAME]=NUMBER[K|M|G|T|P]")
	// ErrNumber: the weight is no number strtod reads (and no unit
	// either), one slurmctld refuses (strtod's ERANGE: it overflows or
	// underflows), or an infinity or NaN, which slurmctld takes but no
	// billing can be computed from.
	ErrNumber = errors.New("weight is not a finite number")
	// ErrUnit: the character after the number is not a unit suffix.
	ErrUnit = errors.New("unit suffix must be one of K, M, G, T, P")
	// ErrUnknownType: the TRES type is not one Slurm knows, or it lacks (or
	// has a superfluous) /NAME.
	ErrUnknownType = errors.New("unknown TRES")
	// ErrEnergy: an energy weight. Slurm multiplies the job's energy count,
	// which is the NO_VAL64 sentinel, so such a weight produces garbage in
	// Slurm itself (assoc_mgr_tres_weighted); fairledger rejects it.
	ErrEnergy = errors.New("energy cannot be weighted: Slurm would multiply the NO_VAL64 energy count")
	// ErrNotTracked: the TRES is neither always tracked nor listed in
	// AccountingStorageTRES (slurmctld refuses to start on this).
	ErrNotTracked = errors.New("TRES is not tracked (add it to AccountingStorageTRES)")
)

// AlwaysTracked returns the TRES Slurm tracks whatever AccountingStorageTRES
// says (tres.shtml): cpu, mem, energy, node, billing, fs/disk, vmem, pages
// (schemas.StaticTRES).
func AlwaysTracked() []string { return schemas.StaticTRES() }

// Weight is one TRESBillingWeights entry as Slurm applies it.
type Weight struct {
	// TRES is the canonical (lower-case) TRES name: "cpu", "mem",
	// "gres/gpu:a100", "license/lic1", "bb/datawarp".
	TRES string
	// PerUnit is the weight per base unit of the TRES after the unit suffix
	// was applied: per MiB for mem and bb/*, per count for everything else.
	PerUnit float64
}

// Weights is a parsed TRESBillingWeights string: at most one entry per TRES,
// in summation order (see TRESLess). The billing TRES never appears (Slurm
// ignores a weight on it) and neither does energy (rejected).
type Weights []Weight

// Get returns the weight of a TRES (any case) and whether it has one.
func (w Weights) Get(tres string) (float64, bool) {
	c := schemas.CanonicalTRES(tres)
	for _, x := range w {
		if x.TRES == c {
			return x.PerUnit, true
		}
	}
	return 0, false
}

// String formats the weights per base unit without suffixes, in a form
// ParseWeights reads back to the same values: "cpu=1,mem=0.000244140625"
// (a subnormal weight in hexadecimal, "cpu=0x1p-1074").
func (w Weights) String() string {
	return string(treslist.Append(nil, len(w), func(i int) string { return w[i].TRES },
		func(b []byte, i int) []byte {
			if v := w[i].PerUnit; v != 0 && math.Abs(v) < 0x1p-1022 {
				// A subnormal's shortest decimal is not exact, and strtod
				// refuses an inexact subnormal: hexadecimal is.
				return strconv.AppendFloat(b, v, 'x', -1, 64)
			}
			return strconv.AppendFloat(b, w[i].PerUnit, 'g', -1, 64)
		}))
}

// TRESLess orders canonical TRES names the way Slurm sums them: the order
// of slurmctld's TRES array, schemas.CompareTRES (cpu, mem, energy, node,
// billing, fs/disk, vmem, pages, then the other TRES by type, then name).
// assoc_mgr_tres_weighted adds the weighted counts in that array order; the
// order only matters where floating-point rounding moves a sum across an
// integer (the truncated billing=).
func TRESLess(a, b string) bool { return schemas.CompareTRES(a, b) < 0 }

// ItemError is a problem with one comma-separated TRESBillingWeights item.
type ItemError struct {
	// Item is the item as written, e.g. "Mem=0.25X".
	Item string
	// Err is the cause; it wraps one of the Err* sentinels.
	Err error
}

// Error names the item and the cause.
func (e *ItemError) Error() string { return fmt.Sprintf("item %q: %v", e.Item, e.Err) }

// Unwrap returns the cause.
func (e *ItemError) Unwrap() error { return e.Err }

// WeightsError reports every bad item of one TRESBillingWeights string.
type WeightsError struct {
	// Input is the whole string as given.
	Input string
	// Items are the problems, in the order the items appear.
	Items []*ItemError
}

// Error names the string and lists each bad item.
func (e *WeightsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "TRESBillingWeights=%q: ", e.Input)
	for i, it := range e.Items {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(it.Error())
	}
	return b.String()
}

// Unwrap returns the item errors, so errors.Is and errors.As see each one.
func (e *WeightsError) Unwrap() []error {
	out := make([]error, len(e.Items))
	for i, it := range e.Items {
		out[i] = it
	}
	return out
}

// ParseWeights parses a TRESBillingWeights string the way Slurm's
// slurm_get_tres_weight_array and _tres_weight_item do
// (src/common/slurm_protocol_api.c):
//
//   - comma-separated TYPE[/NAME]=NUMBER[UNIT] items; empty items are
//     skipped (Slurm tokenises with strtok); type and name are
//     case-insensitive and split at the first '/', so GRES/gpu:A100 is the
//     typed GRES gres/gpu:a100;
//   - NUMBER is what strtod reads (parseWeightValue): decimal or
//     hexadecimal, sign, fraction and exponent allowed, negative weights
//     included; a number strtod reports out of range is refused as
//     slurmctld refuses it, and so are infinities and NaN, which slurmctld
//     takes but which make a job's billing ±inf or NaN; no number before a
//     unit ("Mem=G") is a weight of 0, as in Slurm;
//   - UNIT is the one character after the number, K, M, G, T or P in either
//     case. mem and bb/* are counted in MiB: a suffix larger than M divides
//     the weight by 1024 per step (Mem=0.25G → 0.25/1024 per MiB) and K or M
//     leave it unchanged (Mem=256K → 256 per MiB). Every other TRES is a
//     count: K divides by 1024, M by 1024², … P by 1024⁵ (as slurm.conf's man page specifies;
//     Slurm's get_convert_unit_val computes 1024⁴ and 1024⁵ in a C int,
//     which overflows, so a real slurmctld on x86-64 leaves CPU=1T or
//     CPU=1P undivided). As in Slurm, only the first character after the
//     number is read ("0.25GB" is 0.25G);
//   - a weight on billing is checked and dropped; an energy weight is an
//     error (ErrEnergy); when an item repeats a TRES the last one wins.
//
// tracked lists the AccountingStorageTRES entries; a weighted TRES that is
// neither in it nor in AlwaysTracked is an error. A nil tracked skips that
// check. An empty or all-blank s gives nil Weights.
//
// All bad items are reported together in a *WeightsError.
func ParseWeights(s string, tracked []string) (Weights, error) {
	return parseWeights(s, trackedSet(tracked))
}

// trackedSet returns the canonical tracked TRES, or nil when tracked is nil.
func trackedSet(tracked []string) map[string]bool {
	if tracked == nil {
		return nil
	}
	always := AlwaysTracked()
	set := make(map[string]bool, len(always)+len(tracked))
	for _, t := range always {
		set[t] = true
	}
	for _, t := range tracked {
		set[schemas.CanonicalTRES(t)] = true
	}
	return set
}

func parseWeights(s string, tracked map[string]bool) (Weights, error) {
	var (
		byTRES = map[string]float64{}
		bad    []*ItemError
	)
	for _, raw := range strings.Split(s, ",") {
		item := strings.TrimSpace(raw)
		if item == "" {
			continue
		}
		tres, v, err := parseItem(item, tracked)
		if err != nil {
			bad = append(bad, &ItemError{Item: item, Err: err})
			continue
		}
		if tres == "billing" {
			continue
		}
		byTRES[tres] = v
	}
	if len(bad) > 0 {
		return nil, &WeightsError{Input: s, Items: bad}
	}
	if len(byTRES) == 0 {
		return nil, nil
	}
	w := make(Weights, 0, len(byTRES))
	for t, v := range byTRES {
		w = append(w, Weight{TRES: t, PerUnit: v})
	}
	sort.Slice(w, func(i, j int) bool { return TRESLess(w[i].TRES, w[j].TRES) })
	return w, nil
}

// parseItem parses one non-empty TYPE[/NAME]=NUMBER[UNIT] item.
func parseItem(item string, tracked map[string]bool) (string, float64, error) {
	name, val, ok := strings.Cut(item, "=")
	name, val = strings.TrimSpace(name), strings.TrimSpace(val)
	switch {
	case !ok:
		return "", 0, fmt.Errorf("no '=': %w", ErrSyntax)
	case name == "":
		return "", 0, fmt.Errorf("no TRES before '=': %w", ErrSyntax)
	case val == "":
		return "", 0, fmt.Errorf("no weight after '=': %w", ErrSyntax)
	}
	tres := schemas.CanonicalTRES(name)
	typ, sub, named := strings.Cut(tres, "/")
	needsName, known := tresType(typ)
	switch {
	case !known:
		return "", 0, fmt.Errorf("%w type %q (want cpu, mem, node, billing, vmem, pages, gres/NAME, license/NAME, bb/NAME, fs/NAME or ic/NAME)", ErrUnknownType, typ)
	case needsName && (!named || sub == ""):
		return "", 0, fmt.Errorf("%w %q: %s needs a name, e.g. %s/NAME", ErrUnknownType, tres, typ, typ)
	case !needsName && named:
		return "", 0, fmt.Errorf("%w %q: %s takes no /NAME", ErrUnknownType, tres, typ)
	case typ == "energy":
		return "", 0, ErrEnergy
	case tracked != nil && !tracked[tres]:
		return "", 0, fmt.Errorf("%q: %w", tres, ErrNotTracked)
	}
	v, err := parseWeightValue(val, baseUnit(typ))
	if err != nil {
		return "", 0, err
	}
	return tres, v, nil
}

// tresType reports whether a TRES type needs a /NAME and whether Slurm knows
// the type at all (tres.shtml: BB, Billing, CPU, Energy, FS, GRES, IC,
// License, Mem, Node, Pages, VMem).
func tresType(typ string) (needsName, known bool) {
	switch typ {
	case "cpu", "mem", "energy", "node", "billing", "vmem", "pages":
		return false, true
	case "gres", "license", "bb", "fs", "ic":
		return true, true
	}
	return false, false
}

// Unit indexes as Slurm's get_unit_type numbers them: none, K, M, G, T, P.
const (
	unitNone = 0
	unitMega = 2
)

// baseUnit is slurmdb_get_tres_base_unit: MiB for mem and bb, none otherwise.
func baseUnit(typ string) int {
	if typ == "mem" || typ == "bb" {
		return unitMega
	}
	return unitNone
}

// parseWeightValue reads NUMBER[UNIT…] the way _tres_weight_item does
// with strtod and get_convert_unit_val, and applies the unit relative to
// base.
//
// strtod's number is decimal ("1e-3", "+2", ".5", "5.") or hexadecimal
// ("0x10" is 16, "0x1.8p1" is 3), or an infinity or NaN ("inf",
// "infinity", "nan", "nan(…)", any case). slurmctld refuses a weight
// whose strtod sets ERANGE: one that overflows ("1e999") and one that
// underflows to 0 or to an inexact subnormal ("1e-400", "1e-310"); it
// accepts an infinite or NaN weight, but the billing of a job from it is
// ±inf or NaN (0 × inf is NaN), which no usage can be computed from, so
// ParseWeights refuses those too (ErrNumber). When strtod reads no number
// at all it returns 0 and the first character must still be a unit:
// "Mem=G" is a weight of 0 in Slurm (0/1024), "CPU=abc" an error.
func parseWeightValue(val string, base int) (float64, error) {
	n, kind := scanNumber(val)
	var v float64
	switch kind {
	case numNone:
		if unitIndex(val[0]) == 0 {
			return 0, fmt.Errorf("%w: %q", ErrNumber, val)
		}
	case numInf, numNaN:
		return 0, fmt.Errorf("%w: %q: Slurm reads it, but a job's billing from it is ±inf or NaN, which no usage can be charged with",
			ErrNumber, val[:n])
	default:
		var err error
		if v, err = parseNumber(val[:n], kind); err != nil {
			return 0, err
		}
	}
	if n == len(val) {
		return v, nil
	}
	u := unitIndex(val[n])
	if u == 0 {
		return 0, fmt.Errorf("%w, have %q in %q", ErrUnit, val[n:n+1], val)
	}
	if u > base {
		v /= float64(uint64(1) << (10 * (u - base)))
	}
	return v, nil
}

// unitIndex is get_unit_type: 1 to 5 for K, M, G, T, P in either case, 0
// for any other character.
func unitIndex(c byte) int { return strings.IndexByte("KMGTP", upper(c)) + 1 }

// numKind is the form of the number strtod reads at the start of a string.
type numKind int

const (
	numNone numKind = iota // no number: strtod converts nothing
	numDecimal
	numHex
	numInf
	numNaN
)

// parseNumber converts a decimal or hexadecimal number of scanNumber and
// refuses it where glibc's strtod sets ERANGE: on overflow, and on an
// underflow, a nonzero number whose double is 0 or a subnormal that is not
// exact.
func parseNumber(num string, kind numKind) (float64, error) {
	lit := num
	if kind == numHex && !strings.ContainsAny(num, "pP") {
		lit += "p0" // Go wants the binary exponent strtod leaves optional
	}
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w: %q is out of range (strtod sets ERANGE and slurmctld refuses it)", ErrNumber, num)
	}
	if math.Abs(v) < 0x1p-1022 && !exactDouble(lit, kind, v) {
		return 0, fmt.Errorf("%w: %q is out of range: it underflows (strtod sets ERANGE and slurmctld refuses it)", ErrNumber, num)
	}
	return v, nil
}

// exactDouble reports whether the number lit (of kind numDecimal or
// numHex) equals the double v exactly. It is called only for 0 and
// subnormal v, where the exact value is small to hold: lit is then a
// subnormal or smaller, or it underflowed to 0, which only a zero
// mantissa does exactly.
func exactDouble(lit string, kind numKind, v float64) bool {
	digits := strings.TrimLeft(lit, "+-")
	marker := "eE"
	if kind == numHex {
		digits, marker = digits[2:], "pP"
	}
	if i := strings.IndexAny(digits, marker); i >= 0 {
		digits = digits[:i]
	}
	if v == 0 {
		return strings.Trim(digits, "0.") == ""
	}
	if kind == numHex {
		f, _, err := big.ParseFloat(lit, 0, uint(4*len(lit)+64), big.ToNearestEven)
		return err == nil && f.Cmp(new(big.Float).SetFloat64(v)) == 0
	}
	r, ok := new(big.Rat).SetString(strings.TrimPrefix(lit, "+"))
	return ok && r.Cmp(new(big.Rat).SetFloat64(v)) == 0
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// scanNumber returns the length of the number strtod reads at the start of
// s (s has no leading blanks) and its form: [+-] then "inf" or "infinity",
// "nan" or "nan(chars)" (letters, digits and '_'), "0x" with at least one
// hexadecimal digit, an optional '.' and more, and an optional binary
// exponent p[+-]digits, or a decimal number, digits with an optional '.'
// and more (at least one digit) and an optional exponent e[+-]digits. An
// exponent marker without digits is not consumed ("1e" is 1 followed by
// "e"; "0x" is 0 followed by "x").
func scanNumber(s string) (int, numKind) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	rest := strings.ToLower(s[i:])
	switch {
	case strings.HasPrefix(rest, "infinity"):
		return i + len("infinity"), numInf
	case strings.HasPrefix(rest, "inf"):
		return i + len("inf"), numInf
	case strings.HasPrefix(rest, "nan"):
		n := i + len("nan")
		if n < len(s) && s[n] == '(' {
			j := n + 1
			for j < len(s) && (isDigit(s[j]) || 'a' <= s[j]|0x20 && s[j]|0x20 <= 'z' || s[j] == '_') {
				j++
			}
			if j < len(s) && s[j] == ')' {
				n = j + 1
			}
		}
		return n, numNaN
	case len(rest) > 2 && rest[0] == '0' && rest[1] == 'x':
		if n := scanMantissa(s[i+2:], true); n > 0 {
			return i + 2 + n + scanExponent(s[i+2+n:], 'p'), numHex
		}
	}
	n := scanMantissa(s[i:], false)
	if n == 0 {
		return 0, numNone
	}
	return i + n + scanExponent(s[i+n:], 'e'), numDecimal
}

// scanMantissa returns the length of digits[.digits] at the start of s,
// hexadecimal digits when hex, or 0 when it holds no digit.
func scanMantissa(s string, hex bool) int {
	digit := func(c byte) bool { return isDigit(c) || hex && isHexLetter(c) }
	i, digits := 0, 0
	for i < len(s) && digit(s[i]) {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && digit(s[i]) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0
	}
	return i
}

// scanExponent returns the length of an exponent (marker, either case,
// then [+-]digits) at the start of s, 0 when s holds none.
func scanExponent(s string, marker byte) int {
	if len(s) == 0 || s[0]|0x20 != marker {
		return 0
	}
	j := 1
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && isDigit(s[k]) {
		k++
	}
	if k == j {
		return 0
	}
	return k
}

func isHexLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'f' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
