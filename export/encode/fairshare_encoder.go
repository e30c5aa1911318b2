package encode

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// The fairshare and associations tables are written by column encoders,
// as the jobs and usage tables are (jobsEncoder, usageEncoder). A month holds one row of each per
// association and snapshot: some 310,000 rows for a 10,000-association
// cluster and 31 daily snapshots. The encoders save the comparison sort on
// strings (snapshotOrder takes a third of its time) and the reflection
// writer fed copies of the rows in sorted order: a month's fairshare file
// takes about a sixth less time, an associations file a fifth less. Like
// jobsEncoder, they intern the strings of the dictionary-encoded columns
// (snapshotOrder, rowStrings) and give their writers those columns'
// internedType (internedWriterSchema), whose dictionaries find a value's
// index from its address and a page's bounds from the strings' ranks:
// parquet-go hashed every string and compared the strings of every page,
// a quarter of the two encoders' time (BenchmarkFairshareSnapshots, -cpu
// 1: 0.42-0.45 CPU-s a month before, 0.34-0.37 after). They write exactly
// the bytes encoder(rows, record.CompareFairshare, sortBy) and encoder(rows,
// record.CompareAssociations, sortBy) write; TestFairshareEncoderBytes and
// TestAssociationsEncoderBytes check it.

// fairshareColumns and associationColumns are the leaf columns of the two
// tables (parquet.SchemaOf(record.FairshareRow{}) and (record.AssociationRow{})), in the
// order fairshareValues and associationValues number them. The encoders
// check them against the writer's schema before writing.
var (
	fairshareColumns = []string{"snapshot", "algorithm", "account", "user", "partition", "parent", "depth",
		"is_user", "raw_shares", "shares_parent", "norm_shares", "raw_usage", "norm_usage", "effectv_usage",
		"fair_share", "level_fs", "rank", "grp_tres_mins", "tres_run_mins", "assoc_line"}
	associationColumns = []string{"snapshot", "account", "user", "partition", "parent", "shares",
		"shares_parent", "lineage", "source_file"}
)

// fairshareEncoder returns a function writing fairshare rows as Parquet in
// record.CompareFairshare order, as encoder(rows, record.CompareFairshare, sortBy) does.
func fairshareEncoder(rows []record.FairshareRow, sortBy []string) func(io.Writer) error {
	return func(w io.Writer) error {
		order, strs := snapshotOrder(rows, record.CompareFairshare, fairshareKey)
		return writeSortedColumns[record.FairshareRow](w, sortBy, fairshareColumns, order,
			func(v [][]parquet.Value, batch []int32) { fairshareValues(v, rows, strs, batch) },
			internedWriterSchema[record.FairshareRow](strs.strs))
	}
}

// associationsEncoder returns a function writing associations rows as
// Parquet in record.CompareAssociations order, as encoder(rows,
// record.CompareAssociations, sortBy) does.
func associationsEncoder(rows []record.AssociationRow, sortBy []string) func(io.Writer) error {
	return func(w io.Writer) error {
		order, strs := snapshotOrder(rows, record.CompareAssociations, associationKey)
		return writeSortedColumns[record.AssociationRow](w, sortBy, associationColumns, order,
			func(v [][]parquet.Value, batch []int32) { associationValues(v, rows, strs, batch) },
			internedWriterSchema[record.AssociationRow](strs.strs))
	}
}

// dictColumns is the number of dictionary-encoded string columns of the
// fairshare table (algorithm, account, user, partition, parent) and of
// the associations table (account, user, partition, parent, source_file).
const dictColumns = 5

// dictStrings are a row's values of its table's dictionary-encoded string
// columns: account, user and partition (which record.CompareFairshare and
// record.CompareAssociations compare after the snapshot), parent, then the
// fairshare table's algorithm or the associations table's source_file.
type dictStrings [dictColumns]string

// The dictStrings indexes of the columns.
const (
	dictAccount = iota
	dictUser
	dictPartition
	dictParent
	dictOther // algorithm or source_file
)

// fairshareKey and associationKey return a row's snapshot and
// dictStrings.
func fairshareKey(r *record.FairshareRow) (time.Time, dictStrings) {
	return r.Snapshot, dictStrings{r.Account, r.User, r.Partition, r.Parent, r.Algorithm}
}

func associationKey(r *record.AssociationRow) (time.Time, dictStrings) {
	return r.Snapshot, dictStrings{r.Account, r.User, r.Partition, r.Parent, r.SourceFile}
}

// rowStrings are the distinct strings of the dictionary-encoded columns of
// a file's rows, interned (internedStrings) for the writer's dictionaries
// (internedWriterSchema), and which of them each row holds: the rows of a
// month share a few thousand distinct dictStrings, each kept once.
type rowStrings struct {
	strs   *internedStrings
	tuples [][dictColumns]int32 // per distinct dictStrings: the ids of its strings in strs
	ids    []int32              // per row: its dictStrings' index in tuples
}

// row returns the ids in strs of row i's dictStrings.
func (s *rowStrings) row(i int32) *[dictColumns]int32 { return &s.tuples[s.ids[i]] }

// snapshotOrder returns the positions of rows in (snapshot, account, user,
// partition) order, ties in input order: the order sortedOrder(rows,
// compare) gives, where compare is record.CompareFairshare or record.CompareAssociations
// and key returns a row's snapshot and dictStrings. It also interns the
// rows' dictStrings.
//
// A month holds a few dozen distinct snapshots and, snapshot after
// snapshot, the same few thousand names, so each row gets the rank of its
// snapshot and the rank of its (account, user, partition) among the
// distinct ones, and two stable counting sorts (by name rank, then by
// snapshot rank) order the rows in linear time without comparing a string
// per row. Rows come in runs of one snapshot, usually with the strings of
// the run before in the same order: a row whose dictStrings equal those of
// the row at the same offset in the previous run takes that row's name id
// and dictStrings id without a map lookup (equal strings of one tree share
// their bytes, so the comparisons stop at the pointers); any other row
// looks up its strings, then their ids. Rows whose snapshot carries a
// monotonic clock reading (which time.Compare, and so compare, compares
// instead of the wall clock when both times have one) are sorted with
// sortedOrder instead; their strings are interned all the same.
func snapshotOrder[T any](rows []T, compare func(a, b *T) int, key func(*T) (time.Time, dictStrings)) ([]int32, *rowStrings) {
	snapIDs := make([]int32, len(rows))
	nameIDs := make([]int32, len(rows))
	tupleIDs := make([]int32, len(rows))
	// The length of the first run of one snapshot is about the number of
	// distinct names: size the name index for it.
	first := 0
	if len(rows) > 0 {
		t0, _ := key(&rows[0])
		for first < len(rows) {
			if t, _ := key(&rows[first]); !t.Equal(t0) {
				break
			}
			first++
		}
	}
	snaps, names := newIDSet[instant](0), newIDSet[rowNames](first)
	strs, tuples := newIDSet[string](first), newIDSet[[dictColumns]int32](first)
	var nameOf []int32 // per tuple: its name id
	last, lastID := instant{}, int32(-1)
	runStart, prevStart, prevLen := 0, 0, 0 // this run of one snapshot, and the one before
	mono := false
	for i := range rows {
		t, s := key(&rows[i])
		mono = mono || t != t.Round(0)
		if in := instantOf(t); lastID < 0 || in != last {
			last, lastID = in, snaps.id(in)
			prevStart, prevLen, runStart = runStart, i-runStart, i
		}
		snapIDs[i] = lastID
		if j := i - runStart; j < prevLen {
			q := prevStart + j
			if _, p := key(&rows[q]); p == s {
				tupleIDs[i], nameIDs[i] = tupleIDs[q], nameIDs[q]
				continue
			}
		}
		var ids [dictColumns]int32
		for c := range s {
			ids[c] = strs.id(s[c])
		}
		tid := tuples.id(ids)
		if int(tid) == len(nameOf) {
			nameOf = append(nameOf, names.id(rowNames{s[dictAccount], s[dictUser], s[dictPartition]}))
		}
		tupleIDs[i], nameIDs[i] = tid, nameOf[tid]
	}
	rs := &rowStrings{strs: internStrings(strs.list), tuples: tuples.list, ids: tupleIDs}
	if mono {
		order := sortedOrder(rows, compare)
		if order == nil {
			order = identity(len(rows))
		}
		return order, rs
	}
	return twoKeyOrder(names.rank(nameIDs, compareRowNames), len(names.list),
		snaps.rank(snapIDs, compareInstants), len(snaps.list)), rs
}

// internedWriterSchema is the schema of T's rows (parquet.SchemaOf) with
// internedType for its dictionary-encoded BYTE_ARRAY columns, whose values
// are strs': the schema of the fairshare and associations encoders'
// writers, as jobsWriterSchema is the jobs encoder's. It describes the
// same file.
func internedWriterSchema[T any](strs *internedStrings) *parquet.Schema {
	s := parquet.SchemaOf(*new(T))
	leaf := func(_ string, f parquet.Field) parquet.Field {
		if f.Encoding() == nil || f.Type().Kind() != parquet.ByteArray {
			return f
		}
		switch f.Encoding().Encoding() {
		//lint:ignore SA1019 a field may carry either dictionary encoding; the deprecated one is matched, not written
		case format.RLEDictionary, format.PlainDictionary:
			return typedField{f, internedType{f.Type(), strs}}
		}
		return f
	}
	return parquet.NewSchema(s.Name(), fieldsNode{s, mapLeaves(s.Fields(), "", leaf)})
}

// rankIDs returns, for each of the ids 0..n-1, its rank in compare order
// (compare must not report distinct ids equal).
func rankIDs(n int, compare func(a, b int32) int) []int32 {
	sorted := identity(n)
	slices.SortFunc(sorted, compare)
	rank := make([]int32, n)
	for r, id := range sorted {
		rank[id] = int32(r)
	}
	return rank
}

// stableCountingSort sets out to the positions order (nil for 0..len(key)-1)
// stably sorted by key[i], a number in 0..keys-1 for position i. out must
// have the length of key and must not alias order or key.
func stableCountingSort(out, order, key []int32, keys int) {
	start := make([]int32, keys+1)
	for _, k := range key {
		start[k+1]++
	}
	for k := 1; k <= keys; k++ {
		start[k] += start[k-1]
	}
	if order == nil {
		for i, k := range key {
			out[start[k]] = int32(i)
			start[k]++
		}
		return
	}
	for _, i := range order {
		k := key[i]
		out[start[k]] = i
		start[k]++
	}
}

// twoKeyOrder returns the positions 0..len(minor)-1 stably sorted by
// major[i] (in 0..majorKeys-1), then minor[i] (in 0..minorKeys-1). It
// uses minor's memory for the result.
func twoKeyOrder(minor []int32, minorKeys int, major []int32, majorKeys int) []int32 {
	byMinor := make([]int32, len(minor))
	stableCountingSort(byMinor, nil, minor, minorKeys)
	order := minor // no longer needed
	stableCountingSort(order, byMinor, major, majorKeys)
	return order
}

// instant is a time's wall clock as a comparable key (Unix seconds and
// nanoseconds), for times without a monotonic clock reading.
type instant struct {
	sec  int64
	nsec int32
}

func instantOf(t time.Time) instant { return instant{t.Unix(), int32(t.Nanosecond())} }

func compareInstants(a, b instant) int {
	if c := cmp.Compare(a.sec, b.sec); c != 0 {
		return c
	}
	return cmp.Compare(a.nsec, b.nsec)
}

// rowNames is a row's (account, user, partition).
type rowNames struct{ account, user, partition string }

func compareRowNames(x, y rowNames) int {
	if c := strings.Compare(x.account, y.account); c != 0 {
		return c
	}
	if c := strings.Compare(x.user, y.user); c != 0 {
		return c
	}
	return strings.Compare(x.partition, y.partition)
}

// idSet numbers distinct keys 0, 1, ... in the order they are first seen.
type idSet[K comparable] struct {
	index map[K]int32
	list  []K
}

func newIDSet[K comparable](n int) *idSet[K] {
	return &idSet[K]{index: make(map[K]int32, n), list: make([]K, 0, n)}
}

// id returns k's number, giving a new key the next one.
func (s *idSet[K]) id(k K) int32 {
	id, ok := s.index[k]
	if !ok {
		id = int32(len(s.list))
		s.index[k] = id
		s.list = append(s.list, k)
	}
	return id
}

// rank replaces every id in ids by the rank of its key in compare order
// (which must not report distinct keys equal) and returns ids.
func (s *idSet[K]) rank(ids []int32, compare func(a, b K) int) []int32 {
	rank := rankIDs(len(s.list), func(a, b int32) int { return compare(s.list[a], s.list[b]) })
	for i, id := range ids {
		ids[i] = rank[id]
	}
	return ids
}

// writeSortedColumns writes the rows at the positions order as a Parquet
// file of T's schema, whose leaf columns must be leaves (a nested one's
// path joined by dots: "tres_w.key_value.key"). fill(v, batch) sets
// v[c][k] to the value of leaf column c of the row at position batch[k].
// For a repeated column it sets v[c] instead to the column's values of the
// batch's rows, any number a row, each row's first at repetition level 0
// (appending to v[c][:0] keeps its memory from batch to batch). The values
// of writeBatch rows at a time are handed to the column writers, so pages
// are cut where GenericWriter[T].Write cuts them, and the row group is
// ended (Flush) every RowGroupRows rows, where Write starts a new one.
//
// fill builds a batch's values row by row, all columns at once: that took
// three quarters of the time of one loop over the batch per column.
//
// opts are added to the writer's options (writerOptions(sortBy)), e.g. a
// schema describing the same file (internedWriterSchema).
//
// Row groups are encoded one after the other into the writer's own column
// writers, not concurrently into row groups of their own as jobsEncoder
// does: these files are written while the jobs table is, so a second
// goroutine would rarely find an idle core, and each concurrent row group
// takes column writers of its own.
func writeSortedColumns[T any](w io.Writer, sortBy, leaves []string, order []int32, fill func(v [][]parquet.Value, batch []int32), opts ...parquet.WriterOption) error {
	pw := parquet.NewGenericWriter[T](w, append(writerOptions(sortBy), opts...)...)
	if cols := pw.Schema().Columns(); !slices.EqualFunc(cols, leaves, func(path []string, name string) bool {
		return strings.Join(path, ".") == name
	}) {
		return fmt.Errorf("%T schema has the leaf columns %v, the encoder writes %v", *new(T), cols, leaves)
	}
	vals := make([][]parquet.Value, len(leaves))
	backing := make([]parquet.Value, len(leaves)*writeBatch)
	for c := range vals {
		vals[c] = backing[c*writeBatch : (c+1)*writeBatch : (c+1)*writeBatch]
	}
	cols := pw.ColumnWriters() // the current row group's; reused after each Flush
	for lo := 0; lo < len(order); lo += RowGroupRows {
		group := order[lo:min(lo+RowGroupRows, len(order))]
		for b := 0; b < len(group); b += writeBatch {
			batch := group[b:min(b+writeBatch, len(group))]
			for c := range vals {
				vals[c] = vals[c][:len(batch)]
			}
			fill(vals, batch)
			for c, col := range cols {
				n, err := col.WriteRowValues(vals[c])
				if err != nil {
					return fmt.Errorf("column %s: %w", leaves[c], err)
				}
				if n != len(batch) {
					return fmt.Errorf("column %s: %d rows written of a batch of %d", leaves[c], n, len(batch))
				}
			}
		}
		if err := pw.Flush(); err != nil { // ends the row group
			return err
		}
	}
	return pw.Close()
}

// fairshareValues sets v[c][k] to the value of leaf column c of row
// batch[k], as GenericWriter[record.FairshareRow] writes it: the strings of the
// dictionary-encoded columns from strs, the snapshot in microseconds, a
// nil pointer as a null (definition level 0), a set one at definition
// level 1; required columns need no levels. Optional values are
// built in place (setOptionalDouble and the others) and booleans copied
// whole (booleanValues): building a Value in a temporary, setting its level
// there and copying it took twice as long.
func fairshareValues(v [][]parquet.Value, rows []record.FairshareRow, strs *rowStrings, batch []int32) {
	v = v[:len(fairshareColumns)]
	vals := strs.strs.vals
	for k, i := range batch {
		r, ids := &rows[i], strs.row(i)
		v[0][k] = parquet.Int64Value(r.Snapshot.UnixMicro())
		v[1][k] = vals[ids[dictOther]]
		v[2][k] = vals[ids[dictAccount]]
		v[3][k] = vals[ids[dictUser]]
		v[4][k] = vals[ids[dictPartition]]
		v[5][k] = vals[ids[dictParent]]
		v[6][k] = parquet.Int32Value(r.Depth)
		v[7][k] = booleanValues[boolIndex(r.IsUser)]
		setOptionalInt64(&v[8][k], r.RawShares)
		v[9][k] = booleanValues[boolIndex(r.SharesParent)]
		setOptionalDouble(&v[10][k], r.NormShares)
		setOptionalDouble(&v[11][k], r.RawUsage)
		setOptionalDouble(&v[12][k], r.NormUsage)
		setOptionalDouble(&v[13][k], r.EffectvUsage)
		setOptionalDouble(&v[14][k], r.FairShare)
		setOptionalDouble(&v[15][k], r.LevelFS)
		setOptionalInt32(&v[16][k], r.Rank)
		setOptionalString(&v[17][k], r.GrpTRESMins)
		setOptionalString(&v[18][k], r.TRESRunMins)
		setOptionalInt32(&v[19][k], r.AssocLine)
	}
}

// associationValues is fairshareValues for the associations table.
func associationValues(v [][]parquet.Value, rows []record.AssociationRow, strs *rowStrings, batch []int32) {
	v = v[:len(associationColumns)]
	vals := strs.strs.vals
	for k, i := range batch {
		r, ids := &rows[i], strs.row(i)
		v[0][k] = parquet.Int64Value(r.Snapshot.UnixMicro())
		v[1][k] = vals[ids[dictAccount]]
		v[2][k] = vals[ids[dictUser]]
		v[3][k] = vals[ids[dictPartition]]
		v[4][k] = vals[ids[dictParent]]
		setOptionalInt64(&v[5][k], r.Shares)
		v[6][k] = booleanValues[boolIndex(r.SharesParent)]
		v[7][k] = stringValue(r.Lineage)
		v[8][k] = vals[ids[dictOther]]
	}
}

// booleanValues are the BOOLEAN values false and true.
var booleanValues = [2]parquet.Value{parquet.BooleanValue(false), parquet.BooleanValue(true)}

// boolIndex is 1 for true, 0 for false.
func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// setOptionalDouble sets *v to an optional DOUBLE value: null for nil.
func setOptionalDouble(v *parquet.Value, p *float64) {
	if p == nil {
		*v = parquet.Value{}
		return
	}
	*v = parquet.DoubleValue(*p)
	v.SetDefinitionLevel(1)
}

// setOptionalInt64 sets *v to an optional INT64 value: null for nil.
func setOptionalInt64(v *parquet.Value, p *int64) {
	if p == nil {
		*v = parquet.Value{}
		return
	}
	*v = parquet.Int64Value(*p)
	v.SetDefinitionLevel(1)
}

// setOptionalString sets *v to an optional STRING value: null for nil.
func setOptionalString(v *parquet.Value, p *string) {
	if p == nil {
		*v = parquet.Value{}
		return
	}
	*v = stringValue(*p)
	v.SetDefinitionLevel(1)
}

// setOptionalInt32 sets *v to an optional INT32 value: null for nil.
func setOptionalInt32(v *parquet.Value, p *int32) {
	if p == nil {
		*v = parquet.Value{}
		return
	}
	*v = parquet.Int32Value(*p)
	v.SetDefinitionLevel(1)
}

// setOptionalTime sets *v to an optional TIMESTAMP(MICROS) value (INT64
// microseconds since the epoch): null for nil.
func setOptionalTime(v *parquet.Value, p *time.Time) {
	if p == nil {
		*v = parquet.Value{}
		return
	}
	*v = parquet.Int64Value(p.UnixMicro())
	v.SetDefinitionLevel(1)
}
