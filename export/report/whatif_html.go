package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/fairledger/fairledger/export/whatif"
)

// WriteWhatIfHTML writes a what-if comparison (fairledger whatif --format
// html) as one self-contained page in the lab reports' style: the change
// and both sides' settings; the labs that gain and lose most, each with a
// chart of its users' mean FairShare and one of its NormUsage over the
// snapshots, recorded and replayed; every lab at the last snapshot; with
// job priority, the waiting jobs that moved most in their queues; and
// what a replay cannot know. Inline CSS and SVG, no script.
func WriteWhatIfHTML(w io.Writer, res *whatif.Result) error {
	var b strings.Builder
	title := "What if: cluster " + res.Cluster
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n",
		esc(title), pageCSS)
	meta := "No stored snapshot in the window: nothing to compare."
	if res.Snapshots > 0 {
		meta = fmt.Sprintf("%d snapshots compared, %s to %s", res.Snapshots, fmtTime(res.First), fmtTime(res.Last))
	}
	fmt.Fprintf(&b, "<header>\n<h1>%s</h1>\n<p class=\"meta\">%s</p>\n</header>\n", esc(title), esc(meta))

	b.WriteString("<section id=\"change\">\n<h2>The change</h2>\n")
	if len(res.Change) == 0 {
		fmt.Fprintf(&b, "<p>%s</p>\n", esc(whatif.NoChange))
	} else {
		b.WriteString("<ul>\n")
		for _, c := range res.Change {
			fmt.Fprintf(&b, "<li><code>%s</code></li>\n", esc(c))
		}
		b.WriteString("</ul>\n")
	}
	settings := table{ID: "settings", Title: "Settings", Head: []string{"Setting", "Recorded", "Replayed"}}
	for _, s := range res.Settings {
		settings.Rows = append(settings.Rows, []string{s[0], s[1], s[2]})
	}
	writeHTMLTable(&b, settings)
	b.WriteString("</section>\n")

	b.WriteString("<section id=\"movers\">\n<h2>Who gains and who loses</h2>\n")
	fmt.Fprintf(&b, "<p>%s</p>\n<p>Gain most: %s.</p>\n<p>Lose most: %s.</p>\n", esc(whatif.FigureText),
		whatif.MoverList(res.Gain, esc), whatif.MoverList(res.Lose, esc))
	for i, l := range append(append([]*whatif.Lab{}, res.Gain...), res.Lose...) {
		for _, c := range whatIfCharts(i, l, res) {
			writeLineFigure(&b, c)
		}
	}
	b.WriteString("</section>\n")

	fmt.Fprintf(&b, "<section id=\"labs\">\n<h2>Every lab, at the last snapshot (%s)</h2>\n", esc(fmtTime(res.Last)))
	head, rows := res.LabTable()
	writeHTMLTable(&b, table{ID: "labs_table", Title: "Every lab", Head: head, Rows: rows, Num: numCols(len(head))})
	if res.Recovery {
		fmt.Fprintf(&b, "<p>%s</p>\n", esc(whatif.RecoveryText))
	}
	b.WriteString("</section>\n")
	if q := res.Queue; q != nil {
		fmt.Fprintf(&b, "<section id=\"queue\">\n<h2>Waiting jobs</h2>\n<p>%s</p>\n<p>%s</p>\n", esc(q.Summary()), esc(whatif.QueueText))
		head, rows := q.QueueTable()
		num := make([]bool, len(head))
		for i := 5; i < 10; i++ {
			num[i] = true
		}
		writeHTMLTable(&b, table{ID: "moved_jobs", Title: "The waiting jobs that moved most", Head: head, Rows: rows, Num: num})
		b.WriteString("</section>\n")
	}
	fmt.Fprintf(&b, "<section id=\"limits\">\n<h2>What a replay cannot know</h2>\n<p>%s</p>\n</section>\n", esc(whatif.Limits))
	b.WriteString("<footer>Computed by fairledger whatif from the history's moment seeds (docs/whatif.md).</footer>\n</body>\n</html>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write what-if html: %w", err)
	}
	return nil
}

// whatIfCharts are a lab's two charts, recorded against replayed: its
// users' mean FairShare and its NormUsage.
func whatIfCharts(i int, l *whatif.Lab, res *whatif.Result) []*lineChart {
	pair := func(v [2][]float64) []chartSeries {
		return []chartSeries{{Name: "recorded", Values: v[0], Color: "#1f77b4", Width: 2},
			{Name: "replayed", Values: v[1], Color: "#d62728", Dash: "6 4", Width: 2}}
	}
	return []*lineChart{
		{ID: fmt.Sprintf("fairshare_%d", i), Title: l.Account + ": its users' mean FairShare",
			Desc: "The mean FairShare of the lab's users at each snapshot, as recorded and as replayed.",
			X:    res.Times, Series: pair(l.FairShare), YMin: 0, YMax: 1},
		{ID: fmt.Sprintf("normusage_%d", i), Title: l.Account + ": NormUsage",
			Desc: "The lab's share of the cluster's decayed usage at each snapshot, as recorded and as replayed.",
			X:    res.Times, Series: pair(l.NormUsage)},
	}
}
