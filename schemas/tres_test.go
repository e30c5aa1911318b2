package schemas

import (
	"slices"
	"testing"

	"github.com/fairledger/fairledger/internal/release"
)

// TestClusterTRES checks the TRES list sshare prints: the eight static TRES
// by id, then the dynamic ones by type and name (slurmdb_sort_tres_by_id_asc),
// whatever order AccountingStorageTRES lists them in.
func TestClusterTRES(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		conf []string
		want []string
	}{
		{"no AccountingStorageTRES", nil, []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}},
		// Static entries named again are not repeated; case is folded.
		{"static TRES named again", []string{"CPU", "Mem", "node"}, []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}},
		{
			"dynamic TRES by type, then name",
			[]string{"license/matlab", "gres/gpu:a100", "gres/gpu", "bb/datawarp", "fs/lustre", "ic/ofed"},
			[]string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages",
				"bb/datawarp", "fs/lustre", "gres/gpu", "gres/gpu:a100", "ic/ofed", "license/matlab"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ClusterTRES(c.conf, release.Series{Major: 22, Minor: 5}); !slices.Equal(got, c.want) {
				t.Errorf("ClusterTRES(%q) = %q, want %q", c.conf, got, c.want)
			}
		})
	}
}

// TestClusterTRESGPUUsage checks the TRES slurmctld adds for gres/gpu
// (src/common/read_config.c, _validate_and_set_defaults): none at 22.05;
// at 23.02 (slurm-23-02-8-1) gres/gpuutil and gres/gpumem whenever the
// AccountingStorageTRES string contains "gres/gpu" (xstrcasestr, so a
// gres/gpu:a100 item is enough); from 23.11 (slurm-23-11-11-1 …
// slurm-26-05-3-1) only when an item is gres/gpu itself (xstrcasecmp).
// Their place is by type, then name, byte-wise (slurmdb_sort_tres_by_id_asc):
// "gpu" < "gpu:a100" (':' 0x3a < 'm' 0x6d) < "gpumem" < "gpuutil"
// ('m' < 'u'), and all before ic/… and license/….
func TestClusterTRESGPUUsage(t *testing.T) {
	t.Parallel()
	static := []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}
	with := func(extra ...string) []string { return append(slices.Clip(static), extra...) }
	for _, c := range []struct {
		rel  release.Series
		conf []string
		want []string
	}{
		{release.Series{Major: 22, Minor: 5}, []string{"gres/gpu"}, with("gres/gpu")},
		{release.Series{Major: 23, Minor: 2}, []string{"gres/gpu"}, with("gres/gpu", "gres/gpumem", "gres/gpuutil")},
		{release.Series{Major: 24, Minor: 11}, []string{"gres/gpu"}, with("gres/gpu", "gres/gpumem", "gres/gpuutil")},
		{release.Series{}, []string{"license/matlab", "GRES/GPU"}, with("gres/gpu", "gres/gpumem", "gres/gpuutil", "license/matlab")},
		// A typed GPU alone: a substring match in 23.02, no whole-item match after.
		{release.Series{Major: 23, Minor: 2}, []string{"gres/gpu:a100"}, with("gres/gpu:a100", "gres/gpumem", "gres/gpuutil")},
		{release.Series{Major: 23, Minor: 11}, []string{"gres/gpu:a100"}, with("gres/gpu:a100")},
		{release.Series{Major: 26, Minor: 5}, []string{"gres/gpu:a100", "gres/gpu", "ic/ofed"},
			with("gres/gpu", "gres/gpu:a100", "gres/gpumem", "gres/gpuutil", "ic/ofed")},
		// Named as well: listed once.
		{release.Series{Major: 26, Minor: 5}, []string{"gres/gpu", "gres/gpumem"}, with("gres/gpu", "gres/gpumem", "gres/gpuutil")},
		{release.Series{Major: 26, Minor: 5}, nil, static},
	} {
		if got := ClusterTRES(c.conf, c.rel); !slices.Equal(got, c.want) {
			t.Errorf("ClusterTRES(%q, %s) = %q, want %q", c.conf, c.rel, got, c.want)
		}
	}
}
