package history

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// The statistics of a data file's manifest entry (Partition's MinTime,
// MaxTime, MinID, MaxID, MaxEnd) decide what a run reads, rewrites and
// deduplicates against (pipeline/write.go), so Verify recomputes them from
// the file's rows and compares: contentStats reads only the columns they
// come from, the way the table's descriptor (tables.go) computed them when
// the file was written.

// statsChunk is how many values contentStats decodes at a time.
const statsChunk = 4096

// contentStats returns the statistics of data file f (size bytes) of
// table computed from its rows: in the returned Partition, Rows and the
// fields Partition.MinTime to MaxEnd document. It reads only the columns
// they come from, value by value (decoding whole rows made verify fifteen
// times slower). A panic of the decoder on malformed bytes is returned as
// an error.
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
	d, _, err := tableNamed(table)
	if err != nil {
		return Partition{}, fmt.Errorf("no statistics for table %q", table)
	}
	return d.contentStats(pf)
}

// timeFileStats is contentStats for a table whose statistics are the range
// of one time column's values: the first of columns that pf has, else the
// last (a file written before a column existed has an older one).
func timeFileStats(pf *parquet.File, columns []string) (Partition, error) {
	timeCol := columns[len(columns)-1]
	for _, c := range columns[:len(columns)-1] {
		if _, ok := pf.Schema().Lookup(c); ok {
			timeCol = c
			break
		}
	}
	acc := statsAcc{}
	for _, rg := range pf.RowGroups() {
		times, err := timeColumn(rg, timeCol)
		if err != nil {
			return Partition{}, err
		}
		for _, t := range times {
			acc.add(t)
		}
		acc.p.Rows += rg.NumRows() - int64(len(times)) // rows without a time (NULL)
	}
	return acc.p, nil
}

// jobFileStats is contentStats for the jobs table: the range of starts
// and raw ids, and the latest time a job was charged to (start +
// charged_sec), as jobStats computes them when the file is written.
func jobFileStats(pf *parquet.File) (Partition, error) {
	acc := statsAcc{}
	for _, rg := range pf.RowGroups() {
		times, err := timeColumn(rg, "start")
		if err != nil {
			return Partition{}, err
		}
		ids, err := int64Column(rg, "job_id_raw")
		if err == nil && len(ids) != len(times) {
			err = fmt.Errorf("%d job_id_raw values for %d starts", len(ids), len(times))
		}
		var charged []int64
		if err == nil {
			charged, err = int64Column(rg, "charged_sec")
		}
		if err == nil && len(charged) != len(times) {
			err = fmt.Errorf("%d charged_sec values for %d starts", len(charged), len(times))
		}
		if err != nil {
			return Partition{}, err
		}
		for i, t := range times {
			acc.add(t)
			acc.addJob(ids[i], t+charged[i])
		}
	}
	return acc.p, nil
}

// timeColumn returns the non-NULL values of timestamp column name of rg
// in Unix seconds, rounded down.
func timeColumn(rg parquet.RowGroup, name string) ([]int64, error) {
	col, ok := rg.Schema().Lookup(name)
	if !ok {
		return nil, fmt.Errorf("no %s column", name)
	}
	perSec := int64(1e6) // the store writes microseconds
	if lt := col.Node.Type().LogicalType(); lt != nil {
		if ts, ok := lt.Value.(*format.TimestampType); ok && ts.Unit.Value != nil {
			perSec = int64(time.Second / ts.Unit.Value.Duration())
		}
	}
	vals, err := int64Column(rg, name)
	for i, v := range vals {
		s := v / perSec
		if v%perSec < 0 {
			s--
		}
		vals[i] = s
	}
	return vals, err
}

// readInt64s fills dst from r, and returns how many values it read.
func readInt64s(r parquet.Int64Reader, dst []int64) (int, error) {
	n := 0
	for n < len(dst) {
		k, err := r.ReadInt64s(dst[n:])
		n += k
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if k == 0 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

// int64Column returns the non-NULL values of INT64 column name of rg.
func int64Column(rg parquet.RowGroup, name string) ([]int64, error) {
	col, ok := rg.Schema().Lookup(name)
	if !ok || col.Node.Type().Kind() != parquet.Int64 {
		return nil, fmt.Errorf("no INT64 %s column", name)
	}
	pages := rg.ColumnChunks()[col.ColumnIndex].Pages()
	defer pages.Close()
	out := make([]int64, 0, rg.NumRows())
	vals := make([]parquet.Value, statsChunk)
	for {
		page, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if ir, ok := page.Values().(parquet.Int64Reader); ok && col.MaxDefinitionLevel == 0 {
			// A required column: its values decoded straight into out.
			n := int(page.NumValues())
			at := len(out)
			out = slices.Grow(out, n)[:at+n]
			got, err := readInt64s(ir, out[at:])
			parquet.Release(page)
			if err == nil && got != n {
				err = fmt.Errorf("%s: %d values in a page of %d", name, got, n)
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		r := page.Values()
		for {
			n, err := r.ReadValues(vals)
			for _, v := range vals[:n] {
				if !v.IsNull() {
					out = append(out, v.Int64())
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				parquet.Release(page)
				return nil, err
			}
		}
		parquet.Release(page)
	}
}

// statsAcc accumulates a file's statistics, row by row.
type statsAcc struct {
	p     Partition
	times int64 // rows with a time: the first sets the bounds
	jobs  int64 // jobs rows: the first sets the ids and MaxEnd
}

func (a *statsAcc) add(t int64) {
	if a.times == 0 {
		a.p.MinTime, a.p.MaxTime = t, t
	}
	a.p.MinTime, a.p.MaxTime = min(a.p.MinTime, t), max(a.p.MaxTime, t)
	a.p.Rows++
	a.times++
}

// addJob adds a job's raw id and charged end (with add of its start).
func (a *statsAcc) addJob(id, end int64) {
	if a.jobs == 0 {
		a.p.MinID, a.p.MaxID, a.p.MaxEnd = id, id, end
	}
	a.p.MinID, a.p.MaxID, a.p.MaxEnd = min(a.p.MinID, id), max(a.p.MaxID, id), max(a.p.MaxEnd, end)
	a.jobs++
}

// setStats sets p's statistics (not its rows) to those accumulated: the
// writer records them so, and Verify recomputes them so from the file.
func (a *statsAcc) setStats(p *Partition) {
	p.MinTime, p.MaxTime, p.MinID, p.MaxID, p.MaxEnd = a.p.MinTime, a.p.MaxTime, a.p.MinID, a.p.MaxID, a.p.MaxEnd
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
