package queue

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fairledger/fairledger/priority"
)

// Model holds what job priority takes from the run's configuration
// (docs/slurm-semantics.md §13): the weights and flags of slurm.conf, the
// cluster's and partitions' totals from its NodeName and PartitionName
// lines, the association priorities of a sacctmgr dump and the QOS
// priorities of the QOS dump. It also holds the tables a Job's names
// and requests index, so that the jobs of a run hold no pointers.
type Model struct {
	// Params are the weights and flags of slurm.conf.
	Params priority.Params
	// Cluster is the cluster of the newest association dump.
	Cluster priority.Cluster
	parts   map[string]int // partition name → index in Cluster.Partitions
	// maxTimeMin is each partition's MaxTime (minutes; math.MaxUint32 for
	// UNLIMITED), the time limit of a job without one of its own.
	maxTimeMin []uint32
	assoc      map[AssocKey]uint32 // user association → effective priority
	// assocPrio is the newest dump's association priority of a Job's
	// Who and Where (its user and account, and its partitions).
	assocPrio map[[2]uint32]uint32
	// qosPriority is the QOS dump's priority of a QOS (false: none).
	qosPriority func(name string) (int64, bool)

	// whos, wheres and tres are what Job.Who, .Where and .TRES index;
	// their names and slices are shared by every job that asks alike (a
	// cluster's jobs ask for a few hundred combinations), and a built
	// priority.Job points into them: the computation only reads them.
	whos     []whoEntry
	wheres   []whereEntry
	tres     [][]uint64 // tres[0] is nil: no requested TRES
	whoIdx   map[AssocKey]uint32
	whereIdx map[whereKey]uint32
	tresIdx  map[string]uint32 // the vector's bytes → index in tres
	qosSets  map[string][]priority.QOS
	qosNames []string          // the rows' QOS names (outRow.qos)
	qosIdx   map[string]uint16 // name → index in qosNames
	partSets map[string][]int
	key      []byte // scratch: a TRES vector's bytes
	single   []int  // single[k] == k: partitionsAt's lists
	// dumps are the association priorities of each association dump of
	// the run, in the order of the model's trees.
	dumps []Dump
	// throttle is each job array's ArrayTaskThrottle (array job id → the
	// most tasks that run at once), for the arrays that have one.
	throttle map[uint32]uint32
	// holds are the holds of jobs that slurmctld's log shows (AddHold),
	// by job id (an array's pending record: the array's id).
	holds map[uint32][]Hold
	// restarts are slurmctld's starts that slurmctld's log shows
	// (AddRestart), in time order.
	restarts []Restart
}

// Restart is a start of slurmctld: the last decay tick before it stopped
// (LastRan, read back from its state file) and the first tick after it
// (Tick), which its decay thread runs as it starts.
type Restart struct{ LastRan, Tick int64 }

// Hold is a hold of a job from From until its release (Until; 0: none
// seen), as slurmctld's log shows it (_hold_job_rec, _release_job_rec).
type Hold struct{ From, Until int64 }

// NewModel builds the priority model of a run: its weights and flags
// (params), its cluster and partitions (cluster; the highest QOS priority
// set), each partition's MaxTime in minutes (maxTimeMin, in the order of
// cluster.Partitions; math.MaxUint32 for UNLIMITED), the QOS dump's
// priority of a QOS (qosPriority; nil without a QOS dump) and the
// association priorities of each of the run's association dumps (oldest
// first, in the order of the run's trees; those of the newest are the
// model's own, and its Cluster is the newest dump's).
func NewModel(params priority.Params, cluster priority.Cluster, maxTimeMin []uint32, qosPriority func(string) (int64, bool), dumps []Dump) *Model {
	m := &Model{Params: params, Cluster: cluster, parts: map[string]int{}, maxTimeMin: maxTimeMin,
		assoc: map[AssocKey]uint32{}, qosPriority: qosPriority, dumps: dumps, tres: [][]uint64{nil},
		whoIdx: map[AssocKey]uint32{}, whereIdx: map[whereKey]uint32{}, tresIdx: map[string]uint32{},
		qosSets: map[string][]priority.QOS{}, partSets: map[string][]int{}, throttle: map[uint32]uint32{},
		holds: map[uint32][]Hold{}}
	for k, p := range cluster.Partitions {
		m.parts[p.Name] = k
		m.single = append(m.single, k)
	}
	if n := len(dumps); n > 0 {
		m.assoc, m.Cluster = dumps[n-1].Assoc, dumps[n-1].Cluster
	}
	return m
}

// SetArrayThrottle records that job array arrayJob runs at most limit
// tasks at once (sbatch --array=…%limit; 0: no limit), which decides when
// its pending tasks are listed and from when they accrue age
// (docs/slurm-semantics.md §13.6.2). The last call for an array holds.
func (m *Model) SetArrayThrottle(arrayJob, limit uint32) {
	if limit == 0 {
		delete(m.throttle, arrayJob)
		return
	}
	m.throttle[arrayJob] = limit
}

// AddHold records that job id (JobIDRaw; an array's id for its pending
// record) was held at from and released at until (0: no release seen),
// from slurmctld's log: held, a job has priority 0 and sprio does not list
// it; released, its priority is computed anew (docs/slurm-semantics.md
// §13.6.3). Holds are added in time order.
func (m *Model) AddHold(id uint32, from, until int64) {
	m.holds[id] = append(m.holds[id], Hold{From: from, Until: until})
}

// AddRestart records a start of slurmctld from slurmctld's log: the last
// tick before it stopped and the first after it starts. At that first
// tick no scheduling pass has run yet, and a job that became eligible
// while slurmctld was down has no accrue time: its age is 0 until the
// next tick (docs/slurm-semantics.md §13.6.4). Restarts are added in time
// order.
func (m *Model) AddRestart(lastRan, tick int64) {
	m.restarts = append(m.restarts, Restart{LastRan: lastRan, Tick: tick})
}

// Partition returns the index in Cluster.Partitions of the partition
// name (false: the cluster has none of that name).
func (m *Model) Partition(name string) (int, bool) {
	k, ok := m.parts[name]
	return k, ok
}

// DefaultTimeLimitMin is the time limit of a job without one of its own
// that waits where where (an index Where returned): the MaxTime of its
// first partition, 0 when it asked for none the cluster has.
func (m *Model) DefaultTimeLimitMin(where uint32) uint32 {
	if parts := m.wheres[where].parts; len(parts) > 0 {
		return m.maxTimeMin[parts[0]]
	}
	return 0
}

// partitionsAt returns the one-partition list of partition k, shared by
// every job.
func (m *Model) partitionsAt(k int) []int {
	return m.single[k : k+1]
}

// whoEntry is a job's user and account.
type whoEntry struct {
	user, account string
}

// whereEntry is a job's QOS and the partitions it waits in.
type whereEntry struct {
	qos   []priority.QOS
	parts []int
}

type whereKey struct{ qos, parts string }

// qosOf returns the QOS list of a job of QOS name (a string the model may
// keep), shared by every job of it.
func (m *Model) qosOf(name string) []priority.QOS {
	if q, ok := m.qosSets[name]; ok {
		return q
	}
	q := []priority.QOS{{Name: name}}
	if m.qosPriority != nil { // else no QOS dump: priority 0
		if p, ok := m.qosPriority(name); ok {
			q[0].Priority = uint32(min(max(p, 0), math.MaxUint32))
		}
	}
	m.qosSets[name] = q
	return q
}

// partitionsOf returns the partition indexes of a comma-separated list (a
// string the model may keep; unknown names left out, each once), shared by
// every job with the list.
func (m *Model) partitionsOf(list string) []int {
	if p, ok := m.partSets[list]; ok {
		return p
	}
	var out []int
	for _, name := range strings.Split(list, ",") {
		if k, ok := m.parts[name]; ok && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	m.partSets[list] = out
	return out
}

// Who returns the index of the user and account in the model's table of
// user associations, the Job.Who of a job of theirs (copied when new: an
// Arrow string points into its batch's buffers, which the model must not
// pin).
func (m *Model) Who(user, account string) uint32 {
	k := AssocKey{Account: account, User: user}
	if i, ok := m.whoIdx[k]; ok {
		return i
	}
	i := uint32(len(m.whos))
	k = AssocKey{Account: strings.Clone(account), User: strings.Clone(user)}
	m.whos = append(m.whos, whoEntry{user: k.User, account: k.Account})
	m.whoIdx[k] = i
	return i
}

// Where returns the index of the QOS name qos and the comma-separated
// partition list parts in the model's table of where jobs wait, the
// Job.Where of a job of theirs (copied when new).
func (m *Model) Where(qos, parts string) uint32 {
	k := whereKey{qos, parts}
	if i, ok := m.whereIdx[k]; ok {
		return i
	}
	i := uint32(len(m.wheres))
	k = whereKey{strings.Clone(qos), strings.Clone(parts)}
	m.wheres = append(m.wheres, whereEntry{qos: m.qosOf(k.qos), parts: m.partitionsOf(k.parts)})
	m.whereIdx[k] = i
	return i
}

// TRESIndex returns the index in the model's table of requests of a copy
// of the TRES vector vec (counts in the order of Cluster.TRES), the
// Job.TRES of a job that asked for it (never 0, which stands for none).
func (m *Model) TRESIndex(vec []uint64) uint32 {
	key := m.key[:0]
	for _, v := range vec {
		key = binary.LittleEndian.AppendUint64(key, v)
	}
	m.key = key
	if i, ok := m.tresIdx[string(key)]; ok {
		return i
	}
	i := uint32(len(m.tres))
	m.tres = append(m.tres, slices.Clone(vec))
	m.tresIdx[string(key)] = i
	return i
}

// priorityJob sets *dst to the priority.Job of j, its slices and names
// shared with the model's tables (FairShare 0: the snapshot's to set),
// with the association priority of association dump number dump. Like
// Who and Where it adds to the model's tables (its cache of association
// priorities): a model serves one goroutine.
func (m *Model) priorityJob(dst *priority.Job, j *Job, dump int) {
	w, r := &m.whos[j.Who], &m.wheres[j.Where]
	*dst = priority.Job{ID: j.ID, User: w.user, Account: w.account, EligibleSec: j.Eligible,
		QOS: r.qos, Partitions: r.parts, Nodes: j.Nodes, CPUs: j.CPUs,
		TimeLimitMin: j.TimeLimitMin, TRES: m.tres[j.TRES], Nice: j.Nice}
	if len(m.dumps) > 1 && dump != len(m.dumps)-1 {
		dst.AssocPriority, _ = lookupAssoc(m.dumps[dump].Assoc, m.assocKey(dst))
		return
	}
	// The newest dump's, kept per user and partition list: a snapshot
	// builds every waiting job anew.
	k := [2]uint32{j.Who, j.Where}
	p, ok := m.assocPrio[k]
	if !ok {
		p, _ = lookupAssoc(m.assoc, m.assocKey(dst))
		if m.assocPrio == nil {
			m.assocPrio = map[[2]uint32]uint32{}
		}
		m.assocPrio[k] = p
	}
	dst.AssocPriority = p
}

// assocKey is the user association job j's priority is computed with
// (docs/slurm-semantics.md §4.4): its account and user, and the first
// partition it asked for. slurmctld looks the association up with the
// job's partition (job_mgr.c, job_create: assoc_mgr_fill_in_assoc with
// assoc_rec.partition set) and refuses a job in several partitions that
// do not all give the same association (_check_for_part_assocs,
// ESLURM_PARTITION_ASSOC, since 21.08), so any of its partitions gives
// the one job_ptr->assoc_ptr that priority/multifactor takes the ASSOC and
// FAIRSHARE factors of for every row of the job.
func (m *Model) assocKey(j *priority.Job) AssocKey {
	k := AssocKey{Account: j.Account, User: j.User}
	if len(j.Partitions) > 0 {
		k.Partition = m.Cluster.Partitions[j.Partitions[0]].Name
	}
	return k
}

// lookupAssoc returns the value of the user association k stands for in
// byAssoc, as assoc_mgr_fill_in_assoc finds it: the association of k's
// partition when there is one, else the user's association without a
// partition (false: neither).
func lookupAssoc[V any](byAssoc map[AssocKey]V, k AssocKey) (V, bool) {
	if k.Partition != "" {
		if v, ok := byAssoc[k]; ok {
			return v, true
		}
		k.Partition = ""
	}
	v, ok := byAssoc[k]
	return v, ok
}

// clusterOf returns the cluster as association dump number dump has it:
// its highest association priority is the dump's.
func (m *Model) clusterOf(dump int) *priority.Cluster {
	if len(m.dumps) > 1 && dump != len(m.dumps)-1 {
		return &m.dumps[dump].Cluster
	}
	return &m.Cluster
}

// Dump is what job priority takes from one association dump: each
// user association's effective priority and the cluster with the dump's
// highest.
type Dump struct {
	Assoc   map[AssocKey]uint32 // user association (per partition too) → effective priority
	Cluster priority.Cluster
}

// AssocKey is a user association: its account, user and, for a
// per-partition association, partition ("" for the user's association
// without one).
type AssocKey struct{ Account, User, Partition string }

// Job is one job as its priority needs it: who, where, what it asked
// for, and when it was submitted, became eligible, started and ended. It
// holds no pointers (names and requests are indexes into the Model's
// tables; Model.priorityJob builds its priority.Job), so that the
// garbage collector need not scan the millions of a year's jobs.
type Job struct {
	Submit       int64  // Unix seconds; 0 unknown
	Eligible     int64  // 0 unknown
	Start        int64  // 0: never started
	End          int64  // 0: none (still pending or running)
	ID           uint32 // JobIDRaw, the id sprio prints
	ArrayJob     uint32 // ArrayJobID; 0 unless an array task
	Who          uint32 // Model.Who's index: user, account
	Where        uint32 // Model.Where's index: QOS, partitions
	TRES         uint32 // Model.TRESIndex's index; 0: none requested
	Nodes, CPUs  uint32
	TimeLimitMin uint32
	Nice         int32
	Ran          int16 // the partition it ran in (index of Cluster.Partitions); -1 unknown or never started
	Held         bool  // submitted with --hold: Eligible is its release
	ArrayPending bool  // the pending remainder of an array (JobID A_[…]), whose JobIDRaw its last task keeps
}

// pendingAt reports whether j waited in the queue at t and sprio would
// list it (docs/slurm-semantics.md §13.6): submitted, eligible (its begin
// time, dependency or release reached), not started and not ended.
func (j *Job) pendingAt(t int64) bool {
	if j.Submit == 0 || j.Submit > t || j.Eligible == 0 || j.Eligible > t {
		return false
	}
	if j.Start != 0 && j.Start <= t {
		return false
	}
	return j.End == 0 || j.End > t
}

// computedAt is when slurmctld last computed j's factors as of t, the last
// decay tick at or before t being tick: at the tick, unless the job was
// submitted or released after it (slurmctld computes a job's priority
// when it is submitted and when it is released).
func (j *Job) computedAt(tick int64) int64 {
	at := max(tick, j.Submit)
	if j.Held {
		at = max(at, j.Eligible)
	}
	return at
}

// Queue finds the jobs sprio lists at a series of increasing times, each
// job entering once (at its submission) and leaving once (at its start or
// end), so that a run's snapshots cost the jobs waiting, not all the jobs.
type Queue struct {
	jobs          []Job
	order         []int32 // the jobs with a submit time, by submit time
	next          int     // order[next:] are not yet submitted
	active        []int32 // submitted and neither started nor ended as of the last time
	firstEligible map[uint32]int64
	arrays        map[uint32]int // scratch: array job id → index in dst
	// members holds each array's records (tasks and pending remainder),
	// by array job id; throttle is each array's ArrayTaskThrottle (the
	// Model's, see Model.SetArrayThrottle) and accrue the eligible time
	// its pending remainder accrues from (arrayEligible), once worked out.
	members  map[uint32][]int32
	throttle map[uint32]uint32
	accrue   map[uint32]int64
	// holds and restarts are the model's, from slurmctld's log
	// (Model.AddHold, Model.AddRestart).
	holds    map[uint32][]Hold
	restarts []Restart
	// accrueAlways is PriorityFlags=ACCRUE_ALWAYS: sprio lists a job from
	// its submission, and a throttled array's remainder with it.
	accrueAlways bool
	last         int64
	// Model builds the priority.Job of each job listed, with the association
	// priorities of dump number dump; without it (a test of the queue
	// alone) a listed job has only its ID and EligibleSec, what the queue
	// itself decides.
	Model *Model
	dump  int
}

// New prepares the queue of jobs.
func New(jobs []Job) *Queue {
	q := &Queue{jobs: jobs, order: make([]int32, 0, len(jobs)), firstEligible: map[uint32]int64{}, arrays: map[uint32]int{},
		members: map[uint32][]int32{}, accrue: map[uint32]int64{}, last: math.MinInt64}
	for i := range jobs {
		j := &jobs[i]
		if j.Submit != 0 {
			q.order = append(q.order, int32(i))
		}
		// The pending record of an array keeps the array's eligible time:
		// the earliest of its tasks (sacct gives a throttled array's later
		// tasks the time a slot freed).
		if j.ArrayJob != 0 {
			q.members[j.ArrayJob] = append(q.members[j.ArrayJob], int32(i))
		}
		if j.ArrayJob != 0 && j.Eligible != 0 {
			if e, ok := q.firstEligible[j.ArrayJob]; !ok || j.Eligible < e {
				q.firstEligible[j.ArrayJob] = j.Eligible
			}
		}
	}
	slices.SortStableFunc(q.order, func(a, b int32) int { return cmp.Compare(jobs[a].Submit, jobs[b].Submit) })
	return q
}

// At appends to dst the jobs sprio lists at t, each with the time its
// factors were computed at as of the decay tick tick (the last at or
// before t). Times that increase from call to call cost only the jobs
// submitted since and those waiting; an earlier time starts over. The pending tasks of a job
// array are one job, as slurmctld keeps them until a task starts: the
// array's record, with the array's job id and eligible time.
func (q *Queue) At(dst []Pending, t, tick int64) []Pending {
	q.fromModel()
	if t < q.last {
		q.next, q.active = 0, q.active[:0] // back in time: from the start
	}
	q.last = t
	for q.next < len(q.order) && q.jobs[q.order[q.next]].Submit <= t {
		q.active = append(q.active, q.order[q.next])
		q.next++
	}
	q.active = slices.DeleteFunc(q.active, func(i int32) bool {
		j := &q.jobs[i]
		return j.Start != 0 && j.Start <= t || j.End != 0 && j.End <= t
	})
	clear(q.arrays)
	for _, i := range q.active {
		j := &q.jobs[i]
		if j.ArrayJob == 0 {
			if j.pendingAt(t) {
				released, held := q.heldAt(j.ID, t)
				if held {
					continue
				}
				dst = append(dst, Pending{At: max(j.computedAt(tick), released), submit: j.Submit, who: j.Who})
				q.build(&dst[len(dst)-1].Job, j)
				q.notAccruedYet(&dst[len(dst)-1], tick)
			} else if q.waitedBeforeHold(j, t) {
				// Held after it had been pending: sacct's Eligible is the
				// release's; before the hold it waited from its submission.
				dst = append(dst, Pending{At: j.computedAt(tick), submit: j.Submit, who: j.Who})
				q.build(&dst[len(dst)-1].Job, j)
				dst[len(dst)-1].Job.EligibleSec = j.Submit
				q.notAccruedYet(&dst[len(dst)-1], tick)
			}
			continue
		}
		if _, ok := q.arrays[j.ArrayJob]; ok {
			continue
		}
		e := q.firstEligible[j.ArrayJob]
		if e == 0 || e > t {
			continue // not yet eligible: not listed
		}
		if q.throttled(j.ArrayJob, t) {
			continue // its begin time cleared while its tasks run at the limit
		}
		released, held := q.heldAt(j.ArrayJob, t)
		if held {
			continue
		}
		e = q.arrayEligible(j.ArrayJob)
		q.arrays[j.ArrayJob] = len(dst)
		dst = append(dst, Pending{At: max(j.computedAt(tick), released), submit: j.Submit, arrayJob: j.ArrayJob, who: j.Who})
		p := &dst[len(dst)-1]
		q.build(&p.Job, j)
		p.Job.ID, p.Job.EligibleSec = j.ArrayJob, e
		q.notAccruedYet(p, tick)
	}
	return dst
}

// notAccruedYet clears the accrue time of p when its factors were
// computed at tick, the first tick of a slurmctld start, and it became
// eligible while slurmctld was down: its accrue time is set by the first
// scheduling pass after the start, which comes after that tick
// (docs/slurm-semantics.md §13.6.4). Its age is then 0.
func (q *Queue) notAccruedYet(p *Pending, tick int64) {
	if p.At != tick || q.accrueAlways {
		return
	}
	for _, r := range q.restarts {
		if r.Tick == tick {
			if e := p.Job.EligibleSec; e > r.LastRan && e <= tick {
				p.Job.EligibleSec = 0
			}
			return
		}
	}
}

// waitedBeforeHold reports whether j, which sacct shows eligible only at
// or after the first hold slurmctld's log gives it, waited in the queue at
// t, before that hold: a job held after it had been pending keeps, in
// slurmdbd, only the eligible time of its release (_release_job_rec sets
// a new begin time), and one submitted without --hold was eligible from
// its submission (docs/slurm-semantics.md §13.6.3).
func (q *Queue) waitedBeforeHold(j *Job, t int64) bool {
	h := q.holds[j.ID]
	if j.Held || len(h) == 0 || t >= h[0].From || j.Submit == 0 || j.Submit > t || j.Eligible < h[0].From {
		return false
	}
	return (j.Start == 0 || j.Start > t) && (j.End == 0 || j.End > t)
}

// heldAt reports whether slurmctld's log shows job id held at t, and the
// time of its last release at or before t (0: none), when slurmctld
// computed its priority anew (_release_job_rec calls set_job_prio).
func (q *Queue) heldAt(id uint32, t int64) (released int64, held bool) {
	for _, h := range q.holds[id] {
		if h.From > t {
			break
		}
		if h.Until == 0 || h.Until > t {
			return released, true
		}
		released = h.Until
	}
	return released, false
}

// fromModel takes the array throttles, holds, restarts and flags of the
// queue's model, when it has one.
func (q *Queue) fromModel() {
	if m := q.Model; m != nil {
		q.throttle, q.holds, q.restarts = m.throttle, m.holds, m.restarts
		q.accrueAlways = m.Params.Flags.AccrueAlways
	}
}

// running counts the tasks of array a that run after the scheduling pass
// of second t: started at or before it and not ended.
func (q *Queue) running(a uint32, t int64) uint32 {
	var n uint32
	for _, i := range q.members[a] {
		if j := &q.jobs[i]; j.Start != 0 && j.Start <= t && (j.End == 0 || j.End > t) {
			n++
		}
	}
	return n
}

// throttled reports whether sprio leaves array a out at t
// (docs/slurm-semantics.md §13.6.2): it has an ArrayTaskThrottle and as
// many of its tasks run at t, so slurmctld's job_array_start_test has
// cleared its pending record's begin time, and
// priority_p_get_priority_factors_list skips a job without one (unless
// ACCRUE_ALWAYS, which looks at the submit time instead).
func (q *Queue) throttled(a uint32, t int64) bool {
	lim := q.throttle[a]
	if lim == 0 || q.accrueAlways {
		return false
	}
	// At the instant t (t.000): a task whose start sacct gives as second
	// t started in the pass that then reached the limit, after t.000, and
	// one whose end is second t still runs.
	var n uint32
	for _, i := range q.members[a] {
		if j := &q.jobs[i]; j.Start != 0 && j.Start < t && (j.End == 0 || j.End >= t) {
			n++
		}
	}
	return n >= lim
}

// arrayEligible is the time the pending record of array a accrues age
// from (docs/slurm-semantics.md §13.6.2): the array's first eligible time,
// unless its tasks already ran at the throttle by the end of that
// scheduling pass, which cleared the begin time before any pass set an
// accrue time; then the first later time a slot freed (an eligible time
// of its records) at which the limit was not reached again, and 0 (no
// age) when there is none.
func (q *Queue) arrayEligible(a uint32) int64 {
	first := q.firstEligible[a]
	lim := q.throttle[a]
	if lim == 0 || q.accrueAlways {
		return first
	}
	if e, ok := q.accrue[a]; ok {
		return e
	}
	var times []int64
	for _, i := range q.members[a] {
		if e := q.jobs[i].Eligible; e >= first && e != 0 {
			times = append(times, e)
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	var e int64
	for _, t := range times {
		if q.running(a, t) < lim {
			e = t
			break
		}
	}
	q.accrue[a] = e
	return e
}

// build sets *dst to the priority.Job of j (see queue.m).
func (q *Queue) build(dst *priority.Job, j *Job) {
	if q.Model == nil {
		*dst = priority.Job{ID: j.ID, EligibleSec: j.Eligible}
		return
	}
	q.Model.priorityJob(dst, j, q.dump)
}

// LatestRecords keeps, of the records of a job that the input gives more
// than once (overlapping sacct files), the last one read: the newest
// state of the job. A job is its JobIDRaw, and the pending remainder of
// an array (A_[…]) is another job than the task that keeps the array's
// id when it starts. A record is the job's run from one submission: the
// runs of a requeued job, each submitted anew, are records of their own.
// Records keep their order.
func LatestRecords(jobs []Job) []Job {
	// Each record as its job's key (33 bits) over its index (31 bits):
	// sorted, a job's records are adjacent, the last read last. sacct
	// lists jobs by id, so the keys of one file are usually in order
	// already and the sort is skipped.
	const idxBits = 31
	if len(jobs) >= 1<<idxBits {
		panic(fmt.Sprintf("LatestRecords: %d jobs", len(jobs)))
	}
	key := func(j *Job) uint64 {
		k := uint64(j.ID) << 1
		if j.ArrayPending {
			k |= 1
		}
		return k
	}
	sorted := true
	for i := 1; i < len(jobs) && sorted; i++ {
		sorted = key(&jobs[i-1]) < key(&jobs[i])
	}
	if sorted {
		return jobs // every key once
	}
	keys := make([]uint64, len(jobs))
	for i := range jobs {
		keys[i] = key(&jobs[i])<<idxBits | uint64(i)
	}
	slices.Sort(keys)
	const idxMask = 1<<idxBits - 1
	drop := make([]bool, len(jobs))
	dup := false
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && keys[hi]>>idxBits == keys[lo]>>idxBits {
			hi++
		}
		// A job's records (a few): each dropped when a later one is of
		// the same submission.
		for a := lo; a < hi; a++ {
			for b := a + 1; b < hi; b++ {
				if jobs[keys[a]&idxMask].Submit == jobs[keys[b]&idxMask].Submit {
					drop[keys[a]&idxMask], dup = true, true
					break
				}
			}
		}
		lo = hi
	}
	if !dup {
		return jobs
	}
	out := jobs[:0]
	for i := range jobs {
		if !drop[i] {
			out = append(out, jobs[i])
		}
	}
	return out
}

// Pending is a job sprio lists and the time its factors are of.
type Pending struct {
	Job      priority.Job // built by the queue's model
	At       int64        // when its factors were computed
	submit   int64        // 0 unknown
	arrayJob uint32       // the array's job id; 0 unless a job array
	who      uint32       // its user association (Model.Who)

}
