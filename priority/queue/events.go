package queue

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/priority"

	"github.com/fairledger/fairledger/schemas"
)

// The priority table's submit and start rows (schemas/priority.md): a
// job's priority when it was submitted and when it started, each with the
// FairShare of the last snapshot at or before it, and for a start the
// job's wait and its rank among the jobs then waiting in its partition.
// They are made as the snapshots go by: before the snapshot at t, the
// events before t, with the FairShare of the snapshot before; at the
// end of the run, those up to its end.

// FairShare is the FairShare in force: that of the last snapshot.
type FairShare struct {
	Snap  int64                // the snapshot's time
	Known bool                 // false: no snapshot yet, FairShare computed with no usage
	Users map[AssocKey]float64 // each user association's FairShare
}

// of returns the FairShare of the user association k stands for (the
// association of its partition, else the user's without one; 0 when the
// snapshot has neither, or NaN).
func (f *FairShare) of(k AssocKey) float64 {
	v, _ := lookupAssoc(f.Users, k)
	return v
}

// SetFairShare makes the FairShare of each user association of users
// (node numbers into fs) the one in force from the snapshot at at (known)
// or from the window's start (a history with no snapshot before it).
func (p *Writer) SetFairShare(at int64, known bool, users map[AssocKey]int, fs []float64) {
	m := make(map[AssocKey]float64, len(users))
	for k, n := range users {
		if v := fs[n]; !math.IsNaN(v) {
			m[k] = v
		}
	}
	p.FS = FairShare{Snap: at, Known: known, Users: m}
	p.epoch++
}

// setFairShareRows makes the FairShare of a stored snapshot's user rows
// the one in force (a run resuming the history: the last snapshot at or
// before its window).
func (p *Writer) setFairShareRows(at int64, rows []record.FairshareRow) {
	m := map[AssocKey]float64{}
	for i := range rows {
		r := &rows[i]
		if !r.IsUser || r.FairShare == nil || math.IsNaN(*r.FairShare) {
			continue
		}
		k := AssocKey{Account: r.Account, User: r.User, Partition: r.Partition}
		if _, ok := m[k]; !ok {
			m[k] = *r.FairShare
		}
	}
	p.FS = FairShare{Snap: at, Known: true, Users: m}
	p.epoch++
}

// UseDump makes association dump number dump (the model's tree number)
// the one in force.
func (p *Writer) UseDump(dump int) {
	if dump != p.dump {
		p.dump = dump
		p.epoch++ // the ranks' priorities change with it
	}
	if p.queue != nil {
		p.queue.dump = dump
	}
}

// Event is a job's submission or start.
type Event struct {
	T     int64 // when: Unix seconds
	Job   int32 // index in Writer.Jobs
	Start bool  // a start; false: a submission
}

// Events lists the submissions and starts of jobs in time order. A
// job array is submitted once (its first record, as the array's job);
// each of its tasks that starts, starts. A job submitted held gets no
// submit row: its priority was 0 until its release.
func Events(jobs []Job) []Event {
	var ev []Event
	arrays := map[uint32]bool{}
	for i := range jobs {
		j := &jobs[i]
		if j.Submit != 0 && !j.Held && (j.ArrayJob == 0 || !arrays[j.ArrayJob]) {
			if j.ArrayJob != 0 {
				arrays[j.ArrayJob] = true
			}
			ev = append(ev, Event{T: j.Submit, Job: int32(i)})
		}
		if j.Start != 0 && j.Ran >= 0 {
			ev = append(ev, Event{T: j.Start, Job: int32(i), Start: true})
		}
	}
	slices.SortStableFunc(ev, func(a, b Event) int { return cmp.Compare(a.T, b.T) })
	return ev
}

// Emit makes the rows of the events before before in the window (Lo, To]
// with the FairShare in force, those of month cur (its start) into p.Out
// and the others into p.Other, by month.
func (p *Writer) Emit(before, cur int64) {
	if p.PendingOnly {
		return
	}
	if p.events == nil {
		p.events = Events(p.Jobs)
		p.rk = newRanker(p)
	}
	for ; p.evNext < len(p.events) && p.events[p.evNext].T < before; p.evNext++ {
		e := p.events[p.evNext]
		if e.T <= p.Lo || e.T > p.To {
			continue
		}
		if p.DumpAt != nil {
			p.UseDump(p.DumpAt(e.T))
		}
		dst := &p.Out
		if mon := monthStart(e.T).Unix(); mon != cur {
			if p.Other == nil {
				p.Other = map[int64]*Rows{}
			}
			if p.Other[mon] == nil {
				p.Other[mon] = &Rows{}
			}
			dst = p.Other[mon]
		}
		if e.Start {
			p.startRow(dst, e)
		} else {
			p.SubmitRow(dst, e)
		}
	}
}

// asWaiting returns j as slurmctld keeps it while it waits: a task of an
// array as the array's record, with the array's eligible time.
func (p *Writer) asWaiting(j *Job) priority.Job {
	var pj priority.Job
	p.Model.priorityJob(&pj, j, p.dump)
	if j.ArrayJob != 0 {
		pj.ID = j.ArrayJob
		if p.rk.q.firstEligible[j.ArrayJob] != 0 {
			pj.EligibleSec = p.rk.q.arrayEligible(j.ArrayJob)
		}
	}
	pj.FairShare = p.FS.of(p.Model.assocKey(&pj))
	return pj
}

// SubmitRow appends to dst the rows of a submission e: the job's priority
// in each partition it asked for, computed when it was submitted, with
// the FairShare in force (FS).
func (p *Writer) SubmitRow(dst *Rows, e Event) {
	if p.rk == nil {
		p.rk = newRanker(p) // the arrays' first eligible times
	}
	j := &p.Jobs[e.Job]
	pj := p.asWaiting(j)
	pend := Pending{Job: pj, At: j.Submit, submit: j.Submit, arrayJob: j.ArrayJob}
	p.rows = p.cp.AppendRows(&p.Model.Params, p.rows[:0], p.Model.clusterOf(p.dump), []priority.Job{pj}, j.Submit)
	for k := range p.rows {
		dst.add(p.Model.newRow(e.T, evSubmit, &pend, j.Who, &p.rows[k], p.FS.snapshot()), p.rows[k].Weighted.TRES)
	}
}

// snapshot is the time of the snapshot whose FairShare is in force, or
// noSnapshot.
func (f *FairShare) snapshot() int64 {
	if f.Known {
		return f.Snap
	}
	return noSnapshot
}

// startRow appends the row of a start: the job's priority in the
// partition it ran in as slurmctld last computed it (at the decay tick
// before, or its submission or release if later), its wait since it
// became eligible, and its rank among the jobs waiting in the partition
// just before it started, by the priority slurmctld orders them by.
func (p *Writer) startRow(dst *Rows, e Event) {
	j := &p.Jobs[e.Job]
	tick := p.Sched.Last(e.T)
	pj := p.asWaiting(j)
	pj.ID = j.ID
	pj.Partitions = p.Model.partitionsAt(int(j.Ran))
	pend := Pending{Job: pj, At: j.computedAt(tick), submit: j.Submit, arrayJob: j.ArrayJob}
	p.rows = p.cp.AppendRows(&p.Model.Params, p.rows[:0], p.Model.clusterOf(p.dump), []priority.Job{pj}, pend.At)
	if len(p.rows) == 0 {
		return // held or without a partition: slurmctld computed none
	}
	r := &p.rows[0] // with several QOS (24.11), the job's own: the first
	o := p.Model.newRow(e.T, evStart, &pend, j.Who, r, p.FS.snapshot())
	if pj.EligibleSec > 0 {
		o.wait = max(e.T-pj.EligibleSec, 0)
	}
	if !p.rk.built || tick != p.rk.tick || p.epoch != p.rk.epoch {
		p.rk.build(p, tick)
	}
	rank, waiting := p.rk.rank(j, int(j.Ran), r.Priority, e.T)
	o.rank, o.n = int64(rank), int64(waiting)
	dst.add(o, r.Weighted.TRES)
}

func ptrTo[T any](v T) *T { return &v }

// InitFairShare sets the FairShare in force at the window's start lo:
// that of the history's last snapshot at or before it (rows, at), or with
// none, the FairShare of tree with no usage charged.
func (p *Writer) InitFairShare(at int64, rows []record.FairshareRow, algo fairshare.Algorithm, tree *fairshare.Tree, damp float64) {
	if len(rows) > 0 {
		p.setFairShareRows(at, rows)
		return
	}
	var res fairshare.Result
	fairshare.Compute(algo, tree, make([]float64, tree.Len()), damp, &res)
	p.SetFairShare(0, false, userNodes(tree), res.FairShare)
}

// monthStart is 00:00 UTC of the first day of t's UTC month (the
// priority table's partitions are UTC months).
func monthStart(t int64) time.Time { return schemas.MonthStart(time.Unix(t, 0)) }
