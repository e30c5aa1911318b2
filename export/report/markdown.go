package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/fairledger/fairledger/internal/safetext"
)

// WriteMarkdown writes the report as Markdown for e-mail: the same text
// and tables as the HTML page, with each chart's data as a table.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Fair-share report: %s\n\nCluster %s · %s · %s · last snapshot %s\n",
		mdText(r.Account), mdText(r.Cluster), r.periodLabel(), algorithmName(r.Algorithm), fmtTime(r.Last))
	b.WriteString("\n## Why the factor is what it is\n\n")
	for _, p := range r.explanation() {
		b.WriteString(mdText(p) + "\n\n")
	}
	writeMDTable(&b, r.summaryTable())

	b.WriteString("\n## Factor over time\n\n(Charts in the HTML version of this report.)\n\n")
	for _, c := range r.factorCharts() {
		writeMDTable(&b, seriesTable(c.ID+"_data", c.Title, c.X, c.Series))
	}
	b.WriteString("\n## Usage against share\n\n")
	c := r.usageChart()
	writeMDTable(&b, seriesTable(c.ID+"_data", c.Title, c.X, c.Series))

	if r.fairTree() {
		b.WriteString("\n## What LevelFS means\n\n")
	} else {
		b.WriteString("\n## What the factor means\n\n")
	}
	for _, p := range r.levelFSText() {
		b.WriteString(mdText(p) + "\n\n")
	}
	b.WriteString("\n## TRES-hours per month\n\n")
	writeMDTable(&b, r.monthsTable())
	b.WriteString("\n## Who used it\n\n")
	writeMDTable(&b, r.topUsersTable())
	writeMDTable(&b, r.usersTable())
	b.WriteString("\n## Where and how\n\n")
	writeMDTable(&b, r.topPartitionsTable())
	writeMDTable(&b, r.jobsTable())
	b.WriteString("Jobs and partitions count each job for the hours it ran inside the period, billing × QOS UsageFactor, undecayed.\n")
	r.writeWaitsMarkdown(&b)
	b.WriteString("\n## Site settings\n\n")
	writeMDTable(&b, r.settingsTable())
	writeMDTable(&b, r.weightsTable())
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write markdown report %s: %w", r.Account, err)
	}
	return nil
}

// writeWaitsMarkdown writes the section "Why did our jobs wait".
func (r *Report) writeWaitsMarkdown(b *strings.Builder) {
	b.WriteString("\n## " + waitsTitle + "\n\n")
	if s := r.waitsOnly(); s != "" {
		b.WriteString(mdText(s) + "\n")
		return
	}
	b.WriteString(mdText(r.waitsIntro()) + "\n\n### Waits per month, against the rest of the cluster\n\n")
	if s := r.waitsMonthsNote(); s != "" {
		b.WriteString(mdText(s) + "\n\n")
	} else {
		writeMDTable(b, r.waitMonthsTable())
	}
	b.WriteString("### Priority factors against the jobs waiting with yours\n\n" + mdText(r.dominantText()) + "\n\n")
	if c := r.Waits.Compare; c.LabRows > 0 && c.OtherRows > 0 {
		writeMDTable(b, r.waitFactorsTable())
		b.WriteString(mdText(r.compareCaption()) + "\n\n")
	}
	if len(r.Waits.Longest) > 0 {
		b.WriteString("### The longest waits\n\n")
		writeMDTable(b, r.longestWaitsTable())
		for _, w := range r.Waits.Longest {
			b.WriteString("- " + mdText(w.line()) + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("### What the records cannot tell\n\n" + mdText(waitsCannotTell) + "\n")
}

// mdText escapes the characters Markdown would read as markup, spells
// out control characters and isolates bidi overrides (safetext.Markdown):
// a name can neither open a link nor break a table row.
func mdText(s string) string { return safetext.Markdown(s) }

func writeMDTable(b *strings.Builder, t table) {
	fmt.Fprintf(b, "**%s**\n\n|", mdText(t.Title))
	for _, h := range t.Head {
		b.WriteString(" " + mdText(h) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Head {
		if i < len(t.Num) && t.Num[i] {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	if len(t.Rows) == 0 {
		b.WriteString("| none in the period |" + strings.Repeat(" |", len(t.Head)-1) + "\n")
	}
	for _, row := range t.Rows {
		b.WriteString("|")
		for _, c := range row {
			b.WriteString(" " + mdText(c) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}
