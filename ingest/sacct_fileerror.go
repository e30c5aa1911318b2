package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// FileError is a problem of a whole sacct file rather than of its rows: a
// column the run needs is missing, the header or the --sacct-fields list
// does not fit the rows, or every job record was rejected. It is one error
// instead of one per row, and it stops a command before it writes anything:
// a night committed without the file's jobs would lose their decayed usage
// for good.
//
//	ingest sacct.psv:1: no End, AllocTRES column (every job record would be rejected): fetch with sacct -o JobID,…
type FileError struct {
	// File is the input's name as given by the caller.
	File string
	// Line is the 1-based line the problem shows on (the header, or the
	// first row that does not fit); 0 means the file as a whole.
	Line int
	// Columns are the columns concerned (missing, or not fitting their
	// values), as sacct titles them.
	Columns []string
	// Msg says what is wrong and what to do.
	Msg string
}

// Error formats the error position first, like ParseError.
func (e *FileError) Error() string {
	var b strings.Builder
	writePosition(&b, e.File, e.Line)
	b.WriteString(e.Msg)
	return b.String()
}

// AllRejectedMin is the fewest job records a file must hold for "every one
// of them rejected" to be a FileError rather than per-row rejections: a
// handful of bad rows in a quiet night is still a night of rows, but ten
// or more rejected without a single one ingested is a file the run cannot
// read (a wrong --tz or a wrong time format, an edited column, a dump of
// another cluster's accounts), and committing the night without it would
// lose its jobs' decayed usage for good.
const AllRejectedMin = 10

// NoNeverStartedMin is the fewest ingested records, none of them a job
// that never started, at which a reader with KeepPending warns that the
// file may have been fetched without -s (PriorityStates).
const NoNeverStartedMin = 1000

// missingError is the FileError for a layout without the columns in
// missing; headerless files name their --sacct-fields list instead of a
// header.
func (l *sacctLayout) missingError(name string, headerLine int, opt SacctOptions, missing []string, why string) *FileError {
	list := strings.Join(missing, ", ") + " column"
	if len(missing) > 1 {
		list += "s"
	}
	var msg strings.Builder
	if headerLine > 0 {
		fmt.Fprintf(&msg, "no %s in the header (%s)", list, why)
	} else {
		fmt.Fprintf(&msg, "no %s in the --sacct-fields list (%s)", list, why)
	}
	fields := RunFields
	if len(opt.Require) > 0 {
		fields = unionFields(RunFields, opt.Require)
		if slices.Equal(opt.Require, PriorityRequired) {
			fields = PriorityFields
		}
	}
	msg.WriteString(": fetch with sacct")
	if opt.KeepPending {
		msg.WriteString(" -s " + PriorityStates)
	}
	msg.WriteString(" -o " + strings.Join(fields, ","))
	if headerLine == 0 {
		msg.WriteString(" and pass the same list as --sacct-fields")
	}
	return &FileError{File: name, Line: headerLine, Columns: missing, Msg: msg.String()}
}

// unionFields is a followed by the names of b it lacks (case-insensitive).
func unionFields(a, b []string) []string {
	out := slices.Clone(a)
	for _, f := range b {
		if !slices.ContainsFunc(out, func(g string) bool { return strings.EqualFold(f, g) }) {
			out = append(out, f)
		}
	}
	return out
}

// requiredMissing returns the columns of req the layout lacks (the caller's
// SacctOptions.Require), by title.
func (l *sacctLayout) requiredMissing(req []string) []string {
	var out []string
	for _, r := range req {
		if !slices.ContainsFunc(l.titles, func(t string) bool { return strings.EqualFold(strings.TrimSpace(t), r) }) {
			out = append(out, r)
		}
	}
	return out
}

// fitClass reports whether a column of class c tells a column from
// another by its syntax: a value of the wrong column almost never fits a
// time, a job id, a state or a TRES list, while a value of the right one
// almost always does. (Durations and counts are left out: an Elapsed with
// an hour out of range is a bad row, not a wrong column. So are exit
// codes, which fairledger keeps as text: a file is never refused for a
// column whose values it would take.)
func fitClass(c fieldClass) bool {
	switch c {
	case classTime, classJobID, classState, classTRES:
		return true
	}
	return false
}

// sampleLine is one of the first lines after the header (see sampleRows).
type sampleLine struct {
	line   int    // physical line number
	text   []byte // without its newline
	fields int    // '|'-separated fields, less the empty one after a trailing '|'
}

// sampleRows returns the first complete non-blank lines of br, up to
// rowCheckLines of them, without consuming them; firstLine is the physical
// number of the first line br holds.
func (l *sacctLayout) sampleRows(br *bufio.Reader, firstLine int) []sampleLine {
	lines, _, ok := peekLines(br, rowCheckLines)
	if !ok {
		return nil // the read error is reported by the first block
	}
	out := make([]sampleLine, 0, len(lines))
	for _, pl := range lines {
		ln := pl.text
		n := bytes.Count(ln, []byte{'|'}) + 1
		if l.trailing && ln[len(ln)-1] == '|' {
			n--
		}
		out = append(out, sampleLine{line: firstLine + pl.off, text: ln, fields: n})
	}
	return out
}

// misfit is a column whose values in the sampled rows never fit its
// syntax: its title, the first value and line.
type misfit struct {
	title string
	value string
	line  int
	rows  int // rows whose value does not fit
}

// misfits checks the sampled rows that have exactly the layout's fields
// against the syntax of the telling columns (fitClass) that fairledger
// reads. A column is a misfit when at least one row's value does not fit
// it and no row's non-empty value does.
func (l *sacctLayout) misfits(rows []sampleLine) []misfit {
	type count struct {
		fit, bad int
		first    misfit
	}
	counts := make([]count, l.nf)
	for _, r := range rows {
		if r.fields != l.nf {
			continue
		}
		f := bytes.Split(r.text, []byte{'|'})
		for i := 0; i < l.nf; i++ {
			if !fitClass(l.classes[i]) || l.col[i] == colOther || len(f[i]) == 0 {
				continue
			}
			c := &counts[i]
			if l.classes[i].fits(f[i]) {
				c.fit++
				continue
			}
			if c.bad == 0 {
				c.first = misfit{title: strings.TrimSpace(l.titles[i]), value: string(f[i]), line: r.line}
			}
			c.bad++
		}
	}
	var out []misfit
	for _, c := range counts {
		if c.bad > 0 && c.fit == 0 {
			m := c.first
			m.rows = c.bad
			out = append(out, m)
		}
	}
	return out
}

// systematic reports whether misfits show that the columns are not what
// the layout says rather than that some rows are bad: two columns, or one
// column in two rows or more. (One bad value in a one-row file stays that
// row's rejection.)
func systematic(ms []misfit) bool {
	return len(ms) >= 2 || len(ms) == 1 && ms[0].rows >= 2
}

// describeMisfits lists misfits for an error: Start="alice" (line 2), …
func describeMisfits(ms []misfit) string {
	parts := make([]string, 0, min(len(ms), 4))
	for i, m := range ms {
		if i == 4 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s=%s (line %d)", m.title, quoteHead(m.value), m.line))
	}
	return strings.Join(parts, ", ")
}

func misfitTitles(ms []misfit) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.title
	}
	return out
}

// checkHeaderFit is the check of a header against the first rows' syntax
// (checkRows has checked their field count): a header whose telling
// columns never fit their values was edited, or belongs to another file.
func (l *sacctLayout) checkHeaderFit(name string, br *bufio.Reader) error {
	rows := l.sampleRows(br, 2)
	if len(rows) < 2 {
		return nil // one row's problem is that row's
	}
	if k, same := sameFields(rows); same && k > l.nf && !l.pipesRecover(rows) {
		// checkRows lets more fields through for a '|' in a free-text
		// column; in no row read can one explain them.
		return &FileError{File: name, Line: rows[0].line,
			Msg: fmt.Sprintf("the header has %d columns, rows have %d, and no '|' in a free-text column explains it in any row read: was the header edited?", l.nf, k)}
	}
	ms := l.misfits(rows)
	if !systematic(ms) {
		return nil
	}
	return &FileError{File: name, Line: ms[0].line, Columns: misfitTitles(ms),
		Msg: fmt.Sprintf("the rows do not fit the header: %s do not fit their columns in any row read: "+
			"was the header edited, or written for another file? Fetch the file again with its header (sacct -P -o …)", describeMisfits(ms))}
}

// checkFieldsFit is the check of a headerless file's first rows against
// the --sacct-fields list (given as desc): their field count, and the
// syntax of the telling columns. A list that does not fit is named with
// the presets that do, if any.
func (l *sacctLayout) checkFieldsFit(name, desc string, br *bufio.Reader) error {
	rows := l.sampleRows(br, 1)
	if len(rows) == 0 {
		return nil
	}
	var problem string
	var cols []string
	line := rows[0].line
	if k, same := sameFields(rows); same && k != l.nf && !(k > l.nf && l.pipesRecover(rows)) {
		problem = fmt.Sprintf("the rows have %d fields, %s has %d", k, desc, l.nf)
	} else if ms := l.misfits(rows); systematic(ms) || len(ms) > 0 && len(rows) == 1 {
		problem = fmt.Sprintf("the rows do not fit %s: %s do not fit their columns", desc, describeMisfits(ms))
		cols, line = misfitTitles(ms), ms[0].line
	}
	if problem == "" {
		return nil
	}
	fix := "pass the -o list the file was written with as --sacct-fields, or fetch it with its header (sacct without -n)"
	if fits := presetsFitting(rows); len(fits) > 0 {
		fix = "the file was written with another -o list: try --sacct-fields " + strings.Join(fits, " or ")
	}
	return &FileError{File: name, Line: line, Columns: cols, Msg: problem + ": " + fix}
}

// sameFields returns the rows' field count and whether they all have it.
func sameFields(rows []sampleLine) (int, bool) {
	k := rows[0].fields
	for _, r := range rows[1:] {
		if r.fields != k {
			return k, false
		}
	}
	return k, true
}

// pipesRecover reports whether some sampled row with more fields than the
// layout is read by '|' recovery (a JobName holding '|' in every sampled
// row: the tasks of one job array).
func (l *sacctLayout) pipesRecover(rows []sampleLine) bool {
	p := &sacctParser{lay: l}
	for _, r := range rows {
		if _, err := p.recoverPipes(bytes.Split(r.text, []byte{'|'})[:r.fields]); err == nil {
			return true
		}
	}
	return false
}

// presetsFitting returns the names of the presets (sorted) whose field
// count the rows have and whose telling columns fit them.
func presetsFitting(rows []sampleLine) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(SacctPresets)) {
		l := &sacctLayout{}
		if err := l.init(SacctPresets[name]); err != nil {
			continue
		}
		if k, same := sameFields(rows); !same || k != l.nf {
			continue
		}
		if len(l.misfits(rows)) == 0 {
			out = append(out, name)
		}
	}
	return out
}

// fieldsDesc names a --sacct-fields list for errors: "--sacct-fields
// xdmod" for a preset, else "the --sacct-fields list".
func fieldsDesc(fields []string) string {
	if len(fields) == 1 {
		if _, ok := SacctPresets[strings.ToLower(fields[0])]; ok {
			return "--sacct-fields " + strings.ToLower(fields[0])
		}
	}
	return "the --sacct-fields list"
}
