package history

import (
	"fmt"
	"path"
)

// A history whose newest checkpoint is after the moment of a run was
// written by a run that charged job times that had not happened yet (a
// release before job times were bounded, or a controller whose clock ran
// far ahead). Runs refuse it: every later run would end before its newest
// checkpoint. Verify reports such checkpoints and Repair cuts the cluster's
// history back to its newest checkpoint that is not in the future.

// futureCheckpoints are the checkpoints of cluster ("" for every cluster)
// in m that are after now (Unix seconds).
func futureCheckpoints(m *Manifest, cluster string, now int64) []Partition {
	var out []Partition
	for _, p := range m.Files(TableState, cluster) {
		if checkpointTime(path.Base(p.Path)) > now {
			out = append(out, p)
		}
	}
	return out
}

// cutAfter removes from the commit everything of cluster after time at
// (Unix seconds): the checkpoints after at, the moment seeds from at on
// (the run resuming at at writes its own there), the fair-share and association
// snapshots after at, the usage of the UTC days from at's day on (a run
// resuming at at recomputes that whole day), and the jobs that start or
// end after at (the run resuming at at reads them again from sacct). The
// runs table, a log of the runs made, is kept whole. It returns the rows
// removed per table.
func (t *Txn) cutAfter(cluster string, at int64) (map[string]int64, error) {
	removed := map[string]int64{}
	for _, p := range t.base.Files(TableState, cluster) {
		name := path.Base(p.Path)
		seed, isSeed := MomentSeedTime(name)
		if checkpointTime(name) > at || isSeed && seed >= at {
			t.Remove(p)
			removed[TableState]++
		}
	}
	for _, d := range tables {
		if err := d.cutFiles(t, cluster, at, removed); err != nil {
			return nil, err
		}
	}
	return removed, nil
}

// dropped reports whether the commit already removed file p.
func (t *Txn) dropped(p Partition) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.drop[p.Path]
}

// cutRows replaces file p by its rows that drop does not select (no file
// when none is left), keeping its hot mark, and returns how many it
// dropped.
func cutRows[T any](t *Txn, p Partition, drop func(*T) bool) (int64, error) {
	var rows []T
	if err := t.Read(p, &rows); err != nil {
		return 0, fmt.Errorf("cut %s: %w", p.Path, err)
	}
	kept := rows[:0]
	for i := range rows {
		if !drop(&rows[i]) {
			kept = append(kept, rows[i])
		}
	}
	n := int64(len(rows) - len(kept))
	if n == 0 {
		return 0, nil
	}
	if _, err := t.replace([]Partition{p}, kept, p.Hot); err != nil {
		return 0, fmt.Errorf("cut %s: %w", p.Path, err)
	}
	return n, nil
}
