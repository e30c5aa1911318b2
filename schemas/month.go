package schemas

import "time"

// MonthLayout is the time layout of the month partition key every table
// is split by (YYYY-MM, the UTC month).
const MonthLayout = "2006-01"

// ParseMonth returns the first instant (UTC) of the partition month s,
// written YYYY-MM; the error is time.Parse's, which names s and the
// layout.
func ParseMonth(s string) (time.Time, error) { return time.Parse(MonthLayout, s) }

// MonthKey returns the partition month (YYYY-MM) holding t: t's month in
// UTC.
func MonthKey(t time.Time) string { return t.UTC().Format(MonthLayout) }

// MonthStart returns the first instant (00:00 UTC on the 1st) of the
// partition month holding t.
func MonthStart(t time.Time) time.Time {
	u := t.UTC()
	return time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
}
