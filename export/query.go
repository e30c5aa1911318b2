package export

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Formats of WriteResult.
const (
	FormatTable = "table"
	FormatCSV   = "csv"
	FormatJSON  = "json"
)

// WriteResult writes a query result as an aligned table, CSV (with a
// header line) or JSON (one array of objects, keys in column order).
func WriteResult(w io.Writer, r *Result, format string) error {
	switch format {
	case FormatTable, "":
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(r.Columns, "\t"))
		for _, row := range r.Rows {
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = formatValue(v)
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		return tw.Flush()
	case FormatCSV:
		cw := csv.NewWriter(w)
		if err := cw.Write(r.Columns); err != nil {
			return err
		}
		for _, row := range r.Rows {
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = formatValue(v)
			}
			if err := cw.Write(cells); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
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
				k, _ := json.Marshal(r.Columns[i])
				b.Write(k)
				b.WriteString(": ")
				b.WriteString(jsonValue(v))
			}
			b.WriteString("}")
		}
		b.WriteString("\n]\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	return fmt.Errorf("unknown format %q (want table, csv or json)", format)
}

// formatValue renders one value for the table and CSV formats: NULL as an
// empty cell, times in UTC RFC 3339, floats in the shortest exact form.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case float64:
		return formatFloat(v)
	case float32:
		return formatFloat(float64(v))
	case time.Time:
		return v.UTC().Format(time.RFC3339)
	case []byte:
		return string(v)
	case *big.Int:
		return v.String()
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(v)
}

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// jsonValue renders one value as JSON: numbers as numbers (non-finite
// floats as strings, which JSON lacks), times as RFC 3339 UTC strings.
func jsonValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return strconv.Quote(formatFloat(x))
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return strconv.Quote(x.UTC().Format(time.RFC3339))
	case int64, int32, int, uint64, uint32, bool:
		return fmt.Sprint(x)
	case *big.Int:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return strconv.Quote(fmt.Sprint(v))
	}
	return string(b)
}
