package report

import (
	"math"
	"slices"
	"time"
)

// table is one table of a report. The HTML, Markdown and CSV writers all
// print the same tables cell for cell, so the three formats carry the
// same numbers.
type table struct {
	// ID names the table: the CSV section and the HTML id.
	ID string
	// Title is the heading (HTML caption, Markdown bold line).
	Title string
	// Head are the column names; the first column is the row's key.
	Head []string
	Rows [][]string
	// Num marks right-aligned (numeric) columns.
	Num []bool
}

func numCols(n int) []bool {
	b := make([]bool, n)
	for i := 1; i < n; i++ {
		b[i] = true
	}
	return b
}

// factorName is the factor column the algorithm shows for the lab.
func (r *Report) labFactor() (name string, v []float64) {
	if r.fairTree() {
		return "LevelFS", r.Lab.LevelFS
	}
	return "FairShare", r.Lab.FairShare
}

// summaryTable holds the figures of the explanation.
func (r *Report) summaryTable() table {
	fname, fv := r.labFactor()
	rec := r.Recovery
	recovery := ""
	switch rec.State {
	case RecoveryWithin:
		recovery = "0.0"
	case RecoveryAfter:
		recovery = fmtDays(float64(rec.Seconds))
	}
	state := rec.State.String()
	parent := r.Parent
	rows := [][]string{
		{"Cluster", r.Cluster},
		{"Account", r.Account},
		{"Parent", parent},
		{"Period", r.periodLabel()},
		{"Last snapshot", fmtTime(r.Last)},
		{"Algorithm", algorithmName(r.Algorithm)},
		{fname + " now", fmtFactor(last(fv))},
		{"NormShares now", fmtFactor(last(r.Lab.NormShares))},
		{"EffectvUsage now", fmtFactor(last(r.Lab.EffectvUsage))},
		{"NormUsage now", fmtFactor(last(r.Lab.NormUsage))},
		{"Usage / share (decayed)", fmtRatio(rec.Ratio)},
	}
	if r.fairTree() && rec.Limit != "" {
		rows = append(rows, []string{"Lowest LevelFS on the path to the top", rec.Limit},
			[]string{"Its LevelFS", fmtFactor(rec.LimitLevelFS)})
	}
	rows = append(rows, [][]string{
		{"Recovery at zero use", state},
		{"Days to recover at zero use", recovery},
		{"Billing-hours in period", fmtHours(r.Total.BillingHours)},
		{"CPU-hours in period", fmtHours(r.Total.CPUHours)},
		{"GPU-hours in period", fmtHours(r.Total.GPUHours)},
		{"Memory GiB-hours in period", fmtHours(r.Total.MemGiBHours)},
	}...)
	return table{ID: "summary", Title: "Summary", Head: []string{"Item", "Value"}, Rows: rows, Num: []bool{false, false}}
}

// seriesTable is the data of a line chart: one row per snapshot.
func seriesTable(id, title string, x []time.Time, series []chartSeries) table {
	head := []string{"Snapshot"}
	for _, s := range series {
		head = append(head, s.Name)
	}
	rows := make([][]string, len(x))
	for i, t := range x {
		row := []string{fmtTime(t)}
		for _, s := range series {
			row = append(row, fmtFactor(s.Values[i]))
		}
		rows[i] = row
	}
	return table{ID: id, Title: title, Head: head, Rows: rows, Num: numCols(len(head))}
}

// factorCharts returns the charts of the factor over time.
func (r *Report) factorCharts() []*lineChart {
	users := make([]chartSeries, 0, r.Charted)
	for i, u := range r.Users[:r.Charted] {
		v := u.FairShare
		users = append(users, chartSeries{Name: u.label(r.Account) + " FairShare", Values: v,
			Color: palette[i%len(palette)], Dash: dashes[i%len(dashes)], Width: 2})
	}
	note := ""
	if r.Charted < len(r.Users) {
		note = " Only the users with the most usage in the period are drawn; the users table lists all."
	}
	if r.fairTree() {
		return []*lineChart{
			{ID: "levelfs", Title: "LevelFS of " + r.Account,
				Desc: "LevelFS of " + r.Account + " at each snapshot, log scale; 1 means exactly its share, above 1 less usage than its share, below 1 more; inf (no usage) is drawn at the top.",
				X:    r.Snapshots, Log: true, Ref: []refLine{{1, "1 = exactly its share"}},
				Series: []chartSeries{{Name: r.Account + " LevelFS", Values: r.Lab.LevelFS, Color: labColor, Width: 2.5}}},
			{ID: "user-factor", Title: "FairShare factor of the users of " + r.Account,
				Desc: "FairShare factor (rank among the cluster's users, 0 to 1) of each user at each snapshot." + note,
				X:    r.Snapshots, YMin: 0, YMax: 1, Series: users},
		}
	}
	target := math.Exp2(-1 / float64(max(r.Settings.Damp, 1)))
	all := append([]chartSeries{{Name: r.Account + " FairShare", Values: r.Lab.FairShare, Color: labColor, Width: 3}}, users...)
	return []*lineChart{{ID: "factor", Title: "FairShare factor of " + r.Account + " and its users",
		Desc: "FairShare factor 2^(−EffectvUsage/NormShares) of the lab (black) and of each user at each snapshot." + note,
		X:    r.Snapshots, YMin: 0, YMax: 1, Series: all, Ref: []refLine{{target, fmtFixed(target, 2) + " = at its share"}}}}
}

// usageChart is the usage-against-share chart: the lab's EffectvUsage
// (what the algorithm compares with the share) against NormShares, and
// NormUsage (fraction of the cluster's usage) when it differs.
func (r *Report) usageChart() *lineChart {
	s := []chartSeries{
		{Name: "NormShares", Values: r.Lab.NormShares, Color: labColor, Dash: "6 3", Width: 2},
		{Name: "EffectvUsage", Values: r.Lab.EffectvUsage, Color: palette[4], Width: 2.5},
	}
	for i, v := range r.Lab.NormUsage {
		if !math.IsNaN(v) && v != r.Lab.EffectvUsage[i] {
			s = append(s, chartSeries{Name: "NormUsage", Values: r.Lab.NormUsage, Color: palette[3], Dash: "2 3", Width: 2})
			break
		}
	}
	what := "fraction of the decayed usage under " + r.parentName()
	if !r.fairTree() {
		what = "effective usage"
	}
	return &lineChart{ID: "usage-share", Title: "Usage against share: " + r.Account,
		Desc: "EffectvUsage (" + what + ") against NormShares at each snapshot; above the share line the lab used more than its share.",
		X:    r.Snapshots, Series: s}
}

// monthsTable is TRES-hours per month.
func (r *Report) monthsTable() table {
	t := table{ID: "tres_month", Title: "TRES-hours per month (undecayed)",
		Head: []string{"Month", "Billing-hours", "CPU-hours", "GPU-hours", "Memory GiB-hours"}, Num: numCols(5)}
	for _, m := range append(append([]MonthUsage(nil), r.Months...), r.Total) {
		t.Rows = append(t.Rows, []string{m.Month, fmtHours(m.BillingHours), fmtHours(m.CPUHours), fmtHours(m.GPUHours), fmtHours(m.MemGiBHours)})
	}
	return t
}

// monthCharts are the bar charts of TRES-hours per month; a TRES the lab
// did not use (GPU, memory) gets no chart.
func (r *Report) monthCharts() []*barChart {
	labels := make([]string, len(r.Months))
	cpu, gpu, mem := make([]float64, len(r.Months)), make([]float64, len(r.Months)), make([]float64, len(r.Months))
	for i, m := range r.Months {
		labels[i], cpu[i], gpu[i], mem[i] = m.Month, m.CPUHours, m.GPUHours, m.MemGiBHours
	}
	out := []*barChart{{ID: "cpu-hours", Title: "CPU-hours per month", Desc: "Allocated CPUs × hours run, per UTC month.",
		Labels: labels, Values: cpu, Color: palette[3]}}
	if r.Total.GPUHours > 0 {
		out = append(out, &barChart{ID: "gpu-hours", Title: "GPU-hours per month", Desc: "Allocated GPUs × hours run, per UTC month.",
			Labels: labels, Values: gpu, Color: palette[4]})
	}
	if r.Total.MemGiBHours > 0 {
		out = append(out, &barChart{ID: "mem-hours", Title: "Memory GiB-hours per month", Desc: "Allocated memory (GiB, 1024 MiB) × hours run, per UTC month.",
			Labels: labels, Values: mem, Color: palette[2]})
	}
	return out
}

// usersTable is every user association of the lab with its current values.
func (r *Report) usersTable() table {
	head := []string{"Association", "User", "Account", "Partition", "Billing-hours", "NormShares", "EffectvUsage", "FairShare"}
	if r.fairTree() {
		head = append(head, "LevelFS")
	}
	t := table{ID: "users", Title: "Users: factor at the last snapshot", Head: head,
		Num: []bool{false, false, false, false, true, true, true, true, true}[:len(head)]}
	for _, u := range r.Users {
		row := []string{u.label(r.Account), u.User, u.Account, u.Partition, fmtHours(u.BillingHours), fmtFactor(last(u.NormShares)),
			fmtFactor(last(u.EffectvUsage)), fmtFactor(last(u.FairShare))}
		if r.fairTree() {
			row = append(row, fmtFactor(last(u.LevelFS)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (r *Report) topUsersTable() table {
	t := table{ID: "top_users", Title: "Top users in the period",
		Head: []string{"User", "Billing-hours", "Share of lab", "CPU-hours", "GPU-hours", "Memory GiB-hours"}, Num: numCols(6)}
	for _, u := range r.TopUsers {
		t.Rows = append(t.Rows, []string{u.User, fmtHours(u.BillingHours), fmtPct(u.Share), fmtHours(u.CPUHours), fmtHours(u.GPUHours), fmtHours(u.MemGiBHours)})
	}
	return t
}

func (r *Report) topPartitionsTable() table {
	t := table{ID: "top_partitions", Title: "Top partitions in the period",
		Head: []string{"Partition", "Jobs", "Billing-hours", "Share of lab", "CPU-hours", "GPU-hours", "Memory GiB-hours"}, Num: numCols(7)}
	for _, p := range r.TopPartitions {
		t.Rows = append(t.Rows, []string{p.Partition, fmtCount(p.Jobs), fmtHours(p.BillingHours), fmtPct(p.Share),
			fmtHours(p.CPUHours), fmtHours(p.GPUHours), fmtHours(p.MemGiBHours)})
	}
	return t
}

func (r *Report) jobsTable() table {
	// The account column only when a job ran in a sub-account.
	sub := false
	for _, j := range r.BiggestJobs {
		sub = sub || j.Account != r.Account
	}
	t := table{ID: "biggest_jobs", Title: "Biggest jobs in the period (times UTC)",
		Head: []string{"#", "Job", "User", "Partition", "State", "Start", "End", "CPUs", "GPUs", "Memory GiB", "Billing-hours"},
		Num:  []bool{true, false, false, false, false, false, false, true, true, true, true}}
	if sub {
		t.Head = slices.Insert(t.Head, 3, "Account")
		t.Num = slices.Insert(t.Num, 3, false)
	}
	for i, j := range r.BiggestJobs {
		end := "running"
		if j.End != nil {
			end = fmtMinute(*j.End)
		}
		row := []string{fmtCount(int64(i + 1)), j.JobID, j.User, j.Partition, j.State, fmtMinute(j.Start), end,
			fmtCount(j.CPUs), fmtFixed(j.GPUs, 0), fmtFixed(j.MemGiB, 1), fmtHours(j.BillingHours)}
		if sub {
			row = slices.Insert(row, 3, j.Account)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (r *Report) settingsTable() table {
	t := table{ID: "settings", Title: "Site settings", Head: []string{"Setting", "Value"}, Num: []bool{false, false}}
	for _, kv := range r.settingsRows() {
		t.Rows = append(t.Rows, []string{kv[0], kv[1]})
	}
	return t
}

func (r *Report) weightsTable() table {
	t := table{ID: "billing_weights", Title: "TRESBillingWeights of the partitions the lab used",
		Head: []string{"Partition", "TRESBillingWeights"}, Num: []bool{false, false}}
	for _, p := range r.Settings.Partitions {
		t.Rows = append(t.Rows, []string{p.Name, weightsText(p.Weights)})
	}
	return t
}

// textTable holds the explanation paragraphs (CSV only: HTML and Markdown
// print them as text).
func (r *Report) textTable() table {
	t := table{ID: "explanation", Title: "Explanation", Head: []string{"Paragraph", "Text"}, Num: []bool{false, false}}
	for i, p := range r.explanation() {
		t.Rows = append(t.Rows, []string{fmtCount(int64(i + 1)), p})
	}
	return t
}
