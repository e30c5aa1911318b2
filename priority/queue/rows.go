package queue

import (
	"math"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/priority"
)

// outRow is a row of the priority table as a run holds it until its
// month is written: pointer-free (names as indexes into the model's
// tables, absent values as sentinels), so that the month's rows, millions
// in a busy month, cost the garbage collector nothing to scan.
// Model.record turns it into the table's record.PriorityRow.
type outRow struct {
	at, computedAt   int64 // Unix seconds
	submit, eligible int64 // 0: null
	snapshot         int64 // noSnapshot: null
	jobID, priority  int64
	age, assoc, fs   float64
	jobSize, part, q float64
	site, nice       int64
	wait, rank, n    int64 // -1: null (a start's wait, rank and waiting)
	tres             int32 // offset in Rows.tres of len(Cluster.TRES) weighted terms; -1: none
	arrayJob         uint32
	who              uint32 // Job.Who: index in Model.whos
	partition        uint16 // Cluster.Partitions
	qos              uint16 // Model.qosNames
	event            uint8  // index in Events
}

// noSnapshot marks a row with no snapshot: one before the history's first.
const noSnapshot = math.MinInt64

// The events of outRow.event.
const (
	evSubmit uint8 = iota
	evPending
	evStart
)

// eventName is the priority table's name of event ev.
func eventName(ev uint8) string {
	switch ev {
	case evSubmit:
		return record.EventSubmit
	case evStart:
		return record.EventStart
	}
	return record.EventPending
}

// prioChunk is how many rows a chunk of Rows holds.
const prioChunk = 1 << 14

// Rows holds rows in chunks, so that growing copies none.
type Rows struct {
	chunks [][]outRow
	tres   []float64
	n      int
}

// add appends o, with the weighted TRES terms tres when one is not 0.
func (r *Rows) add(o outRow, tres []float64) {
	o.tres = -1
	for _, v := range tres {
		if v != 0 {
			o.tres = int32(len(r.tres))
			r.tres = append(r.tres, tres...)
			break
		}
	}
	if r.n == len(r.chunks)*prioChunk {
		r.chunks = append(r.chunks, make([]outRow, 0, prioChunk))
	}
	c := &r.chunks[r.n/prioChunk]
	*c = append(*c, o)
	r.n++
}

// Reset empties r, keeping its first chunk.
func (r *Rows) Reset() {
	if len(r.chunks) > 0 {
		r.chunks = r.chunks[:1]
		r.chunks[0] = r.chunks[0][:0]
	}
	r.tres, r.n = r.tres[:0], 0
}

// AppendRecords appends r's rows to dst as the table's records.
func (m *Model) AppendRecords(dst []record.PriorityRow, r *Rows) []record.PriorityRow {
	dst = grow(dst, r.n)
	var snap *time.Time // shared by the rows of one snapshot
	for _, c := range r.chunks {
		for i := range c {
			o := &c[i]
			if o.snapshot != noSnapshot && (snap == nil || snap.Unix() != o.snapshot) {
				s := time.Unix(o.snapshot, 0).UTC()
				snap = &s
			}
			dst = append(dst, m.record(o, r.tres, snap))
		}
	}
	return dst
}

// grow returns s with room for n more.
func grow[T any](s []T, n int) []T {
	if cap(s)-len(s) < n {
		t := make([]T, len(s), len(s)+n)
		copy(t, s)
		return t
	}
	return s
}

// record is o as the table's row; snap is its snapshot's time (nil when
// it has none).
func (m *Model) record(o *outRow, tres []float64, snap *time.Time) record.PriorityRow {
	w := &m.whos[o.who]
	out := record.PriorityRow{At: time.Unix(o.at, 0).UTC(), Event: eventName(o.event), ComputedAt: time.Unix(o.computedAt, 0).UTC(),
		JobID: o.jobID, User: w.user, Account: w.account, Partition: m.Cluster.Partitions[o.partition].Name, QOS: m.qosNames[o.qos],
		Priority: o.priority, AgeW: o.age, AssocW: o.assoc, FairShareW: o.fs, JobSizeW: o.jobSize, PartitionW: o.part, QOSW: o.q,
		Site: o.site, Nice: o.nice}
	if o.snapshot != noSnapshot {
		out.Snapshot = snap
	}
	if o.tres >= 0 { // else no term: an empty map in the table
		out.TRESW = map[string]float64{}
		for i, v := range tres[o.tres : int(o.tres)+len(m.Cluster.TRES)] {
			if v != 0 {
				out.TRESW[m.Cluster.TRES[i]] = v
			}
		}
	}
	if o.eligible > 0 {
		e := time.Unix(o.eligible, 0).UTC()
		out.Eligible = &e
	}
	if o.submit > 0 {
		s := time.Unix(o.submit, 0).UTC()
		out.Submit = &s
	}
	if o.arrayJob != 0 {
		a := int64(o.arrayJob)
		out.ArrayJobID = &a
	}
	if o.wait >= 0 {
		out.WaitSec = ptrTo(o.wait)
	}
	if o.rank >= 0 {
		out.Rank, out.Waiting = ptrTo(o.rank), ptrTo(o.n)
	}
	return out
}

// qosIndex returns the index of QOS name in m.qosNames, adding it.
func (m *Model) qosIndex(name string) uint16 {
	if i, ok := m.qosIdx[name]; ok {
		return i
	}
	i := uint16(len(m.qosNames))
	m.qosNames = append(m.qosNames, name)
	if m.qosIdx == nil {
		m.qosIdx = map[string]uint16{}
	}
	m.qosIdx[name] = i
	return i
}

// newRow is the row of one priority.Row of the job pend (of user association
// who) at time at, event ev, FairShare of the snapshot snap.
func (m *Model) newRow(at int64, ev uint8, pend *Pending, who uint32, r *priority.Row, snap int64) outRow {
	w := &r.Weighted
	o := outRow{at: at, computedAt: pend.At, submit: max(pend.submit, 0), eligible: max(pend.Job.EligibleSec, 0), snapshot: snap,
		jobID: int64(r.JobID), priority: int64(r.Priority), age: w.Age, assoc: w.Assoc, fs: w.FairShare, jobSize: w.JobSize,
		part: w.Partition, q: w.QOS, site: r.Site, nice: r.Nice, wait: -1, rank: -1, n: -1,
		arrayJob: pend.arrayJob, who: who, qos: m.qosIndex(r.QOS), event: ev}
	if k, ok := m.parts[r.Partition]; ok {
		o.partition = uint16(k)
	}
	return o
}
