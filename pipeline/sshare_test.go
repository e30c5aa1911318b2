package pipeline

import (
	"strings"
	"testing"

	"github.com/fairledger/fairledger/export/record/recordtest"
)

// TestSshareTree: a stored GrpTRESMins limit comes back as sshare -l prints
// it, raw counts in TRES order (cpu before mem; 20G of memory is 20480
// MiB); an association without one stays blank; a limit that does not
// parse names the snapshot, the account and the value.
func TestSshareTree(t *testing.T) {
	t.Parallel()
	rows := recordtest.Fairshare()[:3] // root, physics, bob: a whole tree
	lim := "mem=20G,cpu=1000"
	rows[1].GrpTRESMins = &lim // physics
	tree, _, err := SshareTree(rows, rows[1].Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for p := range tree.GrpTRESMins {
		got[tree.Account[p]+"/"+tree.User[p]] = tree.GrpTRESMins[p]
	}
	if got["physics/"] != "cpu=1000,mem=20480" || got["physics/bob"] != "" || got["root/"] != "" {
		t.Errorf("GrpTRESMins = %q; want physics cpu=1000,mem=20480 and blank elsewhere", got)
	}

	bad := "cpu=lots"
	rows[1].GrpTRESMins = &bad
	_, _, err = SshareTree(rows, rows[1].Snapshot)
	if err == nil || !strings.HasPrefix(err.Error(), `fairshare snapshot 2025-01-31T00:00:00Z: physics GrpTRESMins="cpu=lots": `) {
		t.Errorf("bad limit: error %v", err)
	}
}
