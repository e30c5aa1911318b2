package ingest

import (
	"fmt"
	"testing"
	"time"
)

func TestParseJobID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		kind jobKind
		id   int64
		task int64
		ok   bool
	}{
		{"123", jobPlain, 123, 0, true},
		{"123_4", jobArrayTask, 123, 4, true},
		{"123+1", jobHetComponent, 123, 1, true},
		{"123.batch", jobStep, 0, 0, true},
		{"123.extern", jobStep, 0, 0, true},
		{"123.interactive", jobStep, 0, 0, true},
		{"123.0", jobStep, 0, 0, true},
		{"123_4.0", jobStep, 0, 0, true},
		{"123+1.0", jobStep, 0, 0, true},
		{"123.0+1", jobStep, 0, 0, true},
		{"123_[1-3,9%2]", jobArrayPending, 123, 0, true},
		{"4103947_[91,100-102]", jobArrayPending, 4103947, 0, true},
		{"", 0, 0, 0, false},
		{"abc", 0, 0, 0, false},
		{"123_", 0, 0, 0, false},
		{"123_x", 0, 0, 0, false},
		{"123+", 0, 0, 0, false},
		{"123_[1-3", 0, 0, 0, false},
		{"123-4", 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, err := parseJobID([]byte(tt.in))
			if (err == nil) != tt.ok {
				t.Errorf("parseJobID(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
				return
			}
			if !tt.ok {
				return
			}
			if got.kind != tt.kind || (tt.kind != jobStep && (got.id != tt.id || got.task != tt.task)) {
				t.Errorf("parseJobID(%q) = %+v, want kind %d id %d task %d", tt.in, got, tt.kind, tt.id, tt.task)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	tests := []struct {
		in   string
		loc  *time.Location
		want int64
		kind timeKind
		err  string
	}{
		// §11.5: 1704164645 -> 2024-01-02T03:04:05 (TZ=UTC).
		{"2024-01-02T03:04:05", time.UTC, 1704164645, timeSet, ""},
		{"1704164645", time.UTC, 1704164645, timeSet, ""},
		{"Unknown", time.UTC, 0, timeUnknown, ""},
		{"None", time.UTC, 0, timeNone, ""},
		{"", time.UTC, 0, timeUnknown, ""},
		// Berlin is UTC+1 in January: 03:04:05 local = 02:04:05 UTC.
		{"2024-01-02T03:04:05", berlin, 1704164645 - 3600, timeSet, ""},
		// and UTC+2 in July: 2024-07-01T12:00:00 local = 10:00:00 UTC = 1719828000.
		{"2024-07-01T12:00:00", berlin, 1719828000, timeSet, ""},
		{"2024-13-01T00:00:00", time.UTC, 0, 0, "month out of range"},
		{"2023-02-29T00:00:00", time.UTC, 0, 0, "day out of range"},
		{"2024-01-01T24:00:00", time.UTC, 0, 0, "hour out of range"},
		{"2024-01-01T23:60:00", time.UTC, 0, 0, "minute out of range"},
		{"yesterday", time.UTC, 0, 0, errTimeSyntax.Error()},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q in %v", tt.in, tt.loc), func(t *testing.T) {
			got, kind, err := newLocalClock(tt.loc).parseTime([]byte(tt.in))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("parseTime(%q) error = %v, want %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want || kind != tt.kind {
				t.Errorf("parseTime(%q, %v) = %d, %d, %v; want %d, %d", tt.in, tt.loc, got, kind, err, tt.want, tt.kind)
			}
		})
	}
}

func TestParseElapsed(t *testing.T) {
	t.Parallel()
	// Vectors from docs/slurm-semantics.md §11.5 (secs2time_str), read backwards.
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{"00:00:00", 0, ""},
		{"00:00:59", 59, ""},
		{"01:00:00", 3600, ""},
		{"23:59:59", 86399, ""},
		{"1-00:00:00", 86400, ""},
		{"1-01:01:01", 90061, ""},
		{"14-01:02:03", 1213323, ""},
		{"35:45.828", 35*60 + 45, ""},
		{"00:00.106", 0, ""},
		{"1-25:00:00", 0, "hour out of range"},
		{"00:61:00", 0, "minute out of range"},
		{"00:00:60", 0, "second out of range"},
		{"1:2:3:4", 0, errDurationSyntax.Error()},
		{"x-01:00:00", 0, errDurationSyntax.Error()},
		{"", 0, "empty"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, err := parseElapsed([]byte(tt.in))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("parseElapsed(%q) error = %v, want %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("parseElapsed(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseTRESValue(t *testing.T) {
	t.Parallel()
	// Memory renderings from docs/slurm-semantics.md §11.5 (convert_num_unit,
	// from MiB), read backwards to MiB.
	tests := []struct {
		name, in string
		want     float64
		ok       bool
	}{
		{"mem", "0", 0, true},
		{"mem", "1M", 1, true},
		{"mem", "1000M", 1000, true},
		{"mem", "1G", 1024, true},
		{"mem", "1.50G", 1536, true},
		{"mem", "2.50G", 2560, true},
		{"mem", "16G", 16384, true},
		{"mem", "1T", 1048576, true},
		{"mem", "1.50T", 1572864, true},
		{"mem", "2252800K", 2200, true},
		{"mem", "16384", 16384, true}, // --noconvert prints plain MiB
		{"bb/datawarp", "2G", 2048, true},
		{"cpu", "64", 64, true},
		{"gres/gpu", "4", 4, true},
		{"billing", "112", 112, true},
		{"cpu", "1K", 1024, true},
		{"mem", "", 0, false},
		{"mem", "-1G", 0, false},
		{"cpu", "four", 0, false},
		{"mem", "1.5.0G", 0, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s=%q", tt.name, tt.in), func(t *testing.T) {
			got, err := parseTRESValue([]byte(tt.name), []byte(tt.in))
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("parseTRESValue(%s, %q) = %v, %v; want %v, ok=%v", tt.name, tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestDaysFromCivil(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Time{
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC),
		time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC),
	} {
		t.Run(d.Format("2006-01-02"), func(t *testing.T) {
			if got, want := daysFromCivil(d.Year(), int(d.Month()), d.Day()), d.Unix()/86400; got != want {
				t.Errorf("daysFromCivil(%s) = %d, want %d", d.Format("2006-01-02"), got, want)
			}
		})
	}
}
