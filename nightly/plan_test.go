package nightly

import (
	"strings"
	"testing"
	"time"
)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skip("no tz database:", err)
	}
	return loc
}

func section(t *testing.T, extra string) *Cluster {
	t.Helper()
	c, err := Parse("test.toml", []byte("history = \"/h\"\nspool = \"/s\"\n[[cluster]]\nname = \"c\"\nslurm_conf = \"/etc/slurm/slurm.conf\"\n"+extra))
	if err != nil {
		t.Fatal(err)
	}
	return &c.Clusters[0]
}

func TestPlanNight(t *testing.T) {
	t.Parallel()
	berlin := mustLoc(t, "Europe/Berlin")
	// 2025-12-06 02:00 in Berlin is 01:00 UTC: the night ends at local
	// midnight, 2025-12-05T23:00:00Z.
	now := time.Date(2025, 12, 6, 1, 0, 0, 0, time.UTC)
	midnight := time.Date(2025, 12, 5, 23, 0, 0, 0, time.UTC)
	last := time.Date(2025, 12, 1, 23, 0, 0, 0, time.UTC) // two nights were missed
	cases := []struct {
		name      string
		extra     string
		last, to  time.Time
		first     time.Time // first_day, read in the zone
		want      Plan
		wantError string
	}{{
		name: "resumes after missed nights: sacct from the last checkpoint less the overlap",
		last: last,
		want: Plan{Last: last, To: midnight, Fetch: Span{last.Add(-24 * time.Hour), midnight},
			Chunks: []Span{{last.Add(-24 * time.Hour), midnight}}},
	}, {
		name:  "chunks of max_query_range",
		extra: "max_query_range = \"2d\"\noverlap = \"12h\"\n",
		last:  last,
		want: Plan{Last: last, To: midnight, Fetch: Span{last.Add(-12 * time.Hour), midnight}, Chunks: []Span{
			{last.Add(-12 * time.Hour), last.Add(36 * time.Hour)},
			{last.Add(36 * time.Hour), last.Add(84 * time.Hour)},
			{last.Add(84 * time.Hour), midnight}}},
	}, {
		name:  "first night: backfill from first_day, local midnight",
		extra: "max_query_range = \"3d\"\n",
		first: time.Date(2025, 11, 29, 23, 0, 0, 0, time.UTC), // 2025-11-30 in Berlin
		want: Plan{From: time.Date(2025, 11, 29, 23, 0, 0, 0, time.UTC), To: midnight,
			Fetch: Span{time.Date(2025, 11, 29, 23, 0, 0, 0, time.UTC), midnight},
			Chunks: []Span{{time.Date(2025, 11, 29, 23, 0, 0, 0, time.UTC), time.Date(2025, 12, 2, 23, 0, 0, 0, time.UTC)},
				{time.Date(2025, 12, 2, 23, 0, 0, 0, time.UTC), midnight}}},
	}, {
		name:      "first night without first_day",
		wantError: "set first_day",
	}, {
		name: "up to date",
		last: midnight,
		want: Plan{Last: midnight, To: midnight, UpToDate: true},
	}, {
		name:  "window_end now",
		extra: "window_end = \"now\"\n",
		last:  last,
		want: Plan{Last: last, To: now, Fetch: Span{last.Add(-24 * time.Hour), now},
			Chunks: []Span{{last.Add(-24 * time.Hour), now}}},
	}, {
		name:      "--to after now",
		last:      last,
		to:        now.Add(time.Hour),
		wantError: "is after now",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PlanNight(section(t, tc.extra), tc.last, tc.first, now, tc.to, berlin)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("PlanNight error = %v, want one with %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !plansEqual(got, tc.want) {
				t.Errorf("PlanNight =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func plansEqual(a, b Plan) bool {
	if !a.Last.Equal(b.Last) || !a.From.Equal(b.From) || !a.To.Equal(b.To) || a.UpToDate != b.UpToDate ||
		!a.Fetch.From.Equal(b.Fetch.From) || !a.Fetch.To.Equal(b.Fetch.To) || len(a.Chunks) != len(b.Chunks) {
		return false
	}
	for i := range a.Chunks {
		if !a.Chunks[i].From.Equal(b.Chunks[i].From) || !a.Chunks[i].To.Equal(b.Chunks[i].To) {
			return false
		}
	}
	return true
}

// On the autumn DST day the last local midnight is still 00:00 local.
func TestWindowEndDST(t *testing.T) {
	t.Parallel()
	berlin := mustLoc(t, "Europe/Berlin")
	now := time.Date(2025, 10, 26, 5, 0, 0, 0, time.UTC) // 06:00 CET, after the change at 03:00 CEST
	got := WindowEndAt(WindowMidnight, now, berlin)
	if want := time.Date(2025, 10, 25, 22, 0, 0, 0, time.UTC); !got.Equal(want) { // 00:00 CEST
		t.Errorf("WindowEndAt = %s, want %s", got, want)
	}
	if got := WindowEndAt(WindowNow, now.Add(1500*time.Millisecond), berlin); !got.Equal(now.Add(time.Second)) {
		t.Errorf("WindowEndAt(now) = %s, want the whole second", got)
	}
}

func TestPrunable(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 12, 20, 2, 0, 0, 0, time.UTC)
	fetched := map[string]time.Time{
		"20251205T230000Z": time.Date(2025, 12, 6, 1, 0, 0, 0, time.UTC),
		"20251206T230000Z": time.Date(2025, 12, 7, 1, 0, 0, 0, time.UTC),
		"20251219T230000Z": time.Date(2025, 12, 20, 1, 0, 0, 0, time.UTC),
		"20240101T000000Z": time.Date(2025, 12, 19, 3, 0, 0, 0, time.UTC), // a catch-up night, fetched 23 hours ago
	}
	// The cut is 2025-12-06T02:00Z: only the night fetched before it goes.
	if got := strings.Join(Prunable(fetched, now, 14), " "); got != "20251205T230000Z" {
		t.Errorf("Prunable(14) = %v", got)
	}
	if got := strings.Join(Prunable(fetched, now, 1), " "); got != "20251205T230000Z 20251206T230000Z" {
		t.Errorf("Prunable(1) = %v", got)
	}
	if got := Prunable(fetched, now, 0); len(got) != 4 {
		t.Errorf("Prunable(keep 0) = %v, want every night", got)
	}
}

func TestSelectDumps(t *testing.T) {
	t.Parallel()
	d := func(day int) keptDump {
		return keptDump{name: time.Date(2025, 3, day, 0, 0, 0, 0, time.UTC).Format(assocLayout), day: time.Date(2025, 3, day, 0, 0, 0, 0, time.UTC)}
	}
	kept := []keptDump{d(1), d(5), d(9)}
	names := func(ds []keptDump) string {
		var s []string
		for _, x := range ds {
			s = append(s, x.name)
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		lo   time.Time
		want string
	}{
		{time.Date(2025, 3, 6, 0, 0, 0, 0, time.UTC), "assoc-2025-03-05.psv assoc-2025-03-09.psv"},
		{time.Date(2025, 3, 5, 0, 0, 0, 0, time.UTC), "assoc-2025-03-05.psv assoc-2025-03-09.psv"},
		{time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC), "assoc-2025-03-09.psv"},
		{time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), "assoc-2025-03-01.psv assoc-2025-03-05.psv assoc-2025-03-09.psv"},
	} {
		if got := names(SelectDumps(kept, tc.lo)); got != tc.want {
			t.Errorf("SelectDumps(lo %s) = %s, want %s", tc.lo.Format(time.DateOnly), got, tc.want)
		}
	}
	if got := SelectDumps(nil, time.Now()); len(got) != 0 {
		t.Errorf("SelectDumps(none) = %v", got)
	}
}
