package fairshare

import (
	"math"
	"math/bits"
)

// slurmctld keeps usage_raw, usage_efctv and level_fs as C long double,
// which on x86-64 is the x87 extended format: a 64-bit significand,
// every operation rounded to nearest, ties to even. Fair Tree computes
// usage_efctv = usage_raw / parent's usage_raw and level_fs = shares_norm /
// usage_efctv in it (src/plugins/priority/multifactor/fair_tree.c,
// _ft_set_assoc_usage_efctv and _calc_assoc_fs, slurm-22-05-8-1 to
// slurm-26-05-3-1), and sshare gets both converted to double
// (assoc_mgr_get_shares: share->level_fs = assoc->usage->level_fs,
// share->usage_efctv = (double)assoc->usage->usage_efctv). Two roundings
// to 64 bits, then one to 53, can give a double one ulp from the two
// double divisions: live 26.05.5, level_fs 2.46093749999999986339 became
// the double 2.4609375, which sshare prints 2.460938, where double
// arithmetic gives 2.4609374999999996 and 2.460937. extQuo and
// extLevelFS compute what slurmctld does from the same doubles, exactly,
// in integer arithmetic (a few nanoseconds); slurmctld's usage_raw itself
// is a long double that the run holds as a double, which these cannot
// restore. (On aarch64, long double is binary128; this is x86-64's.)

// ext is a positive finite extended value mant × 2^exp, mant's top bit set.
type ext struct {
	mant uint64
	exp  int
}

// extOf returns the positive finite normal double f as an ext (exact).
func extOf(f float64) ext {
	fr, e := math.Frexp(f) // f = fr × 2^e, fr in [0.5, 1)
	return ext{mant: uint64(fr * 0x1p64), exp: e - 64}
}

// extDiv returns a / b rounded to 64 significant bits, to nearest, ties to
// even.
func extDiv(a, b ext) ext {
	var q, r uint64
	exp := a.exp - b.exp
	if a.mant < b.mant { // a/b in [0.5, 1): (a.mant << 64) / b.mant
		q, r = bits.Div64(a.mant, 0, b.mant)
		exp -= 64
	} else { // a/b in [1, 2): (a.mant << 63) / b.mant
		q, r = bits.Div64(a.mant>>1, a.mant<<63, b.mant)
		exp -= 63
	}
	// Round: up past half, to even at exactly half.
	if r > b.mant-r || (r == b.mant-r && q&1 == 1) {
		q++
		if q == 0 {
			q, exp = 1<<63, exp+1
		}
	}
	return ext{mant: q, exp: exp}
}

// double returns x rounded to a double, to nearest, ties to even.
func (x ext) double() float64 {
	hi, _ := x.split()
	return hi
}

// split returns x as hi + lo exactly: hi is x rounded to a double (to
// nearest, ties to even), lo the rest (11 bits at most). Comparing (hi, lo)
// pairs in order compares the extended values, as slurmctld compares
// level_fs when it sorts siblings.
func (x ext) split() (hi, lo float64) {
	m, low := x.mant>>11, int64(x.mant&0x7ff)
	if low > 0x400 || (low == 0x400 && m&1 == 1) {
		m++ // 2^53 at most: exact in a double
		low -= 0x800
	}
	return math.Ldexp(float64(m), x.exp+11), math.Ldexp(float64(low), x.exp)
}

// extReady reports whether f is a finite, normal, nonzero double, the
// values extQuo and extLevelFS compute from; any other falls back to
// double arithmetic.
func extReady(f float64) bool {
	a := math.Abs(f)
	return a >= 0x1p-1022 && a <= math.MaxFloat64
}

// extQuo returns (double)((long double)a / b), as slurmctld converts a
// long double quotient of two doubles to double.
func extQuo(a, b float64) float64 {
	if !extReady(a) || !extReady(b) {
		return a / b
	}
	q := extDiv(extOf(math.Abs(a)), extOf(math.Abs(b))).double()
	if (a < 0) != (b < 0) {
		q = -q
	}
	return q
}

// extLevelFS returns Fair Tree's level_fs, s / ((long double)raw /
// parent), as hi + lo (ext.split): hi is the double sshare receives, and
// (hi, lo) orders the values as slurmctld's long doubles (u = raw/parent
// nonzero).
func extLevelFS(s, raw, parent float64) (hi, lo float64) {
	if !extReady(s) || !extReady(raw) || !extReady(parent) {
		return s / (raw / parent), 0
	}
	u := extDiv(extOf(math.Abs(raw)), extOf(math.Abs(parent)))
	hi, lo = extDiv(extOf(math.Abs(s)), u).split()
	if (s < 0) != ((raw < 0) != (parent < 0)) {
		hi, lo = -hi, -lo
	}
	return hi, lo
}
