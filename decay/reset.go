package decay

import (
	"fmt"
	"strings"
	"time"
)

// ResetPeriod is PriorityUsageResetPeriod.
type ResetPeriod uint8

// The PriorityUsageResetPeriod values (docs/slurm-semantics.md §2.7).
const (
	// ResetNone never resets usage.
	ResetNone ResetPeriod = iota
	// ResetNow resets usage once when slurmctld starts. A nightly offline
	// run is not a controller restart, so decay applies it only when a
	// State is created (where usage is zero anyway) and never again.
	ResetNow
	// ResetDaily resets at local midnight.
	ResetDaily
	// ResetWeekly resets at local Sunday 00:00.
	ResetWeekly
	// ResetMonthly resets at 00:00 on the 1st of each month.
	ResetMonthly
	// ResetQuarterly resets at 00:00 on Jan 1, Apr 1, Jul 1 and Oct 1.
	ResetQuarterly
	// ResetYearly resets at 00:00 on Jan 1.
	ResetYearly
)

var resetNames = [...]string{"NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"}

// String returns the slurm.conf spelling of r.
func (r ResetPeriod) String() string {
	if int(r) < len(resetNames) {
		return resetNames[r]
	}
	return fmt.Sprintf("ResetPeriod(%d)", uint8(r))
}

// periodic reports whether r has boundaries (DAILY … YEARLY).
func (r ResetPeriod) periodic() bool { return r >= ResetDaily && r <= ResetYearly }

// ParseResetPeriod parses a PriorityUsageResetPeriod value,
// case-insensitively; the empty string means NONE.
func ParseResetPeriod(s string) (ResetPeriod, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return ResetNone, nil
	}
	for i, n := range resetNames {
		if strings.EqualFold(t, n) {
			return ResetPeriod(i), nil
		}
	}
	return ResetNone, fmt.Errorf("reset period %q: want one of NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY", s)
}

const (
	secsPerDay  = 86400
	secsPerWeek = 7 * secsPerDay
)

// NextReset returns the usage-reset boundary that follows the previous reset
// last, as slurmctld computes it at time now (PM _next_reset), in time zone
// loc (nil means UTC). It returns the zero Time for NONE and NOW, which have
// no boundaries.
//
// Like Slurm, DAILY and WEEKLY add fixed 86400-second days to local midnight
// of last's day (DAILY: one day, skipping whole days while boundary + 1 day
// < now; WEEKLY: 7 − weekday days, i.e. the next Sunday, skipping whole
// weeks while boundary + 7 days < now), so across a daylight-saving change
// the boundary is an hour off local midnight: after a 23-hour day it falls at
// 01:00, after a 25-hour day at 23:00 of that same day. MONTHLY, QUARTERLY
// and YEARLY are local 00:00 of the 1st of the next month, quarter or year
// after last's, without skipping.
func NextReset(period ResetPeriod, last, now time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	l := last.In(loc)
	y, m, d := l.Date()
	switch period {
	case ResetDaily:
		b := time.Date(y, m, d, 0, 0, 0, 0, loc).Unix() + secsPerDay
		for b+secsPerDay < now.Unix() {
			b += secsPerDay
		}
		return time.Unix(b, 0).In(loc)
	case ResetWeekly:
		b := time.Date(y, m, d, 0, 0, 0, 0, loc).Unix() + secsPerDay*int64(7-int(l.Weekday()))
		for b+secsPerWeek < now.Unix() {
			b += secsPerWeek
		}
		return time.Unix(b, 0).In(loc)
	case ResetMonthly:
		return time.Date(y, m+1, 1, 0, 0, 0, 0, loc)
	case ResetQuarterly:
		// The 1st of the month after the quarter containing m: Jan-Mar →
		// Apr, …, Oct-Dec → Jan of the next year (time.Date normalises 13).
		return time.Date(y, (m-1)/3*3+4, 1, 0, 0, 0, 0, loc)
	case ResetYearly:
		return time.Date(y+1, time.January, 1, 0, 0, 0, 0, loc)
	}
	return time.Time{}
}
