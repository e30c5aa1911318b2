package ingest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/schemas"
)

// A sacctmgr script's GrpTRESMins, read the way sacctmgr and slurmdbd
// handle it (SchedMD/slurm, 24.x as_mysql_assoc.c with _set_lineage, and
// the matching src/sacctmgr/association_functions.c, src/common/
// slurmdb_defs.c and accounting_storage_mysql.c):
//
//   - sacctmgr_set_assoc_rec reads GrpTRESMins=type=count,... through
//     slurmdb_format_tres_str, and the legacy GrpCPUMins=N as cpu=N (a
//     negative N is get_uint64's "flag to clear"); every option of one
//     statement is folded into one list with TRES_STR_FLAG_REPLACE, so a
//     later item replaces an earlier one of the same TRES.
//   - A count of -1 reads as INFINITE64 (strtoull), the clear mark.
//   - add: setup_assoc_limits stores the list with TRES_STR_FLAG_REMOVE,
//     dropping cleared items; nothing else is stored.
//   - modify: mod_tres_str puts the new items before the association's
//     current ones and combines them with TRES_STR_FLAG_REMOVE: the new item
//     wins for its TRES, a cleared TRES disappears, every other current item
//     stays.
//   - add cluster: sacctmgr_add_cluster copies the statement's limits into
//     the cluster's root association (slurmdb_copy_assoc_rec_limits); the
//     root user association that as_mysql_add_clusters then adds is a
//     fresh record, with no limits of its own. (modify cluster's limits are
//     not read: which of the root associations its condition, acct=root
//     without a user list, selects is left to slurmdbd's query.)
//   - No inheritance: _set_assoc_limits_for_add copies a parent's
//     def_qos_id, max_jobs, max_jobs_accrue, min_prio_thresh,
//     max_submit_jobs, max_wall_pj, priority, max_tres_pj, max_tres_pn,
//     max_tres_mins_pj, max_tres_run_mins and qos into a new association,
//     never grp_tres_mins; _modify_child_assocs likewise passes only those
//     down on modify.

// limitItem is one TRES of a script's GrpTRESMins: the canonical TRES name
// and its count as the script typed it ("6000", "20G"); clear marks a -1.
type limitItem struct {
	tres  string
	count string
	clear bool
}

// limitTok is one GrpTRESMins= or GrpCPUMins= option of a statement, in
// statement order.
type limitTok struct {
	field string // "GrpTRESMins" or "GrpCPUMins", for messages
	value string // as typed
}

// limitField maps an option key to the limit it sets ("" for none).
func limitField(k string) string {
	switch strings.ToLower(strings.TrimSpace(k)) {
	case "grptresmins":
		return "GrpTRESMins"
	case "grpcpumins":
		return "GrpCPUMins"
	}
	return ""
}

// parseLimitToks folds a statement's limit options into one list, a later
// item replacing an earlier one of the same TRES (sacctmgr's
// TRES_STR_FLAG_REPLACE). Each value is checked like the dump reader's
// GrpTRESMins column (ParseTRESLimit), with -1 accepted as a clear mark.
func parseLimitToks(file string, line int, toks []limitTok) ([]limitItem, *ParseError) {
	var out []limitItem
	put := func(it limitItem) {
		if i := slices.IndexFunc(out, func(o limitItem) bool { return o.tres == it.tres }); i >= 0 {
			out[i] = it
			return
		}
		out = append(out, it)
	}
	for _, t := range toks {
		items, err := parseLimitValue(t.field, t.value)
		if err != nil {
			return nil, &ParseError{File: file, Line: line, Field: t.field, Value: t.value, Err: err}
		}
		for _, it := range items {
			put(it)
		}
	}
	return out, nil
}

// parseLimitValue reads one option's value.
func parseLimitValue(field, v string) ([]limitItem, error) {
	if field == "GrpCPUMins" {
		// get_uint64: an integer; any negative one clears.
		if n, ok := strings.CutPrefix(v, "-"); ok && allDigits(n) {
			return []limitItem{{tres: "cpu", clear: true}}, nil
		}
		if _, err := parseTRESCount(v); err != nil || !allDigits(v) {
			return nil, fmt.Errorf("want a non-negative integer (CPU-minutes) or -1 to clear")
		}
		return []limitItem{{tres: "cpu", count: v}}, nil
	}
	var out []limitItem
	for item := range strings.SplitSeq(v, ",") {
		k, c, _ := strings.Cut(item, "=")
		var it limitItem
		if c == "-1" && k != "" {
			it = limitItem{tres: schemas.CanonicalTRES(k), clear: true}
		} else {
			counts, err := ParseTRESLimit(item)
			if err != nil {
				return nil, err
			}
			it = limitItem{tres: counts[0].TRES, count: c}
		}
		if slices.ContainsFunc(out, func(o limitItem) bool { return o.tres == it.tres }) {
			return nil, fmt.Errorf("item %q: TRES %s given twice", item, it.tres)
		}
		out = append(out, it)
	}
	return out, nil
}

// applyLimit returns cur (a GrpTRESMins string this reader built, "" for
// none) with the items set: each replaces the current count of its TRES, a
// cleared one removes it. The result lists the TRES in Slurm's order
// (schemas.CompareTRES, as slurmdbd sorts by TRES id), "" when none is left.
func applyLimit(cur string, set []limitItem) string {
	var items []limitItem
	if cur != "" {
		for item := range strings.SplitSeq(cur, ",") {
			k, c, _ := strings.Cut(item, "=")
			items = append(items, limitItem{tres: k, count: c})
		}
	}
	for _, s := range set {
		items = slices.DeleteFunc(items, func(o limitItem) bool { return o.tres == s.tres })
		if !s.clear {
			items = append(items, s)
		}
	}
	slices.SortFunc(items, func(a, b limitItem) int { return schemas.CompareTRES(a.tres, b.tres) })
	return string(fairshare.AppendTRESList(nil, len(items), func(i int) string { return items[i].tres },
		func(b []byte, i int) []byte { return append(b, items[i].count...) }))
}
