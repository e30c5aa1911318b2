package decay

import (
	"fmt"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin without depending on the host's zoneinfo
)

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func utc(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, time.UTC)
}

func TestParseResetPeriod(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want ResetPeriod
		ok   bool
	}{
		{"", ResetNone, true},
		{"NONE", ResetNone, true},
		{"now", ResetNow, true},
		{"Daily", ResetDaily, true},
		{"WEEKLY", ResetWeekly, true},
		{"monthly", ResetMonthly, true},
		{"QUARTERLY", ResetQuarterly, true},
		{" yearly ", ResetYearly, true},
		{"HOURLY", ResetNone, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, err := ParseResetPeriod(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("ParseResetPeriod(%q) = %v, %v, want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

// Expected boundaries worked out by hand from §2.7 and Slurm's _next_reset
// (midnight of last's local day via mktime, then + 86400·n seconds for
// DAILY/WEEKLY). Berlin is UTC+1 (CET) in winter and UTC+2 (CEST) from
// 2024-03-31 02:00 CET to 2024-10-27 03:00 CEST.
func TestNextReset(t *testing.T) {
	t.Parallel()
	ber := berlin(t)
	at := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, ber) }
	tests := []struct {
		name      string
		period    ResetPeriod
		last, now time.Time
		want      time.Time
	}{
		{"none", ResetNone, at(2024, 5, 15, 10, 0), at(2024, 5, 15, 10, 0), time.Time{}},
		{"now", ResetNow, at(2024, 5, 15, 10, 0), at(2024, 5, 15, 10, 0), time.Time{}},
		// 2024-05-16 00:00 CEST = 2024-05-15T22:00Z.
		{"daily", ResetDaily, at(2024, 5, 15, 10, 0), at(2024, 5, 15, 10, 0), utc(2024, 5, 15, 22, 0)},
		// midnight(5/15)+1d = 5/16 00:00; skip whole days while b+1d < now
		// (5/20 12:00): 5/17, 5/18, 5/19, 5/20 00:00; 5/21 is not < now.
		{"daily skip", ResetDaily, at(2024, 5, 15, 10, 0), at(2024, 5, 20, 12, 0), utc(2024, 5, 19, 22, 0)},
		// A boundary equal to now - 1 day is not skipped (strict <).
		{"daily no skip at equality", ResetDaily, at(2024, 5, 15, 10, 0), at(2024, 5, 17, 0, 0), utc(2024, 5, 15, 22, 0)},
		// Spring forward: midnight(3/31) = 3/31 00:00 CET = 3/30T23:00Z;
		// + 86400 s = 3/31T23:00Z = 4/1 01:00 CEST, not midnight.
		{"daily 23h day", ResetDaily, at(2024, 3, 31, 0, 0), at(2024, 3, 31, 0, 0), utc(2024, 3, 31, 23, 0)},
		// The next one is back at midnight: midnight(4/1) = 3/31T22:00Z,
		// + 86400 s = 4/1T22:00Z = 4/2 00:00 CEST.
		{"daily after 23h day", ResetDaily, utc(2024, 3, 31, 23, 0), utc(2024, 3, 31, 23, 0), utc(2024, 4, 1, 22, 0)},
		// Fall back: midnight(10/27) = 10/27 00:00 CEST = 10/26T22:00Z;
		// + 86400 s = 10/27T22:00Z = 10/27 23:00 CET, the same day.
		{"daily 25h day", ResetDaily, at(2024, 10, 27, 0, 0), at(2024, 10, 27, 0, 0), utc(2024, 10, 27, 22, 0)},
		// From that boundary Slurm computes the same boundary again (its
		// local day is still 10/27) until now passes it by a whole day.
		{"daily repeats after 25h day", ResetDaily, utc(2024, 10, 27, 22, 0), utc(2024, 10, 27, 22, 5), utc(2024, 10, 27, 22, 0)},
		{"daily repeat skipped", ResetDaily, utc(2024, 10, 27, 22, 0), utc(2024, 10, 28, 22, 5), utc(2024, 10, 28, 22, 0)},
		// Wednesday 5/15 (weekday 3): midnight + (7−3) days = Sunday 5/19
		// 00:00 CEST = 5/18T22:00Z.
		{"weekly", ResetWeekly, at(2024, 5, 15, 10, 0), at(2024, 5, 15, 10, 0), utc(2024, 5, 18, 22, 0)},
		// From a Sunday: the following Sunday.
		{"weekly from sunday", ResetWeekly, at(2024, 5, 19, 0, 0), at(2024, 5, 19, 0, 0), utc(2024, 5, 25, 22, 0)},
		// Skip whole weeks while b + 7d < now (6/10 00:00): 5/19 → 5/26 →
		// 6/2 → 6/9 (6/9 < 6/10); 6/16 is not < 6/10. 6/9 00:00 CEST =
		// 6/8T22:00Z.
		{"weekly skip", ResetWeekly, at(2024, 5, 15, 10, 0), at(2024, 6, 10, 0, 0), utc(2024, 6, 8, 22, 0)},
		// 2024-02-01 00:00 CET = 2024-01-31T23:00Z.
		{"monthly", ResetMonthly, at(2024, 1, 15, 10, 0), at(2024, 1, 15, 10, 0), utc(2024, 1, 31, 23, 0)},
		{"monthly december", ResetMonthly, at(2024, 12, 1, 0, 0), at(2024, 12, 1, 0, 0), utc(2024, 12, 31, 23, 0)},
		// Into summer time: 2024-04-01 00:00 CEST = 2024-03-31T22:00Z.
		{"monthly into CEST", ResetMonthly, at(2024, 3, 5, 0, 0), at(2024, 3, 5, 0, 0), utc(2024, 3, 31, 22, 0)},
		// MONTHLY does not skip: a year-old last reset gives the next month.
		{"monthly no skip", ResetMonthly, at(2023, 3, 5, 0, 0), at(2024, 3, 5, 0, 0), utc(2023, 3, 31, 22, 0)},
		{"quarterly Q1", ResetQuarterly, at(2024, 2, 10, 0, 0), at(2024, 2, 10, 0, 0), utc(2024, 3, 31, 22, 0)},
		{"quarterly from Apr 1", ResetQuarterly, at(2024, 4, 1, 0, 0), at(2024, 4, 1, 0, 0), utc(2024, 6, 30, 22, 0)},
		{"quarterly Q3", ResetQuarterly, at(2024, 9, 30, 23, 0), at(2024, 9, 30, 23, 0), utc(2024, 9, 30, 22, 0)},
		{"quarterly Q4", ResetQuarterly, at(2024, 11, 30, 0, 0), at(2024, 11, 30, 0, 0), utc(2024, 12, 31, 23, 0)},
		{"yearly", ResetYearly, at(2024, 6, 30, 0, 0), at(2024, 6, 30, 0, 0), utc(2024, 12, 31, 23, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NextReset(tt.period, tt.last, tt.now, ber)
			if !got.Equal(tt.want) {
				t.Errorf("NextReset(%v, %v, %v) [%s] = %v, want %v", tt.period, tt.last, tt.now, tt.name, got.UTC(), tt.want.UTC())
			}
		})
	}
}

// A nil location means UTC: DAILY from 2024-05-15 10:00Z is 2024-05-16 00:00Z.
func TestNextResetUTC(t *testing.T) {
	t.Parallel()
	last := utc(2024, 5, 15, 10, 0)
	if got, want := NextReset(ResetDaily, last, last, nil), utc(2024, 5, 16, 0, 0); !got.Equal(want) {
		t.Errorf("NextReset(DAILY, %v, nil loc) = %v, want %v", last, got, want)
	}
}
