package schemas

import (
	"slices"
	"strings"

	"github.com/fairledger/fairledger/internal/release"
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

// The release series where the TRES a cluster tracks change;
// internal/release.Rules lists them.
var (
	// gpuUsageTRES: from 23.02 a slurm.conf whose AccountingStorageTRES
	// names gres/gpu also tracks gres/gpumem and gres/gpuutil (commit
	// 5a7743d12e "Add logic to automatically add gres/gpu[util|mem] to the
	// mix if gpus are part of AccountingStorageTRES.", first in
	// slurm-23-02-0-0rc1): src/common/read_config.c,
	// _validate_and_set_defaults, at slurm-23-02-8-1 appends
	// ",gres/gpuutil,gres/gpumem" when the AccountingStorageTRES string
	// contains "gres/gpu" anywhere, case-insensitively (xstrcasestr: a
	// gres/gpu:a100 item is enough). 22.05 has no such TRES.
	gpuUsageTRES = release.Series{Major: 23, Minor: 2}
	// gpuUsageTRESExact: from 23.11 the same function adds them only when
	// one AccountingStorageTRES item is gres/gpu itself (list_find_first
	// with slurm_find_char_in_list, a case-insensitive whole-item compare;
	// commit 7b527bd8f0 "gpu/[rsmi|nvml] - Allow individual usage of
	// gres/gpumem and gres/gpuutil", at slurm-23-11-11-1 … slurm-26-05-3-1):
	// gres/gpu:a100 alone no longer brings them.
	gpuUsageTRESExact = release.Series{Major: 23, Minor: 11}
)

// ClusterTRES returns the TRES of a cluster whose slurm.conf has the given
// AccountingStorageTRES items, for slurmctld of release series rel:
// StaticTRES plus each other item (canonicalised, de-duplicated), plus
// gres/gpumem and gres/gpuutil where rel adds them for gres/gpu
// (gpuUsageTRES), in CompareTRES order. It models a database that holds
// exactly this cluster's TRES; one shared with other clusters, or holding
// TRES since removed from slurm.conf, lists more in a real sshare. The
// zero Series is the newest.
func ClusterTRES(accountingStorageTRES []string, rel release.Series) []string {
	out := StaticTRES()
	gpu := false
	for _, t := range accountingStorageTRES {
		c := CanonicalTRES(t)
		if c == "" {
			continue
		}
		if rel.AtLeast(gpuUsageTRESExact) {
			gpu = gpu || c == "gres/gpu"
		} else {
			gpu = gpu || strings.Contains(c, "gres/gpu")
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if gpu && rel.AtLeast(gpuUsageTRES) {
		for _, c := range []string{"gres/gpumem", "gres/gpuutil"} {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out, CompareTRES)
	return out
}
