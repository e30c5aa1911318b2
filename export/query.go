package export

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Formats of WriteResult.
const (
	FormatTable = "table"
	FormatCSV   = "csv"
	FormatJSON  = "json"
)

// WriteResult writes a query result as an aligned table, CSV (with a
// header line) or JSON (one array of objects, keys in column order).
// Values print as DuckDB prints them (see textValue); NULL is "NULL" in a
// table, an empty field in CSV and null in JSON.
func WriteResult(w io.Writer, r *Result, format string) error {
	types := make([]*colType, len(r.Columns))
	for i := range types {
		types[i] = unknownType
		if i < len(r.Types) {
			types[i] = parseColType(r.Types[i])
		}
	}
	cells := func(row []any, null string) []string {
		out := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				out[i] = null
				continue
			}
			out[i] = textValue(types[i], v, false)
		}
		return out
	}
	switch format {
	case FormatTable, "":
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(r.Columns, "\t"))
		for _, row := range r.Rows {
			fmt.Fprintln(tw, strings.Join(cells(row, "NULL"), "\t"))
		}
		return tw.Flush()
	case FormatCSV:
		// Written by hand rather than with encoding/csv, which cannot
		// quote an empty field: "" is an empty string, nothing is NULL.
		var b strings.Builder
		writeCSVLine(&b, r.Columns)
		for _, row := range r.Rows {
			line := cells(row, "")
			for i, v := range row {
				if v != nil {
					line[i] = csvQuote(line[i])
				}
			}
			b.WriteString(strings.Join(line, ","))
			b.WriteString("\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	case FormatJSON:
		var b strings.Builder
		b.WriteString("[")
		for n, row := range r.Rows {
			if n > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n  {")
			for i, v := range row {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(jsonString(r.Columns[i]))
				b.WriteString(": ")
				writeJSON(&b, types[i], v)
			}
			b.WriteString("}")
		}
		b.WriteString("\n]\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	return fmt.Errorf("unknown format %q (want table, csv or json)", format)
}

func writeCSVLine(b *strings.Builder, fields []string) {
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(csvQuote(f))
	}
	b.WriteByte('\n')
}

// csvQuote quotes a CSV field (RFC 4180) when it is empty, holds a comma,
// quote or line break, or starts with white space.
func csvQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s[0] != '\t' {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
