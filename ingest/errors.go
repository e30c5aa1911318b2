package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ParseError is an input error that names its position the way a person
// fixing the file needs it: file, physical line, field and value.
//
//	ingest sacct-2026-08-21.txt:1832: Elapsed="1-25:00:00": hour out of range
//
// Line is 1-based; 0 means the error concerns the whole file. Field is the
// column title or configuration key (empty when none applies).
type ParseError struct {
	File string
	Line int
	// Job is the job id of a rejected job of a JSON document (whose line
	// is where the job starts); empty otherwise.
	Job   string
	Field string
	Value string
	Err   error
}

// writePosition writes "ingest FILE[:LINE]: ", the position an input
// error starts with (line 0: the file as a whole).
func writePosition(b *strings.Builder, file string, line int) {
	b.WriteString("ingest ")
	b.WriteString(file)
	if line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(line))
	}
	b.WriteString(": ")
}

// Error formats the error position first, in the spirit of encoding/csv.
func (e *ParseError) Error() string {
	var b strings.Builder
	writePosition(&b, e.File, e.Line)
	if e.Job != "" {
		b.WriteString("job ")
		b.WriteString(e.Job)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(e.Value))
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("invalid")
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *ParseError) Unwrap() error { return e.Err }

// newParseError builds a ParseError from a plain message.
func newParseError(file string, line int, field, value, msg string) *ParseError {
	return &ParseError{File: file, Line: line, Field: field, Value: value, Err: errors.New(msg)}
}

// Stats accounts for every row of one input file:
// Read == Ingested + Rejected + the sum of Skipped.
type Stats struct {
	// File is the input's name as given by the caller.
	File string
	// Read counts data records (header excluded; a record spanning several
	// physical lines counts once).
	Read int64
	// Ingested counts records that went out in a batch.
	Ingested int64
	// Skipped counts records left out on purpose, per stated reason.
	Skipped map[string]int64
	// Rejected counts records that could not be used; each one was reported
	// with its ParseError.
	Rejected int64
	// Warnings are file-level remarks (e.g. a required column is missing).
	Warnings []string
	// Remarks counts ingested records that hold something worth a warning
	// (e.g. RemarkElapsed), per remark; they are charged all the same.
	Remarks map[string]int64
	// Lines counts the physical lines after the header: Lines == Read +
	// Continued + the lines that hold no record (blank lines; in a
	// sacctmgr script, comments).
	Lines int64
	// Continued counts the lines read as the continuation of a record that
	// started on an earlier line (a SubmitLine or JobName holding a
	// newline; a sacctmgr script's '\' continuation).
	Continued int64
	// NeverStarted counts, among Ingested, the records of jobs that never
	// started, which a sacct reader with KeepPending ingests (without it
	// they are skipped, and this is 0).
	NeverStarted int64
}

// RemarkElapsed notes a finished job whose Elapsed is neither End − Start
// nor that less Suspended: the job is charged End − Start, the time Slurm
// charges it, and the record is counted so the discrepancy is not silent.
const RemarkElapsed = "Elapsed differs from End - Start (less Suspended): charged End - Start"

// Remark counts one ingested record with remark.
func (s *Stats) Remark(remark string) {
	if s.Remarks == nil {
		s.Remarks = make(map[string]int64)
	}
	s.Remarks[remark]++
}

// RemarkWarnings are the remarks as warnings, one per remark in sorted
// order: "17 rows: <remark>".
func (s *Stats) RemarkWarnings() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(s.Remarks)) {
		out = append(out, fmt.Sprintf("%d rows: %s", s.Remarks[k], k))
	}
	return out
}

// Skip counts one record skipped for reason.
func (s *Stats) Skip(reason string) {
	if s.Skipped == nil {
		s.Skipped = make(map[string]int64)
	}
	s.Skipped[reason]++
}

// SkippedTotal is the sum of all skip counts.
func (s *Stats) SkippedTotal() int64 {
	var n int64
	for _, v := range s.Skipped {
		n += v
	}
	return n
}

// Balanced reports whether every read record is accounted for.
func (s *Stats) Balanced() bool {
	return s.Read == s.Ingested+s.Rejected+s.SkippedTotal()
}

// Add merges o into s (File is kept).
func (s *Stats) Add(o Stats) {
	s.Read += o.Read
	s.Ingested += o.Ingested
	s.Rejected += o.Rejected
	s.Lines += o.Lines
	s.Continued += o.Continued
	s.NeverStarted += o.NeverStarted
	for k, v := range o.Skipped {
		if s.Skipped == nil {
			s.Skipped = make(map[string]int64)
		}
		s.Skipped[k] += v
	}
	s.Warnings = append(s.Warnings, o.Warnings...)
	for k, v := range o.Remarks {
		if s.Remarks == nil {
			s.Remarks = make(map[string]int64)
		}
		s.Remarks[k] += v
	}
}

// SkipReasons returns the skip reasons in sorted order, for stable output.
func (s *Stats) SkipReasons() []string {
	keys := make([]string, 0, len(s.Skipped))
	for k := range s.Skipped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// String is a one-line summary: "read=10 ingested=7 rejected=1 skipped[job step]=2".
func (s *Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "read=%d ingested=%d rejected=%d", s.Read, s.Ingested, s.Rejected)
	for _, k := range s.SkipReasons() {
		fmt.Fprintf(&b, " skipped[%s]=%d", k, s.Skipped[k])
	}
	return b.String()
}

// wrongKindLines is how many leading lines of a file, none of them of the
// expected kind, make it the wrong kind of file: reading stops there with
// one error instead of one per line (a sacct log passed as slurm.conf
// would otherwise give one per job).
const wrongKindLines = 10

// MoreErrors stands for errors of one input file that were found and
// counted but are not listed (a reader that bounds the errors it keeps, or
// a caller that shows only the first few).
type MoreErrors struct {
	// File is the input's name.
	File string
	// N is how many errors were left out.
	N int
}

// Error says how many errors were left out.
func (e *MoreErrors) Error() string {
	return fmt.Sprintf("ingest %s: %d more error(s) not shown", e.File, e.N)
}

// compression names the compression format whose magic number head starts
// with ("gzip", "zstd", "xz" or "bzip2"), or "" for none of them.
func compression(head []byte) string {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return "gzip"
	case len(head) >= 4 && string(head[:4]) == "\x28\xb5\x2f\xfd":
		return "zstd"
	case len(head) >= 6 && string(head[:6]) == "\xfd7zXZ\x00":
		return "xz"
	case len(head) >= 10 && string(head[:3]) == "BZh" && head[3] >= '1' && head[3] <= '9' &&
		string(head[4:10]) == "\x31\x41\x59\x26\x53\x59":
		return "bzip2"
	}
	return ""
}

// compressedError is the error for an input file that is compressed with
// format (see compression).
func compressedError(file, format string) *ParseError {
	return &ParseError{File: file, Err: fmt.Errorf("%s-compressed: decompress it first", format)}
}

// quoteHead quotes the start of a line for an error message, cut to a
// readable length.
func quoteHead(s string) string {
	const max = 60
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xc0 == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

// readError wraps an error met while reading the input called name with
// "read <name>", unless err already says so: a read from an *os.File fails
// with an *fs.PathError of Op "read" and Path name ("read c1: is a
// directory"), which would otherwise name the file twice.
func readError(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "read" && pe.Path == name {
		return err
	}
	return fmt.Errorf("read %s: %w", name, err)
}
