package ingest

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// assocSharesParentRaw is Slurm's SLURMDB_FS_USE_PARENT: the shares_raw value
// stored for FairShare=parent. Association.Shares holds it when SharesParent
// is set, so that a raw value never collides with a real share count.
const assocSharesParentRaw = 0x7FFFFFFF

// Association is one row of the association tree: the root account, an
// account, or a user (optionally per partition) on one cluster.
type Association struct {
	// Cluster is the cluster name; "" when the input names none.
	Cluster string
	// Account is the account name; for user rows the account the user
	// belongs to.
	Account string
	// User is empty on account rows (and on the root row).
	User string
	// Partition is set only on per-partition user associations.
	Partition string
	// Parent is the parent account for account rows, the user's account for
	// user rows, and "" for the root row.
	Parent string
	// Shares are the raw shares (Slurm's shares_raw); meaningless when
	// SharesParent is set (it then holds Slurm's 0x7FFFFFFF sentinel).
	Shares int64
	// SharesParent marks FairShare=parent (docs/slurm-semantics.md §4.1).
	SharesParent bool
	// Lineage is Slurm's lineage string, as given in the input or else
	// computed the way Slurm does: "/" for root, "/a/b/" for accounts,
	// "/a/b/0-user/" for users and "/a/b/0-user/part/" per partition.
	Lineage string
	// GrpTRESMins is the association's GrpTRESMins limit as sacctmgr prints
	// it ("cpu=1000,gres/gpu=50,mem=2.50G"; TRES-minutes), "" when none is
	// set or the input has no GrpTRESMins column. ParseTRESLimit reads it;
	// sshare -l prints it through SshareTRES (raw counts, TRES order).
	GrpTRESMins string
	// Priority is the association's priority (sacctmgr's Priority, the
	// ASSOC factor of job priority) when HasPriority is set. A
	// `sacctmgr show assoc` dump prints the value slurmctld uses: the
	// association's own, else the nearest ancestor's (slurmdbd's
	// get_parent_limits), blank when neither has one; a dump made with
	// WOPLimits, and a sacctmgr script, give each association's own value
	// only. EffectivePriorities computes the inherited values either way.
	Priority int64
	// HasPriority reports whether Priority is set (the input gave one);
	// an unset priority is not 0, it inherits.
	HasPriority bool
	// File and Line locate the input record the row came from; Line is 0 for
	// rows fairledger synthesized (a missing root).
	File string
	Line int
}

// IsUser reports whether a is a user association (as opposed to an account
// or the root account).
func (a *Association) IsUser() bool { return a.User != "" }

// IsRoot reports whether a is the root account association of its cluster.
func (a *Association) IsRoot() bool { return a.User == "" && a.Account == "root" }

// Associations is a validated association tree of one input: every row's
// parent exists, there are no cycles and no duplicates.
type Associations struct {
	// File is the input's name as given by the caller.
	File string
	// Rows are sorted by (Cluster, Lineage) byte-wise, the order sshare
	// lists them in; each cluster's root row ("/") comes first.
	Rows []Association
}

// ReadAssoc reads a `sacctmgr -P show assoc` dump from path; see ParseAssoc.
// The file must be a regular file of at most MaxAssocBytes.
func ReadAssoc(path string) (*Associations, Stats, error) {
	f, err := openAssoc(path)
	if err != nil {
		return nil, Stats{File: filepath.Base(path)}, err
	}
	defer f.Close()
	return ParseAssoc(filepath.Base(path), f)
}

// openAssoc opens an association file: a regular file of at most
// MaxAssocBytes.
func openAssoc(path string) (*boundedFile, error) {
	return openBounded(path, "association file", "association files", MaxAssocBytes)
}

// assocSniffBytes is how much of an association file ReadAssocFile looks at
// to tell a dump from a script.
const assocSniffBytes = 64 << 10

// ReadAssocFile reads one association file of either kind: a `sacctmgr -P
// show assoc` dump (its first meaningful line contains '|') or a sacctmgr
// command script (anything else). It is what a directory of dumps and a
// single --assoc file both go through. The file must be a regular file of
// at most MaxAssocBytes; it is streamed. A compressed file is one error.
func ReadAssocFile(path string) (*Associations, Stats, error) {
	name := filepath.Base(path)
	f, err := openAssoc(path)
	if err != nil {
		return nil, Stats{File: name}, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, assocSniffBytes)
	head, err := br.Peek(assocSniffBytes)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, Stats{File: name}, readError(name, err)
	}
	if format := compression(head); format != "" {
		return nil, Stats{File: name}, compressedError(name, format)
	}
	if assocLooksLikeScript(string(head)) {
		return ParseAssocScript(name, br)
	}
	return ParseAssoc(name, br)
}

// assocLooksLikeScript reports whether the first non-blank, non-comment line
// of data has no '|' (a sacctmgr dump always has one in its header).
func assocLooksLikeScript(data string) bool {
	for line := range strings.Lines(data) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		return !strings.Contains(line, "|")
	}
	return false
}

// Column indexes of a sacctmgr association dump; -1 when absent.
type assocColumns struct {
	cluster, account, user, partition, parent, share, lineage, grpTRESMins, priority int
	n                                                                                int
	titles                                                                           []string // as the header spells them
}

// ParseAssoc reads `sacctmgr -P show assoc
// format=Cluster,Account,User,Partition,ParentName,Share[,Lineage,GrpTRESMins,Priority,...]`.
//
// The header is required (a `-n` dump is rejected with one file-level error);
// columns may come in any order, titles are case-insensitive, `Fairshare` is
// accepted for `Share`, `Par Name` for `ParentName`, other columns are
// ignored, and a trailing '|' (`-p`) is tolerated. Cluster, Partition,
// Lineage, GrpTRESMins and Priority are optional; a blank Priority is unset
// (Association.HasPriority). A cluster without a root row gets one synthesized
// (Shares 1), noted in Stats.Warnings.
//
// Rows that fail validation — bad share or priority, user row without account, unknown
// parent (including the children of a rejected account), a cycle among
// account parents, a duplicate association, a Lineage that contradicts the
// parent chain — are rejected, each with a *ParseError; all errors are
// returned together (errors.Join) along with the rows that passed, so the
// caller decides whether to go on. A nil *Associations means the file could
// not be read at all. A row longer than MaxLineBytes is rejected; a file
// whose last line has no newline (sacctmgr ends every line with one: a
// truncated copy) gets a warning.
func ParseAssoc(name string, r io.Reader) (*Associations, Stats, error) {
	st := Stats{File: name}
	if err := checkFileName(name); err != nil {
		return nil, st, err
	}
	lr := newLineReader(r, MaxLineBytes)
	var (
		cols     assocColumns
		trailing bool
		haveHdr  bool
		recs     []assocRec
		errs     []*ParseError
		rejected = map[assocAcctKey]bool{}
		lineNo   int
	)
	for {
		raw, n, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, st, readError(name, err)
		}
		lineNo = lr.n
		if haveHdr {
			st.Lines++
		}
		if n > MaxLineBytes {
			perr := &ParseError{File: name, Line: lineNo, Err: tooLong(n, MaxLineBytes)}
			if !haveHdr {
				return nil, st, perr
			}
			st.Read++
			st.Rejected++
			errs = append(errs, perr)
			continue
		}
		line := strings.TrimRight(string(raw), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !haveHdr {
			var perr *ParseError
			cols, trailing, perr = assocParseHeader(name, line)
			if perr != nil {
				return nil, st, perr
			}
			haveHdr = true
			continue
		}
		st.Read++
		rec, perr := assocParseRow(name, lineNo, line, cols, trailing)
		if perr != nil {
			st.Rejected++
			errs = append(errs, perr)
			if rec.a.Account != "" && rec.a.User == "" {
				rejected[assocAcctKey{rec.a.Cluster, rec.a.Account}] = true
			}
		} else {
			rec.rec = len(recs)
			recs = append(recs, rec)
		}
	}
	if !haveHdr {
		return nil, st, newParseError(name, 0, "", "", "no header: the file is empty")
	}
	if !lr.newline {
		st.Warnings = append(st.Warnings, noFinalNewline(name, lr.n, "sacctmgr"))
	}
	res := assocResolve(name, recs, rejected)
	st.Ingested = int64(len(recs) - len(res.badRecs))
	st.Rejected += int64(len(res.badRecs))
	st.Warnings = append(st.Warnings, res.warnings...)
	errs = append(errs, res.errs...)
	return &Associations{File: name, Rows: res.rows}, st, assocJoin(errs)
}

// assocParseHeader maps the header's titles to columns.
func assocParseHeader(name, line string) (assocColumns, bool, *ParseError) {
	cols := assocColumns{-1, -1, -1, -1, -1, -1, -1, -1, -1, 0, nil}
	titles := strings.Split(line, "|")
	trailing := false
	if len(titles) > 1 && strings.TrimSpace(titles[len(titles)-1]) == "" {
		trailing = true
		titles = titles[:len(titles)-1]
	}
	cols.n = len(titles)
	for _, t := range titles {
		cols.titles = append(cols.titles, strings.TrimSpace(t))
	}
	var dup []string
	for i, t := range titles {
		key := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(t), " ", ""))
		var p *int
		switch key {
		case "cluster":
			p = &cols.cluster
		case "account":
			p = &cols.account
		case "user":
			p = &cols.user
		case "partition":
			p = &cols.partition
		case "parentname", "parname":
			p = &cols.parent
		case "share", "shares", "fairshare":
			p = &cols.share
		case "lineage":
			p = &cols.lineage
		case "grptresmins":
			p = &cols.grpTRESMins
		case "priority":
			p = &cols.priority
		default:
			continue
		}
		if *p >= 0 {
			dup = append(dup, strings.TrimSpace(t))
			continue
		}
		*p = i
	}
	if cols.account < 0 {
		return cols, false, newParseError(name, 0, "", "",
			"no header: the first line is not a header naming Account (dump with sacctmgr -P, without -n)")
	}
	var missing []string
	if cols.user < 0 {
		missing = append(missing, "User")
	}
	if cols.parent < 0 {
		missing = append(missing, "ParentName")
	}
	if cols.share < 0 {
		missing = append(missing, "Share")
	}
	if len(missing) > 0 {
		return cols, false, newParseError(name, 0, "", "", fmt.Sprintf(
			"missing column(s) %s: dump with sacctmgr -P show assoc format=Cluster,Account,User,Partition,ParentName,Share,Lineage",
			strings.Join(missing, ", ")))
	}
	if len(dup) > 0 {
		return cols, false, newParseError(name, 0, "", "", "duplicate column(s) "+strings.Join(dup, ", "))
	}
	return cols, trailing, nil
}

// assocParseRow turns one data line into an association candidate. On error
// the returned record still carries what could be read (for orphan
// messages).
func assocParseRow(name string, lineNo int, line string, cols assocColumns, trailing bool) (assocRec, *ParseError) {
	if trailing {
		line = strings.TrimSuffix(line, "|")
	}
	f := strings.Split(line, "|")
	if len(f) != cols.n {
		return assocRec{}, newParseError(name, lineNo, "", "",
			fmt.Sprintf("%d fields, the header has %d", len(f), cols.n))
	}
	for i, v := range f {
		if perr := checkText(name, lineNo, cols.titles[i], v); perr != nil {
			return assocRec{}, perr
		}
	}
	get := func(i int) string {
		if i < 0 {
			return ""
		}
		return strings.TrimSpace(f[i])
	}
	a := Association{
		Cluster:   get(cols.cluster),
		Account:   get(cols.account),
		User:      get(cols.user),
		Partition: get(cols.partition),
		Lineage:   get(cols.lineage),
		File:      name,
		Line:      lineNo,
	}
	parent := get(cols.parent)
	share := get(cols.share)
	rec := assocRec{a: a, lineageGiven: a.Lineage != ""}
	perr := func(field, value, msg string) (assocRec, *ParseError) {
		return rec, newParseError(name, lineNo, field, value, msg)
	}
	switch {
	case a.User != "":
		if a.Account == "" {
			return perr("Account", "", "user row without account")
		}
		if parent != "" && parent != a.Account {
			return perr("ParentName", parent, fmt.Sprintf("user row: ParentName differs from Account %q", a.Account))
		}
		rec.a.Parent = a.Account
	case a.Account == "":
		return perr("Account", "", "row without account or user")
	case a.Account == "root":
		if parent != "" {
			return perr("ParentName", parent, "the root account has no parent")
		}
		if a.Lineage != "" && a.Lineage != "/" {
			return perr("Lineage", a.Lineage, `the root account's lineage is "/"`)
		}
	default:
		if parent == "" {
			return perr("ParentName", "", "account row without parent account")
		}
		rec.a.Parent = parent
	}
	if a.Partition != "" && a.User == "" {
		return perr("Partition", a.Partition, "partition on an account row (only user associations have one)")
	}
	if share == "" && rec.a.IsRoot() {
		share = "1" // sacctmgr prints root's share; an empty cell means the default
	}
	shares, isParent, err := assocParseShares(share)
	if err != nil {
		return perr("Share", share, err.Error())
	}
	if isParent && rec.a.IsRoot() {
		return perr("Share", share, "the root account cannot be FairShare=parent")
	}
	rec.a.Shares, rec.a.SharesParent = shares, isParent
	if lim := get(cols.grpTRESMins); lim != "" {
		if err := checkTRESLimit(lim); err != nil {
			return perr("GrpTRESMins", lim, err.Error())
		}
		rec.a.GrpTRESMins = lim
	}
	if v := get(cols.priority); v != "" {
		n, err := assocParsePriority(v)
		if err != nil {
			return perr(cols.titles[cols.priority], v, err.Error())
		}
		rec.a.Priority, rec.a.HasPriority = n, true
	}
	return rec, nil
}

// assocMaxPriority is the largest association priority: slurmdbd keeps
// priorities in a uint32 whose two top values, NO_VAL and INFINITE, mean
// unset (sacctmgr prints them blank).
const assocMaxPriority = 0xFFFFFFFD

// assocParsePriority parses a Priority value: a non-negative integer of
// at most assocMaxPriority.
func assocParsePriority(s string) (int64, error) {
	if !allDigits(s) {
		return 0, errors.New("not a non-negative integer")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > assocMaxPriority {
		return 0, fmt.Errorf("out of range (max %d)", int64(assocMaxPriority))
	}
	return n, nil
}

// checkTRESLimit checks a TRES limit as sacctmgr prints one (see
// ParseTRESLimit).
func checkTRESLimit(s string) error {
	_, err := ParseTRESLimit(s)
	return err
}

// assocParseShares parses a Share value: a non-negative integer below
// Slurm's 0x7FFFFFFF sentinel, or "parent" (any case).
func assocParseShares(s string) (int64, bool, error) {
	if strings.EqualFold(s, "parent") {
		return assocSharesParentRaw, true, nil
	}
	if s == "" {
		return 0, false, errors.New("empty share (want a non-negative integer or parent)")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false, errors.New("bad share (want a non-negative integer or parent)")
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n >= assocSharesParentRaw {
		return 0, false, fmt.Errorf("share out of range (max %d)", assocSharesParentRaw-1)
	}
	return n, false, nil
}

// assocRec is an association candidate before tree validation.
type assocRec struct {
	a            Association
	rec          int  // index of the input record (row or statement) it came from
	lineageGiven bool // a.Lineage came from the input and must be checked
}

// assocAcctKey names an account on a cluster.
type assocAcctKey struct{ cluster, account string }

// assocKey identifies an association (Slurm's uniqueness key).
type assocKey struct{ cluster, account, user, partition string }

// assocResult is the outcome of tree validation.
type assocResult struct {
	rows     []Association
	badRecs  map[int]bool // input records with at least one rejected association
	errs     []*ParseError
	warnings []string
}

// Account resolution states during the parent walk.
const (
	assocUnseen = iota
	assocVisiting
	assocGood
	assocBad
)

// assocResolve validates the tree built from recs: duplicates, unknown
// parents, cycles and lineages; it synthesizes missing roots and sorts the
// surviving rows. rejected names accounts whose rows were rejected before
// (their children are reported as orphans of a rejected parent).
func assocResolve(name string, recs []assocRec, rejected map[assocAcctKey]bool) assocResult {
	res := assocResult{badRecs: map[int]bool{}, rows: make([]Association, 0, len(recs)+1)}
	reject := func(r *assocRec, field, value, msg string) {
		res.errs = append(res.errs, newParseError(r.a.File, r.a.Line, field, value, msg))
		res.badRecs[r.rec] = true
	}

	// Duplicates: the first occurrence wins.
	seen := make(map[assocKey]int, len(recs))
	keep := make([]*assocRec, 0, len(recs))
	for i := range recs {
		r := &recs[i]
		k := assocKey{r.a.Cluster, r.a.Account, r.a.User, r.a.Partition}
		if first, ok := seen[k]; ok {
			field, value := "Account", r.a.Account
			if r.a.User != "" {
				field, value = "User", r.a.User
			}
			reject(r, field, value, fmt.Sprintf("duplicate association (first at line %d)", first))
			if r.a.User == "" {
				rejected[assocAcctKey{r.a.Cluster, r.a.Account}] = true
			}
			continue
		}
		seen[k] = r.a.Line
		keep = append(keep, r)
	}

	// Roots, accounts and users per cluster, in input order.
	var clusters []string
	hasRoot := map[string]*assocRec{}
	accts := map[assocAcctKey]*assocRec{}
	var acctOrder, users []*assocRec
	for _, r := range keep {
		if _, ok := hasRoot[r.a.Cluster]; !ok {
			clusters = append(clusters, r.a.Cluster)
			hasRoot[r.a.Cluster] = nil
		}
		switch {
		case r.a.IsRoot():
			hasRoot[r.a.Cluster] = r
		case r.a.User == "":
			accts[assocAcctKey{r.a.Cluster, r.a.Account}] = r
			acctOrder = append(acctOrder, r)
		default:
			users = append(users, r)
		}
	}
	for _, c := range clusters {
		root := hasRoot[c]
		if root == nil {
			res.warnings = append(res.warnings, fmt.Sprintf(
				"%s: cluster %q has no root association; synthesized one with Share=1", name, c))
			res.rows = append(res.rows, Association{Cluster: c, Account: "root", Shares: 1, Lineage: "/", File: name})
			continue
		}
		root.a.Lineage = "/"
		res.rows = append(res.rows, root.a)
	}

	// Walk each account's parent chain up to root, deciding every account on
	// the way exactly once.
	state := make(map[assocAcctKey]int, len(accts))
	lineage := make(map[assocAcctKey]string, len(accts))
	bad := func(r *assocRec, msg string) {
		state[assocAcctKey{r.a.Cluster, r.a.Account}] = assocBad
		reject(r, "ParentName", r.a.Parent, msg)
	}
	for _, start := range acctOrder {
		var path []*assocRec
		cur := start
		verdict := assocGood // of the node above the path's top
		why := ""
		for {
			k := assocAcctKey{cur.a.Cluster, cur.a.Account}
			if s := state[k]; s == assocGood || s == assocBad {
				verdict = s
				why = "unknown parent account (the parent was rejected)"
				break
			} else if s == assocVisiting {
				// cur is on the path: the nodes from cur up to the top form a cycle.
				at := slices.Index(path, cur)
				names := make([]string, 0, len(path)-at+1)
				for _, p := range path[at:] {
					names = append(names, p.a.Account)
				}
				names = append(names, cur.a.Account)
				msg := "cycle in account parents: " + strings.Join(names, " -> ")
				for _, p := range path[at:] {
					bad(p, msg)
				}
				path = path[:at]
				verdict, why = assocBad, "unknown parent account (the parent was rejected)"
				break
			}
			state[k] = assocVisiting
			path = append(path, cur)
			if cur.a.Parent == "root" {
				verdict = assocGood
				break
			}
			next, ok := accts[assocAcctKey{cur.a.Cluster, cur.a.Parent}]
			if !ok {
				verdict = assocBad
				why = "unknown parent account"
				if rejected[assocAcctKey{cur.a.Cluster, cur.a.Parent}] {
					why += " (the parent was rejected)"
				}
				// The top node itself is the orphan.
				bad(cur, why)
				path = path[:len(path)-1]
				why = "unknown parent account (the parent was rejected)"
				break
			}
			cur = next
		}
		// Decide the path from the top down.
		for i := len(path) - 1; i >= 0; i-- {
			r := path[i]
			k := assocAcctKey{r.a.Cluster, r.a.Account}
			if verdict == assocBad {
				bad(r, why)
				continue
			}
			parentLineage := "/"
			if r.a.Parent != "root" {
				parentLineage = lineage[assocAcctKey{r.a.Cluster, r.a.Parent}]
			}
			want := parentLineage + r.a.Account + "/"
			if r.lineageGiven && r.a.Lineage != want {
				state[k] = assocBad
				reject(r, "Lineage", r.a.Lineage, fmt.Sprintf("contradicts ParentName %q: the parent chain gives %q", r.a.Parent, want))
				verdict, why = assocBad, "unknown parent account (the parent was rejected)"
				continue
			}
			state[k] = assocGood
			lineage[k] = want
			r.a.Lineage = want
			res.rows = append(res.rows, r.a)
		}
	}

	// Users hang below a good account (or root).
	for _, r := range users {
		var parentLineage string
		if r.a.Account == "root" {
			parentLineage = "/"
		} else if l, ok := lineage[assocAcctKey{r.a.Cluster, r.a.Account}]; ok {
			parentLineage = l
		} else {
			k := assocAcctKey{r.a.Cluster, r.a.Account}
			msg := "unknown parent account"
			if rejected[k] || state[k] == assocBad {
				msg += " (the account was rejected)"
			}
			reject(r, "Account", r.a.Account, msg)
			continue
		}
		want := parentLineage + "0-" + r.a.User + "/"
		if r.a.Partition != "" {
			want += r.a.Partition + "/"
		}
		if r.lineageGiven && r.a.Lineage != want {
			reject(r, "Lineage", r.a.Lineage, fmt.Sprintf("contradicts Account %q: the parent chain gives %q", r.a.Account, want))
			continue
		}
		r.a.Lineage = want
		res.rows = append(res.rows, r.a)
	}

	assocSortRows(res.rows)
	return res
}

// assocSortRows sorts rows by (cluster, lineage) byte-wise, like sshare; the
// remaining keys make the order total (the association key is unique), so
// an unstable sort is deterministic. It sorts the rows' indexes, comparing
// a key only when those before it are equal, and moves each row once: on
// 100,000 associations sorting the rows themselves (some 170 bytes each,
// every key compared) took a third of reading the file.
func assocSortRows(rows []Association) {
	idx := make([]int32, len(rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(i, j int32) int {
		a, b := &rows[i], &rows[j]
		if c := strings.Compare(a.Cluster, b.Cluster); c != 0 {
			return c
		}
		if c := strings.Compare(a.Lineage, b.Lineage); c != 0 {
			return c
		}
		if c := strings.Compare(a.Account, b.Account); c != 0 {
			return c
		}
		if c := strings.Compare(a.User, b.User); c != 0 {
			return c
		}
		return strings.Compare(a.Partition, b.Partition)
	})
	sorted := make([]Association, len(rows))
	for k, i := range idx {
		sorted[k] = rows[i]
	}
	copy(rows, sorted)
}

// assocJoin sorts errs by position and joins them; nil when there are none.
func assocJoin(errs []*ParseError) error {
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b *ParseError) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}
