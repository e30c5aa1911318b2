package fairshare

import (
	"strings"
	"testing"
)

// TestFairTreePartitionAssociations works Fair Tree by hand on a user with
// two per-partition associations of different shares and no association
// without a partition (sacctmgr add user gus account=dept partition=fast,
// then partition=batch): each is a user association of its own, with its
// own shares, usage, LevelFS and FairShare (docs/slurm-semantics.md §4.4).
//
//	dept (1 share) under root: S 1, U 100/100, LevelFS 1
//	gus/fast  1 share of 8: S .125, U 30/100 = .3, LevelFS .125/.3 = 0.416667
//	gus/batch 3 shares:     S .375, U 10/100 = .1, LevelFS 3.75
//	ann       4 shares:     S .5,   U 60/100 = .6, LevelFS 0.833333
//
// Ranked by LevelFS, the three users get FairShare 3/3 (gus/batch), 2/3
// (ann) and 1/3 (gus/fast). sshare -m (lineage order, 23.11 on) lists
// ann, then gus's rows by partition name: batch, then fast.
func TestFairTreePartitionAssociations(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, []spec{
		{Name: "root", Kind: "root", Shares: "1"},
		{Name: "dept", Kind: "account", Parent: "root", Shares: "1"},
		{Name: "gus", Kind: "user", Parent: "dept", Shares: "1", Usage: 30, Partition: "fast"},
		{Name: "gus", Kind: "user", Parent: "dept", Shares: "3", Usage: 10, Partition: "batch"},
		{Name: "ann", Kind: "user", Parent: "dept", Shares: "4", Usage: 60},
	})
	var r Result
	FairTree(b.tree, b.usage, &r)
	for _, w := range []struct {
		key, levelFS, fairShare string
	}{
		{"dept|gus|fast", "0.416667", "0.333333"},
		{"dept|gus|batch", "3.750000", "1.000000"},
		{"dept|ann", "0.833333", "0.666667"},
	} {
		p, ok := b.pos[w.key]
		if !ok {
			t.Fatalf("no association %q", w.key)
		}
		if g := f6(r.LevelFS[p]); g != w.levelFS {
			t.Errorf("LevelFS(%s) = %v, want %v", w.key, g, w.levelFS)
		}
		if g := f6(r.FairShare[p]); g != w.fairShare {
			t.Errorf("FairShare(%s) = %v, want %v", w.key, g, w.fairShare)
		}
	}
	want := []string{
		"root||||100||1.000000|||",
		"dept|||1|100|1.000000|1.000000||1.000000|",
		"dept|ann||4|60|0.600000|0.600000|0.666667|0.833333|",
		"dept|gus|batch|3|10|0.100000|0.100000|1.000000|3.750000|",
		"dept|gus|fast|1|30|0.300000|0.300000|0.333333|0.416667|",
	}
	got := sshareLines(t, b, &r, SshareOptions{Partitions: true,
		Fields: []string{"account", "user", "partition", "rawshares", "rawusage", "normusage", "effectvusage", "fairshare", "levelfs", "grptresmins"}})
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if g := trimAccount(got[i]); g != want[i] {
			t.Errorf("line %d = %q, want %q", i+1, g, want[i])
		}
	}
}
