package encode

import "slices"

// sortedOrder returns the positions of rows in cmp order (stable: equal
// keys keep the caller's order, so the output depends only on the input),
// or nil when rows are already in order. rows is not modified.
func sortedOrder[T any](rows []T, cmp func(a, b *T) int) []int32 {
	sorted := true
	for i := 1; i < len(rows); i++ {
		if cmp(&rows[i-1], &rows[i]) > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return nil
	}
	idx := make([]int32, len(rows))
	for i := range idx {
		idx[i] = int32(i)
	}
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
