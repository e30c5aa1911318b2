package decay_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/decay"
)

// testTree is the association tree of cluster "alpha" used by the resolver
// and adapter tests:
//
//	0 root
//	1 ├─ phys
//	3 │  ├─ alice            4 alice (partition gpu)
//	5 │  ├─ bob
//	8 │  └─ theory
//	9 │     └─ dave
//	2 └─ chem
//	6    ├─ alice
//	7    └─ carol (partition gpu only)
func testTree() []decay.Assoc {
	return []decay.Assoc{
		{Account: "root", Parent: -1},                                 // 0
		{Account: "phys", Parent: 0},                                  // 1
		{Account: "chem", Parent: 0},                                  // 2
		{Account: "phys", User: "alice", Parent: 1},                   // 3
		{Account: "phys", User: "alice", Partition: "gpu", Parent: 1}, // 4
		{Account: "phys", User: "bob", Parent: 1},                     // 5
		{Account: "chem", User: "alice", Parent: 2},                   // 6
		{Account: "chem", User: "carol", Partition: "gpu", Parent: 2}, // 7
		{Account: "theory", Parent: 1},                                // 8
		{Account: "theory", User: "dave", Parent: 8},                  // 9
	}
}

func mustResolver(t testing.TB, cluster string, assocs []decay.Assoc) *decay.Resolver {
	t.Helper()
	r, err := decay.NewResolver(cluster, assocs)
	if err != nil {
		t.Fatalf("NewResolver: %v", err)
	}
	return r
}

// The expected associations follow docs/slurm-semantics.md §4.4 (per-partition
// association if one exists for the job's partition, else the plain one)
// and §4.4 (a user without an association under the account: the account).
func TestResolverLookup(t *testing.T) {
	t.Parallel()
	r := mustResolver(t, "alpha", testTree())
	tests := []struct {
		name                     string
		account, user, partition string
		want                     int32
		reason                   string
	}{
		{"per-partition association", "phys", "alice", "gpu", 4, ""},
		{"no per-partition one for cpu", "phys", "alice", "cpu", 3, ""},
		{"no partition", "phys", "alice", "", 3, ""},
		{"gpu association is under phys only", "chem", "alice", "gpu", 6, ""},
		{"bob has only the plain one", "phys", "bob", "gpu", 5, ""},
		{"carol has only a per-partition one", "chem", "carol", "gpu", 7, ""},
		{"no plain association: the account", "chem", "carol", "cpu", 2, decay.ReasonUserToAccount},
		{"carol's gpu association is under chem", "phys", "carol", "gpu", 1, decay.ReasonUserToAccount},
		{"dave is under theory, not phys", "phys", "dave", "", 1, decay.ReasonUserToAccount},
		{"sub-account", "theory", "dave", "gpu", 9, ""},
		{"deleted or unknown user", "theory", "nobody", "", 8, decay.ReasonUserToAccount},
		{"root is an account too", "root", "alice", "", 0, decay.ReasonUserToAccount},
		{"not in the tree", "physics", "alice", "", -1, decay.ReasonUnknownAccount},
		{"no account", "", "alice", "", -1, decay.ReasonNoAccount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := r.Lookup(tt.account, tt.user, tt.partition)
			if got != tt.want || reason != tt.reason {
				t.Errorf("Lookup(%q, %q, %q) = %d, %q, want %d, %q", tt.account, tt.user, tt.partition, got, reason, tt.want, tt.reason)
			}
		})
	}
}

func TestResolverParents(t *testing.T) {
	t.Parallel()
	r := mustResolver(t, "alpha", testTree())
	want := []int32{-1, 0, 0, 1, 1, 1, 2, 2, 1, 8}
	got := r.Parents()
	if !slices.Equal(got, want) {
		t.Errorf("Parents() = %v, want %v", got, want)
	}
	got[0] = 99 // a copy: the resolver must not change
	if again := r.Parents(); !slices.Equal(again, want) {
		t.Errorf("Parents() after modifying a previous result = %v, want %v", again, want)
	}
	if r.Len() != len(want) || r.Cluster() != "alpha" {
		t.Errorf("Len(), Cluster() = %d, %q, want %d, %q", r.Len(), r.Cluster(), len(want), "alpha")
	}
}

func TestNewResolverErrors(t *testing.T) {
	t.Parallel()
	root := decay.Assoc{Account: "root", Parent: -1}
	phys := decay.Assoc{Account: "phys", Parent: 0}
	tests := []struct {
		name    string
		cluster string
		assocs  []decay.Assoc
		want    []string // substrings of the error, all required
	}{
		{"empty cluster", "", []decay.Assoc{root}, []string{"empty cluster name"}},
		{"empty account", "alpha", []decay.Assoc{root, {Parent: 0}}, []string{"association 1", "empty account name"}},
		{"duplicate account", "alpha", []decay.Assoc{root, phys, phys}, []string{"association 2", "duplicate of association 1"}},
		{"duplicate user", "alpha", []decay.Assoc{root, phys, {Account: "phys", User: "u", Parent: 1}, {Account: "phys", User: "u", Parent: 1}},
			[]string{"association 3", `user "u"`, "duplicate of association 2"}},
		{"duplicate per-partition user", "alpha", []decay.Assoc{root, phys, {Account: "phys", User: "u", Partition: "p", Parent: 1}, {Account: "phys", User: "u", Partition: "p", Parent: 1}},
			[]string{"association 3", "duplicate of association 2"}},
		{"child before parent", "alpha", []decay.Assoc{root, {Account: "a", Parent: 2}, {Account: "b", Parent: 0}},
			[]string{"association 1", "parent 2 is neither −1 nor an earlier index"}},
		{"self parent", "alpha", []decay.Assoc{root, {Account: "a", Parent: 1}}, []string{"parent 1 is neither"}},
		{"negative parent", "alpha", []decay.Assoc{root, {Account: "a", Parent: -2}}, []string{"parent -2 is neither"}},
		{"user without parent", "alpha", []decay.Assoc{root, {Account: "root", User: "u", Parent: -1}}, []string{"user association without a parent account"}},
		{"user under another account", "alpha", []decay.Assoc{root, phys, {Account: "chem", User: "u", Parent: 1}},
			[]string{`parent 1 is account "phys", want the user's account "chem"`}},
		{"parent is a user", "alpha", []decay.Assoc{root, phys, {Account: "phys", User: "u", Parent: 1}, {Account: "x", Parent: 2}},
			[]string{"association 3", "parent 2 is a user association"}},
		{"partition on an account", "alpha", []decay.Assoc{root, {Account: "a", Partition: "p", Parent: 0}},
			[]string{"partition on an account association"}},
		// Every problem is reported at once.
		{"two problems", "alpha", []decay.Assoc{root, phys, phys, {Account: "a", Parent: 7}},
			[]string{"association 2", "duplicate", "association 3", "parent 7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := decay.NewResolver(tt.cluster, tt.assocs)
			if err == nil {
				t.Errorf("%s: NewResolver(%q, %v) = %v, nil, want an error", tt.name, tt.cluster, tt.assocs, r)
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: NewResolver error %q does not contain %q", tt.name, err, w)
				}
			}
		})
	}
}

// A tree of only a root is valid, and so is an empty one.
func TestNewResolverMinimal(t *testing.T) {
	t.Parallel()
	for _, assocs := range [][]decay.Assoc{nil, {{Account: "root", Parent: -1}}} {
		r, err := decay.NewResolver("alpha", assocs)
		if err != nil {
			t.Errorf("NewResolver(%v) error %v, want nil", assocs, err)
			continue
		}
		if r.Len() != len(assocs) {
			t.Errorf("NewResolver(%v).Len() = %d, want %d", assocs, r.Len(), len(assocs))
		}
	}
}
