package golden

import (
	"reflect"
	"strings"
	"testing"
)

// TestSpecsAndNodes: the small case's three associations as specs, and
// placed in their tree: root at the top, A under root (index 0) with 40
// shares, alice in A (index 1) with FairShare=parent and 30 of usage; a
// hand-written spec with a partition keeps it.
func TestSpecsAndNodes(t *testing.T) {
	t.Parallel()
	c, err := Parse("small.txt", strings.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	specs := c.Specs()
	want := []Spec{
		{Name: "root", Kind: KindRoot, Shares: "1"},
		{Name: "A", Kind: KindAccount, Parent: "root", Shares: "40"},
		{Name: "alice", Kind: KindUser, Parent: "A", Shares: "parent", Usage: 30},
	}
	if !reflect.DeepEqual(specs, want) {
		t.Errorf("Specs() =\n%+v\nwant\n%+v", specs, want)
	}
	specs = append(specs, Spec{Name: "bob", Kind: KindUser, Parent: "A", Shares: "3", Partition: "gpu"})
	wantNodes := []Node{
		{Account: "root", Parent: -1, Shares: 1},
		{Account: "A", Parent: 0, Shares: 40},
		{Account: "A", User: "alice", Parent: 1, SharesParent: true},
		{Account: "A", User: "bob", Partition: "gpu", Parent: 1, Shares: 3},
	}
	if got := Nodes(t, specs); !reflect.DeepEqual(got, wantNodes) {
		t.Errorf("Nodes() =\n%+v\nwant\n%+v", got, wantNodes)
	}
}
