// Package safetext makes names read from a site's databases (accounts,
// users, partitions, QOS, job names, clusters) safe to print, one function
// per kind of output: Visible for a terminal, Field for a line-and-separator
// format (sshare -P, sprio -p), CSVCell for a cell a spreadsheet opens,
// Markdown for Markdown text and IsolateBidi for text a browser lays out.
// A name holding none of the characters a function changes is returned
// as it is, so normal names print byte for byte as before.
//
// It sits below the math packages (fairshare and priority print through
// it) and imports only the standard library's string packages. It does no
// I/O and holds no state. docs/bad-input.md ("Hostile names") lists what
// each function turns each class of character into.
package safetext

import (
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// isControl reports whether r is a C0 control (U+0000–U+001F, TAB, CR and
// LF included), DEL (U+007F) or a C1 control (U+0080–U+009F): the
// characters a terminal may act on instead of printing.
func isControl(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f)
}

// needsVisible reports whether Visible would change s.
func needsVisible(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			if c >= 0x80 {
				// Non-ASCII: decide rune by rune below.
				goto slow
			}
			return true
		}
	}
	return false
slow:
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || isControl(r) {
			return true
		}
		i += n
	}
	return false
}

// appendHex appends \xHH for the byte c.
func appendHex(b []byte, c byte) []byte {
	return append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
}

// Visible returns s with every character a terminal could act on spelled
// out in Go's escape notation, lower-case hex: a C0 control or DEL as
// \xHH (ESC is \x1b, BEL \x07, BS \x08, TAB \x09, LF \x0a, CR \x0d, DEL
// \x7f), a C1 control (U+0080–U+009F) as \u00HH, and a byte that is not
// UTF-8 as \xHH, so that no raw 0x9b (a C1 CSI) reaches a terminal that
// is not in UTF-8 mode. Everything else, the backslash included, is kept:
// a name that really spells "\x1b" prints the same as one holding ESC,
// which only a person reading it can confuse, never a terminal.
func Visible(s string) string {
	if !needsVisible(s) {
		return s
	}
	return string(appendVisible(make([]byte, 0, len(s)+16), s, 0))
}

// appendVisible appends Visible(s) to b; a byte sep other than 0 is
// spelled \xHH too.
func appendVisible(b []byte, s string, sep byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || (sep != 0 && c == sep) {
				b = appendHex(b, c)
			} else {
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = appendHex(b, c)
		case isControl(r):
			b = append(b, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}

// Field is Visible for a cell of a line-oriented format with a one-byte
// separator (sshare -P and -p, sprio -p: '|'): the separator inside s is
// spelled \xHH too (| is \x7c), so every line keeps its number of fields
// and a LF or CR in a name cannot start a line.
func Field(s string, sep byte) string {
	if !needsVisible(s) && strings.IndexByte(s, sep) < 0 {
		return s
	}
	return string(appendVisible(make([]byte, 0, len(s)+16), s, sep))
}

// CSVCell neutralises a spreadsheet formula as OWASP's CSV-injection
// guidance says: a cell that starts with =, +, -, @, TAB or CR gets a
// single quote in front, so that a spreadsheet shows it as text and
// evaluates nothing. A cell that is a plain decimal number (an optional
// sign, digits with at most one decimal point, an optional exponent, an
// optional trailing %: "-0.5", "+3", "-1.5e-07", "-12.5%") is kept as it
// is: a spreadsheet reads it as the number it is, which runs nothing. The
// quoting of commas, quotes and line breaks is encoding/csv's.
func CSVCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if !isNumber(s) {
			return "'" + s
		}
	}
	return s
}

// isNumber reports whether s is [+-]digits[.digits][e[+-]digits][%] with
// at least one digit before the exponent.
func isNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	if i < len(s) && s[i] == '%' {
		i++
	}
	return i == len(s)
}

// markdownEscapes maps each character Markdown reads as markup to its
// escape: a backslash before ASCII punctuation (CommonMark §2.4), and
// entities for < and > so that no HTML tag or autolink can open.
var markdownEscapes = strings.NewReplacer(
	`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "|", `\|`,
	"[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`, "!", `\!`,
	"<", "&lt;", ">", "&gt;",
)

// Markdown escapes s for Markdown text, a paragraph or a table cell: \,
// *, _, `, |, [, ], (, ) and ! get a backslash, < and > become &lt; and
// &gt; (no emphasis, code, table cell break, link, image, autolink or
// HTML), then control characters are spelled out as Visible does (a CR or
// LF cannot end a table row or a paragraph; an ESC is not sent to a
// terminal showing the raw file) and bidi controls are isolated as
// IsolateBidi does. "[pwn](javascript:alert(3))" prints as
// \[pwn\]\(javascript:alert\(3\)\): a renderer shows the text, no link.
func Markdown(s string) string {
	return IsolateBidi(Visible(markdownEscapes.Replace(s)))
}

// Bidi controls: the embeddings and overrides LRE, RLE, PDF, LRO, RLO
// (U+202A–U+202E) and the isolates LRI, RLI, FSI, PDI (U+2066–U+2069).
const (
	lre, rle, pdf, lro, rlo = '\u202a', '\u202b', '\u202c', '\u202d', '\u202e'
	lri, rli, fsi, pdi      = '\u2066', '\u2067', '\u2068', '\u2069'
)

func isBidiControl(r rune) bool {
	return (r >= lre && r <= rlo) || (r >= lri && r <= pdi)
}

// IsolateBidi confines the bidi controls of s to the word that holds them,
// as HTML's <bdi> does to an element, with characters rather than markup
// so that it also holds in an attribute, a <title> and SVG text: every
// word (a run between white space) holding a bidi control (U+202A–U+202E,
// U+2066–U+2069) is wrapped in FSI (U+2068) … PDI (U+2069); inside it a
// PDF or PDI that closes nothing is dropped, and every embedding, override
// or isolate left open is closed before the PDI. An RTL override in a
// name then reverses at most the name itself, never the text after it.
// Words without a bidi control, and so every normal name, are kept as
// they are.
func IsolateBidi(s string) string {
	if !strings.ContainsFunc(s, isBidiControl) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for len(s) > 0 {
		// The next word and the white space after it.
		end := strings.IndexFunc(s, isSpace)
		if end < 0 {
			end = len(s)
		}
		word := s[:end]
		s = s[end:]
		if strings.ContainsFunc(word, isBidiControl) {
			writeIsolated(&b, word)
		} else {
			b.WriteString(word)
		}
		sp := strings.IndexFunc(s, func(r rune) bool { return !isSpace(r) })
		if sp < 0 {
			sp = len(s)
		}
		b.WriteString(s[:sp])
		s = s[sp:]
	}
	return b.String()
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xa0, 0x2028, 0x2029:
		return true
	}
	return false
}

// writeIsolated writes FSI, word with its bidi controls balanced, PDI.
func writeIsolated(b *strings.Builder, word string) {
	b.WriteRune(fsi)
	var open []rune // the controls open, innermost last
	for _, r := range word {
		switch r {
		case lre, rle, lro, rlo:
			open = append(open, pdf)
		case lri, rli, fsi:
			open = append(open, pdi)
		case pdf:
			// Closes the innermost embedding, if it is not behind an isolate.
			if len(open) == 0 || open[len(open)-1] != pdf {
				continue
			}
			open = open[:len(open)-1]
		case pdi:
			// Closes the innermost isolate and what opened inside it.
			i := len(open) - 1
			for i >= 0 && open[i] != pdi {
				i--
			}
			if i < 0 {
				continue
			}
			open = open[:i]
		}
		b.WriteRune(r)
	}
	for i := len(open) - 1; i >= 0; i-- {
		b.WriteRune(open[i])
	}
	b.WriteRune(pdi)
}
