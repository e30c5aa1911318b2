package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fairledger/fairledger/fairshare"
)

// The one formatting of each kind of number, shared by the HTML, Markdown
// and CSV writers so that all three carry the same strings.

// fmtFixed prints v with n decimals; NaN is blank, ±Inf "inf"/"-inf", and
// −0 prints as 0.
func fmtFixed(v float64, n int) string {
	switch {
	case math.IsNaN(v):
		return ""
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(v, 'f', n, 64)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	return s
}

// fmtFactor prints a factor or usage fraction as sshare does (6 decimals).
func fmtFactor(v float64) string { return fmtFixed(v, 6) }

// fmtHours prints TRES-hours or billing-hours (1 decimal).
func fmtHours(v float64) string { return fmtFixed(v, 1) }

// fmtRatio prints a usage/share ratio (2 decimals).
func fmtRatio(v float64) string { return fmtFixed(v, 2) }

// fmtPct prints a fraction as a percentage with 1 decimal.
func fmtPct(v float64) string { return fmtFixed(100*v, 1) + "%" }

// fmtDays prints seconds as days with 1 decimal.
func fmtDays(sec float64) string { return fmtFixed(sec/86400, 1) }

// fmtTime prints an instant in UTC to the minute.
func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") + " UTC" }

// fmtMinute prints an instant in UTC to the minute, without the zone
// (for tables whose caption says UTC).
func fmtMinute(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }

// fmtDate prints the UTC date of an instant.
func fmtDate(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// fmtSpan prints seconds in words, largest unit first: "7 days",
// "1 day 12 hours", "5 minutes".
func fmtSpan(sec int64) string {
	if sec == 0 {
		return "0 seconds"
	}
	units := []struct {
		n    int64
		name string
	}{{86400, "day"}, {3600, "hour"}, {60, "minute"}, {1, "second"}}
	var parts []string
	for _, u := range units {
		if q := sec / u.n; q > 0 {
			s := fmt.Sprintf("%d %s", q, u.name)
			if q != 1 {
				s += "s"
			}
			parts = append(parts, s)
			sec -= q * u.n
		}
	}
	return strings.Join(parts, " ")
}

// fmtCount prints a count.
func fmtCount(n int64) string { return strconv.FormatInt(n, 10) }

// algorithmName is the algorithm as slurm.conf selects it.
func algorithmName(a fairshare.Algorithm) string {
	switch a {
	case fairshare.ClassicAlgo:
		return "classic (PriorityFlags=" + a.Flag() + ")"
	case fairshare.DepthObliviousAlgo:
		return "depth-oblivious (PriorityFlags=" + a.Flag() + ")"
	}
	return "Fair Tree (Slurm's default)"
}
