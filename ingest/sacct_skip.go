package ingest

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// Bytes of an over-long record kept for its reject: the start of its first
// line (the record column of --rejects) and of its longest field (the
// error's value).
const (
	skipHeadBytes  = 1024
	skipFieldBytes = 40
)

// sacctSkip reads a record longer than SacctOptions.MaxRecordBytes, or one
// holding a line that is, without keeping it: the producer hands it the
// input block by block, it counts the record's lines and bytes and keeps
// only the start of its first line, until the next line that starts a
// record (see sacctLayout.startsRecord) and is within the bound. Each
// record it ends becomes a rejected row. A line over the bound that starts
// a record ends the record before it and starts a new one.
type sacctSkip struct {
	name string
	lay  *sacctLayout
	max  int
	// line is the physical line number of the line being read.
	line int
	rec  skipRecord
	// cur is the line being read, while it is over the bound (inLong) and
	// so is read in pieces.
	cur    lineScan
	inLong bool
	blank  int64 // blank lines since the last result
	input  int64 // input bytes read since the last result
	out    []chunkResult
}

// skipRecord is the record being skipped; lines == 0: none yet.
type skipRecord struct {
	first int // physical line of its first line
	lines int
	text  int64 // its length: its lines and the newlines between them
	scan  lineScan
}

func newSacctSkip(s *SacctReader, line int) *sacctSkip {
	return &sacctSkip{name: s.name, lay: s.layout, max: s.opt.MaxRecordBytes, line: line}
}

// startRecord starts the skipped record with complete lines that were
// already read (data ends with a newline); none of them but the first
// starts a record.
func (k *sacctSkip) startRecord(data []byte) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		k.cur = lineScan{}
		k.cur.feed(data[:i])
		k.endLine(true)
		data = data[i+1:]
	}
}

// feed reads buf, the next bytes of the input. It returns done and the
// offset of the record that ends the skip, or, not done, the offset from
// which buf must be given again with the next block (the start of a line
// that may still turn out to start a record). At the end of the input
// (eof) every record is ended.
func (k *sacctSkip) feed(buf []byte, eof bool) (int, bool) {
	pos := 0
	for pos < len(buf) {
		i := bytes.IndexByte(buf[pos:], '\n')
		if i < 0 {
			tail := buf[pos:]
			if !k.inLong && len(tail) <= k.max {
				if !eof {
					return pos, false
				}
				if k.lay.startsRecord(tail) {
					k.flush()
					return pos, true
				}
			}
			if !k.inLong {
				k.cur, k.inLong = lineScan{}, true
			}
			k.cur.feed(tail)
			if eof {
				k.endLine(false)
				k.flush()
			}
			return len(buf), false
		}
		ln := buf[pos : pos+i]
		if !k.inLong {
			if len(ln) <= k.max && k.lay.startsRecord(ln) {
				k.flush()
				return pos, true
			}
			k.cur = lineScan{}
		}
		k.cur.feed(ln)
		k.inLong = false
		k.endLine(true)
		pos += i + 1
	}
	if eof {
		k.flush()
	}
	return len(buf), false
}

// endLine ends the line in k.cur.
func (k *sacctSkip) endLine(newline bool) {
	c := &k.cur
	c.end()
	line := k.line
	k.line++
	n := c.length
	if newline {
		n++
	}
	if c.length <= int64(len(c.head)) && len(bytes.TrimSpace(c.head)) == 0 {
		k.blank++
		k.input += n
		return
	}
	if k.rec.lines == 0 || c.pipes >= k.lay.nf-1 {
		k.flush()
		k.rec = skipRecord{first: line, scan: *c}
	} else {
		k.rec.text++ // the newline before this line
	}
	k.rec.lines++
	k.rec.text += c.length
	k.input += n
}

// flush turns the record being skipped into a rejected row.
func (k *sacctSkip) flush() {
	r := k.rec
	if r.lines == 0 {
		if k.blank > 0 {
			k.out = append(k.out, chunkResult{bytes: k.input, stats: Stats{File: k.name, Lines: k.blank}})
			k.blank, k.input = 0, 0
		}
		return
	}
	k.rec = skipRecord{}
	perr := &ParseError{File: k.name, Line: r.first, Err: overLong(r.text, r.lines, k.max)}
	if want := k.lay.wantPipes(); r.lines == 1 && r.scan.pipes == want && r.scan.longest < len(k.lay.titles) {
		perr.Field = k.lay.titles[r.scan.longest]
		perr.Value = string(trimPartialRune(r.scan.longestHead)) + "…"
	}
	k.out = append(k.out, chunkResult{
		bytes:   k.input,
		stats:   Stats{File: k.name, Read: 1, Rejected: 1, Lines: int64(r.lines) + k.blank, Continued: int64(r.lines - 1)},
		rejects: []rejectRec{{err: perr, raw: string(trimPartialRune(r.scan.head)) + "…"}},
	})
	k.blank, k.input = 0, 0
}

// take returns the results of the records ended since the last call.
func (k *sacctSkip) take() []chunkResult {
	out := k.out
	k.out = nil
	return out
}

// overLong is the error of a record over the bound.
func overLong(n int64, lines, max int) error {
	what := "record"
	if lines > 1 {
		what = fmt.Sprintf("record of %d lines", lines)
	}
	return fmt.Errorf("%s of %d bytes, longer than the %s a sacct record may have: skipped", what, n, formatBytes(int64(max)))
}

// wantPipes is the number of '|' of a record on one line.
func (l *sacctLayout) wantPipes() int {
	if l.trailing {
		return l.nf
	}
	return l.nf - 1
}

// trimPartialRune drops an incomplete UTF-8 sequence from the end of b, where
// a cut at a byte count may have split a character.
func trimPartialRune(b []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// lineScan follows a line given in pieces: its length, its delimiters and
// its longest field, keeping only their starts.
type lineScan struct {
	length      int64
	pipes       int
	head        []byte // the line's first skipHeadBytes
	fieldLen    int64  // of the field being read
	fieldHead   []byte
	longest     int // field number of the longest field
	longestLen  int64
	longestHead []byte
}

func (l *lineScan) feed(b []byte) {
	if n := skipHeadBytes - len(l.head); n > 0 {
		l.head = append(l.head, b[:min(n, len(b))]...)
	}
	l.length += int64(len(b))
	for {
		i := bytes.IndexByte(b, '|')
		seg := b
		if i >= 0 {
			seg = b[:i]
		}
		if n := skipFieldBytes - len(l.fieldHead); n > 0 {
			l.fieldHead = append(l.fieldHead, seg[:min(n, len(seg))]...)
		}
		l.fieldLen += int64(len(seg))
		if i < 0 {
			return
		}
		l.endField()
		l.pipes++
		b = b[i+1:]
	}
}

// end ends the line's last field.
func (l *lineScan) end() { l.endField() }

func (l *lineScan) endField() {
	if l.fieldLen > l.longestLen {
		l.longest, l.longestLen = l.pipes, l.fieldLen
		l.longestHead = append(l.longestHead[:0], l.fieldHead...)
	}
	l.fieldLen, l.fieldHead = 0, l.fieldHead[:0]
}
