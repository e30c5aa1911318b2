package report

import (
	"fmt"
	"strings"
)

// The tables and text of the section "Why did our jobs wait", shared by
// the HTML, Markdown and CSV writers.

// waitsTitle is the section's heading.
const waitsTitle = "Why did our jobs wait"

// fmtPoints prints priority points (1 decimal).
func fmtPoints(v float64) string { return fmtFixed(v, 1) }

// fmtWaitHours prints a wait in seconds as hours with 1 decimal.
func fmtWaitHours(sec int64) string { return fmtFixed(float64(sec)/3600, 1) }

// inSentence is a factor's name inside a sentence.
func (f Factor) inSentence() string {
	switch f {
	case FactorQOS, FactorTRES:
		return f.String()
	}
	return strings.ToLower(f.String())
}

// waitsOnly is the section's one sentence when the history holds no
// priority of the lab's jobs in the period ("" when it does).
func (r *Report) waitsOnly() string {
	switch {
	case !r.Waits.Recorded:
		return "The history holds no job priorities for this period: runs record them with fairledger run --priority."
	case !r.Waits.LabRows:
		return "None of the lab's jobs waited at a fair-share snapshot or started in the period, so there is no wait to explain."
	}
	return ""
}

// waitsIntro is the paragraph that opens the section.
func (r *Report) waitsIntro() string {
	return "A job's wait is the time from when it could start (eligible: submitted, or released, and its begin time " +
		"reached) to when it started, as sacct's Planned. Medians and 90th percentiles are nearest-rank: with the n " +
		"waits sorted, the ⌈n/2⌉-th and the ⌈0.9·n⌉-th (the median of an even number of waits is the lower middle one). " +
		"\"First in line\" is the share of jobs that no job waiting in their partition outranked when they started. " +
		"Priorities are sprio's: each factor in priority points (the factor × its PriorityWeight), nice subtracted."
}

// waitsMonthsNote replaces the waits table when no job of the lab
// started in the period.
func (r *Report) waitsMonthsNote() string {
	if len(r.Waits.Months) > 0 {
		return ""
	}
	return "No job of the lab started in the period."
}

// dominantText is the sentence naming the factor that held the lab's jobs
// back most, or why there is none.
func (r *Report) dominantText() string {
	c := r.Waits.Compare
	switch {
	case c.LabRows == 0:
		return "None of the lab's jobs was waiting at a fair-share snapshot in the period, so their factors cannot be " +
			"compared with the other jobs'."
	case c.OtherRows == 0:
		return "No other job was waiting at the snapshots at which the lab's jobs waited, so there is nothing to compare " +
			"their factors with."
	}
	f, ok := c.Dominant()
	if !ok {
		return "No factor held your jobs back: on every factor their mean was at or above that of the other jobs " +
			"waiting with them."
	}
	return fmt.Sprintf("%s held your jobs back most: %s priority points below the other jobs waiting with them on average.",
		f, fmtPoints(c.Shortfall(f)))
}

// compareCaption says what the factor means are taken over.
func (r *Report) compareCaption() string {
	c := r.Waits.Compare
	return fmt.Sprintf("Means over the %d snapshots at which the lab had a job waiting: %d rows of the lab's jobs, %d of "+
		"the other jobs waiting then (a row is a job waiting in one partition).", c.Snapshots, c.LabRows, c.OtherRows)
}

// waitMonthsTable is the waits per UTC month, the lab's against the rest
// of the cluster's.
func (r *Report) waitMonthsTable() table {
	t := table{ID: "wait_month", Title: "Waits of the jobs started per month (hours from eligible to start)",
		Head: []string{"Month", "Jobs started", "Median wait", "90th percentile wait", "First in line",
			"Rest of cluster: jobs started", "Rest: median wait", "Rest: 90th percentile wait", "Rest: first in line"},
		Num: numCols(9)}
	stats := func(s WaitStats) []string {
		if s.Jobs == 0 {
			return []string{"0", "–", "–", "–"}
		}
		return []string{fmtCount(s.Jobs), fmtWaitHours(s.MedianSec), fmtWaitHours(s.P90Sec),
			fmtPct(float64(s.FirstInLine) / float64(s.Jobs))}
	}
	for _, m := range r.Waits.Months {
		t.Rows = append(t.Rows, append(append([]string{m.Month}, stats(m.Lab)...), stats(m.Rest)...))
	}
	return t
}

// waitFactorsTable is the lab's mean factors against the others'.
func (r *Report) waitFactorsTable() table {
	c := r.Waits.Compare
	t := table{ID: "wait_factors", Title: "Priority factors of the jobs waiting at the same snapshots (mean priority points)",
		Head: []string{"Factor", "Your jobs", "Other jobs", "Yours − others"}, Num: numCols(4)}
	for f := range numFactors {
		t.Rows = append(t.Rows, []string{f.String(), fmtPoints(c.Lab[f]), fmtPoints(c.Others[f]), fmtPoints(c.Lab[f] - c.Others[f])})
	}
	t.Rows = append(t.Rows, []string{"Priority", fmtPoints(c.LabPriority), fmtPoints(c.OthersPriority),
		fmtPoints(c.LabPriority - c.OthersPriority)})
	return t
}

// gapsText are a long wait's largest gaps (at most two) for the table,
// "Fair share 500.0, QOS 500.0".
func (w LongWait) gapsText() string {
	g := w.Gaps()
	var out []string
	for _, f := range g[:min(len(g), 2)] {
		out = append(out, f.String()+" "+fmtPoints(w.OthersFactors[f]-w.Factors[f]))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// longestWaitsTable is the lab's longest waits.
func (r *Report) longestWaitsTable() table {
	t := table{ID: "longest_waits", Title: "Longest waits (times UTC, waits in hours; the others are the jobs waiting in " +
		"the partition at the last snapshot before the start)",
		Head: []string{"#", "Job", "User", "Partition", "Submitted", "Started", "Wait", "Rank at start",
			"Priority at start", "Others waiting", "Their median priority", "Furthest behind on (points)"},
		Num: []bool{true, false, false, false, false, false, true, true, true, true, true, false}}
	for i, w := range r.Waits.Longest {
		submit := ""
		if w.Submit != nil {
			submit = fmtMinute(*w.Submit)
		}
		others, med, gaps := "–", "–", "–"
		if w.Snapshot != nil {
			others = fmtCount(w.Others)
		}
		if w.Others > 0 {
			med = fmtCount(w.OthersPriority)
			gaps = w.gapsText()
		}
		t.Rows = append(t.Rows, []string{fmtCount(int64(i + 1)), fmt.Sprint(w.JobID), w.User, w.Partition, submit,
			fmtMinute(w.Start), fmtWaitHours(w.WaitSec), fmt.Sprintf("%d of %d", w.Rank, w.Waiting), fmtCount(w.Priority),
			others, med, gaps})
	}
	return t
}

// plural is "1 job" or "n jobs".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// line explains one long wait in plain language.
func (w LongWait) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Job %d (%s, %s) waited %s hours before it started on %s", w.JobID, w.User, w.Partition,
		fmtWaitHours(w.WaitSec), fmtTime(w.Start))
	switch {
	case w.Rank <= 1 && w.Waiting <= 1:
		fmt.Fprintf(&b, ", the only job waiting in %s.", w.Partition)
	case w.Rank <= 1:
		fmt.Fprintf(&b, ", first in line of the %d jobs waiting in %s.", w.Waiting, w.Partition)
	default:
		ahead := "them: backfill, or they did not fit"
		if w.Rank == 2 {
			ahead = "it: backfill, or it did not fit"
		}
		fmt.Fprintf(&b, " with %s of higher priority still waiting in %s (it went ahead of %s).",
			plural(w.Rank-1, "job", "jobs"), w.Partition, ahead)
	}
	fmt.Fprintf(&b, " Its priority then was %d; ", w.Priority)
	switch {
	case w.Snapshot == nil:
		b.WriteString("no snapshot precedes its start, so it cannot be set against the jobs waiting before it.")
		return b.String()
	case w.Others == 0:
		fmt.Fprintf(&b, "no other job was waiting in %s at the last snapshot before it started (%s).", w.Partition,
			fmtTime(*w.Snapshot))
		return b.String()
	case w.Others == 1:
		fmt.Fprintf(&b, "the 1 other job waiting in %s at the last snapshot before it started (%s) had priority %d",
			w.Partition, fmtTime(*w.Snapshot), w.OthersPriority)
	default:
		fmt.Fprintf(&b, "the %d other jobs waiting in %s at the last snapshot before it started (%s) had a median priority of %d",
			w.Others, w.Partition, fmtTime(*w.Snapshot), w.OthersPriority)
	}
	g := w.Gaps()
	gap := func(f Factor) float64 { return w.OthersFactors[f] - w.Factors[f] }
	theirs := "their median"
	if w.Others == 1 {
		theirs = "that job's"
	}
	switch {
	case len(g) == 0:
		b.WriteString(", and it was behind on no factor.")
	case len(g) == 1:
		fmt.Fprintf(&b, ", and it was behind only on %s (%s points below %s).", g[0].inSentence(), fmtPoints(gap(g[0])), theirs)
	default:
		fmt.Fprintf(&b, ", and it was furthest behind on %s (%s points below %s) and %s (%s points).",
			g[0].inSentence(), fmtPoints(gap(g[0])), theirs, g[1].inSentence(), fmtPoints(gap(g[1])))
	}
	return b.String()
}

// waitsCannotTell is the fixed paragraph on what the priority records do
// not hold.
const waitsCannotTell = "The history holds each job's priority, not the scheduler's decisions. A job with a rank above 1 " +
	"started ahead of jobs with a higher priority: the backfill scheduler found room for it, or the jobs ahead did not fit " +
	"on the free nodes; no record says which, nor whether a job waited for nodes to free up. Reservations, holds placed " +
	"on a job already pending, a nice value changed after submission and limits (QOS or association GrpTRES, MaxJobs, " +
	"MaxSubmitJobs) are in no record either, so a job kept back by one of them looks here like a job that merely waited. " +
	"The factors are those slurmctld last computed: at the last decay tick (PriorityCalcPeriod) before the snapshot or " +
	"the start, or at the job's submission or release when later."

// waitsParagraphs are the section's text in reading order, for the CSV
// form (HTML and Markdown print them between the tables).
func (r *Report) waitsParagraphs() []string {
	if s := r.waitsOnly(); s != "" {
		return []string{s}
	}
	out := []string{r.waitsIntro()}
	if s := r.waitsMonthsNote(); s != "" {
		out = append(out, s)
	}
	out = append(out, r.dominantText())
	if r.Waits.Compare.LabRows > 0 && r.Waits.Compare.OtherRows > 0 {
		out = append(out, r.compareCaption())
	}
	for _, w := range r.Waits.Longest {
		out = append(out, w.line())
	}
	return append(out, waitsCannotTell)
}

// waitsTextTable holds the section's paragraphs (CSV only).
func (r *Report) waitsTextTable() table {
	t := table{ID: "wait_text", Title: waitsTitle, Head: []string{"Paragraph", "Text"}, Num: []bool{false, false}}
	for i, p := range r.waitsParagraphs() {
		t.Rows = append(t.Rows, []string{fmtCount(int64(i + 1)), p})
	}
	return t
}

// waitsTables are the section's tables, in reading order (none when the
// section is one sentence).
func (r *Report) waitsTables() []table {
	if r.waitsOnly() != "" {
		return nil
	}
	var out []table
	if len(r.Waits.Months) > 0 {
		out = append(out, r.waitMonthsTable())
	}
	if c := r.Waits.Compare; c.LabRows > 0 && c.OtherRows > 0 {
		out = append(out, r.waitFactorsTable())
	}
	if len(r.Waits.Longest) > 0 {
		out = append(out, r.longestWaitsTable())
	}
	return out
}
