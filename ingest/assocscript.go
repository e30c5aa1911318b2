package ingest

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// Skip reasons of ParseAssocScript.
const (
	// AssocSkipNotAssoc counts statements about other things than the
	// association tree (QOS, list/show, coordinators, ...).
	AssocSkipNotAssoc = "not an association statement"
	// AssocSkipNoTreeChange counts modify statements that set nothing
	// fairledger reads (e.g. `modify user ... set qos=...`): no Fairshare,
	// Parent, GrpTRESMins/GrpCPUMins or Priority.
	AssocSkipNoTreeChange = "modify without fairshare, parent, GrpTRESMins or priority"
)

// errUnknownSacctmgrCommand is the error of a statement whose first word is
// no sacctmgr command; when every statement of a file has it, the file is
// not a sacctmgr script at all.
var errUnknownSacctmgrCommand = errors.New("unknown sacctmgr command")

// ReadAssocScript reads a sacctmgr command script from path; see
// ParseAssocScript. The file must be a regular file of at most
// MaxAssocBytes.
func ReadAssocScript(path string) (*Associations, Stats, error) {
	f, err := openAssoc(path)
	if err != nil {
		return nil, Stats{File: filepath.Base(path)}, err
	}
	defer f.Close()
	return ParseAssocScript(filepath.Base(path), f)
}

// assocStmt is one parsed sacctmgr statement.
type assocStmt struct {
	line   int
	verb   string // add, modify, delete
	entity string // account, user, cluster
	names  []string
	where  map[string][]string // canonical key → comma-split values (add: all keys)
	set    map[string][]string // modify only
	// limits are the GrpTRESMins/GrpCPUMins options of an add or of a
	// modify's set part, in statement order.
	limits []limitTok
}

// ParseAssocScript replays a site's `sacctmgr -i` command script (one
// statement per line, '#' comments, an optional leading `sacctmgr -i`, a
// trailing '\' continues a line) and returns the association tree it builds,
// validated exactly like ParseAssoc's.
//
//   - `add cluster Name=c [Fairshare=n]` creates c's root account (Share n,
//     default 1) and, as Slurm does, the root user association under it.
//   - `add account Name=a[,b] [Parent=p] [Fairshare=n] [Cluster=c]` adds
//     accounts (parent default root, share default 1) on the given clusters,
//     default every cluster added so far (or cluster "" when there is none).
//   - `add user Name=u [Account=a,...] [DefaultAccount=d] [Fairshare=n]
//     [Partition=p] [Cluster=c]` adds one association per account and
//     partition; without Account= the DefaultAccount is the account. A
//     DefaultAccount missing from a given Account= list gets no association
//     (as in sacctmgr's add user), which Stats.Warnings notes.
//   - `modify account|user [where] ... set Fairshare=n|Parent=p|
//     GrpTRESMins=...|Priority=n` is applied to the matching associations
//     built so far; one that matches none is rejected. A modify that sets
//     none of them is skipped (AssocSkipNoTreeChange).
//   - Priority=n of an add account, add user, add cluster (the root
//     account's association) or modify set gives Association.Priority; a
//     negative n clears it (sacctmgr's get_uint), as does leaving it out of
//     an add: the association then inherits its parent's (see
//     EffectivePriorities).
//   - GrpTRESMins=type=count,... (checked as ParseTRESLimit checks the
//     dump's column) and the legacy GrpCPUMins=N (cpu=N) of an add account,
//     add user or modify set give Association.GrpTRESMins, as slurmdbd
//     stores them: an add gets the statement's items only (a new
//     association inherits no GrpTRESMins from its parent); a modify
//     replaces the items it names and keeps the others; a count of -1 clears
//     its TRES. An add cluster's limit is the root account association's
//     (the root user association gets none); a modify cluster's is not read.
//     See assocscript_limits.go for the Slurm source this follows.
//   - `delete user ...` removes the matching user associations; `delete
//     account` only when no association hangs below it; `delete cluster` is
//     rejected as unsupported.
//   - QOS, list/show and other statements are skipped (AssocSkipNotAssoc).
//
// Stats count statements: each non-comment statement is ingested, skipped
// or rejected; a statement whose associations fail tree validation counts
// as rejected. When the first wrongKindLines statements all start with no
// sacctmgr command (a slurm.conf passed as --assoc, say), the file is no
// script: reading stops there, with one error, nil and zero Stats. A line
// longer than MaxLineBytes rejects its statement.
func ParseAssocScript(name string, r io.Reader) (*Associations, Stats, error) {
	if err := checkFileName(name); err != nil {
		return nil, Stats{File: name}, err
	}
	st := Stats{File: name}
	lr := newLineReader(r, MaxLineBytes)
	var (
		b        = assocBuilder{file: name, rejected: map[assocAcctKey]bool{}}
		errs     []*ParseError
		lineNo   int
		pending  strings.Builder
		startLn  int
		ingested = map[int]bool{} // statement index → applied
		nstmt    int
		// notCmd counts the statements that start with no sacctmgr
		// command; first is the first of them.
		notCmd int
		first  *ParseError
		firstT string
	)
	flush := func() {
		text := strings.TrimSpace(pending.String())
		pending.Reset()
		if text == "" || strings.HasPrefix(text, "#") {
			return
		}
		st.Read++
		idx := nstmt
		nstmt++
		skip, perr := "", checkText(name, startLn, "", text)
		if perr == nil {
			skip, perr = b.apply(idx, startLn, text)
		}
		switch {
		case perr != nil:
			st.Rejected++
			errs = append(errs, perr)
			if errors.Is(perr, errUnknownSacctmgrCommand) {
				if notCmd == 0 {
					first, firstT = perr, text
				}
				notCmd++
			}
		case skip != "":
			st.Skip(skip)
		default:
			ingested[idx] = true
		}
	}
	for {
		raw, n, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, st, readError(name, err)
		}
		lineNo = lr.n
		st.Lines++
		if pending.Len() == 0 {
			startLn = lineNo
		} else {
			st.Continued++
		}
		if n > MaxLineBytes || pending.Len()+n > MaxLineBytes {
			st.Read++
			st.Rejected++
			errs = append(errs, &ParseError{File: name, Line: startLn, Err: fmt.Errorf(
				"statement of %d bytes, longer than the %s a line may have: skipped", int64(pending.Len())+int64(n), formatBytes(MaxLineBytes))})
			pending.Reset()
			continue
		}
		line := strings.TrimRight(string(raw), "\r")
		if cont, ok := strings.CutSuffix(line, `\`); ok && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			pending.WriteString(cont)
			pending.WriteByte(' ')
		} else {
			pending.WriteString(line)
			flush()
			if int64(notCmd) == st.Read && notCmd >= wrongKindLines {
				return nil, Stats{File: name}, &ParseError{File: name, Err: fmt.Errorf(
					"not a sacctmgr script, nor a sacctmgr -P dump (whose header has '|'): its first %d statements are no sacctmgr command (line %d: %s)",
					notCmd, first.Line, quoteHead(firstT))}
			}
		}
	}
	flush()

	res := assocResolve(name, b.recs, b.rejected)
	for idx := range res.badRecs {
		if ingested[idx] {
			ingested[idx] = false
			st.Rejected++
		}
	}
	for _, ok := range ingested {
		if ok {
			st.Ingested++
		}
	}
	st.Warnings = append(st.Warnings, b.warnings...)
	st.Warnings = append(st.Warnings, res.warnings...)
	errs = append(errs, res.errs...)
	return &Associations{File: name, Rows: res.rows}, st, assocJoin(errs)
}

// assocBuilder replays statements into association candidates.
type assocBuilder struct {
	file     string
	clusters []string // added so far, in order
	recs     []assocRec
	rejected map[assocAcctKey]bool // accounts whose add statement was rejected
	warnings []string
}

// apply executes one statement. It returns a skip reason, or a ParseError
// when the statement is rejected, or neither when it was applied.
func (b *assocBuilder) apply(idx, line int, text string) (string, *ParseError) {
	toks, err := assocTokens(text)
	if err != nil {
		return "", &ParseError{File: b.file, Line: line, Err: err}
	}
	// A shell-style line: sacctmgr [-i|--immediate|...] command ...
	if len(toks) > 0 && strings.EqualFold(toks[0], "sacctmgr") {
		toks = toks[1:]
	}
	for len(toks) > 0 && strings.HasPrefix(toks[0], "-") {
		toks = toks[1:]
	}
	if len(toks) == 0 {
		return "", newParseError(b.file, line, "", "", "empty sacctmgr command")
	}
	verb := strings.ToLower(toks[0])
	switch verb {
	case "add", "create":
		verb = "add"
	case "modify", "update":
		verb = "modify"
	case "delete", "remove":
		verb = "delete"
	case "list", "show", "dump", "load", "archive", "help", "exit", "quit", "version",
		"reconfigure", "shutdown", "clear", "ping":
		return AssocSkipNotAssoc, nil
	default:
		return "", &ParseError{File: b.file, Line: line, Err: fmt.Errorf("%w %q", errUnknownSacctmgrCommand, toks[0])}
	}
	if len(toks) < 2 {
		return "", newParseError(b.file, line, "", "", verb+" what? (no entity)")
	}
	entity := assocEntity(toks[1])
	switch entity {
	case "":
		return "", newParseError(b.file, line, "", "", fmt.Sprintf("unknown sacctmgr entity %q", toks[1]))
	case "other":
		return AssocSkipNotAssoc, nil
	}
	s := assocStmt{line: line, verb: verb, entity: entity, where: map[string][]string{}, set: map[string][]string{}}
	dst, inSet := s.where, false
	for _, t := range toks[2:] {
		switch lt := strings.ToLower(t); {
		case lt == "where":
			dst, inSet = s.where, false
			continue
		case lt == "set":
			dst, inSet = s.set, true
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			s.names = append(s.names, assocSplit(t)...)
			continue
		}
		if f := limitField(k); f != "" {
			// A limit in a modify's where part selects nothing here (as
			// the other where keys fairledger does not read).
			if verb == "add" || inSet {
				s.limits = append(s.limits, limitTok{field: f, value: v})
			}
			continue
		}
		key := assocKeyword(k)
		if key == "" {
			continue // an attribute the tree does not depend on
		}
		if key == "name" && !(verb == "modify" && inSet) {
			s.names = append(s.names, assocSplit(v)...)
			continue
		}
		vals := assocSplit(v)
		if len(vals) == 0 {
			vals = []string{""} // keep an empty value visible (fairshare= is an error)
		}
		dst[key] = append(dst[key], vals...)
	}
	if verb == "add" {
		// add has no set part: set keys (if any) act like the others.
		for k, v := range s.set {
			s.where[k] = append(s.where[k], v...)
		}
	}
	switch verb {
	case "add":
		return b.add(idx, &s)
	case "modify":
		return b.modify(&s)
	default:
		return b.delete(&s)
	}
}

// one returns the single value of key, or an error if there are several.
func (s *assocStmt) one(file, key string, def string) (string, *ParseError) {
	v := s.where[key]
	switch len(v) {
	case 0:
		return def, nil
	case 1:
		return v[0], nil
	}
	return "", newParseError(file, s.line, assocKeyTitle(key), strings.Join(v, ","), "more than one value")
}

// targets are the clusters a statement applies to.
func (b *assocBuilder) targets(s *assocStmt) []string {
	if c := s.where["cluster"]; len(c) > 0 {
		return c
	}
	if len(b.clusters) == 0 {
		return []string{""}
	}
	return b.clusters
}

func (b *assocBuilder) add(idx int, s *assocStmt) (string, *ParseError) {
	if len(s.names) == 0 {
		return "", newParseError(b.file, s.line, "Name", "", "add "+s.entity+" without a name")
	}
	shareStr, perr := s.one(b.file, "fairshare", "1")
	if perr != nil {
		return "", perr
	}
	shares, isParent, err := assocParseShares(shareStr)
	if err != nil {
		b.rejectAccounts(s)
		return "", &ParseError{File: b.file, Line: s.line, Field: "Fairshare", Value: shareStr, Err: err}
	}
	// GrpTRESMins of a new association: the statement's own items, cleared
	// ones dropped; nothing comes from the parent (see assocscript_limits.go).
	// An add cluster's go to the root account's association.
	items, perr := parseLimitToks(b.file, s.line, s.limits)
	if perr != nil {
		b.rejectAccounts(s)
		return "", perr
	}
	limit := applyLimit("", items)
	prioStr, perr := s.one(b.file, "priority", "")
	if perr != nil {
		b.rejectAccounts(s)
		return "", perr
	}
	_, given := s.where["priority"]
	prio, hasPrio, perr := b.priority(s.line, prioStr, given)
	if perr != nil {
		b.rejectAccounts(s)
		return "", perr
	}
	mk := func(cluster, account, user, partition, parent string) {
		b.recs = append(b.recs, assocRec{rec: idx, a: Association{
			Cluster: cluster, Account: account, User: user, Partition: partition, Parent: parent,
			Shares: shares, SharesParent: isParent, GrpTRESMins: limit, File: b.file, Line: s.line,
			Priority: prio, HasPriority: hasPrio,
		}})
	}
	switch s.entity {
	case "cluster":
		if isParent {
			return "", newParseError(b.file, s.line, "Fairshare", shareStr, "the root account cannot be FairShare=parent")
		}
		for _, c := range s.names {
			if !slices.Contains(b.clusters, c) {
				b.clusters = append(b.clusters, c)
			}
			mk(c, "root", "", "", "")
			// Slurm adds the root user to every new cluster
			// (as_mysql_add_clusters), as a fresh association: no limits.
			b.recs = append(b.recs, assocRec{rec: idx, a: Association{
				Cluster: c, Account: "root", User: "root", Parent: "root", Shares: 1, File: b.file, Line: s.line,
			}})
		}
	case "account":
		parent, perr := s.one(b.file, "parent", "root")
		if perr != nil {
			b.rejectAccounts(s)
			return "", perr
		}
		if len(s.where["partition"]) > 0 {
			b.rejectAccounts(s)
			return "", newParseError(b.file, s.line, "Partition", strings.Join(s.where["partition"], ","),
				"partition on an account (only user associations have one)")
		}
		if slices.Contains(s.names, "root") {
			return "", newParseError(b.file, s.line, "Name", "root", "the root account is created by add cluster")
		}
		for _, c := range b.targets(s) {
			for _, n := range s.names {
				mk(c, n, "", "", parent)
			}
		}
	case "user":
		accts := s.where["account"]
		d, perr := s.one(b.file, "defaultaccount", "")
		if perr != nil {
			return "", perr
		}
		switch {
		case len(accts) == 0 && d != "":
			accts = []string{d}
		case d != "" && !slices.Contains(accts, d):
			b.warnings = append(b.warnings, fmt.Sprintf(
				"%s:%d: DefaultAccount=%s is not among Account=%s; no association made for it",
				b.file, s.line, d, strings.Join(accts, ",")))
		}
		if len(accts) == 0 {
			return "", newParseError(b.file, s.line, "Account", "", "user row without account (give Account= or DefaultAccount=)")
		}
		parts := s.where["partition"]
		if len(parts) == 0 {
			parts = []string{""}
		}
		for _, c := range b.targets(s) {
			for _, a := range accts {
				for _, p := range parts {
					for _, u := range s.names {
						mk(c, a, u, p, a)
					}
				}
			}
		}
	}
	return "", nil
}

// rejectAccounts remembers the accounts of a rejected add account statement,
// so that their children are reported as orphans of a rejected parent.
func (b *assocBuilder) rejectAccounts(s *assocStmt) {
	if s.entity != "account" {
		return
	}
	for _, c := range b.targets(s) {
		for _, n := range s.names {
			b.rejected[assocAcctKey{c, n}] = true
		}
	}
}

// matches returns the indexes of the candidates a modify/delete selects.
func (b *assocBuilder) matches(s *assocStmt) []int {
	in := func(vals []string, v string) bool { return len(vals) == 0 || slices.Contains(vals, v) }
	var out []int
	for i := range b.recs {
		a := &b.recs[i].a
		if !in(s.where["cluster"], a.Cluster) {
			continue
		}
		switch s.entity {
		case "account":
			if a.User != "" || a.IsRoot() || !in(s.names, a.Account) {
				continue
			}
		case "user":
			if a.User == "" || !in(s.names, a.User) || !in(s.where["account"], a.Account) ||
				!in(s.where["partition"], a.Partition) {
				continue
			}
		case "cluster":
			if !in(s.names, a.Cluster) {
				continue
			}
		}
		out = append(out, i)
	}
	return out
}

func (b *assocBuilder) modify(s *assocStmt) (string, *ParseError) {
	share, hasShare := s.set["fairshare"]
	parent, hasParent := s.set["parent"]
	prioVals, setPrio := s.set["priority"]
	// Limits of the root association (modify cluster) are not read.
	hasLimit := len(s.limits) > 0 && s.entity != "cluster"
	if !hasShare && !hasParent && !hasLimit && !setPrio {
		return AssocSkipNoTreeChange, nil
	}
	if s.entity == "cluster" {
		return "", newParseError(b.file, s.line, "", "", "modify cluster is not supported; set the root share with add cluster")
	}
	if hasParent && s.entity != "account" {
		return "", newParseError(b.file, s.line, "Parent", strings.Join(parent, ","), "only accounts have a parent")
	}
	if len(share) > 1 {
		return "", newParseError(b.file, s.line, "Fairshare", strings.Join(share, ","), "more than one value")
	}
	if len(parent) > 1 {
		return "", newParseError(b.file, s.line, "Parent", strings.Join(parent, ","), "more than one value")
	}
	var (
		prio    int64
		hasPrio bool
	)
	if setPrio {
		if len(prioVals) > 1 {
			return "", newParseError(b.file, s.line, "Priority", strings.Join(prioVals, ","), "more than one value")
		}
		var perr *ParseError
		if prio, hasPrio, perr = b.priority(s.line, prioVals[0], true); perr != nil {
			return "", perr
		}
	}
	var (
		shares   int64
		isParent bool
	)
	if hasShare {
		var err error
		if shares, isParent, err = assocParseShares(share[0]); err != nil {
			return "", &ParseError{File: b.file, Line: s.line, Field: "Fairshare", Value: share[0], Err: err}
		}
	}
	var limit []limitItem
	if hasLimit {
		var perr *ParseError
		if limit, perr = parseLimitToks(b.file, s.line, s.limits); perr != nil {
			return "", perr
		}
	}
	idx := b.matches(s)
	if len(idx) == 0 {
		return "", newParseError(b.file, s.line, "Name", strings.Join(s.names, ","), "modify "+s.entity+" matches no association")
	}
	for _, i := range idx {
		a := &b.recs[i].a
		if hasShare {
			a.Shares, a.SharesParent = shares, isParent
		}
		if hasParent {
			a.Parent = parent[0]
		}
		if hasLimit {
			a.GrpTRESMins = applyLimit(a.GrpTRESMins, limit)
		}
		if setPrio {
			a.Priority, a.HasPriority = prio, hasPrio
		}
	}
	return "", nil
}

// priority reads a statement's Priority value, given or not: left out or
// a negative number it is unset (sacctmgr's get_uint reads any negative
// number as its clear mark, INFINITE), else it must be a priority
// ParseAssoc accepts.
func (b *assocBuilder) priority(line int, v string, given bool) (int64, bool, *ParseError) {
	if !given {
		return 0, false, nil
	}
	if n, ok := strings.CutPrefix(v, "-"); ok && allDigits(n) {
		return 0, false, nil
	}
	p, err := assocParsePriority(v)
	if err != nil {
		return 0, false, &ParseError{File: b.file, Line: line, Field: "Priority", Value: v, Err: err}
	}
	return p, true, nil
}

func (b *assocBuilder) delete(s *assocStmt) (string, *ParseError) {
	if s.entity == "cluster" {
		return "", newParseError(b.file, s.line, "", "", "delete cluster is not supported")
	}
	idx := b.matches(s)
	if len(idx) == 0 {
		return "", newParseError(b.file, s.line, "Name", strings.Join(s.names, ","), "delete "+s.entity+" matches no association")
	}
	if s.entity == "account" {
		for _, i := range idx {
			a := b.recs[i].a
			for _, o := range b.recs {
				if o.a.Cluster == a.Cluster && o.a.Parent == a.Account && !o.a.IsRoot() {
					return "", newParseError(b.file, s.line, "Name", a.Account, fmt.Sprintf(
						"delete account with child associations is not supported (%s has child %s at line %d)",
						a.Account, assocDescribe(&o.a), o.a.Line))
				}
			}
		}
	}
	drop := make(map[int]bool, len(idx))
	for _, i := range idx {
		drop[i] = true
	}
	kept := b.recs[:0]
	for i, r := range b.recs {
		if !drop[i] {
			kept = append(kept, r)
		}
	}
	b.recs = kept
	return "", nil
}

// assocDescribe names an association for messages.
func assocDescribe(a *Association) string {
	if a.User != "" {
		return "user " + a.User
	}
	return "account " + a.Account
}

// assocEntity maps an entity word to account, user or cluster; "other" for
// entities that do not shape the tree and "" for unknown words.
func assocEntity(w string) string {
	switch strings.ToLower(w) {
	case "account", "accounts", "acct", "accts":
		return "account"
	case "user", "users":
		return "user"
	case "cluster", "clusters":
		return "cluster"
	case "qos", "coordinator", "coordinators", "coord", "resource", "resources", "tres",
		"wckey", "wckeys", "federation", "federations", "event", "events", "transaction",
		"transactions", "problem", "problems", "runawayjobs", "stats", "configuration", "config",
		"reservation", "reservations", "instance", "instances", "association", "associations":
		return "other"
	}
	return ""
}

// assocKeyword maps an option key to its canonical name; "" for keys the
// tree does not depend on.
func assocKeyword(k string) string {
	switch strings.ToLower(strings.TrimSpace(k)) {
	case "name", "names":
		return "name"
	case "account", "accounts", "acct", "accts":
		return "account"
	case "defaultaccount", "defaultacct":
		return "defaultaccount"
	case "fairshare", "shares", "share":
		return "fairshare"
	case "parent":
		return "parent"
	case "cluster", "clusters":
		return "cluster"
	case "partition", "partitions":
		return "partition"
	case "priority":
		return "priority"
	}
	return ""
}

// assocKeyTitle spells a canonical key in messages.
func assocKeyTitle(key string) string {
	if key == "defaultaccount" {
		return "DefaultAccount"
	}
	return strings.ToUpper(key[:1]) + key[1:]
}

// assocSplit splits a comma list, dropping empty items.
func assocSplit(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// assocTokens splits a statement on blanks, keeping quoted runs together and
// dropping the quotes (qos="a,b" → qos=a,b).
func assocTokens(s string) ([]string, error) {
	var (
		toks  []string
		cur   strings.Builder
		quote byte
		have  bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, have = c, true
		case c == ' ' || c == '\t':
			if have {
				toks = append(toks, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	if have {
		toks = append(toks, cur.String())
	}
	return toks, nil
}
