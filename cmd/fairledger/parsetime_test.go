package main

import (
	"strings"
	"testing"
	"time"
)

// TestParseTimeDST: a local time a DST change skips or repeats is refused
// instead of silently moved or resolved; dates and RFC 3339 are unaffected.
// Europe/Berlin in 2025: clocks went 02:00 CET → 03:00 CEST on 30 March and
// 03:00 CEST → 02:00 CET on 26 October.
func TestParseTimeDST(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tz database:", err)
	}
	tests := []struct {
		in   string
		want string // UTC RFC 3339, or an error substring
	}{
		{"2025-03-30T01:59:59", "2025-03-30T00:59:59Z"},
		{"2025-03-30T02:30", "does not exist in Europe/Berlin"},
		{"2025-03-30 02:00:00", "does not exist in Europe/Berlin"},
		{"2025-03-30T03:00", "2025-03-30T01:00:00Z"},
		{"2025-10-26T01:59", "2025-10-25T23:59:00Z"},
		{"2025-10-26T02:00", "is ambiguous in Europe/Berlin"},
		{"2025-10-26T02:59:59", "is ambiguous in Europe/Berlin"},
		{"2025-10-26T03:00", "2025-10-26T02:00:00Z"},
		{"2025-10-26", "2025-10-25T22:00:00Z"},
		{"2025-10-26T02:30:00+01:00", "2025-10-26T01:30:00Z"},
		{"@1761442200", "2025-10-26T01:30:00Z"},
	}
	for _, tt := range tests {
		got, err := parseTime("to", tt.in, berlin)
		if strings.HasSuffix(tt.want, "Z") {
			if err != nil || got.UTC().Format(time.RFC3339) != tt.want {
				t.Errorf("parseTime(%q) = %v, %v; want %s", tt.in, got.UTC(), err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "give an offset") {
			t.Errorf("parseTime(%q) = %v, %v; want an error holding %q", tt.in, got.UTC(), err, tt.want)
		}
	}
}
