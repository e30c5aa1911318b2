package encode

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/export/record"
)

// keyed is a row of TestSortedOrder: ordered by key alone, so rows with
// equal keys show whether the order is stable.
type keyed struct{ key int }

func compareKeyed(a, b *keyed) int { return cmp.Compare(a.key, b.key) }

// TestSortedOrder checks sortedOrder on hand-sorted examples and against
// slices.SortStableFunc on inputs of each shape its two ways of sorting
// meet: in order, nearly in order (a few rows out of place, as a month's
// priority rows), two sorted runs one after the other (two segments),
// one large row first (every later row is out of place), shuffled with
// many ties, reversed, all equal, and priority rows of each kind.
func TestSortedOrder(t *testing.T) {
	t.Parallel()
	hand := []struct {
		keys []int
		want []int32 // nil: already in order
	}{
		{nil, nil},
		{[]int{7}, nil},
		{[]int{1, 1, 2, 3}, nil},
		{[]int{2, 1}, []int32{1, 0}},
		// 1 1 2 kept; the 0 and the second 2 out of place; ties by position.
		{[]int{1, 1, 2, 0, 2, 3, 1, 4}, []int32{3, 0, 1, 6, 2, 4, 5, 7}},
		{[]int{9, 1, 2, 3}, []int32{1, 2, 3, 0}},
		{[]int{3, 3, 3, 1, 1}, []int32{3, 4, 0, 1, 2}},
	}
	for _, c := range hand {
		rows := make([]keyed, len(c.keys))
		for i, k := range c.keys {
			rows[i] = keyed{k}
		}
		if got := sortedOrder(rows, compareKeyed); !slices.Equal(got, c.want) {
			t.Errorf("sortedOrder(%v) = %v, want %v", c.keys, got, c.want)
		}
	}

	r := rand.New(rand.NewPCG(3, 4))
	shapes := map[string]func(n int) []int{
		"in order": func(n int) []int {
			keys := make([]int, n)
			for i := range keys {
				keys[i] = i / 3
			}
			return keys
		},
		"nearly in order": func(n int) []int {
			keys := make([]int, n)
			for i := range keys {
				keys[i] = i / 3
				if r.IntN(50) == 0 {
					keys[i] -= r.IntN(100)
				}
			}
			return keys
		},
		"two runs": func(n int) []int {
			keys := make([]int, n)
			for i := range keys {
				keys[i] = (i % (n/2 + 1)) * 2
			}
			return keys
		},
		"large first": func(n int) []int {
			keys := make([]int, n)
			for i := range keys {
				keys[i] = i
			}
			keys[0] = n
			return keys
		},
		"shuffled ties": func(n int) []int {
			keys := make([]int, n)
			for i := range keys {
				keys[i] = r.IntN(n/10 + 1)
			}
			return keys
		},
		"reversed": func(n int) []int {
			keys := make([]int, n)
			for i := range keys {
				keys[i] = n - i
			}
			return keys
		},
		"all equal": func(n int) []int { return make([]int, n) },
	}
	for name, shape := range shapes {
		for _, n := range []int{2, 3, 17, 1000, 20000} {
			keys := shape(n)
			rows := make([]keyed, n)
			for i, k := range keys {
				rows[i] = keyed{k}
			}
			checkSortedOrder(t, name, rows, compareKeyed)
		}
	}
	prio := benchPriority(50_000)
	checkSortedOrder(t, "priority rows as a run gives them", prio, record.ComparePriority)
	checkSortedOrder(t, "varied priority rows", variedPriority(20_000, 12, snapshotCase{days: 31, mono: true}), record.ComparePriority)
	sorted := sortedCopy(prio, record.ComparePriority)
	checkSortedOrder(t, "two sorted segments", append(sorted[25_000:], sorted[:25_000]...), record.ComparePriority)
}

// checkSortedOrder compares sortedOrder(rows, compare) with the positions
// slices.SortStableFunc puts rows in.
func checkSortedOrder[T any](t *testing.T, name string, rows []T, compare func(a, b *T) int) {
	t.Helper()
	want := identity(len(rows))
	slices.SortStableFunc(want, func(a, b int32) int { return compare(&rows[a], &rows[b]) })
	got := sortedOrder(rows, compare)
	if got == nil {
		if !slices.Equal(want, identity(len(rows))) {
			t.Errorf("%s (%d rows): sortedOrder reports rows in order that are not", name, len(rows))
		}
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s (%d rows): sortedOrder differs from a stable sort", name, len(rows))
	}
}
