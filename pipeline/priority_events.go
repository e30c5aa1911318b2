package pipeline

import (
	"cmp"
	"math"
	"slices"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/priority"
)

// The priority table's submit and start rows (schemas/priority.md): a
// job's priority when it was submitted and when it started, each with the
// FairShare of the last snapshot at or before it, and for a start the
// job's wait and its rank among the jobs then waiting in its partition.
// They are made as the snapshots go by: before the snapshot at t, the
// events before t, with the FairShare of the snapshot before; at the
// end of the run, those up to its end.

// prioFairShare is the FairShare in force: that of the last snapshot.
type prioFairShare struct {
	snap  int64 // the snapshot's time
	known bool  // false: no snapshot yet, FairShare computed with no usage
	users map[prioAssocKey]float64
}

// of returns the FairShare of j's user association (0 when the snapshot
// has none, or NaN).
func (f *prioFairShare) of(j *priority.Job) float64 {
	return f.users[prioAssocKey{j.Account, j.User}]
}

// setFairShare makes the FairShare of each user association of users
// (node numbers into fs) the one in force from the snapshot at at (known)
// or from the window's start (a history with no snapshot before it).
func (p *prioWriter) setFairShare(at int64, known bool, users map[prioAssocKey]int, fs []float64) {
	m := make(map[prioAssocKey]float64, len(users))
	for k, n := range users {
		if v := fs[n]; !math.IsNaN(v) {
			m[k] = v
		}
	}
	p.fs = prioFairShare{snap: at, known: known, users: m}
	p.epoch++
}

// setFairShareRows makes the FairShare of a stored snapshot's user rows
// the one in force (a run resuming the history: the last snapshot at or
// before its window).
func (p *prioWriter) setFairShareRows(at int64, rows []record.FairshareRow) {
	m := map[prioAssocKey]float64{}
	for i := range rows {
		r := &rows[i]
		if !r.IsUser || r.FairShare == nil || math.IsNaN(*r.FairShare) {
			continue
		}
		k := prioAssocKey{r.Account, r.User}
		if _, ok := m[k]; !ok {
			m[k] = *r.FairShare
		}
	}
	p.fs = prioFairShare{snap: at, known: true, users: m}
	p.epoch++
}

// useDump makes association dump number dump the one in force.
func (p *prioWriter) useDump(dump int) {
	if dump != p.dump {
		p.dump = dump
		p.epoch++ // the ranks' priorities change with it
	}
	if p.queue != nil {
		p.queue.dump = dump
	}
}

// prioEvent is a job's submission or start.
type prioEvent struct {
	t     int64
	job   int32 // index in prioWriter.jobs
	start bool
}

// prioEvents lists the submissions and starts of jobs in time order. A
// job array is submitted once (its first record, as the array's job);
// each of its tasks that starts, starts. A job submitted held gets no
// submit row: its priority was 0 until its release.
func prioEvents(jobs []prioJob) []prioEvent {
	var ev []prioEvent
	arrays := map[uint32]bool{}
	for i := range jobs {
		j := &jobs[i]
		if j.submit != 0 && !j.held && (j.arrayJob == 0 || !arrays[j.arrayJob]) {
			if j.arrayJob != 0 {
				arrays[j.arrayJob] = true
			}
			ev = append(ev, prioEvent{t: j.submit, job: int32(i)})
		}
		if j.start != 0 && j.ran >= 0 {
			ev = append(ev, prioEvent{t: j.start, job: int32(i), start: true})
		}
	}
	slices.SortStableFunc(ev, func(a, b prioEvent) int { return cmp.Compare(a.t, b.t) })
	return ev
}

// emit makes the rows of the events before before in the window (lo, to]
// with the FairShare in force, those of month cur (its start) into p.out
// and the others into p.other, by month.
func (p *prioWriter) emit(before, cur int64) {
	if p.pendingOnly {
		return
	}
	if p.events == nil {
		p.events = prioEvents(p.jobs)
		p.rk = newRanker(p.jobs)
	}
	for ; p.evNext < len(p.events) && p.events[p.evNext].t < before; p.evNext++ {
		e := p.events[p.evNext]
		if e.t <= p.lo || e.t > p.to {
			continue
		}
		if p.dumpAt != nil {
			p.useDump(p.dumpAt(e.t))
		}
		dst := &p.out
		if mon := monthStart(e.t).Unix(); mon != cur {
			if p.other == nil {
				p.other = map[int64]*prioRows{}
			}
			if p.other[mon] == nil {
				p.other[mon] = &prioRows{}
			}
			dst = p.other[mon]
		}
		if e.start {
			p.startRow(dst, e)
		} else {
			p.submitRow(dst, e)
		}
	}
}

// asWaiting returns j as slurmctld keeps it while it waits: a task of an
// array as the array's record, with the array's eligible time.
func (p *prioWriter) asWaiting(j *prioJob) priority.Job {
	var pj priority.Job
	p.m.priorityJob(&pj, j, p.dump)
	if j.arrayJob != 0 {
		pj.ID = j.arrayJob
		if e := p.rk.q.firstEligible[j.arrayJob]; e != 0 {
			pj.EligibleSec = e
		}
	}
	pj.FairShare = p.fs.of(&pj)
	return pj
}

// submitRow appends to dst the rows of a submission: the job's priority
// in each partition it asked for, computed when it was submitted.
func (p *prioWriter) submitRow(dst *prioRows, e prioEvent) {
	j := &p.jobs[e.job]
	pj := p.asWaiting(j)
	pend := prioPending{job: pj, at: j.submit, submit: j.submit, arrayJob: j.arrayJob}
	p.rows = p.cp.AppendRows(&p.m.params, p.rows[:0], p.m.clusterOf(p.dump), []priority.Job{pj}, j.submit)
	for k := range p.rows {
		dst.add(p.m.out(e.t, evSubmit, &pend, j.who, &p.rows[k], p.fs.snapshot()), p.rows[k].Weighted.TRES)
	}
}

// snapshot is the time of the snapshot whose FairShare is in force, or
// noSnapshot.
func (f *prioFairShare) snapshot() int64 {
	if f.known {
		return f.snap
	}
	return noSnapshot
}

// startRow appends the row of a start: the job's priority in the
// partition it ran in as slurmctld last computed it (at the decay tick
// before, or its submission or release if later), its wait since it
// became eligible, and its rank among the jobs waiting in the partition
// just before it started, by the priority slurmctld orders them by.
func (p *prioWriter) startRow(dst *prioRows, e prioEvent) {
	j := &p.jobs[e.job]
	tick := p.sched.Last(e.t)
	pj := p.asWaiting(j)
	pj.ID = j.id
	pj.Partitions = p.m.partitionsAt(int(j.ran))
	pend := prioPending{job: pj, at: j.computedAt(tick), submit: j.submit, arrayJob: j.arrayJob}
	p.rows = p.cp.AppendRows(&p.m.params, p.rows[:0], p.m.clusterOf(p.dump), []priority.Job{pj}, pend.at)
	if len(p.rows) == 0 {
		return // held or without a partition: slurmctld computed none
	}
	r := &p.rows[0] // with several QOS (24.11), the job's own: the first
	o := p.m.out(e.t, evStart, &pend, j.who, r, p.fs.snapshot())
	if pj.EligibleSec > 0 {
		o.wait = max(e.t-pj.EligibleSec, 0)
	}
	if !p.rk.built || tick != p.rk.tick || p.epoch != p.rk.epoch {
		p.rk.build(p, tick)
	}
	rank, waiting := p.rk.rank(j, int(j.ran), r.Priority, e.t)
	o.rank, o.n = int64(rank), int64(waiting)
	dst.add(o, r.Weighted.TRES)
}

func ptrTo[T any](v T) *T { return &v }

// initFairShare sets the FairShare in force at the window's start lo:
// that of the history's last snapshot at or before it (rows, at), or with
// none, the FairShare of tree with no usage charged.
func (p *prioWriter) initFairShare(at int64, rows []record.FairshareRow, algo fairshare.Algorithm, tree *fairshare.Tree, damp float64) {
	if len(rows) > 0 {
		p.setFairShareRows(at, rows)
		return
	}
	var res fairshare.Result
	fairshare.Compute(algo, tree, make([]float64, tree.Len()), damp, &res)
	p.setFairShare(0, false, userNodes(tree), res.FairShare)
}
