package pipeline

import (
	"slices"
	"testing"
	"time"
)

// TestMonthOf checks the cached month key at month boundaries, before
// 1970 and after going back to an earlier month (times by hand, UTC).
func TestMonthOf(t *testing.T) {
	t.Parallel()
	var m monthOf
	for _, c := range []struct {
		t    int64
		want string
	}{
		{0, "1970-01"},
		{-1, "1969-12"},         // the zero value's empty range must not answer
		{1706745599, "2024-01"}, // 2024-01-31T23:59:59
		{1706745600, "2024-02"}, // 2024-02-01T00:00:00
		{1709251199, "2024-02"}, // 2024-02-29T23:59:59 (leap year)
		{1709251200, "2024-03"}, // 2024-03-01T00:00:00
		{1704067200, "2024-01"}, // back to 2024-01-01T00:00:00
		{-2678400, "1969-12"},   // 1969-12-01T00:00:00
		{-2678401, "1969-11"},   // 1969-11-30T23:59:59
	} {
		if got := m.key(c.t); got != c.want {
			t.Errorf("key(%d) = %s, want %s", c.t, got, c.want)
		}
	}
}

// TestCheckSnapshotEvery checks the intervals a run accepts: 0, divisors of
// a day, whole days.
func TestCheckSnapshotEvery(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		every time.Duration
		ok    bool
	}{
		{0, true},
		{time.Hour, true},
		{90 * time.Minute, true}, // 16 a day
		{8 * time.Hour, true},
		{24 * time.Hour, true},
		{7 * 24 * time.Hour, true},
		{7 * time.Hour, false},
		{36 * time.Hour, false},
		{-24 * time.Hour, false},
		{25 * time.Hour, false},
	} {
		if err := CheckSnapshotEvery(c.every); (err == nil) != c.ok {
			t.Errorf("CheckSnapshotEvery(%s) = %v, want ok=%v", c.every, err, c.ok)
		}
	}
}

// A snapshot interval shorter than PriorityCalcPeriod is refused; the
// period itself, longer intervals and 0 (only at the window's end) are not.
func TestCheckSnapshotPeriod(t *testing.T) {
	t.Parallel()
	const period = 5 * time.Minute
	for _, c := range []struct {
		every time.Duration
		ok    bool
	}{
		{0, true}, {time.Second, false}, {4 * time.Minute, false}, {5 * time.Minute, true},
		{time.Hour, true}, {24 * time.Hour, true},
	} {
		if err := CheckSnapshotPeriod(c.every, period); (err == nil) != c.ok {
			t.Errorf("CheckSnapshotPeriod(%s, %s) = %v, want ok %v", c.every, period, err, c.ok)
		}
	}
}

// Sub-day snapshots fall on local wall-clock times from midnight, on the
// days of a DST change too (Europe/Berlin: 2025-03-30 has 23 hours,
// 2025-10-26 has 25), and a wall time in the spring gap is not taken twice.
func TestSnapshotTimesDST(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tz database:", err)
	}
	utc := func(s string) int64 {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.Unix()
	}
	for _, c := range []struct {
		name   string
		lo, to string
		every  time.Duration
		want   []string
	}{
		// 00:00 CET, 08:00 and 16:00 CEST.
		{"spring 8h", "2025-03-29T22:00:00Z", "2025-03-30T22:00:00Z", 8 * time.Hour,
			[]string{"2025-03-29T23:00:00Z", "2025-03-30T06:00:00Z", "2025-03-30T14:00:00Z", "2025-03-30T22:00:00Z"}},
		// 00:00 CEST, 08:00 and 16:00 CET, then 00:00 CET.
		{"autumn 8h", "2025-10-25T21:00:00Z", "2025-10-26T23:00:00Z", 8 * time.Hour,
			[]string{"2025-10-25T22:00:00Z", "2025-10-26T07:00:00Z", "2025-10-26T15:00:00Z", "2025-10-26T23:00:00Z"}},
		// 01:00 CET, then 02:00 (in the gap) and 03:00 CEST are one
		// instant, taken once; 04:00 CEST.
		{"spring 1h", "2025-03-29T23:30:00Z", "2025-03-30T02:00:00Z", time.Hour,
			[]string{"2025-03-30T00:00:00Z", "2025-03-30T01:00:00Z", "2025-03-30T02:00:00Z"}},
	} {
		got, err := snapshotTimes(utc(c.lo), utc(c.to), c.every, berlin)
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, w := range c.want {
			want = append(want, utc(w))
		}
		if !slices.Equal(got, want) {
			var g []string
			for _, v := range got {
				g = append(g, time.Unix(v, 0).UTC().Format(time.RFC3339))
			}
			t.Errorf("%s: %v, want %v", c.name, g, c.want)
		}
	}
}
