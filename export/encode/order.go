package encode

import "slices"

// sortedOrder returns the positions of rows in cmp order (stable: equal
// keys keep the caller's order, so the output depends only on the input),
// or nil when rows are already in order. rows is not modified.
//
// Rows that come nearly in order (a month's priority rows: in time order,
// but a snapshot's waiting jobs in the queue's order, not by job id; two
// sorted segments of a month one after the other) cost about 2n
// comparisons and a sort of the few rows out of place, instead of a sort
// of all n rows: one pass keeps, in place, each row not less than the last
// row kept, the rows left out are sorted apart, and the two lists are
// merged. When more than a quarter of the rows are left out, all are
// sorted. (On the million rows of BenchmarkPriorityEncoder, a few in a
// hundred of them out of place, the sort took 0.08 CPU-s instead of
// 0.18-0.22.)
func sortedOrder[T any](rows []T, cmp func(a, b *T) int) []int32 {
	n := len(rows)
	i := 1
	for i < n && cmp(&rows[i-1], &rows[i]) <= 0 {
		i++
	}
	if i >= n {
		return nil
	}
	// idx[:k] are the rows kept in order (the first i, then each row not
	// less than the last kept), idx[m:] the others, from the back.
	idx := make([]int32, n)
	for p := range i {
		idx[p] = int32(p)
	}
	k, m := i, n
	for p := i; p < n; p++ {
		if cmp(&rows[idx[k-1]], &rows[p]) <= 0 {
			idx[k] = int32(p)
			k++
		} else {
			m--
			idx[m] = int32(p)
		}
	}
	if n-m > n/4 {
		for p := range idx {
			idx[p] = int32(p)
		}
		return sortPositions(rows, idx, cmp)
	}
	// idx holds the kept rows, then the others (m == k): sort those in a
	// copy and merge them in from the back, the larger first. A row kept
	// equal to a row out of place stays before it: a row is out of place
	// when it is less than a row kept before it, so every row kept after it
	// is greater.
	rest := slices.Clone(idx[m:])
	slices.Reverse(rest) // in input order
	sortPositions(rows, rest, cmp)
	a, w := k-1, n-1
	for b := len(rest) - 1; b >= 0; w-- {
		if a >= 0 && cmp(&rows[idx[a]], &rows[rest[b]]) > 0 {
			idx[w] = idx[a]
			a--
		} else {
			idx[w] = rest[b]
			b--
		}
	}
	return idx
}

// sortPositions sorts the positions idx by cmp of their rows, equal rows by
// position, and returns idx.
func sortPositions[T any](rows []T, idx []int32, cmp func(a, b *T) int) []int32 {
	// Unstable sort with the position as the last key: the order of a
	// stable sort, without its O(n log² n) moves.
	slices.SortFunc(idx, func(a, b int32) int {
		if c := cmp(&rows[a], &rows[b]); c != 0 {
			return c
		}
		return int(a) - int(b)
	})
	return idx
}
