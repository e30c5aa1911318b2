package schemas

import (
	"slices"
	"testing"
)

// TestClusterTRES checks the TRES list sshare prints: the eight static TRES
// by id, then the dynamic ones by type and name (slurmdb_sort_tres_by_id_asc),
// whatever order AccountingStorageTRES lists them in.
func TestClusterTRES(t *testing.T) {
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
			if got := ClusterTRES(c.conf); !slices.Equal(got, c.want) {
				t.Errorf("ClusterTRES(%q) = %q, want %q", c.conf, got, c.want)
			}
		})
	}
}
