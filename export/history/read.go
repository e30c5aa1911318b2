package history

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// The read API of a pinned generation: which clusters and months a table
// has, a cluster's fair-share snapshot at a given time and the settings of
// the run that computed it, each read as little as it takes and checked
// against the manifest. sshare reads the history through it; a reader
// that queries with SQL uses package query.

// Clusters returns the clusters that have files of table in the view,
// sorted.
func (v *View) Clusters(table string) []string {
	var out []string
	for _, p := range v.Files(table, "") {
		if !slices.Contains(out, p.Cluster) {
			out = append(out, p.Cluster)
		}
	}
	slices.Sort(out)
	return out
}

// monthKeys returns the months (YYYY-MM) of cluster's files of table in
// the view, oldest first.
func (v *View) monthKeys(table, cluster string) []string {
	var out []string
	for _, p := range v.Files(table, cluster) {
		if !slices.Contains(out, p.Month) {
			out = append(out, p.Month)
		}
	}
	slices.Sort(out)
	return out
}

// Months returns the months of cluster's partitions of table that have
// files in the view, as their first instants in UTC, oldest first: the
// months ReadPartition reads.
func (v *View) Months(table, cluster string) ([]time.Time, error) {
	keys := v.monthKeys(table, cluster)
	out := make([]time.Time, len(keys))
	for i, k := range keys {
		m, err := parseMonth(table, cluster, k)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// parseMonth parses the month key of a partition of table and cluster.
func parseMonth(table, cluster, key string) (time.Time, error) {
	m, err := schemas.ParseMonth(key)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s partition of cluster %s: bad month %q", table, cluster, key)
	}
	return m, nil
}

// Snapshot is one fair-share snapshot of a cluster, read from a history.
type Snapshot struct {
	// Cluster is the snapshot's cluster.
	Cluster string
	// Time is the snapshot's time, in UTC.
	Time time.Time
	// Rows are the snapshot's fairshare rows, one per association, in no
	// particular order (record.FairshareFromRows rebuilds the tree).
	Rows []record.FairshareRow
	// Before is set when the time asked for precedes every snapshot of
	// the cluster: Rows are then those of its first snapshot.
	Before bool
}

// Snapshot returns cluster's newest fair-share snapshot at or before at
// (at zero: the newest of all); when at precedes every snapshot, the
// first one, marked Before. A cluster whose fairshare partitions hold no
// rows gives a Snapshot without rows. It reads the partition of at's
// month first and goes back month by month through the months that have a
// partition, stopping at the first that holds a snapshot at or before at,
// so only the partitions needed are read, and of each only the row groups
// that may hold the snapshot (ReadFairshareSnapshot, which checks every
// segment file).
func (v *View) Snapshot(cluster string, at time.Time) (Snapshot, error) {
	ms := v.monthKeys(schemas.TableFairshare, cluster)
	slices.Reverse(ms) // newest first
	for _, m := range ms {
		if !at.IsZero() && m > schemas.MonthKey(at) {
			continue // a month after at
		}
		month, err := parseMonth(schemas.TableFairshare, cluster, m)
		if err != nil {
			return Snapshot{}, err
		}
		// Only the snapshot's rows: a month of a large tree is millions.
		rows, best, err := v.ReadFairshareSnapshot(cluster, month, at)
		if err != nil {
			return Snapshot{}, err
		}
		if len(rows) > 0 {
			return Snapshot{Cluster: cluster, Time: best, Rows: rows}, nil
		}
	}
	if at.IsZero() {
		return Snapshot{Cluster: cluster}, nil
	}
	// at precedes every snapshot: the first one's tree, oldest month first.
	for i := len(ms) - 1; i >= 0; i-- {
		month, err := parseMonth(schemas.TableFairshare, cluster, ms[i])
		if err != nil {
			return Snapshot{}, err
		}
		rows, first, err := v.ReadFirstFairshareSnapshot(cluster, month)
		if err != nil {
			return Snapshot{}, err
		}
		if len(rows) > 0 {
			return Snapshot{Cluster: cluster, Time: first, Rows: rows, Before: true}, nil
		}
	}
	return Snapshot{Cluster: cluster}, nil
}

// RunConfig returns the settings of the run that wrote cluster's snapshot
// at at: those of the cluster's first run that started at or after it,
// else of the latest run before it (as the reports pick them). Its TRES
// are the ones every Slurm database holds (schemas.StaticTRES) when the
// history has no such run or was written before runs recorded the list.
// The runs partitions are read month by month from the oldest, up to the
// first that holds a run at or after at.
func (v *View) RunConfig(cluster string, at time.Time) (record.RunConfig, error) {
	var after, before *record.RunRow
	for _, m := range v.monthKeys(schemas.TableRuns, cluster) {
		month, err := parseMonth(schemas.TableRuns, cluster, m)
		if err != nil {
			return record.RunConfig{}, err
		}
		var runs []record.RunRow
		if err := v.ReadPartition(schemas.TableRuns, cluster, month, &runs); err != nil {
			return record.RunConfig{}, err
		}
		for i := range runs {
			r := &runs[i]
			switch {
			case !r.Started.Before(at):
				if after == nil || r.Started.Before(after.Started) {
					after = r
				}
			case before == nil || r.Started.After(before.Started):
				before = r
			}
		}
		if after != nil {
			break // months ascend: no earlier run at or after the snapshot follows
		}
	}
	run := cmp.Or(after, before)
	if run == nil {
		return record.RunConfig{TRES: schemas.StaticTRES()}, nil
	}
	cfg, err := record.ParseRunConfig(run.Config)
	if err != nil {
		return record.RunConfig{}, fmt.Errorf("run %s: %w", run.RunID, err)
	}
	if len(cfg.TRES) == 0 {
		cfg.TRES = schemas.StaticTRES()
	}
	return cfg, nil
}

// replace drops segs, files of one (table, cluster, month) partition (of
// the base, or written by the commit), and writes rows (as Write takes
// them) in their place as one new segment of that partition, hot or not,
// returning its entry (an empty one when rows are none): how compaction
// merges segments (Txn.merge) and a repair cuts one (cutRows).
func (t *Txn) replace(segs []Partition, rows any, hot bool) (Partition, error) {
	if len(segs) == 0 {
		return Partition{}, errors.New("replace: no segments")
	}
	p := segs[0]
	for _, s := range segs[1:] {
		if s.Table != p.Table || s.Cluster != p.Cluster || s.Month != p.Month {
			return Partition{}, fmt.Errorf("replace: %s and %s are not of one partition", p.Path, s.Path)
		}
	}
	month, err := schemas.ParseMonth(p.Month)
	if err != nil {
		return Partition{}, fmt.Errorf("month %q: %w", p.Month, err)
	}
	for _, s := range segs {
		t.Remove(s)
	}
	return t.Write(p.Table, p.Cluster, month, rows, hot)
}

// merge replaces segs, segments of one (table, cluster, month) partition
// (of the base, or written by the commit), by one settled segment of all
// their rows in the table's order, and returns its entry (an empty one
// when they hold no rows): how compaction merges a partition's segments.
// The rows gather as the table's descriptor reads them (the jobs in a
// record.JobTable, a few thousand rows decoded at a time).
func (t *Txn) merge(segs []Partition) (Partition, error) {
	if len(segs) == 0 {
		return Partition{}, errors.New("merge: no segments")
	}
	d, _, err := tableNamed(segs[0].Table)
	if err != nil {
		return Partition{}, fmt.Errorf("merge: %w", err)
	}
	rows, err := d.gatherBatch(t, segs)
	if err != nil {
		return Partition{}, err
	}
	return t.replace(segs, rows, false)
}

// PriorityAt returns the priority rows of cluster's fair-share snapshot at
// snap (a Snapshot's Time): the jobs waiting then. A snapshot at which no
// job waited has none. It reads the priority partition of snap's month.
func (v *View) PriorityAt(cluster string, snap time.Time) ([]record.PriorityRow, error) {
	mk := schemas.MonthKey(snap)
	if !slices.Contains(v.monthKeys(schemas.TablePriority, cluster), mk) {
		return nil, nil
	}
	month, err := parseMonth(schemas.TablePriority, cluster, mk)
	if err != nil {
		return nil, err
	}
	var rows []record.PriorityRow
	if err := v.ReadPartition(schemas.TablePriority, cluster, month, &rows); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(rows, func(r record.PriorityRow) bool { return r.Event != record.EventPending || !r.At.Equal(snap) }), nil
}
