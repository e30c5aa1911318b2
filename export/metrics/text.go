package metrics

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteText writes snaps (one per cluster, as a scrape of the clusters
// now would show them) in the Prometheus text exposition format 0.0.4
// that node_exporter's textfile collector reads: every family once, with
// HELP and TYPE, its samples without timestamps (the collector refuses
// them; fairledger_snapshot_timestamp_seconds says when each cluster's
// snapshot was taken).
func WriteText(w io.Writer, snaps []Snapshot) error {
	fs := families()
	var by [numFamilies][]string
	for i := range snaps {
		err := snaps[i].samples(func(fam int, labels []string, v float64) {
			by[fam] = append(by[fam], string(appendSample(nil, labels, v, fs[fam].labels)))
		})
		if err != nil {
			return err
		}
	}
	bw := bufio.NewWriter(w)
	for fam, f := range fs {
		if len(by[fam]) == 0 {
			continue
		}
		bw.Write(appendHeader(nil, f))
		for _, s := range by[fam] {
			bw.WriteString(f.name)
			bw.WriteString(s)
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// appendHeader appends the HELP and TYPE lines of f.
func appendHeader(b []byte, f family) []byte {
	b = append(b, "# HELP "...)
	b = append(b, f.name...)
	b = append(b, ' ')
	b = append(b, f.help...) // constant text: no backslash, newline or quote to escape
	b = append(b, "\n# TYPE "...)
	b = append(b, f.name...)
	return append(b, " gauge\n"...)
}

// appendSample appends a sample's labels and value, after the metric
// name: {a="x",b="y"} v.
func appendSample(b []byte, values []string, v float64, names []string) []byte {
	b = appendLabels(b, names, values)
	b = append(b, ' ')
	return appendValue(b, v)
}

// appendLabels appends {name="value",...}, each value escaped.
func appendLabels(b []byte, names, values []string) []byte {
	b = append(b, '{')
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, n...)
		b = append(b, `="`...)
		b = appendEscaped(b, values[i])
		b = append(b, '"')
	}
	return append(b, '}')
}

// appendEscaped appends a label value as both text formats quote it:
// backslash, double quote and line feed escaped; a byte sequence that is
// not UTF-8 (which Prometheus refuses in a label value) replaced by
// U+FFFD.
func appendEscaped(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendValue appends a sample value: the shortest decimal that reads
// back as v, +Inf or -Inf.
func appendValue(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
