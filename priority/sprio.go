package priority

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/internal/safetext"
)

// SprioOptions selects the layout and the rows WriteSprio prints, the way
// sprio's options do (src/sprio/opts.c, sprio.c).
type SprioOptions struct {
	// Release is the Slurm release series whose sprio to reproduce: the
	// -l layouts, the format letters and a few cells differ
	// (docs/slurm-semantics.md §13.7). Zero: the newest.
	Release release.Series
	// Long is -l: every column.
	Long bool
	// Norm is -n: the default layouts print the normalised factors
	// (weighted ÷ weight) instead of the weighted ones. It does not change
	// an explicit Format.
	Norm bool
	// ShowWeights is -w: the header and one line of weights instead of
	// the jobs.
	ShowWeights bool
	// NoHeader is -h.
	NoHeader bool
	// Format is -o, sprio's format string ("%.15i %9r %.10Y …"); "" uses
	// the default layout, which Long, Norm, Users and the non-zero weights
	// choose. Long and Format exclude each other, as in sprio.
	Format string
	// Parsable prints fairledger's parsable form (-P) instead of sprio's
	// fixed-width one: the same columns, separated by '|', nothing cut or
	// padded, the header line first; the format's literal text is left
	// out.
	Parsable bool
	// Jobs is -j: only these job ids. When it finds no job sprio prints
	// "Unable to find jobs matching user/id(s) specified" (from 23.02
	// only when no job at all is listed, the filter being applied later).
	Jobs []uint32
	// Users is -u: only these users' jobs; it also adds the USER column to
	// the short layout.
	Users []string
	// Partitions is -p: only the rows of these partitions.
	Partitions []string
	// Accounts keeps only the jobs of these accounts (fairledger's -A;
	// sprio has no such option).
	Accounts []string
	// Weights are the weights the rows were weighed with: the default
	// layout has a column for each non-zero one, -n and -w print them.
	Weights Weights
	// TRES names the TRES of Row.Weighted.TRES (Cluster.TRES).
	TRES []string
	// Cluster is what the CLUSTER column (%c) prints. sprio prints a name
	// there only in a federation; leave it empty to print what a
	// standalone cluster's sprio prints, glibc's "(null)".
	Cluster string
}

// MaxSprioFieldWidth bounds the width of a format field. sprio takes any
// number and cuts each cell through a stack buffer that wide; no column
// needs more than a TRES list, and 1024 keeps a line of every column small.
const MaxSprioFieldWidth = 1024

// sprioField is one %-item of a format: its letter, width (0: as wide as
// the value), alignment ('.' right-justifies) and the literal text after it
// (src/sprio/opts.c, _parse_token).
type sprioField struct {
	letter byte
	width  int
	right  bool
	suffix string
}

// CheckSprioOptions reports whether WriteSprio would accept opt, with the
// error it would return: Long with a Format, an unknown format letter, a
// letter this release's sprio lacks, the SLUID (not kept), or a width over
// MaxSprioFieldWidth. A command checks its options with it before reading
// anything.
func CheckSprioOptions(opt SprioOptions) error {
	_, _, err := sprioFields(&opt)
	return err
}

// SprioFormat returns the format string sprio uses for opt: opt.Format, or
// the default layout of sprio.c for the release (-l, -n, the USER column of
// -u, and a column for each non-zero weight).
func SprioFormat(opt SprioOptions) string {
	if opt.Format != "" {
		return opt.Format
	}
	newer := opt.Release.AtLeast(sprioAccountQOS)
	if opt.Long {
		switch {
		case opt.Norm && newer:
			return "%.15i %9r %.8u %.8o %10y %10a %10b %10f %10j %10p %10n %10q %20t"
		case opt.Norm:
			return "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t"
		case newer:
			return "%.15i %9r %.8u %.8o %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10n %.10Q %.11N %.20T"
		default:
			return "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"
		}
	}
	w := &opt.Weights
	var b strings.Builder
	b.WriteString("%.15i %9r")
	if len(opt.Users) > 0 {
		b.WriteString(" %.8u")
	}
	col := func(weight bool, norm, weighted string) {
		if !weight {
			return
		}
		if opt.Norm {
			b.WriteString(norm)
		} else {
			b.WriteString(weighted)
		}
	}
	col(true, " %10y", " %.10Y %.10S")
	col(w.Age != 0, " %10a", " %.10A")
	col(w.Assoc != 0, " %10b", " %.10B")
	col(w.FairShare != 0, " %10f", " %.10F")
	col(w.JobSize != 0, " %10j", " %.10J")
	col(w.Partition != 0, " %10p", " %.10P")
	col(w.QOS != 0, " %10q", " %.10Q")
	col(w.TRESConfig != "", " %20t", " %.20T")
	return b.String()
}

// sprioFields parses the format opt selects as sprio's parse_format does:
// the text before the first '%' is printed at the start of every line;
// then each '%'-separated piece (empty pieces skipped, as strtok does) is
// an optional '.', a width, a letter and literal text printed after the
// field.
func sprioFields(opt *SprioOptions) (prefix string, fields []sprioField, err error) {
	if opt.Long && opt.Format != "" {
		return "", nil, errors.New("sprio: options -o (--format) and -l (--long) are mutually exclusive")
	}
	format := SprioFormat(*opt)
	prefix, _, _ = strings.Cut(format, "%")
	pieces := strings.Split(format, "%")
	if !strings.HasPrefix(format, "%") {
		pieces = pieces[1:] // the prefix
	}
	for _, tok := range pieces {
		if tok == "" {
			continue
		}
		var f sprioField
		i := 0
		if tok[0] == '.' {
			f.right = true
			i++
		}
		for ; i < len(tok) && '0' <= tok[i] && tok[i] <= '9'; i++ {
			f.width = f.width*10 + int(tok[i]-'0')
			if f.width > MaxSprioFieldWidth {
				return "", nil, fmt.Errorf("sprio format %q: field width over %d", "%"+tok, MaxSprioFieldWidth)
			}
		}
		if i == len(tok) {
			return "", nil, fmt.Errorf("sprio format %q: the field letter is missing", "%"+tok)
		}
		f.letter, f.suffix = tok[i], tok[i+1:]
		if err := checkLetter(f.letter, opt.Release); err != nil {
			return "", nil, err
		}
		fields = append(fields, f)
	}
	return prefix, fields, nil
}

// checkLetter refuses a format letter the release's sprio does not know
// (sprio reports "Invalid job format specification" and leaves the field
// out; fairledger stops instead), and the SLUID, which no record holds.
func checkLetter(c byte, rel release.Series) error {
	switch {
	case strings.IndexByte("aAbBcfFijJNpPrSqQuyYtT", c) >= 0:
		return nil
	case (c == 'n' || c == 'o') && rel.AtLeast(sprioAccountQOS):
		return nil
	case c == 's' && rel.AtLeast(sprioSLUID):
		return errors.New("sprio format: %s (SLUID) is not kept in the history")
	}
	return fmt.Errorf("sprio format: invalid job format specification: %%%c", c)
}

// sprioLine says what a line of sprio holds.
type sprioLine int

const (
	headerLine  sprioLine = iota // the column names
	weightsLine                  // -w: the weights
	jobLine                      // a row
)

// WriteSprio writes rows as `sprio` prints them with opt's options: the
// rows opt's filters keep, ordered by job id (a job's rows keep the order
// given, AppendRows's), each field cut to its width and padded as
// src/sprio/print.c's _print_str does (".": right-justified; the cut keeps
// the first bytes), weighted factors as C's %.0f (round half to even:
// 562.5 prints 562), normalised ones as %.7f, PRIORITY as the truncated
// Row.Sum (%.10y: ÷ 2³²−1 as %16.14f), TRES as name=%.0f (name=%.2f
// normalised) for each non-zero term. Names are printed with their control
// characters spelled out (ESC as \x1b) and, with Parsable, '|' as \x7c
// (docs/bad-input.md, "Hostile names"); sprio prints them raw.
func WriteSprio(w io.Writer, rows []Row, opt SprioOptions) error {
	prefix, fields, err := sprioFields(&opt)
	if err != nil {
		return err
	}
	keep := make([]int, 0, len(rows))
	for i := range rows {
		if opt.keeps(&rows[i]) {
			keep = append(keep, i)
		}
	}
	slices.SortStableFunc(keep, func(a, b int) int {
		switch x, y := rows[a].JobID, rows[b].JobID; {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})

	var b []byte
	flush := func() error {
		_, err := w.Write(b)
		b = b[:0]
		return err
	}
	// sprio.c: with -j, no job to show prints a message instead of the
	// table. 22.05 filters in slurmctld, so the message follows the
	// filters; from 23.02 sprio filters what it got, so it follows
	// whether any job was pending at all.
	if len(opt.Jobs) > 0 {
		none := len(rows) == 0
		if !opt.Release.AtLeast(sprioFilters) {
			none = len(keep) == 0
		}
		if none {
			b = append(b, "Unable to find jobs matching user/id(s) specified\n"...)
			return writeErr(flush())
		}
	}
	line := func(kind sprioLine, r *Row) {
		if !opt.Parsable {
			b = append(b, prefix...)
		}
		for i, f := range fields {
			s, null := opt.cell(f.letter, kind, r)
			// Names (user, account, partition, QOS, cluster) come from the
			// site's databases: their control characters are spelled out,
			// and with -p the '|' too, so that a name can neither act on a
			// terminal nor add a field or a line (docs/bad-input.md,
			// "Hostile names"). Slurm's sprio prints them raw.
			if opt.Parsable {
				if i > 0 {
					b = append(b, '|')
				}
				if !null {
					b = append(b, safetext.Field(s, '|')...)
				}
				continue
			}
			b = appendSprioField(b, safetext.Visible(s), null, f.width, f.right)
			b = append(b, f.suffix...)
		}
		b = append(b, '\n')
	}
	if !opt.NoHeader {
		line(headerLine, nil)
	}
	if opt.ShowWeights {
		line(weightsLine, nil)
		return writeErr(flush())
	}
	for _, i := range keep {
		line(jobLine, &rows[i])
		if len(b) >= 60<<10 {
			if err := flush(); err != nil {
				return writeErr(err)
			}
		}
	}
	return writeErr(flush())
}

// writeErr wraps a write error.
func writeErr(err error) error {
	if err != nil {
		return fmt.Errorf("write sprio: %w", err)
	}
	return nil
}

// keeps applies the -j, -u, -p and -A filters.
func (opt *SprioOptions) keeps(r *Row) bool {
	return (len(opt.Jobs) == 0 || slices.Contains(opt.Jobs, r.JobID)) &&
		(len(opt.Users) == 0 || slices.Contains(opt.Users, r.User)) &&
		(len(opt.Partitions) == 0 || slices.Contains(opt.Partitions, r.Partition)) &&
		(len(opt.Accounts) == 0 || slices.Contains(opt.Accounts, r.Account))
}

// cell is the text of one field of a line (src/sprio/print.c, the
// _print_* functions); null marks a C NULL string.
func (opt *SprioOptions) cell(c byte, kind sprioLine, r *Row) (s string, null bool) {
	if kind == headerLine {
		return sprioHeader(c), false
	}
	w := &opt.Weights
	if kind == weightsLine {
		switch c {
		case 'i':
			return "Weights", false
		case 'S':
			return "1", false
		case 'a', 'A':
			return cFloat(float64(w.Age), 0), false
		case 'b', 'B':
			return cFloat(float64(w.Assoc), 0), false
		case 'f', 'F':
			return cFloat(float64(w.FairShare), 0), false
		case 'j', 'J':
			return cFloat(float64(w.JobSize), 0), false
		case 'p', 'P':
			return cFloat(float64(w.Partition), 0), false
		case 'q', 'Q':
			return cFloat(float64(w.QOS), 0), false
		case 'T':
			// The PriorityWeightTRES string; unset, a NULL.
			return w.TRESConfig, w.TRESConfig == ""
		}
		// The others print nothing; %c reads a field of the weights
		// pseudo-row and crashes sprio, fairledger prints nothing.
		return "", false
	}

	// From 23.02 every factor of a job with an admin-set priority prints
	// 0 (TRES nothing); in 22.05 its factors are simply all 0.
	direct := r.Direct > 0 && opt.Release.AtLeast(adminSetZeroFactors)
	f := &r.Weighted
	weighted := func(v float64) string {
		if direct {
			return "0"
		}
		return cFloat(v, 0)
	}
	norm := func(v float64, weight uint32) string {
		if direct {
			return "0"
		}
		n := 0.0
		if weight != 0 {
			n = v / float64(weight)
		}
		return cFloat(n, 7)
	}
	switch c {
	case 'i':
		return strconv.FormatUint(uint64(r.JobID), 10), false
	case 'r':
		return r.Partition, false
	case 'u':
		return r.User, false
	case 'o':
		return r.Account, false
	case 'n':
		return r.QOS, false
	case 'c':
		return opt.Cluster, opt.Cluster == ""
	case 'Y':
		return strconv.FormatInt(int64(r.Sum()), 10), false
	case 'y':
		v := r.Sum()
		if r.Direct == 0 {
			v /= math.MaxUint32
		}
		return cFloatWidth(v, 16, 14), false
	case 'S':
		if r.Direct > 0 {
			return "0", false
		}
		return cFloat(float64(r.Site), 0), false
	case 'N':
		if r.Direct > 0 {
			return "0", false
		}
		return cFloat(float64(r.Nice), 0), false
	case 'A':
		return weighted(f.Age), false
	case 'a':
		return norm(f.Age, w.Age), false
	case 'B':
		return weighted(f.Assoc), false
	case 'b':
		return norm(f.Assoc, w.Assoc), false
	case 'F':
		return weighted(f.FairShare), false
	case 'f':
		return norm(f.FairShare, w.FairShare), false
	case 'J':
		return weighted(f.JobSize), false
	case 'j':
		return norm(f.JobSize, w.JobSize), false
	case 'P':
		return weighted(f.Partition), false
	case 'p':
		return norm(f.Partition, w.Partition), false
	case 'Q':
		return weighted(f.QOS), false
	case 'q':
		return norm(f.QOS, w.QOS), false
	case 'T', 't':
		if direct {
			return "", false
		}
		var b []byte
		for i, v := range f.TRES {
			if v == 0 {
				continue
			}
			if len(b) > 0 {
				b = append(b, ',')
			}
			if i < len(opt.TRES) {
				b = append(b, opt.TRES[i]...)
			}
			b = append(b, '=')
			if c == 'T' {
				b = append(b, cFloat(v, 0)...)
			} else {
				b = append(b, cFloat(v/tresWeight(w, i), 2)...)
			}
		}
		return string(b), false
	}
	return "", false
}

// sprioHeader is the column name of a format letter.
func sprioHeader(c byte) string {
	switch c {
	case 'i':
		return "JOBID"
	case 'r', 'p', 'P':
		return "PARTITION"
	case 'u':
		return "USER"
	case 'o':
		return "ACCOUNT"
	case 'n':
		return "QOSNAME"
	case 'c':
		return "CLUSTER"
	case 'y', 'Y':
		return "PRIORITY"
	case 'S':
		return "SITE"
	case 'a', 'A':
		return "AGE"
	case 'b', 'B':
		return "ASSOC"
	case 'f', 'F':
		return "FAIRSHARE"
	case 'j', 'J':
		return "JOBSIZE"
	case 'q', 'Q':
		return "QOS"
	case 'N':
		return "NICE"
	case 't', 'T':
		return "TRES"
	}
	return ""
}

// appendSprioField appends s as _print_str prints it with cut_output set:
// right-justified ("%*s") or not ("%.*s") in width bytes, then cut to the
// width and padded with spaces to it; width 0 prints s as it is. A NULL
// prints as glibc prints it: "(null)", or nothing when a precision below 6
// limits it.
func appendSprioField(b []byte, s string, null bool, width int, right bool) []byte {
	if null {
		s = "(null)"
		if !right && width > 0 && width < len(s) {
			s = ""
		}
	}
	if width == 0 {
		return append(b, s...)
	}
	if right {
		for n := len(s); n < width; n++ {
			b = append(b, ' ')
		}
	}
	if len(s) > width {
		s = s[:width]
	}
	b = append(b, s...)
	for n := len(s); n < width && !right; n++ {
		b = append(b, ' ')
	}
	return b
}

// cFloat formats v as C's printf("%.*f", prec, v): Go's 'f' format rounds
// the exact binary value half to even, as glibc does; infinities and NaN
// print glibc's way.
func cFloat(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		if math.Signbit(v) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// cFloatWidth is C's "%*.*f": cFloat right-justified in width.
func cFloatWidth(v float64, width, prec int) string {
	s := cFloat(v, prec)
	if len(s) < width {
		s = strings.Repeat(" ", width-len(s)) + s
	}
	return s
}
