package history

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/schemas"
)

// The statistics of a data file's manifest entry (Partition's MinTime,
// MaxTime, MinID, MaxID, MaxEnd) decide what a run reads, rewrites and
// deduplicates against (pipeline/write.go), so Verify recomputes them from
// the file's rows and compares: contentStats reads only the columns they
// come from, the way rowsEncoder computed them when the file was written.

// Only these columns are read (parquet-go projects a file's columns onto
// the struct's by name).
type (
	jobStatRow struct {
		JobIDRaw   int64     `parquet:"job_id_raw"`
		Start      time.Time `parquet:"start,timestamp(microsecond:utc)"`
		ChargedSec int64     `parquet:"charged_sec"`
	}
	usageStatRow struct {
		PeriodStart time.Time `parquet:"period_start,timestamp(microsecond:utc)"`
	}
	snapshotStatRow struct {
		Snapshot time.Time `parquet:"snapshot,timestamp(microsecond:utc)"`
	}
	runStatRow struct {
		Started time.Time `parquet:"started,timestamp(microsecond:utc)"`
	}
	priorityStatRow struct {
		At       time.Time  `parquet:"event_time,timestamp(microsecond:utc)"`
		Snapshot *time.Time `parquet:"snapshot,optional,timestamp(microsecond:utc)"`
	}
)

// statsChunk is how many rows contentStats decodes at a time.
const statsChunk = 4096

// contentStats returns the statistics of data file f (size bytes) of
// table computed from its rows: in the returned Partition, Rows and the
// fields Partition.MinTime to MaxEnd document. A panic of the decoder on
// malformed bytes is returned as an error.
func contentStats(f io.ReaderAt, size int64, table string) (st Partition, err error) {
	defer func() {
		if r := recover(); r != nil {
			st, err = Partition{}, fmt.Errorf("malformed Parquet: %v", r)
		}
	}()
	pf, err := parquet.OpenFile(f, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return Partition{}, err
	}
	acc := statsAcc{}
	switch table {
	case schemas.TableJobs:
		err = eachRow(pf, func(r *jobStatRow) {
			s := floorSec(r.Start.UnixMicro())
			acc.add(s)
			acc.addJob(r.JobIDRaw, s+r.ChargedSec)
		})
	case schemas.TableUsage:
		err = eachRow(pf, func(r *usageStatRow) { acc.add(r.PeriodStart.Unix()) })
	case schemas.TableFairshare, schemas.TableAssociations:
		err = eachRow(pf, func(r *snapshotStatRow) { acc.add(r.Snapshot.Unix()) })
	case schemas.TableRuns:
		err = eachRow(pf, func(r *runStatRow) { acc.add(r.Started.Unix()) })
	case schemas.TablePriority:
		err = eachRow(pf, func(r *priorityStatRow) {
			at := r.At
			if at.IsZero() && r.Snapshot != nil {
				at = *r.Snapshot // a file from before the at column (upgradePriority)
			}
			acc.add(at.Unix())
		})
	default:
		return Partition{}, fmt.Errorf("no statistics for table %q", table)
	}
	if err != nil {
		return Partition{}, err
	}
	return acc.p, nil
}

// eachRow calls fn with each row of pf, decoded as T.
func eachRow[T any](pf *parquet.File, fn func(*T)) error {
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	buf := make([]T, statsChunk)
	for {
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

// statsAcc accumulates a file's statistics, row by row.
type statsAcc struct{ p Partition }

func (a *statsAcc) add(t int64) {
	if a.p.Rows == 0 {
		a.p.MinTime, a.p.MaxTime = t, t
	}
	a.p.MinTime, a.p.MaxTime = min(a.p.MinTime, t), max(a.p.MaxTime, t)
	a.p.Rows++
}

// addJob adds a job's raw id and charged end; after add of its start.
func (a *statsAcc) addJob(id, end int64) {
	if a.p.Rows == 1 {
		a.p.MinID, a.p.MaxID, a.p.MaxEnd = id, id, end
	}
	a.p.MinID, a.p.MaxID, a.p.MaxEnd = min(a.p.MinID, id), max(a.p.MaxID, id), max(a.p.MaxEnd, end)
}

// hasStats reports whether entry p records statistics: an imported file
// (Txn.Import) has none, and its rows are then not compared.
func hasStats(p Partition) bool {
	return p.MinTime != 0 || p.MaxTime != 0 || p.MinID != 0 || p.MaxID != 0 || p.MaxEnd != 0
}

// statsDiff compares entry p's statistics with got, those of its content,
// and says each field that differs: its JSON name, recorded value and
// actual value ("" when they agree).
func statsDiff(p, got Partition) []string {
	var out []string
	for _, f := range []struct {
		name      string
		rec, real int64
		time      bool
	}{
		{"rows", p.Rows, got.Rows, false},
		{"min_time", p.MinTime, got.MinTime, true},
		{"max_time", p.MaxTime, got.MaxTime, true},
		{"min_id", p.MinID, got.MinID, false},
		{"max_id", p.MaxID, got.MaxID, false},
		{"max_end", p.MaxEnd, got.MaxEnd, true},
	} {
		if f.rec == f.real {
			continue
		}
		s := fmt.Sprintf("%s %d in the manifest, %d in the file", f.name, f.rec, f.real)
		if f.time {
			s = fmt.Sprintf("%s %d (%s) in the manifest, %d (%s) in the file", f.name, f.rec, fmtUnix(f.rec), f.real, fmtUnix(f.real))
		}
		out = append(out, s)
	}
	return out
}

// withStats is p with the statistics of got (its content's).
func withStats(p, got Partition) Partition {
	p.Rows, p.MinTime, p.MaxTime, p.MinID, p.MaxID, p.MaxEnd = got.Rows, got.MinTime, got.MaxTime, got.MinID, got.MaxID, got.MaxEnd
	return p
}
