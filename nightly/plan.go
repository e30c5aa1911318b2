package nightly

import (
	"fmt"
	"time"
)

// Span is a half-open stretch of time [From, To).
type Span struct{ From, To time.Time }

// Plan is what one night of a cluster does: the window it computes and
// the span of time it asks sacct for.
type Plan struct {
	// Last is the history's newest checkpoint of the cluster, where the
	// night resumes; zero on a first night.
	Last time.Time
	// From is a first night's start (run --from): the configured first
	// day. Zero when the night resumes.
	From time.Time
	// To is the night's end (run --to).
	To time.Time
	// Fetch is the span sacct is asked for (-S Fetch.From -E Fetch.To): it
	// reaches Overlap before Last, and covers the whole window.
	Fetch Span
	// Chunks split Fetch into sacct calls of at most MaxQueryRange each.
	Chunks []Span
	// UpToDate says the history already reaches To: nothing to fetch or
	// run.
	UpToDate bool
}

// PlanNight plans a night of cl: last is the history's newest checkpoint
// of the cluster (zero: none), first the section's first_day read in the
// site's zone loc (zero: not set), now the clock, to an explicit end (zero:
// the section's window_end). It does no I/O.
func PlanNight(cl *Cluster, last, first, now, to time.Time, loc *time.Location) (Plan, error) {
	p := Plan{Last: last}
	if to.IsZero() {
		to = WindowEndAt(cl.WindowEnd, now, loc)
	}
	p.To = to
	if to.After(now) {
		return p, fmt.Errorf("the night's end %s is after now (%s)", fmtTime(to), fmtTime(now))
	}
	if !last.IsZero() {
		if !to.After(last) {
			p.UpToDate = true
			return p, nil
		}
		p.Fetch = Span{From: last.Add(-cl.Overlap.Duration), To: to}
	} else {
		if first.IsZero() {
			return p, fmt.Errorf("the history has no night of cluster %s yet: set first_day in its [[cluster]] section "+
				"(the day the backfill starts, e.g. first_day = %q)", cl.Name, now.In(loc).AddDate(-1, 0, 0).Format(time.DateOnly))
		}
		if !first.Before(to) {
			return p, fmt.Errorf("first_day %s is not before the night's end %s", cl.FirstDay, fmtTime(to))
		}
		p.From = first
		p.Fetch = Span{From: first, To: to}
	}
	p.Chunks = Chunks(p.Fetch, cl.MaxQueryRange.Duration)
	return p, nil
}

// WindowEndAt is where a night started at now ends: the last local
// midnight in loc (WindowMidnight), or now's whole second (WindowNow).
func WindowEndAt(mode string, now time.Time, loc *time.Location) time.Time {
	if mode == WindowNow {
		return now.Truncate(time.Second)
	}
	l := now.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc)
}

// Chunks cuts s into consecutive spans of at most max each, the last one
// shorter.
func Chunks(s Span, max time.Duration) []Span {
	var out []Span
	for from := s.From; from.Before(s.To); {
		to := from.Add(max)
		if to.After(s.To) {
			to = s.To
		}
		out = append(out, Span{From: from, To: to})
		from = to
	}
	return out
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
