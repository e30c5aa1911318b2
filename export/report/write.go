package report

import (
	"fmt"
	"io"
)

// Formats of Write, also the file extensions of --all-accounts.
const (
	FormatHTML     = "html"
	FormatMarkdown = "md"
	FormatCSV      = "csv"
)

// Write writes the report in a format: html, md or csv.
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case FormatHTML:
		return r.WriteHTML(w)
	case FormatMarkdown:
		return r.WriteMarkdown(w)
	case FormatCSV:
		return r.WriteCSV(w)
	}
	return fmt.Errorf("unknown report format %q (want html, md or csv)", format)
}
