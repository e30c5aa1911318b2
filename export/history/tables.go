package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export/encode"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// The history's tables, one descriptor each. Everything the store does
// that depends on a table is said here once: the Go rows it writes and
// reads, their order, their encoder, the statistics a segment's manifest
// entry records, how files of an older release are upgraded on read, which
// rows a repair cuts. Write, Read, ReadPartition, replace, merge (and so
// Compact), Verify, Repair and Migrate go through the list and never
// switch on a table.
//
// A new table is its row type (export/record), its columns
// (schemas/tables.go) and one entry in tables below; its view
// (schemas/views.sql) and doc (schemas/<table>.md) are generated from the
// columns (go test ./schemas -update). TestTableList checks that the list
// and schemas.Tables name the same tables, and the schemas tests that the
// views and docs do.

// tables is the list, in schemas.Tables' order. Its entries are never
// modified.
var tables = []tableOps{
	jobsTable(),
	usageTable(),
	snapshotsTable(schemas.TableFairshare, record.CompareFairshare, encode.Fairshare,
		func(r *record.FairshareRow) time.Time { return r.Snapshot }),
	snapshotsTable(schemas.TableAssociations, record.CompareAssociations, encode.Associations,
		func(r *record.AssociationRow) time.Time { return r.Snapshot }),
	runsTable(),
	priorityTable(),
}

// jobsTable: the jobs are written, merged and migrated as a record.JobTable
// (pointer-free records, names and TRES sets interned, encoded a column at
// a time); Write also takes []record.JobRow, which is what reading gives.
func jobsTable() *table[record.JobRow, *record.JobTable] {
	return &table[record.JobRow, *record.JobTable]{
		name:    schemas.TableJobs,
		compare: record.CompareJobs,
		batch:   record.JobTableOf,
		rows:    func(t *record.JobTable) int { return len(t.Recs) },
		stats:   jobStats,
		encode:  encode.Jobs,
		decode: func(b []byte) (*record.JobTable, int, error) {
			t, err := decodeJobTable(b)
			if err != nil {
				return nil, 0, err
			}
			return t, len(t.Recs), nil
		},
		gather:    gatherJobs,
		fileStats: jobFileStats,
		// A job that starts, or ends, after the cut: the run resuming there
		// reads it again from sacct.
		cut: func(at int64) (func(Partition) bool, func(*record.JobRow) bool) {
			return func(p Partition) bool { return p.MaxTime > at || p.MaxEnd > at },
				func(r *record.JobRow) bool { return r.Start.Unix() > at || r.End != nil && r.End.Unix() > at }
		},
	}
}

// usageTable: rows per UTC day; a repair cuts the whole day of the cut (the
// run resuming there recomputes it).
func usageTable() *table[record.UsageRow, []record.UsageRow] {
	t := rowTable(schemas.TableUsage, record.CompareUsage, encode.Usage,
		func(r *record.UsageRow) time.Time { return r.PeriodStart }, "period_start")
	t.cut = func(at int64) (func(Partition) bool, func(*record.UsageRow) bool) {
		day := at - at%86400
		return func(p Partition) bool { return p.MaxTime >= day },
			func(r *record.UsageRow) bool { return r.PeriodStart.Unix() >= day }
	}
	return t
}

// snapshotsTable is a table of fair-share snapshots' rows (fairshare,
// associations), each row timed by its snapshot; a repair cuts the
// snapshots after the cut.
func snapshotsTable[T any](name string, compare func(a, b *T) int, enc func([]T, []string) func(io.Writer) error, at func(*T) time.Time) *table[T, []T] {
	t := rowTable(name, compare, enc, at, "snapshot")
	t.snapshots = true
	t.cut = cutAfterTime(at)
	return t
}

// runsTable: a log of the runs made, which a repair keeps whole.
func runsTable() *table[record.RunRow, []record.RunRow] {
	return rowTable(schemas.TableRuns, record.CompareRuns, nil,
		func(r *record.RunRow) time.Time { return r.Started }, "started")
}

// priorityTable: its rows belong to snapshots (pending) or to the
// snapshot before them (submit, start); a file written before the table
// had submit and start rows has no event_time (at) column, its times are
// the snapshots' (upgradePriority).
func priorityTable() *table[record.PriorityRow, []record.PriorityRow] {
	at := func(r *record.PriorityRow) time.Time { return r.At }
	t := rowTable(schemas.TablePriority, record.ComparePriority, encode.Priority, at, "event_time", "snapshot")
	t.snapshots = true
	t.upgrade = upgradePriority
	t.cut = cutAfterTime(at)
	return t
}

// upgradePriority gives the rows of a priority file written before the
// table had submit and start rows (no at or event column, every row a
// snapshot's) their event and time.
func upgradePriority(rows []record.PriorityRow) {
	for i := range rows {
		if r := &rows[i]; r.Event == "" && r.Snapshot != nil {
			r.Event, r.At = record.EventPending, *r.Snapshot
		}
	}
}

// cutAfterTime cuts the rows whose time (at) is after the cut.
func cutAfterTime[T any](at func(*T) time.Time) func(int64) (func(Partition) bool, func(*T) bool) {
	return func(cut int64) (func(Partition) bool, func(*T) bool) {
		return func(p Partition) bool { return p.MaxTime > cut },
			func(r *T) bool { return at(r).Unix() > cut }
	}
}

// table describes one history table whose rows are T (the Go type its
// files decode into, record.JobRow ... record.PriorityRow) and are written
// as a batch B: []T, or for the jobs a *record.JobTable.
type table[T, B any] struct {
	name string
	// compare is the rows' order in a file (schemas.Table.SortBy): a
	// partition's segments read together are merged in it.
	compare func(a, b *T) int
	// batch makes read rows a batch; rows counts a batch's rows.
	batch func([]T) B
	rows  func(B) int
	// stats sets a new file's statistics (MinTime ... MaxEnd) from its rows.
	stats func(*Partition, B)
	// encode returns the function writing a batch as one file (encode.Jobs ...).
	encode func(B, []string) func(io.Writer) error
	// decode decodes a whole file's bytes into a batch (Migrate).
	decode func([]byte) (B, int, error)
	// gather, when set, reads segments of one partition into one batch
	// (Txn.merge); else each is read as Read reads it, into one []T.
	gather func(*Txn, []Partition) (B, error)
	// fileStats computes a file's statistics from its columns (Verify).
	fileStats func(*parquet.File) (Partition, error)
	// upgrade, when set, gives rows decoded from a file of an older
	// release the values of the columns that release did not write.
	upgrade func([]T)
	// cut, when set, says for a repair's cut at a time (Unix seconds)
	// which files may hold rows after it and which rows those are; a
	// table without one is kept whole.
	cut func(at int64) (mayHold func(Partition) bool, drop func(*T) bool)
	// snapshots: the rows' time is a fair-share snapshot's (a run
	// takes its snapshots after its start, not at it).
	snapshots bool
}

// rowTable is a table written as []T: its statistics are the range of
// each row's time (at), read back from the first of timeColumns a file
// has (the others are older releases' names), and its encoder enc (nil:
// encode.Sorted in compare order).
func rowTable[T any](name string, compare func(a, b *T) int, enc func([]T, []string) func(io.Writer) error, at func(*T) time.Time, timeColumns ...string) *table[T, []T] {
	if enc == nil {
		enc = func(rows []T, sortBy []string) func(io.Writer) error { return encode.Sorted(rows, compare, sortBy) }
	}
	return &table[T, []T]{
		name:      name,
		compare:   compare,
		batch:     func(rows []T) []T { return rows },
		rows:      func(rows []T) int { return len(rows) },
		stats:     func(p *Partition, rows []T) { timeStats(p, rows, at) },
		encode:    enc,
		decode:    decodeAll[T],
		fileStats: func(pf *parquet.File) (Partition, error) { return timeFileStats(pf, timeColumns) },
	}
}

// tableOps is a table's descriptor as the store holds it in the list, its
// row types hidden behind any: the batches and destinations it takes are
// checked against them.
type tableOps interface {
	// tableName is the table's name (schemas.Table.Name).
	tableName() string
	// owns reports whether rows, as Write takes them, are the table's.
	owns(rows any) bool
	// ownsDst reports whether dst, as Read takes it, is the table's.
	ownsDst(dst any) bool
	// encoder returns the function writing rows (owned) as one file of
	// def, and sets p's Rows and statistics.
	encoder(def schemas.Table, rows any, p *Partition) func(io.Writer) error
	// readSorted reads files into dst (owned), the union in the table's
	// order.
	readSorted(full func(Partition) string, files []Partition, dst any) error
	// decodeFile decodes file p's bytes b into dst (owned) and returns the
	// number of rows.
	decodeFile(b []byte, dst any) (int, error)
	// decodeBatch decodes a file's bytes into a batch of rows, as Write
	// takes them, and returns the number of rows.
	decodeBatch(b []byte) (any, int, error)
	// gatherBatch reads segments into one batch, as Write takes them.
	gatherBatch(t *Txn, segs []Partition) (any, error)
	// contentStats computes a file's statistics from its columns.
	contentStats(pf *parquet.File) (Partition, error)
	// cutFiles cuts cluster's files of the table in t's base after at
	// (Unix seconds), adding the rows removed to removed.
	cutFiles(t *Txn, cluster string, at int64, removed map[string]int64) error
	// snapshotRows reports whether the rows' time is a fair-share
	// snapshot's.
	snapshotRows() bool
	// checkSchema compares T's Parquet schema with def.
	checkSchema(def schemas.Table) error
}

func (d *table[T, B]) tableName() string { return d.name }

func (d *table[T, B]) owns(rows any) bool {
	switch rows.(type) {
	case []T, B:
		return true
	}
	return false
}

func (d *table[T, B]) ownsDst(dst any) bool {
	_, ok := dst.(*[]T)
	return ok
}

func (d *table[T, B]) encoder(def schemas.Table, rows any, p *Partition) func(io.Writer) error {
	var b B
	if r, ok := rows.([]T); ok {
		b = d.batch(r)
	} else {
		b = rows.(B)
	}
	p.Rows = int64(d.rows(b))
	d.stats(p, b)
	return d.encode(b, def.SortBy)
}

func (d *table[T, B]) readSorted(full func(Partition) string, files []Partition, dst any) error {
	return readSorted(full, files, dst.(*[]T), d.compare)
}

func (d *table[T, B]) decodeFile(b []byte, dst any) (int, error) {
	rows := dst.(*[]T)
	n, err := decodeRows(b, rows)
	if d.upgrade != nil {
		d.upgrade(*rows)
	}
	return n, err
}

func (d *table[T, B]) decodeBatch(b []byte) (any, int, error) {
	return d.decode(b)
}

func (d *table[T, B]) gatherBatch(t *Txn, segs []Partition) (any, error) {
	if d.gather != nil {
		return d.gather(t, segs)
	}
	var rows []T
	for _, p := range segs {
		var part []T
		if err := t.Read(p, &part); err != nil {
			return nil, err
		}
		rows = append(rows, part...)
	}
	return rows, nil
}

func (d *table[T, B]) contentStats(pf *parquet.File) (Partition, error) { return d.fileStats(pf) }

func (d *table[T, B]) cutFiles(t *Txn, cluster string, at int64, removed map[string]int64) error {
	if d.cut == nil {
		return nil
	}
	mayHold, drop := d.cut(at)
	for _, p := range t.base.Files(d.name, cluster) {
		if !mayHold(p) || t.dropped(p) {
			continue
		}
		n, err := cutRows(t, p, drop)
		if err != nil {
			return err
		}
		removed[d.name] += n
	}
	return nil
}

func (d *table[T, B]) snapshotRows() bool { return d.snapshots }

func (d *table[T, B]) checkSchema(def schemas.Table) error {
	var zero T
	return encode.CheckSchema(def, parquet.SchemaOf(zero))
}

// decodeAll decodes a file's bytes into a new []T (decodeRows), as
// decode of a table written as []T.
func decodeAll[T any](b []byte) ([]T, int, error) {
	var rows []T
	n, err := decodeRows(b, &rows)
	return rows, n, err
}

// gatherJobs reads jobs segments into one record.JobTable, decoded a few
// thousand rows at a time (Txn.ReadJobs), so that merging a month's
// segments holds about 200 bytes a row rather than the decoded rows' 400
// and more.
func gatherJobs(t *Txn, segs []Partition) (*record.JobTable, error) {
	var n int64
	for _, p := range segs {
		n += p.Rows
	}
	jt := record.NewJobTable(record.NewJobDict(), int(n))
	for _, p := range segs {
		if err := t.ReadJobs(p, jt); err != nil {
			return nil, err
		}
	}
	return jt, nil
}

// tableNamed returns the descriptor of the named table: an error for a
// name schemas.Tables does not list.
func tableNamed(name string) (tableOps, schemas.Table, error) {
	def, err := schemas.TableByName(name)
	if err != nil {
		return nil, schemas.Table{}, err
	}
	for _, d := range tables {
		if d.tableName() == name {
			return d, def, nil
		}
	}
	return nil, schemas.Table{}, fmt.Errorf("history table %q has no descriptor", name)
}

// tableOfRows returns the descriptor of the table rows (as Write takes
// them) belong to, or nil.
func tableOfRows(rows any) tableOps {
	for _, d := range tables {
		if d.owns(rows) {
			return d
		}
	}
	return nil
}

// tableOfDst returns the descriptor of the table dst (as Read takes it)
// holds the rows of, or nil.
func tableOfDst(dst any) tableOps {
	for _, d := range tables {
		if d.ownsDst(dst) {
			return d
		}
	}
	return nil
}

// checkSchemas verifies that every table of schemas.Tables has a
// descriptor, and no descriptor lacks one, and that the Parquet schema of
// each row type has exactly the table's columns, in order, with their
// types and nullability. All differences are reported at once. Open calls
// it: a programmer error is caught before any file is written.
func checkSchemas() error {
	var errs []error
	described := map[string]bool{}
	for _, d := range tables {
		described[d.tableName()] = true
	}
	for _, def := range schemas.Tables() {
		if !described[def.Name] {
			errs = append(errs, fmt.Errorf("table %s: no row type", def.Name))
			continue
		}
		delete(described, def.Name)
		d, _, err := tableNamed(def.Name)
		if err == nil {
			err = d.checkSchema(def)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, d := range tables {
		if described[d.tableName()] {
			errs = append(errs, fmt.Errorf("table %s: described, but not in schemas.Tables", d.tableName()))
		}
	}
	return errors.Join(errs...)
}

// EncodeRows returns rows (as Txn.Write takes them) encoded as one file of
// table, in the table's order: the bytes one segment of exactly these rows
// has, whichever segments a history stores them in. Tests compare
// histories written in different steps with it; package query loads a
// moment's rows into DuckDB through it.
func EncodeRows(table string, rows any) ([]byte, error) {
	d, def, err := tableNamed(table)
	if err != nil {
		return nil, err
	}
	if !d.owns(rows) {
		return nil, fmt.Errorf("rows of type %T", rows)
	}
	var p Partition
	var b bytes.Buffer
	if err := d.encoder(def, rows, &p)(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
