package fairshare

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/internal/safetext"
)

// The release series where sshare's output changes; internal/release.Rules
// lists them.
var (
	// lineageRowOrder: from 23.11 sshare lists its rows in (cluster,
	// lineage) byte order (commit 242fb3339b "Make
	// slurmdb_sort_hierarchical_assoc_list() use lineage instead of lft.",
	// src/common/slurmdb_defs.c); before, each parent's user rows before its
	// sub-accounts, each group by name (docs/slurm-versions.md §3).
	lineageRowOrder = release.Series{Major: 23, Minor: 11}
	// blankAccountFairShare: from 25.11 sshare prints the FairShare cell of
	// user rows only (src/sshare/process.c, commit ce4741b891 "Use
	// fs_factor everywhere instead of calculating it when
	// PriorityFlags=NO_FAIR_TREE"); before, it computes the classic and
	// depth-oblivious factor of account and root rows too
	// (docs/slurm-versions.md §1).
	blankAccountFairShare = release.Series{Major: 25, Minor: 11}
)

// SshareRelease says how sshare of Slurm release series rel prints a
// snapshot that algo computed: accountFairShare, the classic and
// depth-oblivious FairShare of account and root rows too (before 25.11;
// the caller fills them with AccountFairShares), and nameOrder, the rows
// in name order (before 23.11): SshareOptions.AccountFairShare and
// NameOrder. The zero Series is the newest: neither.
func SshareRelease(rel release.Series, algo Algorithm) (accountFairShare, nameOrder bool) {
	return algo != FairTreeAlgo && rel.Before(blankAccountFairShare), rel.Before(lineageRowOrder)
}

// SshareOptions selects the sshare layout and rows WriteSshare reproduces:
// the parsable layouts (-P, or -p with TrailingSep) by default, the
// fixed-width one with FixedWidth.
type SshareOptions struct {
	// Long adds NormUsage, LevelFS (Fair Tree only), GrpTRESMins and
	// TRESRunMins (sshare -l).
	Long bool
	// FixedWidth selects sshare's default layout (neither -p nor -P):
	// fixed-width columns, a dashed line under the header. TrailingSep is
	// ignored.
	FixedWidth bool
	// TrailingSep ends every line with '|' (sshare -p); otherwise the
	// separator only separates fields (sshare -P).
	TrailingSep bool
	// NoHeader omits the header line (sshare -n), and in the fixed-width
	// layout the dashed line under it.
	NoHeader bool
	// Partitions inserts the Partition column after User (sshare -m).
	Partitions bool
	// AccountFairShare prints the classic/depth-oblivious FairShare of
	// account rows too, as sshare did before 25.11. Fair Tree accounts
	// have no factor and stay blank.
	AccountFairShare bool
	// NameOrder prints the rows in the order of Slurm 22.05–23.02
	// (slurmdb_sort_hierarchical_assoc_list with lft): depth first, and
	// under each parent its user rows before its sub-accounts, each group
	// by name (strcmp), one user's rows of several partitions in the
	// order of the sacctmgr dump the tree was read from (Tree.Line: lft
	// order, which slurmdbd returned), in tree order where it is not
	// known. Otherwise the rows are in the tree's (lineage) order, as
	// 23.11 and later print them.
	NameOrder bool
	// Users, when not empty, keeps only the user rows of these users
	// (compared case-insensitively); account rows are all kept. sshare
	// sends the calling user here unless -a is given, or the -u list.
	Users []string
	// NoUserRows drops every user row (account rows are kept): the caller
	// could not be named, so none of the user rows is known to be theirs.
	NoUserRows bool
	// Accounts, when not empty, keeps only the rows whose account is one
	// of these (case-insensitively): an account row by its own name, a user
	// row by the account it belongs to (sshare -A). Sub-accounts are not
	// included: slurmctld matches the association's account name only.
	Accounts []string
	// TRES are the cluster's TRES names in the order sshare lists them
	// (schemas.ClusterTRES). A TRESRunMins cell without a value prints
	// name=0 for each. Empty prints "cpu=0", what Slurm's own sshare tests
	// print (test24.x set up only the cpu TRES; the docs/slurm-semantics.md §11
	// vectors).
	TRES []string
	// TRESRunMins is an optional per-position TRESRunMins cell, as the
	// pipeline computes it (AppendTRESRunMins); nil or "" prints the zeros
	// of TRES.
	TRESRunMins []string
	// Fields, when not empty, is sshare's -o/--format list and replaces the
	// columns Long and Partitions choose. Each item is a case-insensitive
	// prefix of a column name, matched in the order of process.c's fields[]
	// table (so "N" is NormShares, "Norm" too, "NormU" NormUsage), with an
	// optional "%N" that sets the fixed-width column length (negative
	// left-justifies). Cluster prints the Cluster option; ID (the
	// association id, not kept by fairledger) is refused.
	Fields []string
	// Cluster is the cluster name the Cluster field prints.
	Cluster string
}

// The sshare columns, in the order sshare prints them.
const (
	colAccount = iota
	colUser
	colPartition
	colRawShares
	colNormShares
	colRawUsage
	colNormUsage
	colEffectvUsage
	colFairShare
	colLevelFS
	colGrpTRESMins
	colTRESRunMins
	colCluster
	colID
	numCols
)

// fieldOrder is the order in which process.c's fields[] table matches an
// -o item against the column names.
func fieldOrder() [numCols]int {
	return [numCols]int{colAccount, colCluster, colEffectvUsage, colFairShare, colLevelFS, colID,
		colNormShares, colNormUsage, colPartition, colRawShares, colRawUsage, colUser, colGrpTRESMins, colTRESRunMins}
}

// sshareColumn is a column header and its fixed-width field length: negative
// left-justifies, positive right-justifies (print_field_t.len).
type sshareColumn struct {
	name  string
	width int
}

// columnOf returns the header and width of column c, as in the fields[]
// table of Slurm's src/sshare/process.c (unchanged since 15.08).
func columnOf(c int) sshareColumn {
	switch c {
	case colAccount:
		return sshareColumn{"Account", -20}
	case colUser:
		return sshareColumn{"User", 10}
	case colPartition:
		return sshareColumn{"Partition", 12}
	case colRawShares:
		return sshareColumn{"RawShares", 10}
	case colNormShares:
		return sshareColumn{"NormShares", 11}
	case colRawUsage:
		return sshareColumn{"RawUsage", 11}
	case colNormUsage:
		return sshareColumn{"NormUsage", 11}
	case colEffectvUsage:
		return sshareColumn{"EffectvUsage", 13}
	case colFairShare:
		return sshareColumn{"FairShare", 10}
	case colLevelFS:
		return sshareColumn{"LevelFS", 10}
	case colGrpTRESMins:
		return sshareColumn{"GrpTRESMins", 30}
	case colTRESRunMins:
		return sshareColumn{"TRESRunMins", 30}
	case colCluster:
		return sshareColumn{"Cluster", 10}
	case colID:
		return sshareColumn{"ID", 6}
	}
	panic(fmt.Sprintf("fairshare: no sshare column %d", c))
}

// WriteSshare writes r in the layout of `sshare [-a] [-l] [-m] [-n]` with -P,
// -p or neither (FixedWidth), one line per selected association in tree
// position order (sshare's row order, §8): Account indented by one space per
// printed ancestor (with every account printed: one per depth below root),
// User, RawShares ("parent" for FairShare=parent, blank for root),
// NormShares, RawUsage (uint64 truncation of the raw usage), NormUsage,
// EffectvUsage, FairShare, LevelFS ("inf" for +Inf), GrpTRESMins,
// TRESRunMins. Doubles use C's %f (6 decimals of the exact binary value,
// round half to even, which Go's 'f' format matches); NaN cells are blank.
// The column set follows r.Algorithm: LevelFS only for Fair Tree.
//
// The fixed-width layout follows Slurm's print_fields.c: every field is
// padded to its column width (Account left-justified, the rest
// right-justified) and followed by one space, so lines end in a space; a
// string longer than its column is cut with '+' as its last character; a
// double whose %f does not fit switches to %e with as many digits as fit;
// integers are never cut.
//
// Unlike Slurm's print_fields_str, names are printed safely: control
// characters spelled out (ESC as \x1b), and in -P/-p the separator '|'
// as \x7c (cellWriter.safe, docs/bad-input.md "Hostile names").
func WriteSshare(w io.Writer, t *Tree, r *Result, opt SshareOptions) error {
	n := t.Len()
	if len(r.NormShares) != n || r.Algorithm == 0 {
		return fmt.Errorf("write sshare: result holds %d associations (algorithm %v), tree %d", len(r.NormShares), r.Algorithm, n)
	}
	if opt.TRESRunMins != nil && len(opt.TRESRunMins) != n {
		return fmt.Errorf("write sshare: %d TRESRunMins strings for %d associations", len(opt.TRESRunMins), n)
	}
	fairTree := r.Algorithm == FairTreeAlgo

	cols, widths, err := sshareColumns(opt, fairTree)
	if err != nil {
		return err
	}

	cw := cellWriter{w: w, b: make([]byte, 0, 64<<10), fixed: opt.FixedWidth, trailing: opt.TrailingSep && !opt.FixedWidth}
	if !opt.NoHeader {
		for k, c := range cols {
			cw.header(sshareColumn{columnOf(c).name, widths[k]})
		}
		cw.endLine()
		if opt.FixedWidth {
			// print_fields_header: abs(len) dashes and a space per column.
			for _, w := range widths {
				cw.spill()
				cw.b = appendRepeat(cw.b, '-', abs(w))
				cw.b = append(cw.b, ' ')
			}
			cw.b = append(cw.b, '\n')
		}
	}

	zeroRun := "cpu=0"
	if len(opt.TRES) > 0 {
		zeroRun = strings.Join(opt.TRES, "=0,") + "=0"
	}
	show, indent := selectRows(t, opt.Users, opt.NoUserRows, opt.Accounts)
	order := lineageOrder(n)
	if opt.NameOrder {
		order = nameOrder(t)
	}
	var acct []byte
	for _, p := range order {
		if show != nil && !show[p] {
			continue
		}
		for k, c := range cols {
			width := widths[k]
			switch c {
			case colAccount:
				d := int(t.Depth[p])
				if indent != nil {
					d = int(indent[p])
				}
				acct = appendRepeat(acct[:0], ' ', d)
				acct = append(acct, cw.safe(t.Account[p])...)
				cw.textBytes(acct, width)
			case colUser:
				cw.text(t.User[p], width)
			case colPartition:
				cw.text(t.Partition[p], width)
			case colRawShares:
				switch {
				case p == 0:
					cw.blank(width)
				case t.SharesParent[p]:
					cw.text("parent", width)
				default:
					cw.integer(uint64(t.Shares[p]), width)
				}
			case colNormShares:
				cw.double(r.NormShares[p], width)
			case colRawUsage:
				cw.integer(rawUsage(r.RawUsage[p]), width)
			case colNormUsage:
				cw.double(r.NormUsage[p], width)
			case colEffectvUsage:
				cw.double(r.EffectvUsage[p], width)
			case colFairShare:
				if t.IsUser[p] || (opt.AccountFairShare && !fairTree) {
					cw.double(r.FairShare[p], width)
				} else {
					cw.blank(width)
				}
			case colLevelFS:
				cw.double(r.LevelFS[p], width)
			case colGrpTRESMins:
				cw.text(t.GrpTRESMins[p], width) // blank when none
			case colTRESRunMins:
				s := zeroRun
				if opt.TRESRunMins != nil && opt.TRESRunMins[p] != "" {
					s = opt.TRESRunMins[p]
				}
				cw.text(s, width)
			case colCluster:
				cw.text(opt.Cluster, width)
			}
		}
		cw.endLine()
		if cw.err != nil {
			break
		}
	}
	cw.flush()
	if cw.err != nil {
		return fmt.Errorf("write sshare: %w", cw.err)
	}
	return nil
}

// MaxSshareFieldLength bounds the %LENGTH of an -o item (either sign).
// Slurm's sshare takes any atoi() value and prints each string cell through
// a stack buffer of that many bytes (print_fields_str's temp_char[abs_len+1])
// and each double through a heap string as wide (print_fields_double's
// xstrfmtcat "%*f"): `-o account%999999999` makes it overflow its stack or
// allocate a gigabyte per cell. No column needs more than a TRES list: 1024
// is far beyond any real use and keeps a line of every column under 16 KiB.
const MaxSshareFieldLength = 1024

// CheckSshareFields reports whether fields (SshareOptions.Fields, sshare's
// -o list) would be accepted by WriteSshare, with the error WriteSshare
// would return: an unknown column, the association id, or a length that is
// not a non-zero integer within ±MaxSshareFieldLength. A command checks the
// list with it before reading anything.
func CheckSshareFields(fields []string) error {
	_, _, err := sshareColumns(SshareOptions{Fields: fields}, true)
	return err
}

// sshareColumns returns the columns WriteSshare prints and their
// fixed-width lengths: opt.Fields resolved as process.c resolves -o, or the
// default lists of process.c: A,User,[P,]RawShares,NormShares,RawUsage,
// [NormUsage,]Eff,Fairshare[,LevelFS][,GrpTRESMins,TRESRunMins].
func sshareColumns(opt SshareOptions, fairTree bool) (cols, widths []int, err error) {
	if len(opt.Fields) == 0 {
		cols = append(cols, colAccount, colUser)
		if opt.Partitions {
			cols = append(cols, colPartition)
		}
		cols = append(cols, colRawShares, colNormShares, colRawUsage)
		if opt.Long {
			cols = append(cols, colNormUsage)
		}
		cols = append(cols, colEffectvUsage, colFairShare)
		if opt.Long {
			if fairTree {
				cols = append(cols, colLevelFS)
			}
			cols = append(cols, colGrpTRESMins, colTRESRunMins)
		}
		for _, c := range cols {
			widths = append(widths, columnOf(c).width)
		}
		return cols, widths, nil
	}
	for _, item := range opt.Fields {
		name, width := item, 0
		if i := strings.IndexByte(item, '%'); i >= 0 {
			name = item[:i]
			if width, err = strconv.Atoi(item[i+1:]); err != nil || width == 0 {
				return nil, nil, fmt.Errorf("sshare field %q: the length after %% must be a non-zero integer", item)
			}
			if abs(width) > MaxSshareFieldLength {
				return nil, nil, fmt.Errorf("sshare field %q: the length after %% must be between -%d and %d",
					item, MaxSshareFieldLength, MaxSshareFieldLength)
			}
		}
		c := -1
		for _, f := range fieldOrder() {
			if n := columnOf(f).name; name != "" && len(name) <= len(n) && strings.EqualFold(n[:len(name)], name) {
				c = f
				break
			}
		}
		switch c {
		case -1:
			return nil, nil, fmt.Errorf("sshare: invalid field requested: %q", item)
		case colID:
			return nil, nil, fmt.Errorf("sshare field %q: association ids are not kept in the history", item)
		}
		if width == 0 {
			width = columnOf(c).width
		}
		cols, widths = append(cols, c), append(widths, width)
	}
	return cols, widths, nil
}

// selectRows applies the user and account filters of slurmctld's
// assoc_mgr_get_shares (src/common/assoc_mgr.c): with a user list, a user
// association must name one of the users (account associations pass); with
// an account list, every association's account must be one of them. Both
// compare case-insensitively (xstrcasecmp). It returns nil, nil when
// everything is shown. Otherwise indent gives each shown row's indentation
// as sshare's slurmdb_tree_name_get computes it from the rows it has
// printed: one more space than the parent account if that was printed,
// none if it was not.
func selectRows(t *Tree, users []string, noUsers bool, accounts []string) (show []bool, indent []int32) {
	if len(users) == 0 && !noUsers && len(accounts) == 0 {
		return nil, nil
	}
	in := func(list []string, s string) bool {
		for _, x := range list {
			if strings.EqualFold(x, s) {
				return true
			}
		}
		return false
	}
	n := t.Len()
	show = make([]bool, n)
	indent = make([]int32, n)
	for p := 0; p < n; p++ {
		if t.IsUser[p] && (noUsers || len(users) > 0 && !in(users, t.User[p])) {
			continue
		}
		if len(accounts) > 0 && !in(accounts, t.Account[p]) {
			continue
		}
		show[p] = true
		// Parents precede children, so the parent's indentation is set.
		if par := t.Parent[p]; par >= 0 && show[par] {
			indent[p] = indent[par] + 1
		}
	}
	return show, indent
}

// cellWriter appends the cells of sshare lines in the parsable or the
// fixed-width layout (Slurm's print_fields.c) to b, and hands b to w
// whenever it holds 60 KiB or more at the start of a cell, so that it stays
// under 64 KiB and a cell however long a line is.
type cellWriter struct {
	w        io.Writer
	err      error // the first error of w
	b        []byte
	fixed    bool
	trailing bool
	cells    int // cells written on the current line
}

// spill writes b out once it holds 60 KiB or more.
func (w *cellWriter) spill() {
	if len(w.b) >= 60<<10 {
		w.flush()
	}
}

// flush writes b out (nothing after an error) and empties it.
func (w *cellWriter) flush() {
	if w.err == nil && len(w.b) > 0 {
		_, w.err = w.w.Write(w.b)
	}
	w.b = w.b[:0]
}

// sep starts a cell: the '|' between parsable fields.
func (w *cellWriter) sep() {
	w.spill()
	if !w.fixed && w.cells > 0 {
		w.b = append(w.b, '|')
	}
	w.cells++
}

// endLine ends a line: a trailing '|' for -p, then the newline.
func (w *cellWriter) endLine() {
	if w.trailing {
		w.b = append(w.b, '|')
	}
	w.b = append(w.b, '\n')
	w.cells = 0
}

// safe returns a name as it may be printed: its control characters
// spelled out (safetext.Visible) and, in the parsable layouts, the '|'
// separator too (safetext.Field), so that a name can neither act on a
// terminal nor add a field or a line. A normal name is returned as it is.
// Slurm's own sshare prints names raw.
func (w *cellWriter) safe(s string) string {
	if w.fixed {
		return safetext.Visible(s)
	}
	return safetext.Field(s, '|')
}

// text writes a string cell ("" is blank), print_fields_str: in the
// fixed-width layout a value longer than the column keeps its first
// abs(len)-1 bytes and a '+'; a NULL value prints as " ", which pads to
// blanks like "". The value is printed as safe gives it.
func (w *cellWriter) text(s string, width int) {
	w.sep()
	s = w.safe(s)
	if !w.fixed {
		w.b = append(w.b, s...)
		return
	}
	w.b = appendCut(w.b, s, width)
}

// textBytes is text for a byte slice.
func (w *cellWriter) textBytes(s []byte, width int) {
	w.sep()
	if !w.fixed {
		w.b = append(w.b, s...)
		return
	}
	w.b = appendCut(w.b, s, width)
}

// header writes a header cell: "%*.*s " of the column name in the
// fixed-width layout (print_fields_header).
func (w *cellWriter) header(col sshareColumn) {
	w.sep()
	if !w.fixed {
		w.b = append(w.b, col.name...)
		return
	}
	w.b = appendPadded(w.b, col.name, col.width)
}

// appendCut appends s as print_fields_str prints it in the fixed-width
// layout: cut to abs(width) with a final '+' if longer, padded otherwise,
// and followed by a space.
func appendCut[S ~string | ~[]byte](b []byte, s S, width int) []byte {
	if a := abs(width); len(s) > a {
		b = append(b, s[:a-1]...)
		return append(b, '+', ' ')
	}
	return appendPadded(b, s, width)
}

// appendPadded appends s padded to abs(width) as printf's "%*s" (width >
// 0) or "%-*s" (width < 0) would, then the space that follows every
// fixed-width field. s is not cut.
func appendPadded[S ~string | ~[]byte](b []byte, s S, width int) []byte {
	fill := abs(width) - len(s)
	if width > 0 {
		b = appendRepeat(b, ' ', fill)
	}
	b = append(b, s...)
	if width < 0 {
		b = appendRepeat(b, ' ', fill)
	}
	return append(b, ' ')
}

// blank writes an empty cell (print_fields_double/uint for NO_VAL,
// print_fields_str for NULL).
func (w *cellWriter) blank(width int) {
	w.sep()
	if w.fixed {
		w.b = appendRepeat(w.b, ' ', abs(width))
		w.b = append(w.b, ' ')
	}
}

// integer writes an integer cell, print_fields_uint32/uint64: "%*u", never
// cut.
func (w *cellWriter) integer(v uint64, width int) {
	w.sep()
	if !w.fixed {
		w.b = strconv.AppendUint(w.b, v, 10)
		return
	}
	var tmp [24]byte
	w.b = appendPadded(w.b, strconv.AppendUint(tmp[:0], v, 10), width)
}

// double writes a double cell, print_fields_double: NaN is blank, otherwise
// "%f"; in the fixed-width layout a %f wider than the column is replaced by
// %e as print_fields_double computes it (appendFixedE).
func (w *cellWriter) double(v float64, width int) {
	if math.IsNaN(v) {
		w.blank(width)
		return
	}
	w.sep()
	if !w.fixed {
		w.b = appendF(w.b, v)
		return
	}
	var tmp [352]byte // %f of the largest double: 309 digits + 7
	s := appendF(tmp[:0], v)
	if len(s) <= abs(width) {
		w.b = appendPadded(w.b, s, width)
		return
	}
	w.b = appendFixedE(w.b, v, width)
	w.b = append(w.b, ' ')
}

// appendFixedE appends v the way print_fields_double (src/common/
// print_fields.c) prints a value whose "%*f" is wider than the column:
// it formats "%*.*e" with width and precision abs(len), measures that
// string, and if it is wider than the column lowers width (and precision)
// by the excess, then prints "%*.*e" (or "%-*.*e" for a negative len) with
// the lowered value. With the 10- to 13-wide sshare columns this yields
// exactly the column width, e.g. 1234.5 in 10 columns is "1.2345e+03".
func appendFixedE(b []byte, v float64, width int) []byte {
	a := abs(width)
	var tmp [64]byte
	first := len(strconv.AppendFloat(tmp[:0], v, 'e', a, 64))
	newLen := max(first, a) // "%*.*e" pads to at least the width
	wd := a
	if newLen > wd {
		wd -= newLen - wd
	}
	// C: a negative precision is taken as if it were omitted (6); a
	// negative field width is the '-' flag with its absolute value.
	prec := wd
	if prec < 0 {
		prec = 6
	}
	s := strconv.AppendFloat(tmp[:0], v, 'e', prec, 64)
	left := width < 0 || wd < 0
	fill := abs(wd) - len(s)
	if !left {
		b = appendRepeat(b, ' ', fill)
	}
	b = append(b, s...)
	if left {
		b = appendRepeat(b, ' ', fill)
	}
	return b
}

// appendF appends v as C's printf("%f") would, blank for NaN and "inf" for
// +Inf.
func appendF(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return b
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, v, 'f', 6, 64)
}

// rawUsage converts usage to sshare's RawUsage, slurmctld's
// (uint64_t)assoc->usage->usage_raw (assoc_mgr_get_shares,
// src/common/assoc_mgr.c, 22.05–26.05): the cast truncates toward zero.
// Usage is negative only under negative TRESBillingWeights; converting a
// negative value of −1 or below to uint64 is undefined in C, and on x86-64
// GCC's x87 conversion of the long double stores the two's-complement
// bits of the truncated value (−3.5 prints 18446744073709551613; −2^63
// and below, the integer-indefinite 2^63), checked with a C program built
// by Debian's gcc 12; a value in (−1, 0) truncates to 0. NaN prints 0 and
// overflow saturates.
func rawUsage(v float64) uint64 {
	switch {
	case v != v || v > -1 && v < 1:
		return 0
	case v <= -0x1p63:
		return 1 << 63
	case v < 0:
		return uint64(int64(v))
	case v >= 18446744073709551615.0:
		return math.MaxUint64
	}
	return uint64(v)
}

// appendRepeat appends n copies of c (nothing for n <= 0).
func appendRepeat(b []byte, c byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, c)
	}
	return b
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// lineageOrder is the tree's own order of n positions.
func lineageOrder(n int) []int32 {
	order := make([]int32, n)
	for p := range order {
		order[p] = int32(p)
	}
	return order
}

// nameOrder returns the positions of t in the row order of Slurm 22.05 and
// 23.02 (src/common/slurmdb_defs.c, slurmdb_sort_hierarchical_assoc_list
// with use_lft, _sort_children_list): depth first from root; under each
// parent the user associations first, then the accounts, each group by
// strcmp of the user or account name; equal names (one user's rows of
// several partitions) keep their `lft` order, which is the order of the
// dump they were read from (Tree.Line), or the tree's order when no line
// is known.
func nameOrder(t *Tree) []int32 {
	n := t.Len()
	children := make([][]int32, n)
	var roots []int32
	for p := range n {
		if q := t.Parent[p]; q >= 0 {
			children[q] = append(children[q], int32(p))
		} else {
			roots = append(roots, int32(p))
		}
	}
	name := func(p int32) string {
		if t.IsUser[p] {
			return t.User[p]
		}
		return t.Account[p]
	}
	order := make([]int32, 0, n)
	var walk func(p int32)
	walk = func(p int32) {
		order = append(order, p)
		c := children[p]
		slices.SortStableFunc(c, func(a, b int32) int {
			if t.IsUser[a] != t.IsUser[b] {
				if t.IsUser[a] {
					return -1
				}
				return 1
			}
			if c := strings.Compare(name(a), name(b)); c != 0 {
				return c
			}
			// One user's associations (per partition) compare equal
			// and keep slurmdbd's order, the dump's, where known.
			if t.Line[a] > 0 && t.Line[b] > 0 {
				return cmp.Compare(t.Line[a], t.Line[b])
			}
			return 0
		})
		for _, q := range c {
			walk(q)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return order
}
