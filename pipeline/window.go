package pipeline

import (
	"fmt"
	"time"

	"github.com/fairledger/fairledger/schemas"
)

// floorTick returns the last tick of the grid origin + k·period at or
// before t (Unix seconds).
func floorTick(t, origin, period int64) int64 {
	return origin + floorDiv(t-origin, period)*period
}

// CheckSnapshotEvery reports whether every is a valid snapshot interval
// (Options.SnapshotEvery): 0 (only at the window's end), a divisor of 24 h,
// or a whole number of days.
func CheckSnapshotEvery(every time.Duration) error {
	const day = 24 * time.Hour
	switch {
	case every < 0:
		return fmt.Errorf("--snapshot-every %s: negative", every)
	case every == 0, every < day && day%every == 0, every >= day && every%day == 0:
		return nil
	}
	return fmt.Errorf("--snapshot-every %s: must divide 24h or be a whole number of days", every)
}

// CheckSnapshotPeriod refuses a snapshot interval every shorter than the
// cluster's PriorityCalcPeriod calcPeriod: usage changes only once per
// period, so snapshots in between repeat the one before (1s would take
// 86,400 a day). 0 (only at the window's end) is accepted.
func CheckSnapshotPeriod(every, calcPeriod time.Duration) error {
	if every > 0 && every < calcPeriod {
		return fmt.Errorf("--snapshot-every %s: shorter than slurm.conf's PriorityCalcPeriod %s, the interval at which usage changes", every, calcPeriod)
	}
	return nil
}

// snapshotTimes returns the snapshot times in (lo, to] (Unix seconds):
// every `every` from local midnight in loc, and always to itself. every = 0
// gives only to. An every below 24 h must divide 24 h; above, it must be a
// whole number of days, counted from 1970-01-01 local.
func snapshotTimes(lo, to int64, every time.Duration, loc *time.Location) ([]int64, error) {
	if err := CheckSnapshotEvery(every); err != nil {
		return nil, err
	}
	if to <= lo {
		return nil, nil
	}
	var out []int64
	const day = 24 * time.Hour
	if every > 0 {
		nDays := int64(every / day)
		first := time.Unix(lo, 0).In(loc)
		d := time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, loc)
		for ; d.Unix() <= to; d = time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc) {
			next := time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc).Unix()
			if nDays > 1 {
				civil := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC).Unix() / 86400
				if civil%nDays != 0 {
					continue
				}
			}
			step := every
			if step > day {
				step = day
			}
			for off := time.Duration(0); off < day; off += step {
				// Local wall-clock times (08:00 and 16:00 for 8h, on the
				// days of a DST change too); a time in the spring gap
				// lands on one after it, kept once.
				t := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, int(off/time.Second), 0, loc).Unix()
				if t >= next {
					break
				}
				if t > lo && t <= to && (len(out) == 0 || t > out[len(out)-1]) {
					out = append(out, t)
				}
			}
		}
	}
	if len(out) == 0 || out[len(out)-1] != to {
		out = append(out, to)
	}
	return out, nil
}

// monthStart is 00:00 UTC of the first day of Unix second t's UTC month.
func monthStart(t int64) time.Time { return schemas.MonthStart(time.Unix(t, 0)) }

// monthKey is the YYYY-MM of a month start.
func monthKey(m time.Time) string { return m.Format(schemas.MonthLayout) }

// monthOf remembers the last month monthOf.key computed. The zero value
// remembers none (its range [0, 0) is empty).
type monthOf struct {
	lo, hi int64 // [lo, hi) is the month of k
	k      string
}

// key returns monthKey(monthStart(t)).
func (m *monthOf) key(t int64) string {
	if t < m.lo || t >= m.hi {
		start := monthStart(t)
		m.lo, m.hi, m.k = start.Unix(), start.AddDate(0, 1, 0).Unix(), monthKey(start)
	}
	return m.k
}

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
