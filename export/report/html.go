package report

import (
	"fmt"
	"io"
	"strings"
)

// pageCSS is the report's only style sheet: inline, responsive (one
// column on a phone) and with print rules (no backgrounds, no page break
// inside a chart or table, chart data tables left out).
const pageCSS = `:root{--fg:#1a1a1a;--muted:#555;--line:#d9d9d9}
*{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:#fff;margin:0 auto;padding:1rem;max-width:70rem}
h1{font-size:1.6rem;line-height:1.25;margin:.2rem 0}
h2{font-size:1.25rem;margin:2rem 0 .5rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
h3{font-size:1rem;margin:1rem 0 .3rem}
p{max-width:48rem}
.meta{color:var(--muted);margin:0}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(10.5rem,1fr));gap:.75rem;margin:1rem 0}
.card{border:1px solid var(--line);border-radius:.5rem;padding:.6rem .8rem}
.card b{display:block;font-size:1.5rem;font-variant-numeric:tabular-nums}
.card span{color:var(--muted);font-size:.85rem}
figure{margin:1.2rem 0;break-inside:avoid}
.bars{display:grid;grid-template-columns:repeat(auto-fit,minmax(17rem,1fr));gap:0 1.5rem}
.bars figure{margin:.6rem 0}
figcaption{font-weight:600;margin-bottom:.2rem}
svg.chart{width:100%;height:auto;display:block;overflow:visible}
svg.chart text{font-size:12px;fill:#333}
svg.chart text.value{font-size:11px}
svg.chart .grid line{stroke:#e6e6e6}
svg.chart .xaxis line{stroke:#888}
svg.chart .ref line{stroke:#333;stroke-dasharray:4 4}
svg.chart polyline{stroke-linejoin:round;stroke-linecap:round}
ul.legend{list-style:none;padding:0;margin:.3rem 0;display:flex;flex-wrap:wrap;gap:.2rem 1.1rem;font-size:.9rem}
ul.legend i{display:inline-block;width:1.7rem;border-top-width:3px;border-top-style:solid;vertical-align:middle;margin-right:.35rem}
ul.legend i.dash{border-top-style:dashed}
ul.legend i.dot{border-top-style:dotted}
.wrap{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;font-size:.85rem;margin:.3rem 0 1rem}
caption{text-align:left;font-weight:600;padding:.2rem 0}
th,td{padding:.25rem .5rem;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap;vertical-align:top}
th{border-bottom:2px solid #999}
.n{text-align:right;font-variant-numeric:tabular-nums}
details{margin:.2rem 0 1rem}
summary{cursor:pointer;color:var(--muted)}
footer{margin-top:2.5rem;color:var(--muted);font-size:.85rem}
@media (max-width:40rem){body{font-size:15px;padding:.6rem}h1{font-size:1.3rem}.card b{font-size:1.2rem}svg.chart text{font-size:20px}.bars svg.chart text{font-size:15px}}
@media print{body{max-width:none;font-size:10.5pt;padding:0}h2{break-after:avoid}figure,table,.cards{break-inside:avoid}details{display:none}.card{border-color:#999}}`

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and SVG, no script, no external resource.
func (r *Report) WriteHTML(w io.Writer) error {
	var b strings.Builder
	title := "Fair-share report: " + r.Account + " on " + r.Cluster
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n",
		esc(title), pageCSS)
	fmt.Fprintf(&b, "<header>\n<h1>Fair-share report: %s</h1>\n<p class=\"meta\">Cluster %s · %s · %s · last snapshot %s</p>\n</header>\n",
		esc(r.Account), esc(r.Cluster), esc(r.periodLabel()), esc(algorithmName(r.Algorithm)), esc(fmtTime(r.Last)))

	// Key figures.
	fname, fv := r.labFactor()
	b.WriteString("<section class=\"cards\" aria-label=\"Key figures\">\n")
	card := func(value, label string) {
		if value == "" {
			value = "–"
		}
		fmt.Fprintf(&b, "<div class=\"card\"><b>%s</b><span>%s</span></div>\n", esc(value), esc(label))
	}
	card(fmtFactor(last(fv)), fname+" of the lab now")
	card(fmtRatio(r.Recovery.Ratio)+"×", "usage against share (decayed)")
	if r.limitedAbove() {
		card(fmtFactor(r.Recovery.LimitLevelFS), "LevelFS of "+r.Recovery.Limit+", above the lab: the lowest on its path")
	}
	switch r.Recovery.State {
	case RecoveryAfter:
		card(fmtDays(float64(r.Recovery.Seconds))+" days", "to get back to its share at zero use")
	case RecoveryWithin:
		card("within share", "nothing to recover")
	default:
		card("–", "recovery at zero use: see below")
	}
	card(fmtHours(r.Total.BillingHours), "billing-hours in the period")
	b.WriteString("</section>\n")

	b.WriteString("<section>\n<h2>Why the factor is what it is</h2>\n")
	for _, p := range r.explanation() {
		fmt.Fprintf(&b, "<p>%s</p>\n", esc(p))
	}
	b.WriteString("</section>\n")

	b.WriteString("<section>\n<h2>Factor over time</h2>\n")
	for _, c := range r.factorCharts() {
		writeLineFigure(&b, c)
	}
	b.WriteString("</section>\n")

	b.WriteString("<section>\n<h2>Usage against share</h2>\n")
	writeLineFigure(&b, r.usageChart())
	b.WriteString("</section>\n")

	if r.fairTree() {
		b.WriteString("<section>\n<h2>What LevelFS means</h2>\n")
	} else {
		b.WriteString("<section>\n<h2>What the factor means</h2>\n")
	}
	for _, p := range r.levelFSText() {
		fmt.Fprintf(&b, "<p>%s</p>\n", esc(p))
	}
	b.WriteString("</section>\n")

	b.WriteString("<section>\n<h2>TRES-hours per month</h2>\n")
	b.WriteString("<div class=\"bars\">\n")
	for _, c := range r.monthCharts() {
		fmt.Fprintf(&b, "<figure>\n<figcaption>%s</figcaption>\n%s\n</figure>\n", esc(c.Title), c.svg())
	}
	b.WriteString("</div>\n")
	if r.Total.GPUHours == 0 {
		b.WriteString("<p>The lab used no GPUs in the period.</p>\n")
	}
	writeHTMLTable(&b, r.monthsTable())
	b.WriteString("</section>\n")

	b.WriteString("<section>\n<h2>Who used it</h2>\n")
	writeHTMLTable(&b, r.topUsersTable())
	writeHTMLTable(&b, r.usersTable())
	b.WriteString("</section>\n")

	b.WriteString("<section>\n<h2>Where and how</h2>\n")
	writeHTMLTable(&b, r.topPartitionsTable())
	writeHTMLTable(&b, r.jobsTable())
	b.WriteString("<p class=\"meta\">Jobs and partitions count each job for the hours it ran inside the period, " +
		"billing × QOS UsageFactor, undecayed.</p>\n")
	b.WriteString("</section>\n")

	r.writeWaitsHTML(&b)

	b.WriteString("<section>\n<h2>Site settings</h2>\n")
	writeHTMLTable(&b, r.settingsTable())
	writeHTMLTable(&b, r.weightsTable())
	b.WriteString("</section>\n")

	fmt.Fprintf(&b, "<footer>Computed by fairledger from the fair-share history of cluster %s with Slurm's own "+
		"billing, decay and fair-share arithmetic. Hours are undecayed; factors and usage fractions are the sshare "+
		"values at each snapshot. Memory GiB = 1024 MiB.</footer>\n</body>\n</html>\n", esc(r.Cluster))
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("write html report %s: %w", r.Account, err)
	}
	return nil
}

// writeLineFigure writes a line chart with its legend and its data table.
func writeLineFigure(b *strings.Builder, c *lineChart) {
	fmt.Fprintf(b, "<figure>\n<figcaption>%s</figcaption>\n%s\n<ul class=\"legend\">", esc(c.Title), c.svg())
	for _, s := range c.Series {
		class := ""
		switch s.Dash {
		case "":
		case "2 3":
			class = ` class="dot"`
		default:
			class = ` class="dash"`
		}
		fmt.Fprintf(b, `<li><i%s style="border-top-color:%s"></i>%s</li>`, class, s.Color, esc(s.Name))
	}
	b.WriteString("</ul>\n<details><summary>Data</summary>\n")
	writeHTMLTable(b, seriesTable(c.ID+"_data", c.Title, c.X, c.Series))
	b.WriteString("</details>\n</figure>\n")
}

// writeHTMLTable writes a table inside a horizontally scrolling wrapper.
func writeHTMLTable(b *strings.Builder, t table) {
	fmt.Fprintf(b, "<div class=\"wrap\"><table id=\"%s\">\n<caption>%s</caption>\n<thead><tr>", esc(t.ID), esc(t.Title))
	cls := func(i int) string {
		if i < len(t.Num) && t.Num[i] {
			return ` class="n"`
		}
		return ""
	}
	for i, h := range t.Head {
		fmt.Fprintf(b, "<th%s>%s</th>", cls(i), esc(h))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	if len(t.Rows) == 0 {
		fmt.Fprintf(b, "<tr><td colspan=\"%d\">none in the period</td></tr>\n", len(t.Head))
	}
	for _, row := range t.Rows {
		b.WriteString("<tr>")
		for i, c := range row {
			fmt.Fprintf(b, "<td%s>%s</td>", cls(i), esc(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table></div>\n")
}

// writeWaitsHTML writes the section "Why did our jobs wait".
func (r *Report) writeWaitsHTML(b *strings.Builder) {
	fmt.Fprintf(b, "<section id=\"waits\">\n<h2>%s</h2>\n", esc(waitsTitle))
	if s := r.waitsOnly(); s != "" {
		fmt.Fprintf(b, "<p>%s</p>\n</section>\n", esc(s))
		return
	}
	fmt.Fprintf(b, "<p>%s</p>\n", esc(r.waitsIntro()))
	b.WriteString("<h3>Waits per month, against the rest of the cluster</h3>\n")
	if s := r.waitsMonthsNote(); s != "" {
		fmt.Fprintf(b, "<p>%s</p>\n", esc(s))
	} else {
		writeHTMLTable(b, r.waitMonthsTable())
	}
	b.WriteString("<h3>Priority factors against the jobs waiting with yours</h3>\n")
	fmt.Fprintf(b, "<p>%s</p>\n", esc(r.dominantText()))
	if c := r.Waits.Compare; c.LabRows > 0 && c.OtherRows > 0 {
		writeHTMLTable(b, r.waitFactorsTable())
		fmt.Fprintf(b, "<p class=\"meta\">%s</p>\n", esc(r.compareCaption()))
	}
	if len(r.Waits.Longest) > 0 {
		b.WriteString("<h3>The longest waits</h3>\n")
		writeHTMLTable(b, r.longestWaitsTable())
		b.WriteString("<ul>\n")
		for _, w := range r.Waits.Longest {
			fmt.Fprintf(b, "<li>%s</li>\n", esc(w.line()))
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("<h3>What the records cannot tell</h3>\n")
	fmt.Fprintf(b, "<p>%s</p>\n</section>\n", esc(waitsCannotTell))
}
