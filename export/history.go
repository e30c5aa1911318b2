package export

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/fairledger/fairledger/schemas"
	"github.com/parquet-go/parquet-go"
)

// RowGroupRows is the number of rows per Parquet row group.
const RowGroupRows = 128 * 1024

const (
	dataFile     = "data.parquet"
	manifestFile = "manifest.json"
	tmpMarker    = ".tmp-"
	monthLayout  = "2006-01"
	runLayout    = "20060102T150405Z"
)

// History is a fairledger history directory. Its methods may be called from
// several goroutines; only one process should write a history at a time
// (the caller holds a lock, e.g. flock on the directory, across a run).
type History struct {
	// Dir is the history's root directory.
	Dir string

	mu sync.Mutex // serialises manifest updates
}

// Partition is one file of the history.
type Partition struct {
	// Table is the table name (schemas.TableJobs, ...).
	Table string `json:"table"`
	// Cluster and Month (YYYY-MM) are the hive partition values.
	Cluster string `json:"cluster"`
	Month   string `json:"month"`
	// Path is the file's slash-separated path relative to the history.
	Path string `json:"path"`
	// Rows is the number of rows in the file.
	Rows int64 `json:"rows"`
	// Bytes is the file size.
	Bytes int64 `json:"bytes"`
	// SHA256 is the hex SHA-256 of the file; set in the manifest, empty
	// from Partitions (which does not read whole files).
	SHA256 string `json:"sha256,omitempty"`
}

// Manifest lists every file of a history, sorted by path. It holds no
// timestamps, so the same history always has the same manifest.
type Manifest struct {
	Partitions []Partition `json:"partitions"`
}

// Open opens (creating it if needed) the history directory dir. It fails
// if the row types and schemas.Tables disagree (a programmer error caught
// before any file is written).
func Open(dir string) (*History, error) {
	if err := checkSchemas(); err != nil {
		return nil, fmt.Errorf("open history: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open history: %w", err)
	}
	return &History{Dir: dir}, nil
}

// validCluster accepts hive-safe cluster names: letters, digits, '-', '_'
// and '.', not starting with '.'.
func validCluster(c string) error {
	if c == "" || c[0] == '.' {
		return fmt.Errorf("cluster name %q: empty or starts with '.'", c)
	}
	for _, r := range c {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("cluster name %q: character %q not allowed in a partition path", c, r)
		}
	}
	return nil
}

// partitionDir is the slash-separated directory of a partition.
func partitionDir(table, cluster, month string) string {
	return path.Join(table, "cluster="+cluster, "month="+month)
}

// WritePartition replaces the (table, cluster, month) partition with rows,
// which must be a []JobRow or *JobTable, []UsageRow, []FairshareRow or
// []AssociationRow matching table. month is truncated to its UTC month.
// Rows are written in the table's sort order (schemas.Table.SortBy) without
// modifying the caller's slice; a *JobTable is sorted in place
// (JobTable.Sort) instead. The write is atomic and idempotent: equal
// rows give a byte-identical file, and readers see either the previous file
// or the new one. The manifest is rewritten afterwards.
func (h *History) WritePartition(table, cluster string, month time.Time, rows any) error {
	if err := validCluster(cluster); err != nil {
		return fmt.Errorf("write partition %s: %w", table, err)
	}
	def, err := schemas.TableByName(table)
	if err != nil {
		return fmt.Errorf("write partition: %w", err)
	}
	var n int
	var encode func(io.Writer) error
	switch r := rows.(type) {
	case []JobRow:
		n, encode = len(r), jobsEncoder(jobTableOf(r), def.SortBy)
	case *JobTable:
		r.Sort()
		n, encode = len(r.Recs), jobsEncoder(r, def.SortBy)
	case []UsageRow:
		n, encode = len(r), usageEncoder(r, def.SortBy)
	case []FairshareRow:
		n, encode = len(r), fairshareEncoder(r, def.SortBy)
	case []AssociationRow:
		n, encode = len(r), associationsEncoder(r, def.SortBy)
	default:
		return fmt.Errorf("write partition %s: rows of type %T", table, rows)
	}
	if want := tableOf(rows); want != table {
		return fmt.Errorf("write partition %s: %T rows belong to table %s", table, rows, want)
	}
	m := month.UTC().Format(monthLayout)
	rel := path.Join(partitionDir(table, cluster, m), dataFile)
	p := Partition{Table: table, Cluster: cluster, Month: m, Path: rel, Rows: int64(n)}
	return h.writeFile(p, encode)
}

// tableOf names the table of a rows slice.
func tableOf(rows any) string {
	switch rows.(type) {
	case []JobRow, *JobTable:
		return schemas.TableJobs
	case []UsageRow:
		return schemas.TableUsage
	case []FairshareRow:
		return schemas.TableFairshare
	case []AssociationRow:
		return schemas.TableAssociations
	case []RunRow:
		return schemas.TableRuns
	}
	return ""
}

// AppendRun writes run as a new file of the runs table, in the month of
// run.Started (UTC): run-<Started>-<8 hex>.parquet, where the hex digits
// are the start of SHA-256(RunID), so appending the same run again rewrites
// the same file. It returns the file's partition entry.
func (h *History) AppendRun(cluster string, run RunRow) (Partition, error) {
	if err := validCluster(cluster); err != nil {
		return Partition{}, fmt.Errorf("append run: %w", err)
	}
	if run.RunID == "" {
		return Partition{}, errors.New("append run: empty run id")
	}
	started := run.Started.UTC()
	m := started.Format(monthLayout)
	id := sha256.Sum256([]byte(run.RunID))
	name := "run-" + started.Format(runLayout) + "-" + hex.EncodeToString(id[:4]) + ".parquet"
	p := Partition{Table: schemas.TableRuns, Cluster: cluster, Month: m,
		Path: path.Join(partitionDir(schemas.TableRuns, cluster, m), name), Rows: 1}
	def, err := schemas.TableByName(schemas.TableRuns)
	if err != nil {
		return Partition{}, err
	}
	rows := []RunRow{run}
	if err := h.writeFile(p, encoder(rows, nil, def.SortBy)); err != nil {
		return Partition{}, err
	}
	return h.manifestEntry(p.Path)
}

// writeFile writes p's file atomically with encode and records it in the
// manifest.
func (h *History) writeFile(p Partition, encode func(io.Writer) error) error {
	dir, name := path.Split(p.Path)
	size, sum, err := writeAtomic(h.Dir, filepath.FromSlash(dir), name, encode)
	if err != nil {
		return fmt.Errorf("write partition %s: %w", p.Path, err)
	}
	p.Bytes, p.SHA256 = size, sum
	if err := h.updateManifest(p); err != nil {
		return fmt.Errorf("write partition %s: %w", p.Path, err)
	}
	return nil
}

// writerOptions are the Parquet settings of every history file: zstd at
// its fastest level (zstdCodec; the jobs table's schema names a codec per
// column instead, jobsCodec) and sorting metadata. CreatedBy is fixed so
// that the bytes do not depend on the binary's build info.
func writerOptions(sortBy []string) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		parquet.Compression(historyZstd),
		parquet.MaxRowsPerRowGroup(RowGroupRows),
		parquet.CreatedBy("fairledger", "1", "parquet-go"),
	}
	if len(sortBy) > 0 {
		cols := make([]parquet.SortingColumn, len(sortBy))
		for i, c := range sortBy {
			cols[i] = parquet.Ascending(c)
		}
		opts = append(opts, parquet.SortingWriterConfig(parquet.SortingColumns(cols...)))
	}
	return opts
}

// tableWriterOptions are writerOptions plus, for the jobs table, its
// schema (jobsSchema).
func tableWriterOptions[T any](sortBy []string) []parquet.WriterOption {
	opts := writerOptions(sortBy)
	var zero T
	if _, ok := any(zero).(JobRow); ok {
		opts = append(opts, jobsSchema(), parquet.DataPageStatistics(false))
	}
	return opts
}

// encoder returns a function writing rows as Parquet in cmp order (as
// given when cmp is nil).
func encoder[T any](rows []T, cmp func(a, b *T) int, sortBy []string) func(io.Writer) error {
	return func(w io.Writer) error {
		pw := parquet.NewGenericWriter[T](w, tableWriterOptions[T](sortBy)...)
		var order []int32
		if cmp != nil {
			order = sortedOrder(rows, cmp)
		}
		if order == nil {
			if _, err := pw.Write(rows); err != nil {
				return err
			}
		} else {
			const chunk = 4096
			buf := make([]T, 0, chunk)
			for _, i := range order {
				buf = append(buf, rows[i])
				if len(buf) == chunk {
					if _, err := pw.Write(buf); err != nil {
						return err
					}
					buf = buf[:0]
				}
			}
			if _, err := pw.Write(buf); err != nil {
				return err
			}
		}
		return pw.Close()
	}
}

// writeBatch is the number of rows GenericWriter.Write hands its column
// buffers at a time (parquet-go's maxRowsPerWrite); a page is cut when a
// column's buffer has grown past the page size after a batch. jobsEncoder
// writes in the same batches so that its pages, and so its bytes, are the
// ones GenericWriter would write.
const writeBatch = 64

// jobTableOf returns rows as a JobTable in the table's order
// (JobTable.Sort, which compares the stored microseconds, so a start's
// nanoseconds and monotonic clock reading play no part).
func jobTableOf(rows []JobRow) *JobTable {
	t := NewJobTable(NewJobDict(), len(rows))
	for i := range rows {
		t.AppendRow(&rows[i])
	}
	t.Sort()
	return t
}

// jobsEncoder returns a function writing the records of t, in their order,
// as Parquet. For rows in compareJobs order it writes exactly the bytes
// encoder(rows, compareJobs, sortBy) writes (TestJobsEncoderBytes checks
// it) in a fraction of the time:
//
//   - the records have no pointers and their TRES sets are interned, so
//     the values are built by plain loops over a column at a time instead
//     of parquet-go's reflection (which also sorted every map), from
//     values built once per name and per TRES set (jobValues);
//   - the strings of the dictionary-encoded columns are interned
//     (internedStrings), and its writer's schema (jobsWriterSchema) gives
//     those columns dictionaries that find a value's index from its
//     address and a page's bounds from the strings' ranks (parquet-go
//     hashed every value and compared the strings of every page), and
//     the dictionary-encoded doubles a cache of recent values' indexes;
//   - it encodes up to GOMAXPROCS row groups at once (ConcurrentRowGroupWriter)
//     and commits them in order. A row group's bytes depend only on its
//     rows, so the file is the same as when written one group at a time.
func jobsEncoder(t *JobTable, sortBy []string) func(io.Writer) error {
	return func(w io.Writer) error {
		vals := newJobValues(t)
		// The writer schema replaces tableWriterOptions' jobsSchema.
		opts := append(tableWriterOptions[JobRow](sortBy), jobsWriterSchema(vals.strs))
		pw := parquet.NewGenericWriter[JobRow](w, opts...)
		n := len(t.Recs)
		groups := (n + RowGroupRows - 1) / RowGroupRows
		workers := max(1, min(runtime.GOMAXPROCS(0), groups))
		rgs := make([]*parquet.ConcurrentRowGroupWriter, workers)
		encs := make([]jobColumns, workers)
		errs := make([]error, workers)
		for first := 0; first < groups; first += workers {
			k := min(workers, groups-first)
			var wg sync.WaitGroup
			for g := range k {
				if rgs[g] == nil {
					rgs[g] = pw.BeginRowGroup()
				}
				lo := (first + g) * RowGroupRows
				recs := t.Recs[lo:min(lo+RowGroupRows, n)]
				encs[g].t, encs[g].v = t, vals
				wg.Go(func() { errs[g] = encs[g].writeGroup(rgs[g].ColumnWriters(), recs) })
			}
			wg.Wait()
			for g := range k {
				if errs[g] != nil {
					return errs[g]
				}
				if _, err := rgs[g].Commit(); err != nil { // empties rgs[g] for reuse
					return err
				}
			}
		}
		return pw.Close()
	}
}

// identity returns the positions 0..n-1.
func identity(n int) []int32 {
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	return order
}

// jobValues are the parquet.Values that the records of a JobTable share,
// built once per file: the BYTE_ARRAY value of every name, and the key and
// value columns of every TRES set the records use. The strings are
// interned (internedStrings) for the writer's dictionaries. Read-only once
// built, so the row groups' goroutines share them.
type jobValues struct {
	strs  *internedStrings // the names, then the TRES keys
	names []parquet.Value
	// tresAt[s] is where set s's values start in tresKeys and tresVals:
	// one per entry, or one null for the empty set.
	tresAt             []int32
	tresKeys, tresVals []parquet.Value
}

// newJobValues builds the values of t's names and of the TRES sets its
// records use.
func newJobValues(t *JobTable) *jobValues {
	d := t.Dict
	v := &jobValues{tresAt: make([]int32, len(d.sets))}
	// The sets the records use, and their keys.
	var sets []uint32
	used := make([]bool, len(d.sets))
	strs := slices.Clip(d.names)
	keyIDs := map[string]int32{}
	for k := range t.Recs {
		s := t.Recs[k].TRES
		if used[s] {
			continue
		}
		used[s] = true
		sets = append(sets, s)
		for _, e := range d.entries[d.sets[s][0]:d.sets[s][1]] {
			if _, ok := keyIDs[e.key]; !ok {
				keyIDs[e.key] = int32(len(strs))
				strs = append(strs, e.key)
			}
		}
	}
	v.strs = internStrings(strs)
	v.names = v.strs.vals[:len(d.names)]
	for _, s := range sets {
		v.tresAt[s] = int32(len(v.tresKeys))
		span := d.sets[s]
		if span[0] == span[1] {
			v.tresKeys = append(v.tresKeys, parquet.Value{})
			v.tresVals = append(v.tresVals, parquet.Value{})
		}
		// One value per entry: repetition level 0 for a row's first, 1 for
		// the next; definition level 1.
		for j := span[0]; j < span[1]; j++ {
			key, val := v.strs.vals[keyIDs[d.entries[j].key]], parquet.DoubleValue(d.entries[j].val)
			if j > span[0] {
				key.SetRepetitionLevel(1)
				val.SetRepetitionLevel(1)
			}
			key.SetDefinitionLevel(1)
			val.SetDefinitionLevel(1)
			v.tresKeys = append(v.tresKeys, key)
			v.tresVals = append(v.tresVals, val)
		}
	}
	return v
}

// jobColumns builds the values of one batch of jobs records, column by
// column in schema order (the leaf columns of parquet.SchemaOf(JobRow{})),
// and writes them to the column writers. Its buffer is reused between
// batches.
type jobColumns struct {
	t    *JobTable
	v    *jobValues
	vals []parquet.Value
}

// Leaf column indexes of the jobs table's TRES map, and the number of leaf
// columns.
const (
	colTRESKey   = 25
	colTRESValue = 26
	jobLeaves    = 32
)

// writeGroup writes recs (one row group) in batches of writeBatch rows.
func (e *jobColumns) writeGroup(cols []*parquet.ColumnWriter, recs []JobRec) error {
	for lo := 0; lo < len(recs); lo += writeBatch {
		if err := e.write(cols, recs[lo:min(lo+writeBatch, len(recs))]); err != nil {
			return err
		}
	}
	return nil
}

func (e *jobColumns) write(cols []*parquet.ColumnWriter, recs []JobRec) error {
	if len(cols) != jobLeaves {
		return fmt.Errorf("jobs schema has %d leaf columns, the encoder writes %d", len(cols), jobLeaves)
	}
	for c := range jobLeaves {
		var v []parquet.Value
		switch c {
		case colTRESKey:
			v = e.appendTRES(e.vals[:0], recs, e.v.tresKeys)
		case colTRESValue:
			v = e.appendTRES(e.vals[:0], recs, e.v.tresVals)
		default:
			v = slices.Grow(e.vals[:0], len(recs))[:len(recs)]
			jobColumn(v, e.t, e.v.names, recs, c)
		}
		e.vals = v
		if _, err := cols[c].WriteRowValues(v); err != nil {
			return fmt.Errorf("column %d: %w", c, err)
		}
	}
	return nil
}

// jobColumn sets v[k] to the value of leaf column c (other than the TRES
// map's) of recs[k], as parquet-go's GenericWriter[JobRow] writes it:
// timestamps in microseconds, a null at definition level 0, a set
// optional value at definition level 1; required columns need no levels.
// names are jobValues.names. (One loop per column: building values
// through a function per column took most of the encoder's own time.)
func jobColumn(v []parquet.Value, t *JobTable, names []parquet.Value, recs []JobRec, c int) {
	opt := func(k int, r *JobRec, x int64, bit uint16) {
		v[k] = parquet.Value{}
		if r.Valid&bit != 0 {
			v[k] = parquet.Int64Value(x)
			v[k].SetDefinitionLevel(1)
		}
	}
	switch c {
	case 0:
		for k := range recs {
			v[k] = parquet.ByteArrayValue(t.JobID(&recs[k]))
		}
	case 1:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].JobIDRaw)
		}
	case 2:
		for k := range recs {
			opt(k, &recs[k], recs[k].ArrayJobID, ValidArrayJobID)
		}
	case 3:
		for k := range recs {
			opt(k, &recs[k], recs[k].ArrayTaskID, ValidArrayTaskID)
		}
	case 4:
		for k := range recs {
			opt(k, &recs[k], recs[k].HetJobID, ValidHetJobID)
		}
	case 5:
		for k := range recs {
			opt(k, &recs[k], recs[k].HetJobOffset, ValidHetJobOffset)
		}
	case 6:
		for k := range recs {
			v[k] = names[recs[k].User]
		}
	case 7:
		for k := range recs {
			v[k] = names[recs[k].Account]
		}
	case 8:
		for k := range recs {
			v[k] = names[recs[k].Partition]
		}
	case 9:
		for k := range recs {
			v[k] = names[recs[k].QOS]
		}
	case 10:
		for k := range recs {
			v[k] = names[recs[k].State]
		}
	case 11:
		for k := range recs {
			v[k] = parquet.Value{}
			if id := recs[k].CancelledBy; id > 0 {
				v[k] = names[id-1]
				v[k].SetDefinitionLevel(1)
			}
		}
	case 12:
		for k := range recs {
			opt(k, &recs[k], recs[k].Submit, ValidSubmit)
		}
	case 13:
		for k := range recs {
			opt(k, &recs[k], recs[k].Eligible, ValidEligible)
		}
	case 14:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].Start)
		}
	case 15:
		for k := range recs {
			opt(k, &recs[k], recs[k].End, ValidEnd)
		}
	case 16:
		for k := range recs {
			opt(k, &recs[k], recs[k].ElapsedSec, ValidElapsedSec)
		}
	case 17:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].ChargedSec)
		}
	case 18:
		for k := range recs {
			opt(k, &recs[k], recs[k].SuspendedSec, ValidSuspendedSec)
		}
	case 19:
		for k := range recs {
			opt(k, &recs[k], recs[k].TimelimitMin, ValidTimelimitMin)
		}
	case 20:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].NNodes)
		}
	case 21:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].AllocCPUs)
		}
	case 22:
		for k := range recs {
			v[k] = parquet.DoubleValue(recs[k].MemMB)
		}
	case 23:
		for k := range recs {
			v[k] = parquet.DoubleValue(recs[k].NodeCount)
		}
	case 24:
		for k := range recs {
			v[k] = parquet.DoubleValue(recs[k].GPU)
		}
	case 27:
		for k := range recs {
			v[k] = parquet.DoubleValue(recs[k].Billing)
		}
	case 28:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].BillingSlurm)
		}
	case 29:
		for k := range recs {
			v[k] = parquet.DoubleValue(recs[k].UsageFactor)
		}
	case 30:
		for k := range recs {
			v[k] = names[recs[k].SourceFile]
		}
	case 31:
		for k := range recs {
			v[k] = parquet.Int64Value(recs[k].SourceLine)
		}
	default:
		panic(fmt.Sprintf("jobs column %d", c))
	}
}

// appendTRES appends the TRES map's key (or value) column of recs: the
// values of each record's set, from col (jobValues.tresKeys or tresVals).
func (e *jobColumns) appendTRES(v []parquet.Value, recs []JobRec, col []parquet.Value) []parquet.Value {
	d, at := e.t.Dict, e.v.tresAt
	for k := range recs {
		s := recs[k].TRES
		i := at[s]
		v = append(v, col[i:i+max(1, d.sets[s][1]-d.sets[s][0])]...)
	}
	return v
}

// stringValue is a BYTE_ARRAY value viewing s's bytes without copying them;
// the column buffers copy what they keep, and never write to the value.
func stringValue(s string) parquet.Value {
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// writeAtomic writes root/dir/name: a temp file .name.tmp-* in the same
// directory is written, fsynced, renamed over name, and the directory (and
// its parents up to root, which may be new) fsynced. It returns the size
// and hex SHA-256 of what was written. On error the temp file is removed
// and any previous file is left as it was.
func writeAtomic(root, dir, name string, encode func(io.Writer) error) (size int64, sum string, err error) {
	full := filepath.Join(root, dir)
	if err := os.MkdirAll(full, 0o755); err != nil {
		return 0, "", err
	}
	f, err := os.CreateTemp(full, "."+name+tmpMarker+"*")
	if err != nil {
		return 0, "", err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(0o644); err != nil {
		return 0, "", err
	}
	h := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(f, h)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	if err = encode(bw); err != nil {
		return 0, "", err
	}
	if err = bw.Flush(); err != nil {
		return 0, "", err
	}
	if err = f.Sync(); err != nil {
		return 0, "", err
	}
	if err = f.Close(); err != nil {
		return 0, "", err
	}
	if err = os.Rename(tmp, filepath.Join(full, name)); err != nil {
		return 0, "", err
	}
	// Make the rename, and any directory MkdirAll created, durable.
	for d := full; ; d = filepath.Dir(d) {
		if err := syncDir(d); err != nil {
			return 0, "", err
		}
		if d == filepath.Clean(root) || d == filepath.Dir(d) {
			break
		}
	}
	return cw.n, hex.EncodeToString(h.Sum(nil)), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadPartition reads the (table, cluster, month) partition into dst, a
// *[]JobRow, *[]UsageRow, *[]FairshareRow or *[]AssociationRow matching
// table, in file order. A missing partition is an error wrapping
// fs.ErrNotExist.
func (h *History) ReadPartition(table, cluster string, month time.Time, dst any) error {
	if err := validCluster(cluster); err != nil {
		return fmt.Errorf("read partition %s: %w", table, err)
	}
	rel := path.Join(partitionDir(table, cluster, month.UTC().Format(monthLayout)), dataFile)
	file := filepath.Join(h.Dir, filepath.FromSlash(rel))
	var err error
	switch d := dst.(type) {
	case *[]JobRow:
		err = readInto(file, table, d)
	case *[]UsageRow:
		err = readInto(file, table, d)
	case *[]FairshareRow:
		err = readInto(file, table, d)
	case *[]AssociationRow:
		err = readInto(file, table, d)
	default:
		err = fmt.Errorf("destination of type %T", dst)
	}
	if err != nil {
		return fmt.Errorf("read partition %s: %w", rel, err)
	}
	return nil
}

func readInto[T any](file, table string, dst *[]T) error {
	if want := tableOf(*dst); want != table {
		return fmt.Errorf("%T rows belong to table %s", *dst, want)
	}
	rows, err := parquet.ReadFile[T](file)
	if err != nil {
		return err
	}
	*dst = rows
	return nil
}

// ReadRuns reads every run file of a (cluster, month) partition of the runs
// table, in file name (= start time) order. A missing partition reads as
// no runs.
func (h *History) ReadRuns(cluster string, month time.Time) ([]RunRow, error) {
	if err := validCluster(cluster); err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	dir := filepath.Join(h.Dir, filepath.FromSlash(partitionDir(schemas.TableRuns, cluster, month.UTC().Format(monthLayout))))
	entries, err := os.ReadDir(dir) // sorted by name
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	var out []RunRow
	for _, e := range entries {
		if !isRunFile(e.Name()) {
			continue
		}
		rows, err := parquet.ReadFile[RunRow](filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read runs %s: %w", e.Name(), err)
		}
		out = append(out, rows...)
	}
	return out, nil
}

func isRunFile(name string) bool {
	return strings.HasPrefix(name, "run-") && strings.HasSuffix(name, ".parquet")
}

// isTemp reports a temp file left by writeAtomic.
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tmpMarker)
}

// CleanTemps removes the temp files a crashed writer left anywhere in the
// history and returns how many it removed. Call it when no writer runs
// (e.g. at the start of a run, under the run's lock): it would also remove
// the temp file of a write in progress, making that write fail.
func (h *History) CleanTemps() (int, error) {
	n := 0
	err := filepath.WalkDir(h.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && isTemp(d.Name()) {
			if err := os.Remove(p); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("clean temp files: %w", err)
	}
	return n, nil
}

// Partitions lists the files of table found on disk (temp files ignored),
// sorted by path, with their row counts read from the Parquet footers.
// SHA256 is left empty: see ReadManifest.
func (h *History) Partitions(table string) ([]Partition, error) {
	if _, err := schemas.TableByName(table); err != nil {
		return nil, fmt.Errorf("list partitions: %w", err)
	}
	var out []Partition
	clusters, err := os.ReadDir(filepath.Join(h.Dir, table))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list partitions: %w", err)
	}
	for _, c := range clusters {
		cluster, ok := strings.CutPrefix(c.Name(), "cluster=")
		if !ok || !c.IsDir() {
			continue
		}
		months, err := os.ReadDir(filepath.Join(h.Dir, table, c.Name()))
		if err != nil {
			return nil, fmt.Errorf("list partitions: %w", err)
		}
		for _, m := range months {
			month, ok := strings.CutPrefix(m.Name(), "month=")
			if !ok || !m.IsDir() {
				continue
			}
			files, err := os.ReadDir(filepath.Join(h.Dir, table, c.Name(), m.Name()))
			if err != nil {
				return nil, fmt.Errorf("list partitions: %w", err)
			}
			for _, f := range files {
				name := f.Name()
				if table == schemas.TableRuns && !isRunFile(name) || table != schemas.TableRuns && name != dataFile {
					continue
				}
				p := Partition{Table: table, Cluster: cluster, Month: month,
					Path: path.Join(table, c.Name(), m.Name(), name)}
				if err := h.stat(&p); err != nil {
					return nil, fmt.Errorf("list partitions: %w", err)
				}
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b Partition) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// stat fills p.Rows and p.Bytes from the file's footer.
func (h *History) stat(p *Partition) error {
	f, err := os.Open(filepath.Join(h.Dir, filepath.FromSlash(p.Path)))
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, fi.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return fmt.Errorf("%s: %w", p.Path, err)
	}
	p.Rows, p.Bytes = pf.NumRows(), fi.Size()
	return nil
}

// ReadManifest reads <history>/manifest.json; a history without one has an
// empty manifest.
func (h *History) ReadManifest() (Manifest, error) {
	b, err := os.ReadFile(filepath.Join(h.Dir, manifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, nil
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("read manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("read manifest %s: %w", manifestFile, err)
	}
	return m, nil
}

// RebuildManifest rewrites the manifest from the files on disk, hashing
// each one: the repair after a crash between a file's rename and the
// manifest's, or after files were copied in by hand.
func (h *History) RebuildManifest() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, err := h.scan()
	if err != nil {
		return fmt.Errorf("rebuild manifest: %w", err)
	}
	return h.writeManifest(m)
}

// scan builds a manifest from the files on disk.
func (h *History) scan() (Manifest, error) {
	var all []Partition
	for _, t := range schemas.Tables() {
		ps, err := h.Partitions(t.Name)
		if err != nil {
			return Manifest{}, err
		}
		for i := range ps {
			sum, err := hashFile(filepath.Join(h.Dir, filepath.FromSlash(ps[i].Path)))
			if err != nil {
				return Manifest{}, err
			}
			ps[i].SHA256 = sum
		}
		all = append(all, ps...)
	}
	return Manifest{Partitions: all}, nil
}

func hashFile(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// updateManifest replaces (or adds) p's entry and rewrites the manifest
// atomically. A history without a manifest gets one built from its files.
func (h *History) updateManifest(p Partition) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var m Manifest
	_, err := os.Stat(filepath.Join(h.Dir, manifestFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m, err = h.scan()
	case err == nil:
		m, err = h.ReadManifest()
	}
	if err != nil {
		return err
	}
	i, found := slices.BinarySearchFunc(m.Partitions, p.Path, func(e Partition, path string) int {
		return strings.Compare(e.Path, path)
	})
	if found {
		m.Partitions[i] = p
	} else {
		m.Partitions = slices.Insert(m.Partitions, i, p)
	}
	return h.writeManifest(m)
}

func (h *History) writeManifest(m Manifest) error {
	slices.SortFunc(m.Partitions, func(a, b Partition) int { return strings.Compare(a.Path, b.Path) })
	if m.Partitions == nil {
		m.Partitions = []Partition{}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	b = append(b, '\n')
	if _, _, err := writeAtomic(h.Dir, ".", manifestFile, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// manifestEntry returns the manifest's entry for path.
func (h *History) manifestEntry(p string) (Partition, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, err := h.ReadManifest()
	if err != nil {
		return Partition{}, err
	}
	for _, e := range m.Partitions {
		if e.Path == p {
			return e, nil
		}
	}
	return Partition{}, fmt.Errorf("manifest has no entry for %s", p)
}
