package schemas

import (
	"slices"
	"strings"
)

// StaticTRES returns the TRES every Slurm database holds, whatever
// AccountingStorageTRES says (tres.shtml: always tracked), in the order of
// their fixed ids: cpu (1), mem (2), energy (3), node (4), billing (5),
// fs/disk (6), vmem (7), pages (8).
func StaticTRES() []string {
	return []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}
}

// CompareTRES orders canonical TRES names the way slurmctld's TRES array
// is ordered, and so the way sshare lists GrpTRESMins and TRESRunMins.
//
// What it relies on (src/common/slurmdb_defs.c, assoc_mgr.c):
// assoc_mgr_post_tres_list sorts the TRES list with
// slurmdb_sort_tres_by_id_asc, and the tres_names array sshare prints with
// (slurmdb_make_tres_string_from_arrays) is built from that list. That
// comparator puts the static TRES (ids up to TRES_STATIC_CNT) first by id,
// and orders two dynamic TRES (gres/..., license/..., bb/..., fs/lustre,
// ic/ofed: ids from slurmdbd's auto-increment, 1001 on) by type, then name,
// byte-wise (xstrcmp) — not by id, so the order in which the database
// created them does not matter.
func CompareTRES(a, b string) int {
	static := StaticTRES()
	ia, ib := slices.Index(static, a), slices.Index(static, b)
	switch {
	case ia >= 0 && ib >= 0:
		return ia - ib
	case ia >= 0:
		return -1
	case ib >= 0:
		return 1
	}
	ta, na, _ := strings.Cut(a, "/")
	tb, nb, _ := strings.Cut(b, "/")
	if c := strings.Compare(ta, tb); c != 0 {
		return c
	}
	return strings.Compare(na, nb)
}

// ClusterTRES returns the TRES of a cluster whose slurm.conf has the given
// AccountingStorageTRES items: StaticTRES plus each other item
// (canonicalised, de-duplicated), in CompareTRES order. It models a
// database that holds exactly this cluster's TRES; one shared with other
// clusters, or holding TRES since removed from slurm.conf, lists more in a
// real sshare.
func ClusterTRES(accountingStorageTRES []string) []string {
	out := StaticTRES()
	for _, t := range accountingStorageTRES {
		if c := CanonicalTRES(t); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, CompareTRES)
	return out
}
