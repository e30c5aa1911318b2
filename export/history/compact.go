package history

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/fairledger/fairledger/export/encode"
	"github.com/fairledger/fairledger/schemas"
)

// Compaction keeps the number of a history's files bounded, size-tiered:
// planCompaction decides, from the manifest's entries alone, which
// segments of one table to merge; Txn.Compact runs the plan over every
// table of a cluster and merges each group (Txn.merge, which reads it
// through the table's descriptor) in the commit being built.
// docs/history-store.md explains the rule and its costs.

// compactFanIn is how many settled segments of one size class a partition
// (table, cluster, month) gathers before compaction merges them into one.
const compactFanIn = 4

// maxMergeRows bounds the rows of one merge (two row groups): a night's
// compaction then costs a few hundred thousand rows at most, and a month
// of a large cluster keeps a few segments of about this size.
const maxMergeRows = 2 * encode.RowGroupRows

// sizeClass is a segment's size class: rows in [4^c, 4^(c+1)) (an empty
// segment is in class 0).
func sizeClass(rows int64) int { return (bits.Len64(uint64(max(rows, 1))) - 1) / 2 }

// Compact merges, in every table, the settled segments of a partition of
// cluster that has compactFanIn or more of one size class into one
// segment, in this commit, until no partition has (a merge may fill the
// next class); a merge of more than maxMergeRows rows is left out. So
// after a run no partition holds more than compactFanIn-1 settled
// segments of one size class below that size: a history's file count
// grows with its months, not its nights, and a row is rewritten a few
// times at most. A run writes about one settled segment per table and
// partition, so a merge is rare and, but for the one that closes a
// month's largest class, small. Hot segments are rewritten by every run
// and never merged. Compact merges the commit's own new segments as well
// as the base's. It returns the number of segments merged.
func (t *Txn) Compact(cluster string) (merged int, err error) {
	for _, def := range schemas.Tables() {
		for {
			group := planCompaction(t.Files(def.Name, cluster))
			if len(group) == 0 {
				break
			}
			if _, err = t.merge(group); err != nil {
				return merged, err
			}
			merged += len(group)
		}
	}
	return merged, nil
}

// planCompaction returns the segments to merge next among files, the
// files of one table and cluster in path order (as Manifest.Files gives
// them), or none. It looks at the entries only: the month, the row count
// and the hot mark. Settled segments are grouped by (month, size class);
// the first group, in order of month and then of class, that has
// compactFanIn or more segments and at most maxMergeRows rows in all is
// the plan, all of its segments, in path order. Hot segments neither
// merge nor count.
func planCompaction(files []Partition) []Partition {
	type key struct {
		month string
		class int
	}
	groups := map[key][]Partition{}
	var keys []key
	for _, p := range files {
		if p.Hot {
			continue
		}
		k := key{p.Month, sizeClass(p.Rows)}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], p)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(a.month, b.month); c != 0 {
			return c
		}
		return cmp.Compare(a.class, b.class)
	})
	for _, k := range keys {
		if g := groups[k]; len(g) >= compactFanIn && groupRows(g) <= maxMergeRows {
			return g
		}
	}
	return nil
}

// groupRows is the number of rows of segs.
func groupRows(segs []Partition) int64 {
	var n int64
	for _, p := range segs {
		n += p.Rows
	}
	return n
}
