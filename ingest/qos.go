package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// QOS is one row of `sacctmgr -P show qos format=Name,UsageFactor,Flags[,Priority]`.
type QOS struct {
	// Name is the QOS name as printed.
	Name string
	// UsageFactor multiplies the usage a job of this QOS is charged
	// (docs/slurm-semantics.md §2.1); an empty column reads as 1.
	UsageFactor float64
	// Flags are the QOS flags as printed (e.g. "NoDecay", "DenyOnLimit").
	Flags []string
	// NoDecay reports whether Flags contains NoDecay (any case).
	NoDecay bool
	// Priority is the QOS's priority, the QOS factor of job priority
	// (divided by the largest of all QOS's unless
	// PriorityFlags=NO_NORMAL_QOS); 0 when the dump has no Priority column
	// (QOSTable.HasPriority) or a blank one: slurmdbd keeps none for a QOS
	// whose priority was cleared, and slurmctld reads that as 0.
	Priority int64
	// Line is the physical line of the row in its file.
	Line int
}

// QOSTable is the QOS list of one sacctmgr dump, rows in file order.
type QOSTable struct {
	// File is the input's name as given to ParseQOS.
	File string
	// Rows are the accepted rows.
	Rows []QOS
	// HasPriority reports whether the dump has a Priority column; without
	// one every QOS's Priority reads 0, which may not be the site's.
	HasPriority bool

	// index maps lower-cased names to Rows positions; nil for tables not
	// built by ParseQOS, which are searched linearly.
	index map[string]int
}

// UsageFactor returns the UsageFactor of the named QOS, matched without
// regard to case as slurmctld does. It returns 1, the factor Slurm applies
// to a job without a QOS, for an empty or unknown name and for a nil table.
func (t *QOSTable) UsageFactor(name string) float64 {
	if t == nil || name == "" {
		return 1
	}
	if t.index != nil {
		if i, ok := t.index[strings.ToLower(name)]; ok {
			return t.Rows[i].UsageFactor
		}
		return 1
	}
	for _, q := range t.Rows {
		if strings.EqualFold(q.Name, name) {
			return q.UsageFactor
		}
	}
	return 1
}

// Priority returns the Priority of the named QOS, matched without regard
// to case as slurmctld does; ok is false for an unknown name, and for a
// table without a Priority column (t.HasPriority).
func (t *QOSTable) Priority(name string) (priority int64, ok bool) {
	if t == nil || !t.HasPriority {
		return 0, false
	}
	if t.index != nil {
		if i, found := t.index[strings.ToLower(name)]; found {
			return t.Rows[i].Priority, true
		}
		return 0, false
	}
	for _, q := range t.Rows {
		if strings.EqualFold(q.Name, name) {
			return q.Priority, true
		}
	}
	return 0, false
}

// ReadQOS reads the QOS dump at path; see ParseQOS. The file must be a
// regular file of at most MaxQOSBytes.
func ReadQOS(path string) (*QOSTable, Stats, error) {
	f, err := openBounded(path, "QOS dump", "QOS dumps", MaxQOSBytes)
	if err != nil {
		return nil, Stats{File: path}, err
	}
	defer f.Close()
	return ParseQOS(path, f)
}

// ParseQOS reads the output of
//
//	sacctmgr -P show qos format=Name,UsageFactor,Flags
//
// The header line is required; its titles are matched without regard to
// case, in any order, and columns other than Name, UsageFactor, Flags and
// Priority are ignored. A header ending in '|' marks `sacctmgr -p` output, whose
// lines all end in '|'.
// Name and UsageFactor are required columns; without Flags, NoDecay is
// unknown and taken as false, which Stats.Warnings notes. Priority is
// optional (QOSTable.HasPriority); a blank one reads as 0.
//
// A row is rejected, with a *ParseError naming file, line, column and
// value, when its field count differs from the header's, its name is
// empty or repeats an earlier row's (without regard to case), or its
// UsageFactor is not a non-negative number, or its Priority not an integer
// from 0 to 4294967293. Blank lines are not records.
// The error is an errors.Join of all ParseErrors (a compressed input is one
// error); the table holds the accepted rows and Stats counts every data row.
// A row longer than MaxLineBytes is rejected; a file whose last line has no
// newline (sacctmgr ends every line with one: a truncated copy) gets a
// warning.
func ParseQOS(name string, r io.Reader) (*QOSTable, Stats, error) {
	t := &QOSTable{File: name, index: make(map[string]int)}
	st := Stats{File: name}
	var errs []error
	var oddFlags int    // ingested rows holding a flag Slurm does not know
	var oddFirst string // the first such flag and its line
	br := bufio.NewReaderSize(r, 64<<10)
	if head, err := br.Peek(16); err == nil || err == io.EOF {
		if format := compression(head); format != "" {
			return t, st, compressedError(name, format)
		}
	}
	lr := newLineReader(br, MaxLineBytes)
	lineNo := 0
	var cols []string
	trailing := false
	nameCol, ufCol, flagsCol, prioCol := -1, -1, -1, -1
	for {
		raw, n, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, &ParseError{File: name, Line: lr.n + 1, Err: fmt.Errorf("read: %w", err)})
			break
		}
		lineNo = lr.n
		if cols != nil {
			st.Lines++
		}
		if n > MaxLineBytes {
			errs = append(errs, &ParseError{File: name, Line: lineNo, Err: tooLong(n, MaxLineBytes)})
			if cols == nil {
				return t, st, errors.Join(errs...)
			}
			st.Read++
			st.Rejected++
			continue
		}
		text := strings.TrimRight(string(raw), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		if cols == nil {
			trailing = strings.HasSuffix(text, "|")
			cols = qosSplit(text, trailing)
			for i, c := range cols {
				switch strings.ToLower(strings.TrimSpace(c)) {
				case "name":
					nameCol = i
				case "usagefactor":
					ufCol = i
				case "flags":
					flagsCol = i
				case "priority":
					prioCol = i
				}
			}
			if nameCol < 0 || ufCol < 0 {
				errs = append(errs, &ParseError{File: name, Line: lineNo, Err: fmt.Errorf(
					"header %q lacks the Name and UsageFactor columns (run sacctmgr -P show qos format=Name,UsageFactor,Flags)", text)})
				return t, st, errors.Join(errs...)
			}
			if flagsCol < 0 {
				st.Warnings = append(st.Warnings, "no Flags column: NoDecay is unknown and taken as false")
			}
			t.HasPriority = prioCol >= 0
		} else {
			st.Read++
			if q, perr := qosRow(name, lineNo, cols, qosSplit(text, trailing), qosColumns{nameCol, ufCol, flagsCol, prioCol}); perr != nil {
				st.Rejected++
				errs = append(errs, perr)
			} else if _, dup := t.index[strings.ToLower(q.Name)]; dup {
				st.Rejected++
				errs = append(errs, newParseError(name, lineNo, cols[nameCol], q.Name, "duplicate QOS name"))
			} else {
				t.index[strings.ToLower(q.Name)] = len(t.Rows)
				t.Rows = append(t.Rows, q)
				st.Ingested++
				if fl := unknownQOSFlag(q.Flags); fl != "" {
					oddFlags++
					if oddFirst == "" {
						oddFirst = fmt.Sprintf("first %q, line %d", fl, lineNo)
					}
				}
			}
		}
	}
	if oddFlags > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("%d rows: a QOS flag Slurm does not know (%s): ignored; only NoDecay matters to fair share", oddFlags, oddFirst))
	}
	if cols == nil {
		errs = append(errs, &ParseError{File: name, Err: errors.New("empty input: the Name|UsageFactor|Flags header is missing")})
	} else if !lr.newline {
		st.Warnings = append(st.Warnings, noFinalNewline(name, lr.n, "sacctmgr"))
	}
	return t, st, errors.Join(errs...)
}

// qosFlags are the QOS flags sacctmgr prints (slurmdb_qos_flags_map in
// src/common/slurmdb_defs.c, whose Deleted and PartQOS it never shows),
// with NotSet, which slurmdb_qos_flags_str prints for a QOS without flags
// in some releases.
var qosFlags = []string{"DenyOnLimit", "EnforceUsageThreshold", "PartitionMinNodes", "PartitionMaxNodes",
	"PartitionTimeLimit", "RequiresReservation", "OverPartQOS", "NoReserve", "NoDecay", "Relative",
	"UsageFactorSafe", "NotSet"}

// unknownQOSFlag returns the first of flags that is no QOS flag Slurm
// prints, or "". sacctmgr refuses such a flag (str_2_qos_flags), so the dump
// is from a newer release or was edited: fairledger reads only NoDecay and
// ignores it, with a warning.
func unknownQOSFlag(flags []string) string {
	for _, fl := range flags {
		if !slices.ContainsFunc(qosFlags, func(k string) bool { return strings.EqualFold(k, fl) }) {
			return fl
		}
	}
	return ""
}

// qosSplit splits a sacctmgr line at '|'. With trailing set (the header
// ended in '|', as `sacctmgr -p` prints every line) the one empty field
// after the final '|' is dropped.
func qosSplit(line string, trailing bool) []string {
	f := strings.Split(line, "|")
	if trailing && len(f) > 1 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	return f
}

// qosColumns are the file columns of a QOS dump's fields, -1 when absent.
type qosColumns struct{ name, uf, flags, prio int }

// qosRow converts one data row.
func qosRow(file string, line int, cols, f []string, c qosColumns) (QOS, *ParseError) {
	nameCol, ufCol, flagsCol := c.name, c.uf, c.flags
	if len(f) != len(cols) {
		return QOS{}, &ParseError{File: file, Line: line, Err: fmt.Errorf("%d fields, header has %d", len(f), len(cols))}
	}
	for i, v := range f {
		if perr := checkText(file, line, cols[i], v); perr != nil {
			return QOS{}, perr
		}
	}
	q := QOS{Name: strings.TrimSpace(f[nameCol]), UsageFactor: 1, Line: line}
	if q.Name == "" {
		return QOS{}, newParseError(file, line, cols[nameCol], f[nameCol], "empty QOS name")
	}
	if uf := strings.TrimSpace(f[ufCol]); uf != "" {
		v, err := strconv.ParseFloat(uf, 64)
		switch {
		case err != nil:
			return QOS{}, newParseError(file, line, cols[ufCol], f[ufCol], "not a number")
		case math.IsNaN(v) || math.IsInf(v, 0):
			return QOS{}, newParseError(file, line, cols[ufCol], f[ufCol], "not a finite number")
		case v < 0:
			return QOS{}, newParseError(file, line, cols[ufCol], f[ufCol], "negative usage factor")
		}
		q.UsageFactor = v
	}
	if c.prio >= 0 {
		if v := strings.TrimSpace(f[c.prio]); v != "" {
			n, err := assocParsePriority(v)
			if err != nil {
				return QOS{}, newParseError(file, line, cols[c.prio], f[c.prio], err.Error())
			}
			q.Priority = n
		}
	}
	if flagsCol >= 0 {
		q.Flags = confList(f[flagsCol], nil)
		for _, fl := range q.Flags {
			if strings.EqualFold(fl, "NoDecay") {
				q.NoDecay = true
			}
		}
	}
	return q, nil
}
