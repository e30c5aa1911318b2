package ingest

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fairledger/fairledger/schemas"
)

// TestTRESSetColumn checks alloc_tres_set on two blocks of one parser: the
// block's AllocTRES strings numbered from 0 in order of first appearance,
// a repeated string (also after other strings) with its first number, the
// empty string numbered like any other, and a new block numbering afresh
// although the memo keeps its strings.
func TestTRESSetColumn(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const header = "JobID|User|Account|Partition|Start|End|State|AllocTRES|NNodes|AllocCPUS"
	row := func(id int, tres string) string {
		return fmt.Sprintf("%d|u|a|p|2024-01-01T00:00:00|2024-01-01T00:20:00|COMPLETED|%s|1|1\n", id, tres)
	}
	const a, b, c = "cpu=1,node=1", "cpu=2,mem=1G,node=1", "cpu=1,mem=1024M,node=1"
	blocks := []string{
		row(1, a) + row(2, b) + row(3, a) + row(4, "") + row(5, b) + row(6, c) + row(7, c),
		// Rejected rows take no number: 9's AllocTRES is bad, 10's JobID.
		row(8, b) + row(9, "cpu=x") + "x_1|u|a|p|2024-01-01T00:00:00|2024-01-01T00:20:00|COMPLETED|cpu=9|1|1\n" + row(11, a) + row(12, b),
	}
	// c parses to the same entries as b but is another string: another number.
	want := [][]int32{{0, 1, 0, 2, 1, 3, 3}, {0, 1, 0}}
	recs, _, rejects := parseChunks(t, mem, "set.psv", header, SacctOptions{Location: time.UTC}, 2, blocks)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if len(rejects) != 2 {
		t.Fatalf("rejects = %q, want 2", rejects)
	}
	for i, rec := range recs {
		got := col(rec, schemas.ColAllocTRESSet).(*array.Int32)
		if got.NullN() != 0 || fmt.Sprint(got.Int32Values()) != fmt.Sprint(want[i]) {
			t.Errorf("block %d: alloc_tres_set = %v (%d nulls), want %v", i, got.Int32Values(), got.NullN(), want[i])
		}
	}
}

// TestTRESSetMemoReset empties the memo in the middle of a block: the
// strings added after it get new numbers, even a string the block had
// numbered before, and no item added after the reset takes the number an
// item had before it.
func TestTRESSetMemoReset(t *testing.T) {
	t.Parallel()
	p := newTestParser(t, "JobID|AllocTRES", nil)
	m := &p.tresMemo
	var c tresColumn
	c.reset()
	add := func(text string) int32 {
		t.Helper()
		k, perr := p.addTRES([]byte(text))
		if perr != nil {
			t.Fatal(perr)
		}
		return k
	}
	k0, k1 := add("cpu=0"), add("cpu=1")
	c.appendItem(m, k1)
	c.appendItem(m, k0)
	c.appendItem(m, k1)
	for i := 2; i < maxTRESMemo; i++ {
		add(fmt.Sprintf("cpu=%d", i))
	}
	c.appendItem(m, 7) // cpu=7
	// The memo is full: cpu=1 now starts a fresh memo as item 0.
	if k := add("cpu=1"); k != 0 || len(m.items) != 1 {
		t.Fatalf("addTRES past the bound = %d with %d items, want 0 with 1", k, len(m.items))
	}
	c.appendItem(m, 0)
	k1 = add("cpu=2")
	c.appendItem(m, k1)
	c.appendItem(m, 0)
	if got, want := fmt.Sprint(c.sets.vals), "[0 1 0 2 3 4 3]"; got != want {
		t.Errorf("alloc_tres_set = %s, want %s", got, want)
	}
	// The next block numbers from 0 again.
	c.reset()
	c.appendItem(m, k1)
	c.appendItem(m, 0)
	if got, want := fmt.Sprint(c.sets.vals), "[0 1]"; got != want {
		t.Errorf("next block: alloc_tres_set = %s, want %s", got, want)
	}
}
