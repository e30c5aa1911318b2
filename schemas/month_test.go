package schemas

import (
	"testing"
	"time"
)

// TestMonth checks that ParseMonth and MonthKey invert each other and that
// MonthKey takes the UTC month.
func TestMonth(t *testing.T) {
	m, err := ParseMonth("2025-03")
	if err != nil || !m.Equal(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)) || m.Location() != time.UTC {
		t.Fatalf("ParseMonth(2025-03) = %v, %v", m, err)
	}
	if got := MonthKey(m); got != "2025-03" {
		t.Errorf("MonthKey(%v) = %q", m, got)
	}
	east := time.FixedZone("east", 3600)
	if got := MonthKey(time.Date(2025, 4, 1, 0, 30, 0, 0, east)); got != "2025-03" {
		t.Errorf("MonthKey of 2025-04-01T00:30+01:00 = %q, want 2025-03", got)
	}
	for _, s := range []string{"", "2025-3-01", "2025-13", "March"} {
		if _, err := ParseMonth(s); err == nil {
			t.Errorf("ParseMonth(%q): no error", s)
		}
	}
}

// TestMonthStart: the month of an instant is its UTC month, whatever
// zone the instant is written in: 00:30 on 1 March in Berlin is still
// February in UTC.
func TestMonthStart(t *testing.T) {
	t.Parallel()
	berlin := time.FixedZone("CET", 3600)
	for _, c := range []struct{ in, want time.Time }{
		{time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2025, 3, 1, 0, 30, 0, 0, berlin), time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2024, 12, 31, 23, 59, 59, 999, time.UTC), time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if got := MonthStart(c.in); !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("MonthStart(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
