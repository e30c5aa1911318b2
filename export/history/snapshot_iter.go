package history

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// SnapshotIter reads a cluster's fair-share snapshots in time order
// (View.FairshareSnapshots). Each fairshare segment is checked against
// the manifest as ReadFairshareSnapshot checks it, and decoded once: the
// row groups whose snapshot ranges overlap are decoded together, so it
// holds the rows of those row groups, not a month's (a row group is a
// few snapshots of a tree; ReadFairshareSnapshot decodes the same ones
// for one snapshot of them).
type SnapshotIter struct {
	v       *View
	cluster string
	from    int64 // Unix microseconds: snapshots before it are skipped
	months  []time.Time
	files   []*os.File // the month's open segments
	batches [][]groupRef
	ready   []timedRows // the decoded batch's snapshots, in time order
	err     error
}

type groupRef struct {
	path string
	rg   parquet.RowGroup
	b    snapshotBounds
}

type timedRows struct {
	at   int64
	rows []record.FairshareRow
}

// FairshareSnapshots returns an iterator over cluster's fair-share
// snapshots at or after from (zero: all), oldest first. The caller
// closes it.
func (v *View) FairshareSnapshots(cluster string, from time.Time) (*SnapshotIter, error) {
	if err := validCluster(cluster); err != nil {
		return nil, fmt.Errorf("read fairshare snapshots: %w", err)
	}
	months, err := v.Months(schemas.TableFairshare, cluster)
	if err != nil {
		return nil, err
	}
	it := &SnapshotIter{v: v, cluster: cluster, from: math.MinInt64, months: months}
	if !from.IsZero() {
		it.from = from.UnixMicro()
		first := schemas.MonthStart(from)
		it.months = slices.DeleteFunc(it.months, func(m time.Time) bool { return m.Before(first) })
	}
	return it, nil
}

// Next returns the next snapshot's time and rows (in no particular
// order), or io.EOF after the last one.
func (it *SnapshotIter) Next() (time.Time, []record.FairshareRow, error) {
	for len(it.ready) == 0 {
		if it.err != nil {
			return time.Time{}, nil, it.err
		}
		if len(it.batches) == 0 {
			if len(it.months) == 0 {
				return time.Time{}, nil, io.EOF
			}
			if it.err = it.openMonth(); it.err != nil {
				return time.Time{}, nil, it.err
			}
			continue
		}
		if it.err = it.decode(it.batches[0]); it.err != nil {
			return time.Time{}, nil, it.err
		}
		it.batches = it.batches[1:]
	}
	s := it.ready[0]
	it.ready = it.ready[1:]
	return time.UnixMicro(s.at).UTC(), s.rows, nil
}

// openMonth opens and checks the next month's segments and batches their
// row groups by overlapping snapshot ranges.
func (it *SnapshotIter) openMonth() error {
	it.closeFiles()
	mk := schemas.MonthKey(it.months[0])
	it.months = it.months[1:]
	var groups []groupRef
	for _, p := range it.v.Files(schemas.TableFairshare, it.cluster) {
		if p.Month != mk {
			continue
		}
		f, pf, err := openVerified(it.v.Path(p), p)
		if err != nil {
			return err
		}
		it.files = append(it.files, f)
		bounds, err := snapshotGroups(pf)
		if err != nil {
			return &CorruptError{Path: p.Path, Problem: "not readable Parquet: " + err.Error()}
		}
		for g, b := range bounds {
			if b.max >= it.from {
				groups = append(groups, groupRef{path: p.Path, rg: pf.RowGroups()[g], b: b})
			}
		}
	}
	slices.SortStableFunc(groups, func(a, b groupRef) int { return cmp.Or(cmp.Compare(a.b.min, b.b.min), cmp.Compare(a.b.max, b.b.max)) })
	for len(groups) > 0 {
		n, hi := 1, groups[0].b.max
		for n < len(groups) && groups[n].b.min <= hi {
			hi = max(hi, groups[n].b.max)
			n++
		}
		it.batches = append(it.batches, groups[:n:n])
		groups = groups[n:]
	}
	return nil
}

// decode reads a batch of row groups into ready.
func (it *SnapshotIter) decode(batch []groupRef) error {
	by := map[int64][]record.FairshareRow{}
	for _, g := range batch {
		if err := eachRow(g.rg, func(r *record.FairshareRow) {
			if t := r.Snapshot.UnixMicro(); t >= it.from {
				by[t] = append(by[t], *r)
			}
		}); err != nil {
			return &CorruptError{Path: g.path, Problem: "not readable Parquet: " + err.Error()}
		}
	}
	for t, rows := range by {
		it.ready = append(it.ready, timedRows{t, rows})
	}
	slices.SortFunc(it.ready, func(a, b timedRows) int { return cmp.Compare(a.at, b.at) })
	return nil
}

// eachRow calls fn with every row of rg, decoding a few thousand at a time.
func eachRow(rg parquet.RowGroup, fn func(*record.FairshareRow)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed Parquet: %v", r)
		}
	}()
	r := parquet.NewGenericRowGroupReader[record.FairshareRow](rg)
	defer r.Close()
	buf := make([]record.FairshareRow, 4096)
	for {
		clear(buf) // the rows kept own what their pointers point to
		n, err := r.Read(buf)
		for i := range buf[:n] {
			fn(&buf[i])
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (it *SnapshotIter) closeFiles() {
	for _, f := range it.files {
		f.Close()
	}
	it.files = nil
}

// Close closes the segments the iterator holds open.
func (it *SnapshotIter) Close() error {
	it.closeFiles()
	it.batches, it.ready = nil, nil
	return nil
}
