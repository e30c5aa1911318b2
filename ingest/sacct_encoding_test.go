package ingest

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16Bytes encodes s as UTF-16 in the byte order big (true: big-endian),
// after a byte-order mark when bom: what Windows tools ("Unicode" in
// Notepad, PowerShell 5's Out-File) write.
func utf16Bytes(s string, big, bom bool) string {
	var b []byte
	u := utf16.Encode([]rune(s))
	if bom {
		u = append([]uint16{0xfeff}, u...)
	}
	for _, c := range u {
		if big {
			b = append(b, byte(c>>8), byte(c))
		} else {
			b = append(b, byte(c), byte(c>>8))
		}
	}
	return string(b)
}

// utf32LE encodes s as UTF-32 little-endian after its byte-order mark.
func utf32LE(s string) string {
	var b []byte
	for _, r := range "\ufeff" + s {
		b = append(b, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
	}
	return string(b)
}

// TestSacctNotUTF8Text checks that a sacct file that is text of another
// encoding or line-end convention, or no text at all, is refused with
// what it is and the command that converts it, before its header is
// looked for: it used to be reported as "no header line: pass
// --sacct-fields xdmod" (UTF-16) or "header line longer than 1 MiB"
// (CR-only line ends).
func TestSacctNotUTF8Text(t *testing.T) {
	t.Parallel()
	text := sacctLines(3)
	crOnly := strings.ReplaceAll(text, "\n", "\r")
	// A big CR-only file: its header is the whole file, past the 1 MiB
	// the header may have.
	bigCR := crOnly + strings.Repeat(strings.SplitAfter(crOnly, "\r")[1], 1<<20/len(strings.SplitAfter(crOnly, "\r")[1])+1)
	tests := []struct {
		name, text, want string
	}{
		{"UTF-16LE with BOM", utf16Bytes(text, false, true),
			"ingest x.psv: UTF-16 little-endian text (it starts with a byte-order mark), not the UTF-8 sacct writes: convert it with iconv -f UTF-16 -t UTF-8 x.psv > x-utf8.psv"},
		{"UTF-16BE with BOM", utf16Bytes(text, true, true),
			"ingest x.psv: UTF-16 big-endian text (it starts with a byte-order mark), not the UTF-8 sacct writes: convert it with iconv -f UTF-16 -t UTF-8 x.psv > x-utf8.psv"},
		{"UTF-16LE without BOM", utf16Bytes(text, false, false),
			"ingest x.psv: UTF-16 little-endian text (every other byte is NUL), not the UTF-8 sacct writes: convert it with iconv -f UTF-16LE -t UTF-8 x.psv > x-utf8.psv"},
		{"UTF-32LE with BOM", utf32LE(text),
			"ingest x.psv: UTF-32 little-endian text (it starts with a byte-order mark), not the UTF-8 sacct writes: convert it with iconv -f UTF-32 -t UTF-8 x.psv > x-utf8.psv"},
		{"NUL bytes", text[:40] + "\x00\x00\x00\x00" + text[40:],
			"ingest x.psv: a NUL byte at offset 40: binary data, not the text sacct writes (a file cut short by a crash, or not a sacct file)"},
		{"CR-only line ends", crOnly,
			`ingest x.psv: lines end with a carriage return alone ("\r", classic Mac OS), not the newline sacct writes: convert it with tr '\r' '\n' < x.psv > x-unix.psv`},
		{"CR-only line ends, over 1 MiB", bigCR,
			`ingest x.psv: lines end with a carriage return alone ("\r", classic Mac OS), not the newline sacct writes: convert it with tr '\r' '\n' < x.psv > x-unix.psv`},
		{"CR-only with a field list", strings.SplitN(crOnly, "\r", 2)[1],
			`ingest x.psv: lines end with a carriage return alone ("\r", classic Mac OS), not the newline sacct writes: convert it with tr '\r' '\n' < x.psv > x-unix.psv`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := NewSacctReader("x.psv", strings.NewReader(tt.text), SacctOptions{Fields: []string{"fairledger"}})
			if r != nil {
				r.Close()
			}
			var pe *ParseError
			if err == nil || err.Error() != tt.want || !errors.As(err, &pe) || pe.Line != 0 {
				t.Errorf("error = %v,\nwant %q (a whole-file ParseError)", err, tt.want)
			}
		})
	}
	// CRLF line ends (a copy through Windows) are read as they always were,
	// and so is a lone CR inside a field of a newline-ended file.
	for name, text := range map[string]string{
		"CRLF":          strings.ReplaceAll(text, "\n", "\r\n"),
		"CR in a field": strings.Replace(text, "|lab|", "|l\rab|", 1),
	} {
		r, err := NewSacctReader("x.psv", strings.NewReader(text), SacctOptions{})
		if r != nil {
			r.Close()
		}
		if err != nil && (strings.Contains(err.Error(), "carriage return") || strings.Contains(err.Error(), "longer than")) {
			t.Errorf("%s: error = %v, want the file read as newline-ended text", name, err)
		}
	}
}
