package ingest

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// sniffSpan is how much of a sacct file's start textForm looks at: more
// than a header line of every column sacct has, so that a CR-only file
// is told from one long first line.
const sniffSpan = 64 << 10

// textForm recognises a start of a file, head, that is not the UTF-8,
// newline-ended text sacct writes: UTF-16 or UTF-32 (with a byte-order
// mark, or UTF-16 by its NUL bytes), NUL bytes (binary data), or lines
// ended by a carriage return alone. It returns what the file is and the
// command that converts it, or "" when head may be sacct's text (a
// UTF-8 byte-order mark, CRLF line ends and a CR inside a field are
// such). file is the file's name, for the command.
//
// CR-only line ends are refused rather than read: sacct never writes
// them, so such a file went through a converter (a classic Mac OS
// editor, a `tr` the wrong way round), and reading it would need every
// CR taken for a line end, including a CR kept in a JobName or a
// SubmitLine, which such a file can no longer tell apart.
func textForm(head []byte, file string) string {
	base := filepath.Base(file)
	ext := filepath.Ext(base)
	conv := func(suffix string) string {
		return strings.TrimSuffix(base, ext) + "-" + suffix + ext
	}
	iconv := func(from string) string {
		return fmt.Sprintf("not the UTF-8 sacct writes: convert it with iconv -f %s -t UTF-8 %s > %s", from, file, conv("utf8"))
	}
	switch {
	case bytes.HasPrefix(head, []byte{0xff, 0xfe, 0, 0}):
		return "UTF-32 little-endian text (it starts with a byte-order mark), " + iconv("UTF-32")
	case bytes.HasPrefix(head, []byte{0, 0, 0xfe, 0xff}):
		return "UTF-32 big-endian text (it starts with a byte-order mark), " + iconv("UTF-32")
	case bytes.HasPrefix(head, []byte{0xff, 0xfe}):
		return "UTF-16 little-endian text (it starts with a byte-order mark), " + iconv("UTF-16")
	case bytes.HasPrefix(head, []byte{0xfe, 0xff}):
		return "UTF-16 big-endian text (it starts with a byte-order mark), " + iconv("UTF-16")
	}
	if i := bytes.IndexByte(head, 0); i >= 0 {
		switch utf16Order(head) {
		case "little":
			return "UTF-16 little-endian text (every other byte is NUL), " + iconv("UTF-16LE")
		case "big":
			return "UTF-16 big-endian text (every other byte is NUL), " + iconv("UTF-16BE")
		}
		return fmt.Sprintf("a NUL byte at offset %d: binary data, not the text sacct writes (a file cut short by a crash, or not a sacct file)", i)
	}
	if bytes.IndexByte(head, '\n') < 0 && bytes.Count(head, []byte{'\r'}) >= 2 {
		return fmt.Sprintf(`lines end with a carriage return alone ("\r", classic Mac OS), not the newline sacct writes: convert it with tr '\r' '\n' < %s > %s`, file, conv("unix"))
	}
	return ""
}

// utf16Order tells UTF-16 text without a byte-order mark by its NUL
// bytes: in text of ASCII characters every high byte is 0, so one byte
// of each pair is NUL. It returns "little" or "big" when nine pairs in
// ten of the first 512 have their NUL on the same side and no pair has
// two, "" otherwise.
func utf16Order(head []byte) string {
	n := min(len(head), 1024) / 2
	if n < 4 {
		return ""
	}
	var lo, hi int
	for i := 0; i < n; i++ {
		a, b := head[2*i], head[2*i+1]
		switch {
		case a == 0 && b == 0:
			return ""
		case b == 0:
			lo++
		case a == 0:
			hi++
		}
	}
	switch {
	case lo*10 >= n*9:
		return "little"
	case hi*10 >= n*9:
		return "big"
	}
	return ""
}
