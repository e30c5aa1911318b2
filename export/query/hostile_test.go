package query

import (
	"bytes"
	"testing"
)

// TestWriteResultHostileNames checks what each format makes of a value
// with terminal controls (docs/bad-input.md, "Hostile names"): the table
// spells them out (ESC \x1b, CR \x0d, BEL \x07, C1 CSI \u009b, DEL \x7f) and
// aligns on the spelled-out text; JSON stays exact but escapes DEL and C1
// controls too (\u007f, \u009b); CSV stays exact, quoted where RFC 4180
// needs it.
func TestWriteResultHostileNames(t *testing.T) {
	t.Parallel()
	r := &Result{Columns: []string{"name\x07", "n"}, Rows: [][]any{{"a\x1b[2J\rb", int64(1)}, {"\u009b1m\x7f", int64(22)}}}
	for _, c := range []struct{ format, want string }{
		// Widths: max(len("name\x07")=10, len(`a\x1b[2J\x0db`)=13,
		// len(`\u009b1m\x7f`)=12) + 2 = 15.
		{FormatTable, "name\\x07" + "       n\n" +
			"a\\x1b[2J\\x0db  1\n" +
			"\\u009b1m\\x7f   22\n"},
		{FormatJSON, "[\n  {\"name\\u0007\": \"a\\u001b[2J\\rb\", \"n\": 1},\n  {\"name\\u0007\": \"\\u009b1m\\u007f\", \"n\": 22}\n]\n"},
		{FormatCSV, "name\x07,n\n\"a\x1b[2J\rb\",1\n\u009b1m\x7f,22\n"},
	} {
		var out bytes.Buffer
		if err := WriteResult(&out, r, c.format); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Errorf("%s = %q, want %q", c.format, out.String(), c.want)
		}
	}
}
