// Package whatif compares a cluster's fair share as its history recorded
// it with a replay of the same history under other settings
// (pipeline.WhatIf; docs/whatif.md): per association and snapshot as CSV
// for analysts, per lab as Markdown for the people who decide. It does no
// I/O but writing to the writers it is given.
package whatif

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export/encode"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/internal/safetext"
	"github.com/fairledger/fairledger/internal/slurmtime"
)

// Recovery is a lab's days to recover at zero use (report.Recovery's
// figure): Days when it recovers, else a word (within share, never by
// decay alone, no decay, no shares, unknown).
type Recovery struct {
	Days float64 // NaN unless it recovers after some time
	Text string
}

// RecoverFunc works out a lab's recovery at zero use from one snapshot's
// rows, under the half-life and dampening given (the lab report's rule,
// report.LabRecovery); nil leaves the recovery out.
type RecoverFunc func(rows []record.FairshareRow, lab string, halfLifeSec int64, damp float64) (Recovery, error)

// Settings are the settings of one side of the comparison.
type Settings struct {
	HalfLifeSec, CalcPeriodSec int64
	ResetPeriod, Algorithm     string
	Dampening                  int64
	PriorityFlags              []string
	// Weights are the partitions' TRESBillingWeights, as NAME and weights.
	Weights [][2]string
}

func (s Settings) rows() [][2]string {
	out := [][2]string{
		{"PriorityDecayHalfLife", slurmtime.Format(s.HalfLifeSec)},
		{"PriorityCalcPeriod", slurmtime.Format(s.CalcPeriodSec)},
		{"PriorityUsageResetPeriod", s.ResetPeriod},
		{"PriorityFlags", strings.Join(s.PriorityFlags, ",")},
		{"Algorithm", s.Algorithm},
		{"FairShareDampeningFactor", strconv.FormatInt(s.Dampening, 10)},
	}
	for _, w := range s.Weights {
		out = append(out, [2]string{"TRESBillingWeights of " + w[0], w[1]})
	}
	return out
}

// Options are what a Comparison needs besides the snapshots.
type Options struct {
	// Cluster names the cluster.
	Cluster string
	// Change lists the changes, one line each, as the user gave them.
	Change []string
	// Recorded and Replayed are both sides' settings.
	Recorded, Replayed Settings
	// Recover, when set, gives each lab's recovery at the last snapshot.
	Recover RecoverFunc
	// CSV, when set, receives a line per association and snapshot
	// (CSVHeader), as Add is called; Parquet, when set, the same rows as
	// a Parquet file (Row), written when Close is called.
	CSV, Parquet io.Writer
	// JobsCSV, when set, receives a line per waiting job and snapshot
	// (JobsCSVHeader), as AddQueue is called.
	JobsCSV io.Writer
}

// Row is one association at one snapshot, recorded beside replayed: a
// line of the CSV form and a row of the Parquet form. A value is nil
// where that side has no row of the association or a NULL.
type Row struct {
	Snapshot             time.Time `parquet:"snapshot,timestamp(microsecond:utc)"`
	Account              string    `parquet:"account,dict"`
	User                 string    `parquet:"user,dict"`
	Partition            string    `parquet:"partition,dict"`
	IsUser               bool      `parquet:"is_user"`
	RecordedRawUsage     *float64  `parquet:"recorded_raw_usage,optional"`
	ReplayedRawUsage     *float64  `parquet:"replayed_raw_usage,optional"`
	RecordedNormUsage    *float64  `parquet:"recorded_norm_usage,optional"`
	ReplayedNormUsage    *float64  `parquet:"replayed_norm_usage,optional"`
	RecordedEffectvUsage *float64  `parquet:"recorded_effectv_usage,optional"`
	ReplayedEffectvUsage *float64  `parquet:"replayed_effectv_usage,optional"`
	RecordedNormShares   *float64  `parquet:"recorded_norm_shares,optional"`
	ReplayedNormShares   *float64  `parquet:"replayed_norm_shares,optional"`
	RecordedLevelFS      *float64  `parquet:"recorded_level_fs,optional"`
	ReplayedLevelFS      *float64  `parquet:"replayed_level_fs,optional"`
	RecordedFairShare    *float64  `parquet:"recorded_fair_share,optional"`
	ReplayedFairShare    *float64  `parquet:"replayed_fair_share,optional"`
}

// newRow is the row of an association from its recorded and replayed
// rows (either nil).
func newRow(at time.Time, r, a *record.FairshareRow) Row {
	base := r
	if base == nil {
		base = a
	}
	out := Row{Snapshot: at.UTC(), Account: base.Account, User: base.User, Partition: base.Partition, IsUser: base.IsUser}
	if r != nil {
		out.RecordedRawUsage, out.RecordedNormUsage, out.RecordedEffectvUsage = r.RawUsage, r.NormUsage, r.EffectvUsage
		out.RecordedNormShares, out.RecordedLevelFS, out.RecordedFairShare = r.NormShares, r.LevelFS, r.FairShare
	}
	if a != nil {
		out.ReplayedRawUsage, out.ReplayedNormUsage, out.ReplayedEffectvUsage = a.RawUsage, a.NormUsage, a.EffectvUsage
		out.ReplayedNormShares, out.ReplayedLevelFS, out.ReplayedFairShare = a.NormShares, a.LevelFS, a.FairShare
	}
	return out
}

// csvLine is the row as a CSV line (CSVHeader).
func (r *Row) csvLine() []string {
	out := []string{r.Snapshot.Format(time.RFC3339), cell(r.Account), cell(r.User), cell(r.Partition), strconv.FormatBool(r.IsUser)}
	for _, p := range []*float64{r.RecordedRawUsage, r.ReplayedRawUsage, r.RecordedNormUsage, r.ReplayedNormUsage,
		r.RecordedEffectvUsage, r.ReplayedEffectvUsage, r.RecordedNormShares, r.ReplayedNormShares,
		r.RecordedLevelFS, r.ReplayedLevelFS, r.RecordedFairShare, r.ReplayedFairShare} {
		v := ""
		if p != nil {
			v = strconv.FormatFloat(*p, 'g', -1, 64)
		}
		out = append(out, v)
	}
	return out
}

// CSVHeader is the header of the CSV form: a snapshot, an association,
// then each column as recorded and as replayed (blank where that side has
// no row or a NULL).
var CSVHeader = []string{"snapshot", "account", "user", "partition", "is_user",
	"recorded_raw_usage", "replayed_raw_usage", "recorded_norm_usage", "replayed_norm_usage",
	"recorded_effectv_usage", "replayed_effectv_usage", "recorded_norm_shares", "replayed_norm_shares",
	"recorded_level_fs", "replayed_level_fs", "recorded_fair_share", "replayed_fair_share"}

// Comparison accumulates the snapshots of a replay (Add) into the
// per-lab figures the Markdown form prints.
type Comparison struct {
	opt   Options
	csv   *csv.Writer
	pq    *parquet.GenericWriter[Row]
	jobs  *csv.Writer
	queue *QueueResult // nil until AddQueue
	labs  map[string]*Lab
	first time.Time
	last  time.Time
	n     int
	times []time.Time
	// the last snapshot's rows, for the recoveries
	lastRec, lastAlt []record.FairshareRow
}

// Lab is one lab's figures: an account with users of its own.
type Lab struct {
	Account string
	// Recorded and Replayed are its values at the last snapshot.
	Recorded, Replayed LabValues
	// MeanFairShare is the mean over the snapshots of its users' mean
	// FairShare, recorded and replayed (NaN where it had no users).
	MeanFairShare [2]float64
	// Recovery is the days to recover at zero use at the last snapshot,
	// recorded and replayed.
	Recovery [2]Recovery
	// FairShare and NormUsage are its users' mean FairShare and its
	// NormUsage at each snapshot (Result.Times), recorded and replayed;
	// NaN where it was no lab.
	FairShare, NormUsage [2][]float64

	sum [2]float64
	cnt [2]int
}

// LabValues are a lab's columns at one snapshot; NaN for none.
type LabValues struct {
	// FairShare is the mean of its users' FairShare.
	FairShare, LevelFS, NormUsage, NormShares float64
}

// New starts a comparison.
func New(opt Options) (*Comparison, error) {
	c := &Comparison{opt: opt, labs: map[string]*Lab{}}
	if opt.CSV != nil {
		c.csv = csv.NewWriter(opt.CSV)
		if err := c.csv.Write(CSVHeader); err != nil {
			return nil, fmt.Errorf("what-if csv: %w", err)
		}
	}
	if opt.Parquet != nil {
		c.pq = encode.NewWriter[Row](opt.Parquet)
	}
	if opt.JobsCSV != nil {
		var err error
		if c.jobs, err = writeJobsHeader(opt.JobsCSV); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// SetSettings sets both sides' settings (Options.Recorded and
// Options.Replayed), which a replay reports when it ends.
func (c *Comparison) SetSettings(recorded, replayed Settings) {
	c.opt.Recorded, c.opt.Replayed = recorded, replayed
}

type key struct{ account, user, partition string }

func keyOf(r *record.FairshareRow) key { return key{r.Account, r.User, r.Partition} }

// Add takes one snapshot's rows, as recorded and as replayed.
func (c *Comparison) Add(at time.Time, recorded, replayed []record.FairshareRow) error {
	if c.n == 0 {
		c.first = at
	}
	c.n++
	c.last = at
	c.times = append(c.times, at)
	c.lastRec, c.lastAlt = recorded, replayed
	for side, rows := range [][]record.FairshareRow{recorded, replayed} {
		for lab, v := range labValues(rows) {
			l := c.labs[lab]
			if l == nil {
				nan := LabValues{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
				l = &Lab{Account: lab, Recorded: nan, Replayed: nan}
				c.labs[lab] = l
			}
			if !math.IsNaN(v.FairShare) {
				l.sum[side] += v.FairShare
				l.cnt[side]++
			}
			l.FairShare[side] = pad(l.FairShare[side], c.n-1)
			l.NormUsage[side] = pad(l.NormUsage[side], c.n-1)
			l.FairShare[side] = append(l.FairShare[side], v.FairShare)
			l.NormUsage[side] = append(l.NormUsage[side], v.NormUsage)
		}
	}
	if c.csv == nil && c.pq == nil {
		return nil
	}
	alt := make(map[key]*record.FairshareRow, len(replayed))
	for i := range replayed {
		alt[keyOf(&replayed[i])] = &replayed[i]
	}
	rows := make([]Row, 0, len(recorded)+len(replayed))
	for i := range recorded {
		k := keyOf(&recorded[i])
		rows = append(rows, newRow(at, &recorded[i], alt[k]))
		delete(alt, k)
	}
	for _, a := range alt {
		rows = append(rows, newRow(at, nil, a))
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return compareKey(key{a.Account, a.User, a.Partition}, key{b.Account, b.User, b.Partition})
	})
	if c.csv != nil {
		for i := range rows {
			if err := c.csv.Write(rows[i].csvLine()); err != nil {
				return fmt.Errorf("what-if csv: %w", err)
			}
		}
		c.csv.Flush()
		if err := c.csv.Error(); err != nil {
			return fmt.Errorf("what-if csv: %w", err)
		}
	}
	if c.pq != nil {
		if _, err := c.pq.Write(rows); err != nil {
			return fmt.Errorf("what-if parquet: %w", err)
		}
	}
	return nil
}

// Close finishes the Parquet form (Options.Parquet); it does nothing
// without one.
func (c *Comparison) Close() error {
	if c.pq == nil {
		return nil
	}
	err := c.pq.Close()
	c.pq = nil
	if err != nil {
		return fmt.Errorf("what-if parquet: %w", err)
	}
	return nil
}

// pad extends a series with NaN to n values.
func pad(v []float64, n int) []float64 {
	for len(v) < n {
		v = append(v, math.NaN())
	}
	return v
}

func compareKey(a, b key) int {
	return cmp.Or(strings.Compare(a.account, b.account), strings.Compare(a.user, b.user), strings.Compare(a.partition, b.partition))
}

// cell is a CSV cell that no spreadsheet takes for a formula.
func cell(s string) string { return safetext.CSVCell(s) }

// labValues are the values of every lab of one snapshot: the accounts
// with user rows of their own, their row's LevelFS, NormUsage and
// NormShares and their users' mean FairShare.
func labValues(rows []record.FairshareRow) map[string]LabValues {
	type acc struct {
		sum float64
		n   int
	}
	users := map[string]*acc{}
	for i := range rows {
		r := &rows[i]
		if !r.IsUser {
			continue
		}
		a := users[r.Parent]
		if a == nil {
			a = &acc{}
			users[r.Parent] = a
		}
		if r.FairShare != nil && !math.IsNaN(*r.FairShare) {
			a.sum += *r.FairShare
			a.n++
		}
	}
	out := make(map[string]LabValues, len(users))
	for i := range rows {
		r := &rows[i]
		a := users[r.Account]
		if r.IsUser || a == nil || r.Account == "root" && r.Parent == "" {
			continue
		}
		v := LabValues{FairShare: math.NaN(), LevelFS: f(r.LevelFS), NormUsage: f(r.NormUsage), NormShares: f(r.NormShares)}
		if a.n > 0 {
			v.FairShare = a.sum / float64(a.n)
		}
		out[r.Account] = v
	}
	return out
}

func f(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Labs finishes the comparison: every lab, those that gain most first
// (by the change of their users' mean FairShare over the snapshots), with
// their values at the last snapshot and, with Options.Recover, their
// recoveries.
func (c *Comparison) Labs() ([]*Lab, error) {
	recV, altV := labValues(c.lastRec), labValues(c.lastAlt)
	out := make([]*Lab, 0, len(c.labs))
	for name, l := range c.labs {
		if v, ok := recV[name]; ok {
			l.Recorded = v
		}
		if v, ok := altV[name]; ok {
			l.Replayed = v
		}
		for side := range 2 {
			l.FairShare[side] = pad(l.FairShare[side], c.n)
			l.NormUsage[side] = pad(l.NormUsage[side], c.n)
			l.MeanFairShare[side] = math.NaN()
			if l.cnt[side] > 0 {
				l.MeanFairShare[side] = l.sum[side] / float64(l.cnt[side])
			}
		}
		if c.opt.Recover != nil {
			for side, rows := range [][]record.FairshareRow{c.lastRec, c.lastAlt} {
				s := []Settings{c.opt.Recorded, c.opt.Replayed}[side]
				if _, ok := []map[string]LabValues{recV, altV}[side][name]; !ok {
					l.Recovery[side] = Recovery{Days: math.NaN(), Text: "no such lab"}
					continue
				}
				r, err := c.opt.Recover(rows, name, s.HalfLifeSec, float64(max(s.Dampening, 1)))
				if err != nil {
					return nil, fmt.Errorf("recovery of %s: %w", name, err)
				}
				l.Recovery[side] = r
			}
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *Lab) int {
		da, db := a.delta(), b.delta()
		switch {
		case math.IsNaN(da) && math.IsNaN(db):
		case math.IsNaN(da):
			return 1
		case math.IsNaN(db):
			return -1
		case da != db:
			return cmp.Compare(db, da)
		}
		return strings.Compare(a.Account, b.Account)
	})
	return out, nil
}

// delta is the change of the lab's users' mean FairShare over the
// snapshots, replayed − recorded.
func (l *Lab) delta() float64 { return l.MeanFairShare[1] - l.MeanFairShare[0] }

// Result is a finished comparison, as the Markdown and HTML forms print
// it.
type Result struct {
	Cluster string
	// Change lists the changes, one line each.
	Change []string
	// Settings are the settings' rows: name, recorded, replayed.
	Settings [][3]string
	// Snapshots is the number compared, First and Last the first and last
	// of them, Times every one.
	Snapshots   int
	First, Last time.Time
	Times       []time.Time
	// Labs are every lab, those that gain most first (Comparison.Labs);
	// Gain and Lose up to three that gain and three that lose most.
	Labs, Gain, Lose []*Lab
	// Recovery tells whether the labs' recoveries were worked out.
	Recovery bool
	// Queue sums up the waiting jobs, where the history has job
	// priority; nil without.
	Queue *QueueResult
}

// Result finishes the comparison.
func (c *Comparison) Result() (*Result, error) {
	labs, err := c.Labs()
	if err != nil {
		return nil, err
	}
	r := &Result{Cluster: c.opt.Cluster, Change: c.opt.Change, Snapshots: c.n, First: c.first, Last: c.last,
		Times: c.times, Labs: labs, Recovery: c.opt.Recover != nil, Queue: c.queue}
	r.Gain, r.Lose = movers(labs)
	rec, alt := c.opt.Recorded.rows(), c.opt.Replayed.rows()
	for i := range max(len(rec), len(alt)) {
		var a, b [2]string
		if i < len(rec) {
			a = rec[i]
		}
		if i < len(alt) {
			b = alt[i]
		}
		r.Settings = append(r.Settings, [3]string{cmp.Or(a[0], b[0]), a[1], b[1]})
	}
	return r, nil
}

// Delta is the change of the lab's users' mean FairShare over the
// snapshots, replayed − recorded.
func (l *Lab) Delta() float64 { return l.delta() }

// Limits is the paragraph every form prints: what a replay cannot know.
const Limits = "The scheduler would have started other jobs at other times. " +
	"With other priorities, backfill would have fitted other jobs into the gaps, jobs would have started earlier or later, " +
	"and users would have submitted differently. A replay charges the jobs as they really ran, at their real times, " +
	"under the changed settings: it re-ranks the usage and the queue as they were, and does not re-simulate the schedule. " +
	"Read its numbers as \"what fair share would have said about the same work\", not as \"what would have happened\"."

// WriteMarkdown writes the comparison as Markdown: the change and both
// sides' settings, the labs that gain and lose most, every lab at the
// last snapshot, and Limits.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	res, err := c.Result()
	if err != nil {
		return err
	}
	return res.WriteMarkdown(w)
}

// WriteMarkdown writes the result as Comparison.WriteMarkdown does.
func (res *Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# What if: cluster %s\n\n", md(res.Cluster))
	if res.Snapshots == 0 {
		b.WriteString("No stored snapshot in the window: nothing to compare.\n")
	} else {
		fmt.Fprintf(&b, "%d snapshots compared, %s to %s.\n", res.Snapshots, fmtTime(res.First), fmtTime(res.Last))
	}
	b.WriteString("\n## The change\n\n")
	if len(res.Change) == 0 {
		b.WriteString(NoChange + "\n")
	}
	for _, ch := range res.Change {
		b.WriteString("- `" + strings.ReplaceAll(safetext.Visible(ch), "`", "'") + "`\n")
	}
	b.WriteString("\n| setting | recorded | replayed |\n|---|---|---|\n")
	for _, s := range res.Settings {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", md(s[0]), md(s[1]), md(s[2]))
	}
	b.WriteString("\n## Who gains and who loses\n\n" + FigureText + "\n\n")
	b.WriteString("Gain most: " + moverList(res.Gain, md) + ".\n\nLose most: " + moverList(res.Lose, md) + ".\n")
	fmt.Fprintf(&b, "\n## Every lab, at the last snapshot (%s)\n\n", fmtTime(res.Last))
	head, rows := res.LabTable()
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|---|" + strings.Repeat("---:|", len(head)-1) + "\n")
	for _, row := range rows {
		for i := range row {
			row[i] = md(row[i])
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	if res.Recovery {
		b.WriteString("\n" + RecoveryText + "\n")
	}
	if q := res.Queue; q != nil {
		b.WriteString("\n## Waiting jobs\n\n" + q.Summary() + " " + QueueText + "\n\n")
		head, rows := q.QueueTable()
		if len(rows) == 0 {
			b.WriteString("No waiting job moved.\n")
		} else {
			b.WriteString("| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat("---|", 5) + strings.Repeat("---:|", 5) + "---|\n")
			for _, row := range rows {
				for i := range row {
					row[i] = md(row[i])
				}
				b.WriteString("| " + strings.Join(row, " | ") + " |\n")
			}
		}
	}
	b.WriteString("\n## What a replay cannot know\n\n" + Limits + "\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write what-if markdown: %w", err)
	}
	return nil
}

// The texts every form prints.
const (
	NoChange   = "None: the replay recomputes the history as it is recorded."
	FigureText = "A lab's figure is its users' FairShare (the factor job priority multiplies by PriorityWeightFairshare), " +
		"averaged over its users and over the snapshots compared; the change is replayed − recorded."
	RecoveryText = "Days to recover: at zero use from the last snapshot on, with the others' usage as it is, " +
		"the days until the lab (and, under Fair Tree, every account above it) is back at its share, under each side's half-life."
)

// LabTable is the table of every lab at the last snapshot: its head and
// its rows of plain text.
func (res *Result) LabTable() ([]string, [][]string) {
	head := []string{"lab", "mean FairShare rec.", "repl.", "change", "FairShare now rec.", "repl.", "LevelFS rec.", "repl.", "NormUsage rec.", "repl.", "NormShares rec.", "repl."}
	if res.Recovery {
		head = append(head, "days to recover rec.", "repl.")
	}
	var rows [][]string
	for _, l := range res.Labs {
		row := []string{l.Account, num(l.MeanFairShare[0]), num(l.MeanFairShare[1]), signed(l.delta()),
			num(l.Recorded.FairShare), num(l.Replayed.FairShare), num(l.Recorded.LevelFS), num(l.Replayed.LevelFS),
			num(l.Recorded.NormUsage), num(l.Replayed.NormUsage), num(l.Recorded.NormShares), num(l.Replayed.NormShares)}
		if res.Recovery {
			row = append(row, l.Recovery[0].String(), l.Recovery[1].String())
		}
		rows = append(rows, row)
	}
	return head, rows
}

// MoverList names labs with their change, "none" without, each name
// escaped by esc for the form it goes into.
func MoverList(labs []*Lab, esc func(string) string) string { return moverList(labs, esc) }

func (r Recovery) String() string {
	if !math.IsNaN(r.Days) {
		return strconv.FormatFloat(r.Days, 'f', 1, 64)
	}
	return r.Text
}

// movers are up to three labs that gain and three that lose most.
func movers(labs []*Lab) (gain, lose []*Lab) {
	for _, l := range labs {
		if d := l.delta(); d > 0 && len(gain) < 3 {
			gain = append(gain, l)
		}
	}
	for i := len(labs) - 1; i >= 0 && len(lose) < 3; i-- {
		if d := labs[i].delta(); d < 0 {
			lose = append(lose, labs[i])
		}
	}
	return gain, lose
}

func moverList(labs []*Lab, esc func(string) string) string {
	if len(labs) == 0 {
		return "none"
	}
	out := make([]string, len(labs))
	for i, l := range labs {
		out[i] = fmt.Sprintf("%s (%s)", esc(l.Account), signed(l.delta()))
	}
	return strings.Join(out, ", ")
}

func md(s string) string { return safetext.Markdown(s) }

func num(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	if math.IsInf(v, 0) {
		return "inf"
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

func signed(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	s := strconv.FormatFloat(v, 'f', 6, 64)
	if v >= 0 {
		s = "+" + s
	}
	return s
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") + " UTC" }
