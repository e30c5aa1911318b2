package decay

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// DefaultCalcPeriodSec is Slurm's default PriorityCalcPeriod (5 minutes).
const DefaultCalcPeriodSec = 300

// maxCalcPeriodSec bounds PriorityCalcPeriod so that tick arithmetic and the
// fixed-point sums cannot overflow (Slurm stores it in minutes as uint32, but
// a period above one year is meaningless).
const maxCalcPeriodSec = 366 * 86400

// Params are the slurm.conf settings that determine decayed usage.
type Params struct {
	// HalfLifeSec is PriorityDecayHalfLife in seconds (already rounded up
	// to whole minutes by the slurm.conf reader); 0 means no decay.
	HalfLifeSec int64
	// CalcPeriodSec is PriorityCalcPeriod in seconds; 0 means the default
	// of 300.
	CalcPeriodSec int64
	// OriginUnix is the phase of the tick grid T_k = OriginUnix + k·P
	// (Unix seconds); 0 aligns the ticks to the epoch.
	OriginUnix int64
	// ResetPeriod is PriorityUsageResetPeriod as written in slurm.conf:
	// NONE (or empty), NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY,
	// case-insensitive.
	ResetPeriod string
	// Location is the slurmctld host's time zone, in which reset
	// boundaries are computed; nil means UTC.
	Location *time.Location
	// LimitsEnforced reports whether AccountingStorageEnforce contains
	// limits (also implied by safe and all); only then are job-end tails
	// charged.
	LimitsEnforced bool
}

// calcPeriod returns P in seconds with the default applied.
func (p Params) calcPeriod() int64 {
	if p.CalcPeriodSec == 0 {
		return DefaultCalcPeriodSec
	}
	return p.CalcPeriodSec
}

// location returns the reset time zone with the default applied.
func (p Params) location() *time.Location {
	if p.Location == nil {
		return time.UTC
	}
	return p.Location
}

// Validate reports every problem with p at once.
func (p Params) Validate() error {
	var errs []error
	if p.HalfLifeSec < 0 {
		errs = append(errs, fmt.Errorf("half-life %d s is negative", p.HalfLifeSec))
	}
	if p.CalcPeriodSec < 0 || p.CalcPeriodSec > maxCalcPeriodSec {
		errs = append(errs, fmt.Errorf("calc period %d s is outside 1..%d", p.CalcPeriodSec, maxCalcPeriodSec))
	}
	if _, err := ParseResetPeriod(p.ResetPeriod); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Factor returns Slurm's per-second decay factor d = 1 − 0.693/H for a
// half-life of H seconds, with the literal constant 0.693 (not ln 2); a
// half-life ≤ 0 means no decay and gives 1 (docs/slurm-semantics.md §2.2).
func Factor(halfLifeSec int64) float64 {
	if halfLifeSec <= 0 {
		return 1
	}
	return 1 - 0.693/float64(halfLifeSec)
}

// DecayOver returns the factor by which usage decays over sec seconds, as
// the decay tick applies it: pow(d, sec) clamped to at least DBL_MIN
// (the smallest normal float64, 2.2250738585072014e-308).
func DecayOver(halfLifeSec, sec int64) float64 {
	f := pow(Factor(halfLifeSec), sec)
	if f < dblMin {
		return dblMin
	}
	return f
}

// dblMin is C's DBL_MIN, the smallest positive normal double.
const dblMin = 0x1p-1022

// EffectiveHalfLife returns the time in seconds after which usage really
// halves under d = 1 − 0.693/H, ln(0.5)/ln(d); it is slightly longer than H
// because 0.693 < ln 2. It returns +Inf when there is no decay.
func EffectiveHalfLife(halfLifeSec int64) float64 {
	d := Factor(halfLifeSec)
	if d == 1 {
		return math.Inf(1)
	}
	return math.Log(0.5) / math.Log(d)
}

// Chunk returns the usage per unit of rate of a chunk of sec seconds
// charged at once under a half-life of halfLifeSec: δ·d^δ, the chunk
// decayed by its own length (1 without decay gives δ). It is what
// slurmctld's _apply_new_usage (src/plugins/priority/multifactor/
// priority_multifactor.c) adds for a job, times its rate, at a tick and, with
// AccountingStorageEnforce=limits, at the job's end (priority_p_job_end);
// Advance charges the same amounts.
func Chunk(halfLifeSec, sec int64) float64 {
	return chunk(Factor(halfLifeSec), sec)
}

// chunk returns Slurm's run_decay for a chunk of sec seconds: δ·d^δ, the
// chunk decayed by its own length as if all of it had happened at its start
// (§2.4). It is not clamped.
func chunk(d float64, sec int64) float64 {
	return float64(sec) * pow(d, sec)
}

// pow returns d^n for n ≥ 0, correctly rounded in all but astronomically
// rare cases, by binary exponentiation in double-double arithmetic (relative
// error about 2^-98 before the final rounding). It stands in for C's pow:
// Go's math.Pow squares in float64 for integer exponents, and its error,
// growing with n, shows in the 12th digit of a week of 5-minute ticks
// (§11.4: 500.073397152788). glibc's pow is within 0.52 ulp, so the two
// agree except for rare 1-ulp differences.
func pow(d float64, n int64) float64 {
	if d == 1 {
		return 1
	}
	rh, rl := 1.0, 0.0
	bh, bl := d, 0.0
	for n > 0 {
		if n&1 != 0 {
			rh, rl = ddMul(rh, rl, bh, bl)
		}
		n >>= 1
		if n > 0 {
			bh, bl = ddMul(bh, bl, bh, bl)
		}
	}
	return rh + rl
}

// ddMul multiplies two double-double numbers (hi + lo, |lo| ≤ ulp(hi)/2).
func ddMul(ah, al, bh, bl float64) (hi, lo float64) {
	p := ah * bh
	e := math.FMA(ah, bh, -p)
	e += float64(ah*bl) + float64(al*bh) // no FMA fusion: same bits everywhere
	hi = p + e
	return hi, e - (hi - p)
}
