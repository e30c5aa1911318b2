package pipeline

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestWarnStaleRunning checks the 7-day threshold between the newest job
// start or end of the input and now (a window that ends now because a job
// is running). Times are Unix seconds worked out by hand: 1735689600 is
// 2025-01-01T00:00:00Z, a day is 86400 s.
func TestWarnStaleRunning(t *testing.T) {
	t.Parallel()
	const jan1 = 1735689600
	for _, c := range []struct {
		name     string
		maxEnd   int64
		maxStart int64
		now      int64
		want     string // "" for no warning
	}{
		{"ended job 7 days ago: no warning", jan1, jan1 - 3600, jan1 + 7*86400, ""},
		{"ended job 7 days and 1 s ago", jan1, jan1 - 3600, jan1 + 7*86400 + 1,
			"newest job start or end in the sacct files is 2025-01-01T00:00:00Z, 7 days ago: an old dump charges its running jobs up to today; pass --to (for example --to 2025-01-02)"},
		{"a later start counts", jan1, jan1 + 3*86400, jan1 + 10*86400, ""},
		{"a later end counts", jan1 + 3*86400, jan1, jan1 + 10*86400, ""},
		{"only a running job", math.MinInt64, jan1 + 43200, jan1 + 700*86400,
			"is 2025-01-01T12:00:00Z, 699 days ago: an old dump charges its running jobs up to today; pass --to (for example --to 2025-01-02)"},
		{"nothing seen", math.MinInt64, 0, jan1, ""},
	} {
		var buf bytes.Buffer
		s := &stream{maxEnd: c.maxEnd, maxStart: c.maxStart}
		s.warnStaleRunning(c.now, zerolog.New(&buf))
		got := buf.String()
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: log %q, want %q", c.name, got, c.want)
		}
	}
}
