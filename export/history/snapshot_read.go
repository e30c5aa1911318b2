package history

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// ReadFairshareSnapshot returns the rows of cluster's newest fair-share
// snapshot at or before at (the newest of all when at is zero) among the
// fairshare segments of month, and that snapshot's time; no rows and a
// zero time when the month holds none. The rows come in no particular
// order.
//
// Each segment is first checked against the manifest (size and SHA-256)
// as it is read from disk, in constant memory; then only the row groups
// whose snapshot statistics can hold the snapshot are decoded, a few
// thousand rows at a time, and only that snapshot's rows are kept. So it
// holds one snapshot's rows (one per association), not the month's: a
// month of a 100,000-association tree is 3.1 million rows, which decoded
// whole took sshare 4.9 GB.
func (v *View) ReadFairshareSnapshot(cluster string, month, at time.Time) ([]record.FairshareRow, time.Time, error) {
	return v.readFairshareSnapshot(cluster, month, at, false)
}

// ReadFirstFairshareSnapshot returns the rows of cluster's oldest
// fair-share snapshot among the fairshare segments of month, and that
// snapshot's time; no rows and a zero time when the month holds none. It
// reads as ReadFairshareSnapshot does: the segments checked against the
// manifest, only the row groups that hold the snapshot decoded.
func (v *View) ReadFirstFairshareSnapshot(cluster string, month time.Time) ([]record.FairshareRow, time.Time, error) {
	return v.readFairshareSnapshot(cluster, month, time.Time{}, true)
}

// readFairshareSnapshot is ReadFairshareSnapshot, or with first
// ReadFirstFairshareSnapshot (at is then ignored).
func (v *View) readFairshareSnapshot(cluster string, month, at time.Time, first bool) ([]record.FairshareRow, time.Time, error) {
	if err := validCluster(cluster); err != nil {
		return nil, time.Time{}, fmt.Errorf("read fairshare snapshot: %w", err)
	}
	atUS := int64(math.MaxInt64)
	if !at.IsZero() {
		atUS = at.UnixMicro()
	}
	mk := schemas.MonthKey(month)
	type segment struct {
		p      Partition
		f      *os.File
		pf     *parquet.File
		groups []snapshotBounds
	}
	var segs []segment
	defer func() {
		for _, s := range segs {
			s.f.Close()
		}
	}()
	best, found := int64(math.MinInt64), false
	for _, p := range v.Files(schemas.TableFairshare, cluster) {
		if p.Month != mk {
			continue
		}
		f, pf, err := openVerified(v.Path(p), p)
		if err != nil {
			return nil, time.Time{}, err
		}
		segs = append(segs, segment{p: p, f: f, pf: pf})
		s := &segs[len(segs)-1]
		if s.groups, err = snapshotGroups(pf); err != nil {
			return nil, time.Time{}, &CorruptError{Path: p.Path, Problem: "not readable Parquet: " + err.Error()}
		}
		for g, b := range s.groups {
			if first {
				// The statistics' least snapshot is one of the group's.
				if !found || b.min < best {
					best, found = b.min, true
				}
				continue
			}
			if b.min > atUS {
				continue
			}
			t := b.max
			if t > atUS {
				// The row group spans at: its newest snapshot at or
				// before at is among its values.
				if t, err = newestSnapshotIn(pf.RowGroups()[g], atUS); err != nil {
					return nil, time.Time{}, &CorruptError{Path: p.Path, Problem: "not readable Parquet: " + err.Error()}
				}
			}
			if t != math.MinInt64 && (!found || t > best) {
				best, found = t, true
			}
		}
	}
	if !found {
		return nil, time.Time{}, nil
	}
	var rows []record.FairshareRow
	for _, s := range segs {
		for g, b := range s.groups {
			if b.min > best || b.max < best {
				continue
			}
			var err error
			if rows, err = appendSnapshotRows(rows, s.pf.RowGroups()[g], best); err != nil {
				return nil, time.Time{}, &CorruptError{Path: s.p.Path, Problem: "not readable Parquet: " + err.Error()}
			}
		}
	}
	return rows, time.UnixMicro(best).UTC(), nil
}

// openVerified opens file and checks its size and SHA-256 against p,
// reading it once through a small buffer, then opens it as Parquet. The
// caller closes the file.
func openVerified(file string, p Partition) (*os.File, *parquet.File, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, &CorruptError{Path: p.Path, Problem: "cannot be read: " + err.Error()}
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		f.Close()
		return nil, nil, &CorruptError{Path: p.Path, Problem: "cannot be read: " + err.Error()}
	}
	if n != p.Bytes {
		f.Close()
		return nil, nil, &CorruptError{Path: p.Path, Problem: fmt.Sprintf("%d bytes, the manifest says %d", n, p.Bytes)}
	}
	if hex.EncodeToString(h.Sum(nil)) != p.SHA256 {
		f.Close()
		return nil, nil, &CorruptError{Path: p.Path, Problem: "SHA-256 differs from the manifest's"}
	}
	pf, err := openParquetFile(f, n)
	if err != nil {
		f.Close()
		return nil, nil, &CorruptError{Path: p.Path, Problem: "not valid Parquet: " + err.Error()}
	}
	return f, pf, nil
}

// openParquetFile is parquet.OpenFile, with a panic of the reader on a
// malformed footer returned as an error.
func openParquetFile(r io.ReaderAt, size int64) (pf *parquet.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			pf, err = nil, fmt.Errorf("malformed Parquet: %v", r)
		}
	}()
	return parquet.OpenFile(r, size, parquet.SkipBloomFilters(true))
}

// snapshotBounds are the least and greatest snapshot of a row group, in
// Unix microseconds.
type snapshotBounds struct{ min, max int64 }

// snapshotGroups returns the snapshot bounds of each row group of a
// fairshare file, from the statistics of its snapshot column (which every
// writer of the history records): a row group without them is read for
// them.
func snapshotGroups(pf *parquet.File) (_ []snapshotBounds, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed Parquet: %v", r)
		}
	}()
	col, ok := pf.Schema().Lookup("snapshot")
	if !ok || col.Node.Type().Kind() != parquet.Int64 {
		return nil, errors.New("no INT64 snapshot column")
	}
	md := pf.Metadata()
	groups := make([]snapshotBounds, len(pf.RowGroups()))
	for g, rg := range pf.RowGroups() {
		st := md.RowGroups[g].Columns[col.ColumnIndex].MetaData.Statistics
		if len(st.MinValue) == 8 && len(st.MaxValue) == 8 {
			groups[g] = snapshotBounds{int64(binary.LittleEndian.Uint64(st.MinValue)), int64(binary.LittleEndian.Uint64(st.MaxValue))}
			continue
		}
		b := snapshotBounds{math.MaxInt64, math.MinInt64}
		if err := eachSnapshot(rg, col.ColumnIndex, func(t int64) {
			b.min, b.max = min(b.min, t), max(b.max, t)
		}); err != nil {
			return nil, err
		}
		groups[g] = b
	}
	return groups, nil
}

// newestSnapshotIn returns the greatest snapshot of rg at or before atUS,
// or math.MinInt64.
func newestSnapshotIn(rg parquet.RowGroup, atUS int64) (int64, error) {
	col, ok := rg.Schema().Lookup("snapshot")
	if !ok {
		return 0, errors.New("no snapshot column")
	}
	best := int64(math.MinInt64)
	err := eachSnapshot(rg, col.ColumnIndex, func(t int64) {
		if t <= atUS {
			best = max(best, t)
		}
	})
	return best, err
}

// eachSnapshot calls fn with every value of column col (the snapshot) of
// rg, a page at a time.
func eachSnapshot(rg parquet.RowGroup, col int, fn func(int64)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed Parquet: %v", r)
		}
	}()
	pages := rg.ColumnChunks()[col].Pages()
	defer pages.Close()
	vals := make([]parquet.Value, 4096)
	for {
		page, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		r := page.Values()
		for {
			n, err := r.ReadValues(vals)
			for _, v := range vals[:n] {
				fn(v.Int64())
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				parquet.Release(page)
				return err
			}
		}
		parquet.Release(page)
	}
}

// appendSnapshotRows appends the rows of rg whose snapshot is atUS,
// decoding a few thousand rows at a time.
func appendSnapshotRows(dst []record.FairshareRow, rg parquet.RowGroup, atUS int64) ([]record.FairshareRow, error) {
	err := eachRow(rg, func(r *record.FairshareRow) {
		if r.Snapshot.UnixMicro() == atUS {
			dst = append(dst, *r)
		}
	})
	return dst, err
}
