package pipeline

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/fairledger/fairledger/export/encode"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// compactFanIn is how many settled segments of one size class a partition
// (table, cluster, month) gathers before compaction merges them into one.
const compactFanIn = 4

// maxMergeRows bounds the rows of one merge (two row groups): a night's
// compaction then costs a few hundred thousand rows at most, and a month
// of a large cluster keeps a few segments of about this size.
const maxMergeRows = 2 * encode.RowGroupRows

// sizeClass is a segment's size class: rows in [4^c, 4^(c+1)).
func sizeClass(rows int64) int { return (bits.Len64(uint64(max(rows, 1))) - 1) / 2 }

// compact merges, in every table, the settled segments of a partition
// that has compactFanIn or more of one size class into one segment, in
// the run's commit, until no partition has (a merge may fill the next
// class); a merge of more than maxMergeRows rows is left out. So after a
// run no partition holds more than compactFanIn-1 settled segments of one
// size class below that size: a history's file count grows with its
// months, not its nights, and a row is rewritten a few times at most. A run writes about one settled segment per table and
// partition, so a merge is rare and, but for the one that closes a
// month's largest class, small. Hot segments are rewritten by every run
// and never merged. It returns the number of segments merged.
func compact(tx *history.Txn, cluster string) (int, error) {
	merged := 0
	for _, table := range []string{schemas.TableJobs, schemas.TableUsage, schemas.TableFairshare, schemas.TableAssociations, schemas.TableRuns, schemas.TablePriority} {
		for {
			group := pickCompaction(tx.Files(table, cluster))
			if len(group) == 0 {
				break
			}
			if err := mergeGroup(tx, table, group); err != nil {
				return merged, err
			}
			merged += len(group)
		}
	}
	return merged, nil
}

// mergeGroup merges one partition's segments of table (see mergeSegments).
func mergeGroup(tx *history.Txn, table string, group []history.Partition) error {
	switch table {
	case schemas.TableJobs:
		return mergeJobs(tx, group)
	case schemas.TableUsage:
		return mergeSegments[record.UsageRow](tx, group)
	case schemas.TableFairshare:
		return mergeSegments[record.FairshareRow](tx, group)
	case schemas.TableAssociations:
		return mergeSegments[record.AssociationRow](tx, group)
	case schemas.TableRuns:
		return mergeSegments[record.RunRow](tx, group)
	case schemas.TablePriority:
		return mergeSegments[record.PriorityRow](tx, group)
	}
	return fmt.Errorf("compact: table %s", table)
}

// pickCompaction returns the segments to merge among files (one table's,
// in path order): see compact.
func pickCompaction(files []history.Partition) []history.Partition {
	type key struct {
		month string
		class int
	}
	groups := map[key][]history.Partition{}
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
		if a.month != b.month {
			if a.month < b.month {
				return -1
			}
			return 1
		}
		return a.class - b.class
	})
	for _, k := range keys {
		if g := groups[k]; len(g) >= compactFanIn {
			var rows int64
			for _, p := range g {
				rows += p.Rows
			}
			if rows <= maxMergeRows {
				return g
			}
		}
	}
	return nil
}

// mergeSegments replaces the segments of one partition by one segment of
// their rows.
func mergeSegments[T any](tx *history.Txn, segs []history.Partition) error {
	var rows []T
	for _, p := range segs {
		var part []T
		if err := tx.Read(p, &part); err != nil {
			return err
		}
		rows = append(rows, part...)
	}
	_, err := tx.Replace(segs, any(rows), false)
	return err
}

// mergeJobs is mergeSegments for the jobs table: the rows gather in a
// JobTable (pointer-free records, names and TRES sets interned), decoded
// a few thousand at a time, so that merging a month's segments holds
// about 200 bytes a row rather than the decoded rows' 400 and more.
func mergeJobs(tx *history.Txn, segs []history.Partition) error {
	var n int64
	for _, p := range segs {
		n += p.Rows
	}
	t := record.NewJobTable(record.NewJobDict(), int(n))
	for _, p := range segs {
		if err := tx.ReadJobs(p, t); err != nil {
			return err
		}
	}
	_, err := tx.Replace(segs, t, false)
	return err
}
