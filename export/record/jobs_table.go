package record

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// JobDict holds the names and TRES sets that the JobRecs of a run refer to
// by index. One goroutine adds to it; it only grows, so a slice returned by
// Names keeps its contents and may be read by other goroutines while the
// writer adds more.
type JobDict struct {
	names   []string
	nameIDs map[string]uint32

	sets    [][2]int32  // per TRES set: its entries[start:end]; set 0 is empty
	entries []tresEntry // the sets' entries, each set's in key byte order
	setIDs  map[string]uint32

	scratch []tresEntry
	key     []byte
}

// tresEntry is one entry of a TRES set.
type tresEntry struct {
	key string
	val float64
}

// NewJobDict returns an empty dictionary.
func NewJobDict() *JobDict {
	return &JobDict{nameIDs: map[string]uint32{}, sets: [][2]int32{{0, 0}}, setIDs: map[string]uint32{"": 0}}
}

// Name returns the index of s, adding it when new.
func (d *JobDict) Name(s string) uint32 {
	id, ok := d.nameIDs[s]
	if !ok {
		id = uint32(len(d.names))
		s = strings.Clone(s)
		d.nameIDs[s] = id
		d.names = append(d.names, s)
	}
	return id
}

// nameBytes is Name for a name given as bytes; it allocates only for a new
// name.
func (d *JobDict) nameBytes(b []byte) uint32 {
	if id, ok := d.nameIDs[string(b)]; ok {
		return id
	}
	return d.Name(string(b))
}

// Names returns the names by index. Treat it as read-only.
func (d *JobDict) Names() []string { return d.names }

// Snapshot returns a read-only view of d as it is now, for a table handed
// to another goroutine (to encode it) while d's goroutine adds more. It
// shares d's contents: d only appends to its slices and never changes an
// element, so the view's names and TRES sets stay as they are, and reading
// them does not race with later additions to d. The view cannot be added
// to (Name and TRESSet panic on it).
func (d *JobDict) Snapshot() *JobDict {
	return &JobDict{names: slices.Clip(d.names), sets: slices.Clip(d.sets), entries: slices.Clip(d.entries)}
}

// TRESSet returns the index of m's entries (0 for a nil or empty map),
// adding them when new. Two maps are the same set when they have the same
// keys and bit-identical values.
func (d *JobDict) TRESSet(m map[string]float64) uint32 {
	d.scratch = d.scratch[:0]
	for k, v := range m {
		d.scratch = append(d.scratch, tresEntry{k, v})
	}
	return d.internScratch()
}

// internScratch interns the entries in d.scratch (any order, distinct
// keys).
func (d *JobDict) internScratch() uint32 {
	if len(d.scratch) == 0 {
		return 0
	}
	slices.SortFunc(d.scratch, func(a, b tresEntry) int { return strings.Compare(a.key, b.key) })
	d.key = d.key[:0]
	for _, e := range d.scratch {
		d.key = AppendTRESEntry(d.key, e.key, e.val)
	}
	if id, ok := d.setIDs[string(d.key)]; ok {
		return id
	}
	id := uint32(len(d.sets))
	start := int32(len(d.entries))
	for _, e := range d.scratch {
		d.entries = append(d.entries, tresEntry{strings.Clone(e.key), e.val})
	}
	d.sets = append(d.sets, [2]int32{start, int32(len(d.entries))})
	d.setIDs[string(d.key)] = id
	return id
}

// NumTRESSets is the number of TRES sets d holds, the empty set 0
// included: their ids are 0 to NumTRESSets()-1.
func (d *JobDict) NumTRESSets() int { return len(d.sets) }

// TRESLen is the number of entries of TRES set id.
func (d *JobDict) TRESLen(id uint32) int {
	span := d.sets[id]
	return int(span[1] - span[0])
}

// TRESEntry returns entry j (0 ≤ j < TRESLen(id)) of TRES set id; a set's
// entries are in key byte order.
func (d *JobDict) TRESEntry(id uint32, j int) (key string, val float64) {
	e := &d.entries[d.sets[id][0]+int32(j)]
	return e.key, e.val
}

// TRESMap returns TRES set id as a new map (nil for the empty set).
func (d *JobDict) TRESMap(id uint32) map[string]float64 {
	span := d.sets[id]
	if span[0] == span[1] {
		return nil
	}
	m := make(map[string]float64, span[1]-span[0])
	for _, e := range d.entries[span[0]:span[1]] {
		m[e.key] = e.val
	}
	return m
}

// Bits of JobRec.Valid: the nullable columns that have a value.
const (
	ValidArrayJobID uint16 = 1 << iota
	ValidArrayTaskID
	ValidHetJobID
	ValidHetJobOffset
	ValidSubmit
	ValidEligible
	ValidEnd
	ValidElapsedSec
	ValidSuspendedSec
	ValidTimelimitMin
)

// JobRec is one jobs table row without pointers, so that a large table of
// them costs the garbage collector nothing to scan: names and the TRES set
// are JobDict indexes, timestamps Unix microseconds, and a nullable column
// is null unless its bit is set in Valid. Its job id is stored in the
// JobTable that holds it.
type JobRec struct {
	JobIDRaw                                        int64
	ArrayJobID, ArrayTaskID, HetJobID, HetJobOffset int64
	Start, Submit, Eligible, End                    int64
	ElapsedSec, ChargedSec, SuspendedSec            int64
	TimelimitMin                                    int64
	NNodes, AllocCPUs, BillingSlurm, SourceLine     int64
	MemMB, NodeCount, GPU, Billing, UsageFactor     float64
	User, Account, Partition, QOS, State            uint32
	SourceFile                                      uint32
	// CancelledBy is the name's index plus one; 0 is null.
	CancelledBy uint32
	// TRES is the TRES set's index; 0 is the empty set.
	TRES  uint32
	Valid uint16

	idOff, idLen uint32 // the job id's bytes in JobTable.ids
}

// Running reports whether r has no end.
func (r *JobRec) Running() bool { return r.Valid&ValidEnd == 0 }

// JobTable is a set of jobs table rows as JobRecs. Its job ids are kept
// in one buffer (at most 4 GiB of them).
type JobTable struct {
	// Dict holds the names and TRES sets the records refer to.
	Dict *JobDict
	// Recs are the rows.
	Recs []JobRec
	ids  []byte

	keys  []sortKey // Sort's scratch, kept for the table's next use
	order []int32
}

// NewJobTable returns an empty table using d with room for n rows.
func NewJobTable(d *JobDict, n int) *JobTable {
	return &JobTable{Dict: d, Recs: make([]JobRec, 0, n), ids: make([]byte, 0, 12*n)}
}

// JobTableOf returns rows as a new JobTable, with a dictionary of its
// own, in the table's order (Sort, which compares the stored
// microseconds, so a start's nanoseconds and monotonic clock reading play
// no part).
func JobTableOf(rows []JobRow) *JobTable {
	t := NewJobTable(NewJobDict(), len(rows))
	for i := range rows {
		t.AppendRow(&rows[i])
	}
	t.Sort()
	return t
}

// Reset empties t, keeping its memory.
func (t *JobTable) Reset() {
	t.Recs, t.ids = t.Recs[:0], t.ids[:0]
}

// JobID returns the job id of r, a record of t, as bytes of t (read-only).
func (t *JobTable) JobID(r *JobRec) []byte { return t.ids[r.idOff : r.idOff+r.idLen] }

// Append adds r with the job id jobID.
func (t *JobTable) Append(r JobRec, jobID []byte) {
	r.idOff, r.idLen = uint32(len(t.ids)), uint32(len(jobID))
	t.ids = append(t.ids, jobID...)
	t.Recs = append(t.Recs, r)
}

// AppendZero adds a zero record with an empty job id and returns it, to be
// filled in place (with SetJobID for the id); the pointer is good until
// the next append. Filling a record where it lies saves building it
// elsewhere and copying it in.
func (t *JobTable) AppendZero() *JobRec {
	t.Recs = append(t.Recs, JobRec{})
	return &t.Recs[len(t.Recs)-1]
}

// SetJobID gives r, a record of t, the job id jobID. Call it once per
// record, for the last one added.
func (t *JobTable) SetJobID(r *JobRec, jobID []byte) {
	r.idOff, r.idLen = uint32(len(t.ids)), uint32(len(jobID))
	t.ids = append(t.ids, jobID...)
}

// AppendRow adds row. Times keep their microseconds (the table's
// resolution).
func (t *JobTable) AppendRow(row *JobRow) {
	d := t.Dict
	r := JobRec{JobIDRaw: row.JobIDRaw, Start: row.Start.UnixMicro(), ChargedSec: row.ChargedSec,
		NNodes: row.NNodes, AllocCPUs: row.AllocCPUs, BillingSlurm: row.BillingSlurm, SourceLine: row.SourceLine,
		MemMB: row.MemMB, NodeCount: row.NodeCount, GPU: row.GPU, Billing: row.Billing, UsageFactor: row.UsageFactor,
		User: d.Name(row.User), Account: d.Name(row.Account), Partition: d.Name(row.Partition),
		QOS: d.Name(row.QOS), State: d.Name(row.State), SourceFile: d.Name(row.SourceFile),
		TRES: d.TRESSet(row.TRES)}
	opt := func(p *int64, dst *int64, bit uint16) {
		if p != nil {
			*dst, r.Valid = *p, r.Valid|bit
		}
	}
	tm := func(p *time.Time, dst *int64, bit uint16) {
		if p != nil {
			*dst, r.Valid = p.UnixMicro(), r.Valid|bit
		}
	}
	opt(row.ArrayJobID, &r.ArrayJobID, ValidArrayJobID)
	opt(row.ArrayTaskID, &r.ArrayTaskID, ValidArrayTaskID)
	opt(row.HetJobID, &r.HetJobID, ValidHetJobID)
	opt(row.HetJobOffset, &r.HetJobOffset, ValidHetJobOffset)
	tm(row.Submit, &r.Submit, ValidSubmit)
	tm(row.Eligible, &r.Eligible, ValidEligible)
	tm(row.End, &r.End, ValidEnd)
	opt(row.ElapsedSec, &r.ElapsedSec, ValidElapsedSec)
	opt(row.SuspendedSec, &r.SuspendedSec, ValidSuspendedSec)
	opt(row.TimelimitMin, &r.TimelimitMin, ValidTimelimitMin)
	if row.CancelledBy != nil {
		r.CancelledBy = d.Name(*row.CancelledBy) + 1
	}
	t.Append(r, []byte(row.JobID))
}

// Row returns record i as a JobRow (with times in UTC).
func (t *JobTable) Row(i int) JobRow {
	r, d := &t.Recs[i], t.Dict
	row := JobRow{JobID: string(t.JobID(r)), JobIDRaw: r.JobIDRaw, Start: time.UnixMicro(r.Start).UTC(),
		ChargedSec: r.ChargedSec, NNodes: r.NNodes, AllocCPUs: r.AllocCPUs, BillingSlurm: r.BillingSlurm,
		SourceLine: r.SourceLine, MemMB: r.MemMB, NodeCount: r.NodeCount, GPU: r.GPU, Billing: r.Billing,
		UsageFactor: r.UsageFactor, User: d.names[r.User], Account: d.names[r.Account],
		Partition: d.names[r.Partition], QOS: d.names[r.QOS], State: d.names[r.State],
		SourceFile: d.names[r.SourceFile], TRES: d.TRESMap(r.TRES)}
	opt := func(v int64, bit uint16) *int64 {
		if r.Valid&bit == 0 {
			return nil
		}
		return &v
	}
	tm := func(v int64, bit uint16) *time.Time {
		if r.Valid&bit == 0 {
			return nil
		}
		u := time.UnixMicro(v).UTC()
		return &u
	}
	row.ArrayJobID = opt(r.ArrayJobID, ValidArrayJobID)
	row.ArrayTaskID = opt(r.ArrayTaskID, ValidArrayTaskID)
	row.HetJobID = opt(r.HetJobID, ValidHetJobID)
	row.HetJobOffset = opt(r.HetJobOffset, ValidHetJobOffset)
	row.Submit = tm(r.Submit, ValidSubmit)
	row.Eligible = tm(r.Eligible, ValidEligible)
	row.End = tm(r.End, ValidEnd)
	row.ElapsedSec = opt(r.ElapsedSec, ValidElapsedSec)
	row.SuspendedSec = opt(r.SuspendedSec, ValidSuspendedSec)
	row.TimelimitMin = opt(r.TimelimitMin, ValidTimelimitMin)
	if r.CancelledBy > 0 {
		s := d.names[r.CancelledBy-1]
		row.CancelledBy = &s
	}
	return row
}

// Sort puts the records into the jobs table's order (account, user, start,
// job_id_raw, job_id; ties keep their order), the order the history
// writes them in. It sorts integer keys rather than comparing strings, and
// moves each record once: a radix sort in place on the (account, user)
// pair's rank, then a comparison sort of each pair's run, which is short.
// (A comparison sort of the whole table cost twice as much.)
func (t *JobTable) Sort() {
	if t.sorted() {
		return
	}
	ranks := t.nameRanks()
	nn := uint64(len(ranks))
	n := len(t.Recs)
	// The keys are sized for as many records as the table has room
	// for, so that a reused table's later, larger months do not
	// reallocate it (fresh memory costs a page fault per 4 KiB).
	keys := slices.Grow(t.keys[:0], max(n, cap(t.Recs)))[:n]
	t.keys = keys
	var maxPair uint64
	for i := range t.Recs {
		r := &t.Recs[i]
		pair := uint64(ranks[r.Account])*nn + uint64(ranks[r.User]) // < nn², which fits: nn ≤ 2³²
		keys[i] = sortKey{pair, r.Start, r.JobIDRaw, int32(i)}
		maxPair = max(maxPair, pair)
	}
	sortPairs(keys, maxPair)
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && keys[hi].pair == keys[lo].pair {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(keys[lo:hi], func(a, b sortKey) int {
				if a.start != b.start {
					return cmp.Compare(a.start, b.start)
				}
				if a.raw != b.raw {
					return cmp.Compare(a.raw, b.raw)
				}
				if c := bytes.Compare(t.JobID(&t.Recs[a.pos]), t.JobID(&t.Recs[b.pos])); c != 0 {
					return c
				}
				return cmp.Compare(a.pos, b.pos)
			})
		}
		lo = hi
	}
	order := slices.Grow(t.order[:0], max(n, cap(t.Recs)))[:n]
	t.order = order
	for k, key := range keys {
		order[k] = key.pos
	}
	permute(t.Recs, order)
}

// Partition moves the records sel selects after the others, both in
// their order (a stable partition), and returns the number of records not
// selected. It moves records in place along the permutation's cycles, with
// the table's int32 sort scratch for the permutation and no copy of the
// records: a copy of the selected ones (the hot records of a month holding
// millions) took 436 MB of a 1.29 GB heap in BenchmarkFloodNight2M.
// Records before the first selected one and from the last unselected one
// on do not move.
func (t *JobTable) Partition(sel func(*JobRec) bool) int {
	recs := t.Recs
	lo := 0
	for lo < len(recs) && !sel(&recs[lo]) {
		lo++
	}
	hi := len(recs) // recs[hi:] are selected, and stay
	for hi > lo && sel(&recs[hi-1]) {
		hi--
	}
	if hi == lo {
		return lo
	}
	span := recs[lo:hi]
	order := slices.Grow(t.order[:0], max(len(recs), cap(recs)))[:len(span)]
	t.order = order
	k := 0
	for i := range span {
		if !sel(&span[i]) {
			order[k] = int32(i)
			k++
		}
	}
	settled := k
	for i := range span {
		if sel(&span[i]) {
			order[k] = int32(i)
			k++
		}
	}
	permute(span, order)
	return lo + settled
}

// sortKey is a record's sort key for JobTable.Sort: the rank of its
// (account, user) pair, its start, its job_id_raw and its position.
type sortKey struct {
	pair       uint64
	start, raw int64
	pos        int32
}

// sortPairs sorts keys by pair (all ≤ maxPair) in place, 16 bits a pass
// from the most significant digit (an American flag sort), and a
// comparison sort for the short buckets. It is not stable, and needs not
// be: Sort orders each pair's run whole, down to the position. A stable
// radix sort took a second buffer as long as the keys: 0.3 GB of the 3.4
// GB heap of a night of 10 M one-second jobs.
func sortPairs(keys []sortKey, maxPair uint64) {
	if maxPair == 0 {
		return
	}
	var f flagSorter
	f.sort(keys, (bits.Len64(maxPair)-1)/16*16)
}

// flagSorter holds sortPairs's bucket bounds, one set per digit.
type flagSorter struct {
	next, end [4][]int32 // [digit pass]: where each bucket's next unplaced key and its end are
}

// flagBucket is the size below which sortPairs sorts a bucket by comparison.
const flagBucket = 1024

// sort sorts keys by their pair's bits from shift+15 down, given they all
// agree on the bits above.
func (f *flagSorter) sort(keys []sortKey, shift int) {
	if len(keys) < flagBucket {
		slices.SortFunc(keys, func(a, b sortKey) int { return cmp.Compare(a.pair, b.pair) })
		return
	}
	level := shift / 16
	if f.next[level] == nil {
		f.next[level], f.end[level] = make([]int32, 1<<16), make([]int32, 1<<16)
	}
	next, end := f.next[level], f.end[level]
	clear(end)
	for i := range keys {
		end[uint16(keys[i].pair>>shift)]++
	}
	var sum int32
	for d, c := range end {
		next[d] = sum
		sum += c
		end[d] = sum
	}
	// Each key is swapped into its bucket, the one it displaces placed
	// next: every move places a key for good.
	for d := range next {
		for next[d] < end[d] {
			k := keys[next[d]]
			to := uint16(k.pair >> shift)
			if int(to) == d {
				next[d]++
				continue
			}
			keys[next[d]], keys[next[to]] = keys[next[to]], k
			next[to]++
		}
	}
	if shift == 0 {
		return
	}
	lo := int32(0)
	for d := range end {
		if hi := end[d]; hi-lo > 1 {
			f.sort(keys[lo:hi], shift-16)
		}
		lo = end[d]
	}
}

// sorted reports whether the records are in the table's order.
func (t *JobTable) sorted() bool {
	names := t.Dict.names
	for i := 1; i < len(t.Recs); i++ {
		a, b := &t.Recs[i-1], &t.Recs[i]
		c := strings.Compare(names[a.Account], names[b.Account])
		if c == 0 {
			c = strings.Compare(names[a.User], names[b.User])
		}
		if c == 0 {
			c = cmp.Compare(a.Start, b.Start)
		}
		if c == 0 {
			c = cmp.Compare(a.JobIDRaw, b.JobIDRaw)
		}
		if c == 0 {
			c = bytes.Compare(t.JobID(a), t.JobID(b))
		}
		if c > 0 {
			return false
		}
	}
	return true
}

// nameRanks returns the rank of every dictionary name in byte order.
func (t *JobTable) nameRanks() []uint32 {
	names := t.Dict.names
	byName := make([]uint32, len(names))
	for i := range byName {
		byName[i] = uint32(i)
	}
	slices.SortFunc(byName, func(a, b uint32) int { return strings.Compare(names[a], names[b]) })
	ranks := make([]uint32, len(names))
	for rank, id := range byName {
		ranks[id] = uint32(rank)
	}
	return ranks
}

// permute reorders s in place so that s[k] becomes the old s[order[k]],
// moving each element once. It consumes order.
func permute[T any](s []T, order []int32) {
	for k := range order {
		if order[k] < 0 {
			continue // placed as part of an earlier cycle
		}
		held, j := s[k], k
		for {
			src := int(order[j])
			order[j] = -1
			if src == k {
				s[j] = held
				break
			}
			s[j], j = s[src], src
		}
	}
}

// microsOf converts a timestamp of unit ticks per second to microseconds,
// rounding down (as time.Time.UnixMicro does).
func microsOf(v int64, perSec int64) int64 {
	switch {
	case perSec == 1e6:
		return v
	case perSec < 1e6:
		return v * (1e6 / perSec)
	}
	div := perSec / 1e6
	q := v / div
	if v%div < 0 {
		q--
	}
	return q
}

// AppendTRESEntry appends one TRES map entry in the encoding that tells TRES
// sets apart: the key's length, its bytes and the value's bits. A set's
// entries appended in one order form its identity; interning uses it.
func AppendTRESEntry(b []byte, key string, val float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(val))
}

// Slice returns the records lo..hi of t as a table sharing t's memory
// (its dictionary and job ids), for writing part of a sorted table as a
// file of its own. The slice must not be appended to.
func (t *JobTable) Slice(lo, hi int) *JobTable {
	return &JobTable{Dict: t.Dict, Recs: t.Recs[lo:hi:hi], ids: t.ids}
}

// Compare compares records a and b of t in the jobs table's order
// (account, user, start, job_id_raw, job_id).
func (t *JobTable) Compare(a, b *JobRec) int {
	return t.Dict.Compare(a, t.JobID(a), b, t.JobID(b))
}

// Compare compares records a and b, whose names are d's and whose job ids
// are aID and bID, in the jobs table's order (account, user, start,
// job_id_raw, job_id): records of different tables sharing d, as a merge
// of sorted pieces meets them.
func (d *JobDict) Compare(a *JobRec, aID []byte, b *JobRec, bID []byte) int {
	if c := strings.Compare(d.names[a.Account], d.names[b.Account]); c != 0 {
		return c
	}
	if c := strings.Compare(d.names[a.User], d.names[b.User]); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.JobIDRaw, b.JobIDRaw); c != 0 {
		return c
	}
	return bytes.Compare(aID, bID)
}
