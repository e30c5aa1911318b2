package queue

import (
	"math"
	"slices"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/priority"
)

// ranker ranks a job that starts among the jobs waiting in its partition
// just before. Between two decay ticks (and while the FairShare and the
// association dump stay the same) every waiting job keeps the priority
// slurmctld computed at the tick, or at its submission or release after
// it: the ranker computes them once per such group, for the jobs that
// may wait at some time of it, per partition, and counts, for each start,
// those still waiting then. A start costs a scan of its partition's list;
// a group, one priority per job that may wait in it.
type ranker struct {
	jobs   []Job
	q      *Queue  // the jobs by submit time; each array's first eligible time
	next   int     // q.order[next:] are not yet submitted
	active []int32 // submitted and neither started nor ended before the group
	// Each active job has a slot, active[k] slot[k], which holds what its
	// priorities are computed from: its job id as it waits (an array's),
	// its eligible time, and the Terms of its first row in each partition
	// it waits in, computed when it becomes active and again when the
	// FairShare or the association dump changes (epoch), so that a tick
	// costs a sum per job and partition. free lists the slots no job
	// holds.
	slot    []int32
	keys    []uint32
	eligs   []int64
	terms   [][]priority.Terms
	free    []int32
	pjEpoch int
	arrays  map[[2]uint32]int // scratch: (array, partition) → index in its list, for an array's second partition on
	// Each array has a number (arrayNum, given when its first task becomes
	// active; slotArray: a slot's, -1 for a job of no array), and seen[num]
	// says where the build numbered builds listed it first: a map lookup for
	// every task at every build took 3.3 of the 62 CPU-s of the 5 M-job
	// year's `run --priority`.
	arrayNum  map[uint32]int32
	slotArray []int32
	seen      []arraySeen
	builds    uint32

	built bool
	tick  int64 // the group: starts from tick to the next tick
	epoch int   // with FairShare and association dump Writer.epoch
	parts [][]rankEntry
	rows  []priority.Row
}

// arraySeen is where a build listed an array first: in partition part's
// list at index at.
type arraySeen struct {
	build    uint32
	part, at int32
}

// rankEntry is a job that may wait in a partition during a group, with its
// priority there.
type rankEntry struct {
	prio uint32
	key  uint32 // the job id; an array's pending tasks are one job: the array's
	// When it waited: from its submission and eligible time (an array's
	// first) until it started or ended (an array: its last task did;
	// math.MaxInt64 while it waits).
	submit, elig, until int64
}

// waitingAt reports whether e waited at x.
func (e *rankEntry) waitingAt(x int64) bool {
	return e.submit != 0 && e.submit <= x && e.elig != 0 && e.elig <= x && e.until > x
}

// leaves is when j left the queue: it started or ended (math.MaxInt64:
// neither).
func (j *Job) leaves() int64 {
	switch {
	case j.Start != 0:
		return j.Start
	case j.End != 0:
		return j.End
	}
	return math.MaxInt64
}

func newRanker(p *Writer) *ranker {
	return &ranker{jobs: p.Jobs, q: p.newQueue()}
}

// build computes the priorities of the group of the decay tick tick with
// p's FairShare and association dump: those of every job that may wait
// before the next tick, per partition.
func (r *ranker) build(p *Writer, tick int64) {
	last := p.Sched.Next(tick) - 2 // the latest "just before a start" of the group
	n := 0
	for k, i := range r.active {
		if j := &r.jobs[i]; j.Start != 0 && j.Start < tick || j.End != 0 && j.End < tick {
			r.free = append(r.free, r.slot[k]) // started or ended before the group
			continue
		}
		r.active[n], r.slot[n] = i, r.slot[k]
		n++
	}
	r.active, r.slot = r.active[:n], r.slot[:n]
	if p.epoch != r.pjEpoch {
		for k, i := range r.active {
			r.fill(p, r.slot[k], &r.jobs[i])
		}
		r.pjEpoch = p.epoch
	}
	for r.next < len(r.q.order) && r.jobs[r.q.order[r.next]].Submit <= last {
		i := r.q.order[r.next]
		var s int32
		if f := len(r.free); f > 0 {
			s, r.free = r.free[f-1], r.free[:f-1]
		} else {
			s = int32(len(r.keys))
			r.keys, r.eligs, r.terms = append(r.keys, 0), append(r.eligs, 0), append(r.terms, nil)
			r.slotArray = append(r.slotArray, -1)
		}
		r.slotArray[s] = r.numberArray(r.jobs[i].ArrayJob)
		r.fill(p, s, &r.jobs[i])
		r.active, r.slot = append(r.active, i), append(r.slot, s)
		r.next++
	}
	for len(r.parts) < len(p.Model.Cluster.Partitions) {
		r.parts = append(r.parts, nil)
	}
	for k := range r.parts {
		r.parts[k] = r.parts[k][:0]
	}
	if r.arrays == nil {
		r.arrays = map[[2]uint32]int{}
	}
	clear(r.arrays)
	r.builds++
	for k, i := range r.active {
		s := r.slot[k]
		j, key, elig := &r.jobs[i], r.keys[s], r.eligs[s]
		if elig == 0 || elig > last {
			continue
		}
		at := j.computedAt(tick)
		for t := range r.terms[s] {
			part := r.terms[s][t].Partition
			if part >= len(r.parts) {
				continue
			}
			if a := r.slotArray[s]; a >= 0 {
				// The array's tasks are one job, waiting until the last
				// leaves.
				if at, ok := r.listed(a, j.ArrayJob, part); ok {
					e := &r.parts[part][at]
					e.until = max(e.until, j.leaves())
					continue
				}
			}
			r.parts[part] = append(r.parts[part], rankEntry{prio: p.Model.Params.PriorityAt(&r.terms[s][t], at), key: key,
				submit: j.Submit, elig: elig, until: j.leaves()})
		}
	}
	r.built, r.tick, r.epoch = true, tick, p.epoch
}

// numberArray returns array's number (arraySeen), giving it the next one
// the first time; -1 for 0 (no array).
func (r *ranker) numberArray(array uint32) int32 {
	if array == 0 {
		return -1
	}
	if r.arrayNum == nil {
		r.arrayNum = map[uint32]int32{}
	}
	a, ok := r.arrayNum[array]
	if !ok {
		a = int32(len(r.seen))
		r.arrayNum[array] = a
		r.seen = append(r.seen, arraySeen{})
	}
	return a
}

// listed returns where this build listed the array numbered a (job id
// array) in partition part's list, and whether it did; if it did not, it
// records that the array's entry goes next into that list.
func (r *ranker) listed(a int32, array uint32, part int) (int, bool) {
	next := len(r.parts[part])
	sn := &r.seen[a]
	switch {
	case sn.build != r.builds: // the array's first task of the build
		*sn = arraySeen{r.builds, int32(part), int32(next)}
		return next, false
	case sn.part == int32(part):
		return int(sn.at), true
	}
	ak := [2]uint32{array, uint32(part)} // a second partition: rare
	if at, ok := r.arrays[ak]; ok {
		return at, true
	}
	r.arrays[ak] = next
	return next, false
}

// fill sets slot s to job j as it waits now: its id, eligible time and
// the Terms of its first row in each partition (with several QOS, 24.11,
// the job's own QOS is the first).
func (r *ranker) fill(p *Writer, s int32, j *Job) {
	pj := p.asWaiting(j)
	r.keys[s], r.eligs[s] = pj.ID, pj.EligibleSec
	var terms []priority.Terms
	r.rows, terms = p.cp.AppendRowsTerms(&p.Model.Params, r.rows[:0], r.terms[s][:0], p.Model.clusterOf(p.dump), []priority.Job{pj}, 0)
	n := 0
	for _, t := range terms {
		if n == 0 || terms[n-1].Partition != t.Partition {
			terms[n] = t
			n++
		}
	}
	r.terms[s] = terms[:n]
}

// rank returns 1 + the number of jobs waiting in partition part just
// before t (one second before) whose priority there was above prio, and
// how many waited there, j included.
func (r *ranker) rank(j *Job, part int, prio uint32, t int64) (rank, waiting int) {
	self := j.ID
	if j.ArrayJob != 0 {
		self = j.ArrayJob
	}
	rank, waiting = 1, 1
	if part < 0 || part >= len(r.parts) {
		return rank, waiting
	}
	x := t - 1
	for i := range r.parts[part] {
		e := &r.parts[part][i]
		if !e.waitingAt(x) || e.key == self {
			continue
		}
		waiting++
		if outranks(e.prio, prio) {
			rank++
		}
	}
	return rank, waiting
}

// outranks reports whether a job of priority other waits ahead of one of
// priority prio in their partition: only a higher priority does; jobs of
// equal priority are not counted ahead of each other.
func outranks(other, prio uint32) bool { return other > prio }

// Ahead ranks the job job among the queue rows (the pending rows of
// one instant, as pipeline.MomentResult.Priority holds them) of partition part, by
// the rule the start rows' rank follows: it returns the ids of the jobs
// waiting there ahead of it (a higher priority; an array's pending tasks
// are one job, listed once, ranked by its first row), sorted, and how
// many jobs waited there, itself included. Its rank is 1 + len(ahead).
// ok is false when job has no row in part.
func Ahead(rows []record.PriorityRow, job int64, part string) (ahead []int64, waiting int, ok bool) {
	var prio uint32
	for i := range rows {
		if r := &rows[i]; r.JobID == job && r.Partition == part {
			prio, ok = clampPriority(r.Priority), true
			break
		}
	}
	if !ok {
		return nil, 0, false
	}
	seen := map[int64]bool{job: true}
	waiting = 1
	for i := range rows {
		r := &rows[i]
		if r.Partition != part || seen[r.JobID] {
			continue
		}
		seen[r.JobID] = true
		waiting++
		if outranks(clampPriority(r.Priority), prio) {
			ahead = append(ahead, r.JobID)
		}
	}
	slices.Sort(ahead)
	return ahead, waiting, true
}

// clampPriority is a stored priority (int64) as slurmctld held it.
func clampPriority(p int64) uint32 { return uint32(min(max(p, 0), math.MaxUint32)) }
