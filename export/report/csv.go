package report

import (
	"encoding/csv"
	"fmt"
	"io"

	"github.com/fairledger/fairledger/internal/safetext"
)

// csvHeader is the header of the CSV form.
var csvHeader = []string{"account", "section", "key", "column", "value"}

// WriteCSV writes the report as one CSV file in long form, one line per
// table cell: account, section (the table: summary, explanation,
// level_fs_data, user_factor_data or factor_data, usage_share_data,
// tres_month, users, top_users, top_partitions, biggest_jobs, settings,
// billing_weights, and the section "Why did our jobs wait": wait_text,
// wait_month, wait_factors, longest_waits), key (the row: a snapshot, a month, a user, a rank...),
// column and value. One file holds every table, the files of several labs
// concatenate (minus their header lines), and a spreadsheet's pivot table
// turns a section back into its table. The values are the strings the
// HTML and Markdown forms print, and no cell starts a formula (csvCell).
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := r.writeCSV(cw, true); err != nil {
		return fmt.Errorf("write csv report %s: %w", r.Account, err)
	}
	return nil
}

func (r *Report) writeCSV(cw *csv.Writer, header bool) error {
	if header {
		if err := cw.Write(csvHeader); err != nil {
			return err
		}
	}
	tables := []table{r.summaryTable(), r.textTable()}
	for _, c := range r.factorCharts() {
		tables = append(tables, seriesTable(c.ID+"_data", c.Title, c.X, c.Series))
	}
	c := r.usageChart()
	tables = append(tables, seriesTable(c.ID+"_data", c.Title, c.X, c.Series),
		r.monthsTable(), r.usersTable(), r.topUsersTable(), r.topPartitionsTable(), r.jobsTable(),
		r.settingsTable(), r.weightsTable(), r.waitsTextTable())
	tables = append(tables, r.waitsTables()...)
	for _, t := range tables {
		for _, row := range t.Rows {
			for i := 1; i < len(row); i++ {
				if err := cw.Write([]string{csvCell(r.Account), t.ID, csvCell(row[0]), csvCell(t.Head[i]), csvCell(row[i])}); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvCell is a cell as the CSV form writes it: the string the HTML and
// Markdown forms print (control characters spelled out, bidi overrides
// isolated), with a leading =, +, -, @, TAB or CR neutralised by a single
// quote unless the cell is a number (safetext.CSVCell, OWASP's guidance
// on CSV injection).
func csvCell(s string) string {
	return safetext.CSVCell(safetext.IsolateBidi(safetext.Visible(s)))
}
