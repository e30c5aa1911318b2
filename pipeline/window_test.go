package pipeline

import (
	"testing"
	"time"
)

// TestMonthOf checks the cached month key at month boundaries, before
// 1970 and after going back to an earlier month (times by hand, UTC).
func TestMonthOf(t *testing.T) {
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
