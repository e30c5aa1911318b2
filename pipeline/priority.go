package pipeline

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/fairledger/fairledger/billing"
	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/priority"
	"github.com/fairledger/fairledger/schemas"
)

// prioModel holds what job priority takes from the run's configuration
// (docs/slurm-semantics.md §13): the weights and flags of slurm.conf, the
// cluster's and partitions' totals from its NodeName and PartitionName
// lines, the association priorities of a sacctmgr dump and the QOS
// priorities of the QOS dump.
type prioModel struct {
	params  priority.Params
	cluster priority.Cluster
	parts   map[string]int // partition name → index in cluster.Partitions
	// maxTimeMin is each partition's MaxTime (minutes; math.MaxUint32 for
	// UNLIMITED), the time limit of a job without one of its own.
	maxTimeMin []uint32
	assoc      map[prioAssocKey]uint32 // (account, user) → effective priority
	qos        *ingest.QOSTable
	// names interns the names of the jobs' records: an Arrow string
	// points into its batch's buffers, which a kept job must not pin.
	names map[string]string
	// qosSets, partSets and tresSets share the jobs' QOS, partition and
	// requested-TRES slices: a cluster's jobs ask for a few hundred
	// combinations (vec and key are their scratch).
	qosSets  map[string][]priority.QOS
	partSets map[string][]int
	tresSets map[string][]uint64
	vec      []uint64
	key      []byte
	single   []int // single[k] == k: partitionsAt's lists
}

// qosOf returns the QOS list of a job of QOS name, shared by every job of
// it (the priority computation only reads a job's slices).
func (m *prioModel) qosOf(name string) []priority.QOS {
	if q, ok := m.qosSets[name]; ok {
		return q
	}
	q := []priority.QOS{{Name: name}}
	if p, ok := m.qos.Priority(name); ok {
		q[0].Priority = uint32(min(max(p, 0), math.MaxUint32))
	}
	m.qosSets[name] = q
	return q
}

// partitionsOf returns the partition indexes of a comma-separated list
// (unknown names left out, each once), shared by every job with the list.
func (m *prioModel) partitionsOf(list string) []int {
	if p, ok := m.partSets[list]; ok {
		return p
	}
	var out []int
	for _, name := range strings.Split(list, ",") {
		if k, ok := m.parts[name]; ok && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	m.partSets[strings.Clone(list)] = out
	return out
}

// partitionsAt returns the one-partition list of partition k, shared by
// every job.
func (m *prioModel) partitionsAt(k int) []int {
	return m.single[k : k+1]
}

// tresOf returns a copy of the TRES vector vec shared by every job that
// asked for the same.
func (m *prioModel) tresOf(vec []uint64) []uint64 {
	key := m.key[:0]
	for _, v := range vec {
		key = binary.LittleEndian.AppendUint64(key, v)
	}
	m.key = key
	if t, ok := m.tresSets[string(key)]; ok {
		return t
	}
	t := slices.Clone(vec)
	m.tresSets[string(key)] = t
	return t
}

// intern returns a copy of s shared by every job with the same name.
func (m *prioModel) intern(s string) string {
	if v, ok := m.names[s]; ok {
		return v
	}
	v := strings.Clone(s)
	m.names[v] = v
	return v
}

type prioAssocKey struct{ account, user string }

// newPrioModel builds the priority model of a run for the slurmctld
// release rel.
func newPrioModel(conf *ingest.Config, assoc *ingest.Associations, qos *ingest.QOSTable, rel ingest.SlurmVersion) (*prioModel, error) {
	tres := schemas.ClusterTRES(conf.AccountingStorageTRES)
	m := &prioModel{parts: map[string]int{}, assoc: map[prioAssocKey]uint32{}, qos: qos, names: map[string]string{},
		qosSets: map[string][]priority.QOS{}, partSets: map[string][]int{}, tresSets: map[string][]uint64{}}
	w := priority.Weights{
		Age: weight32(conf.PriorityWeightAge), Assoc: weight32(conf.PriorityWeightAssoc),
		FairShare: weight32(conf.PriorityWeightFairshare), JobSize: weight32(conf.PriorityWeightJobSize),
		Partition: weight32(conf.PriorityWeightPartition), QOS: weight32(conf.PriorityWeightQOS),
		TRESConfig: conf.PriorityWeightTRES,
	}
	if conf.PriorityWeightTRES != "" {
		ws, err := billing.ParseWeights(conf.PriorityWeightTRES, tres)
		if err != nil {
			return nil, fmt.Errorf("PriorityWeightTRES=%s: %w", conf.PriorityWeightTRES, err)
		}
		w.TRES = make([]float64, len(tres))
		for i, t := range tres {
			w.TRES[i], _ = ws.Get(t)
		}
	}
	m.params = priority.Params{Weights: w, Flags: priority.ParseFlags(conf.PriorityFlags),
		FavorSmall: conf.PriorityFavorSmall, MaxAgeSec: uint32(min(max(conf.PriorityMaxAgeSec, 0), math.MaxUint32)),
		Release: priority.Release{Major: rel.Major, Minor: rel.Minor}}
	m.cluster = priority.Cluster{TRES: tres, Nodes: uint32(conf.Totals.Nodes), CPUs: uint32(conf.Totals.CPUs)}
	for _, p := range conf.Partitions {
		m.parts[p.Name] = len(m.cluster.Partitions)
		m.cluster.Partitions = append(m.cluster.Partitions, priority.Partition{Name: p.Name,
			PriorityJobFactor: uint16(min(max(p.PriorityJobFactor, 0), math.MaxUint16)),
			PriorityTier:      uint16(min(max(p.PriorityTier, 0), math.MaxUint16)),
			TRES:              tresVector(tres, p.Totals.TRES())})
		lim := uint32(math.MaxUint32)
		if p.MaxTimeMin >= 0 {
			lim = uint32(min(p.MaxTimeMin, math.MaxUint32-1))
		}
		m.maxTimeMin = append(m.maxTimeMin, lim)
		m.single = append(m.single, len(m.single))
	}
	if assoc != nil {
		eff := assoc.EffectivePriorities()
		for i, r := range assoc.Rows {
			p := uint32(min(max(eff[i], 0), math.MaxUint32))
			m.cluster.MaxAssocPriority = max(m.cluster.MaxAssocPriority, p)
			if r.IsUser() {
				m.assoc[prioAssocKey{r.Account, r.User}] = p
			}
		}
	}
	if qos != nil {
		for _, q := range qos.Rows {
			m.cluster.MaxQOSPriority = max(m.cluster.MaxQOSPriority, uint32(min(max(q.Priority, 0), math.MaxUint32)))
		}
	}
	return m, nil
}

func weight32(w int64) uint32 { return uint32(min(max(w, 0), math.MaxUint32)) }

// tresVector lays counts out in the order of tres (a shorter vector counts
// the rest 0).
func tresVector(tres []string, counts []ingest.TRESCount) []uint64 {
	v := make([]uint64, len(tres))
	for _, c := range counts {
		if i := slices.Index(tres, schemas.CanonicalTRES(c.TRES)); i >= 0 {
			v[i] = c.Count
		}
	}
	return v
}

// prioJob is one job as its priority needs it: who, where, what it asked
// for, and when it was submitted, became eligible, started and ended.
type prioJob struct {
	job      priority.Job
	jobID    string
	arrayJob uint32 // ArrayJobID; 0 unless an array task
	qos      string
	submit   int64 // Unix seconds; 0 unknown
	eligible int64 // 0 unknown
	start    int64 // 0: never started
	end      int64 // 0: none (still pending or running)
	held     bool  // submitted with --hold: eligible is its release
	ran      int32 // the partition it ran in (index of Cluster.Partitions); -1 unknown or never started
}

// pendingAt reports whether j waited in the queue at t and sprio would
// list it (docs/slurm-semantics.md §13.6): submitted, eligible (its begin
// time, dependency or release reached), not started and not ended.
func (j *prioJob) pendingAt(t int64) bool {
	if j.submit == 0 || j.submit > t || j.eligible == 0 || j.eligible > t {
		return false
	}
	if j.start != 0 && j.start <= t {
		return false
	}
	return j.end == 0 || j.end > t
}

// computedAt is when slurmctld last computed j's factors as of t, the last
// decay tick at or before t being tick: at the tick, unless the job was
// submitted or released after it (slurmctld computes a job's priority
// when it is submitted and when it is released).
func (j *prioJob) computedAt(tick int64) int64 {
	at := max(tick, j.submit)
	if j.held {
		at = max(at, j.eligible)
	}
	return at
}

// queue finds the jobs sprio lists at a series of increasing times, each
// job entering once (at its submission) and leaving once (at its start or
// end), so that a run's snapshots cost the jobs waiting, not all the jobs.
type queue struct {
	jobs          []prioJob
	order         []int32 // the jobs with a submit time, by submit time
	next          int     // order[next:] are not yet submitted
	active        []int32 // submitted and neither started nor ended as of the last time
	firstEligible map[uint32]int64
	arrays        map[uint32]int // scratch: array job id → index in dst
	last          int64
}

// newQueue prepares the queue of jobs.
func newQueue(jobs []prioJob) *queue {
	q := &queue{jobs: jobs, firstEligible: map[uint32]int64{}, arrays: map[uint32]int{}, last: math.MinInt64}
	for i := range jobs {
		j := &jobs[i]
		if j.submit != 0 {
			q.order = append(q.order, int32(i))
		}
		// The pending record of an array keeps the array's eligible time:
		// the earliest of its tasks (sacct gives a throttled array's later
		// tasks the time a slot freed).
		if j.arrayJob != 0 && j.eligible != 0 {
			if e, ok := q.firstEligible[j.arrayJob]; !ok || j.eligible < e {
				q.firstEligible[j.arrayJob] = j.eligible
			}
		}
	}
	slices.SortStableFunc(q.order, func(a, b int32) int { return cmp.Compare(jobs[a].submit, jobs[b].submit) })
	return q
}

// at appends to dst the jobs sprio lists at t, each with the time its
// factors were computed at as of the decay tick tick (the last at or
// before t). Times that increase from call to call cost only the jobs
// submitted since and those waiting; an earlier time starts over. The pending tasks of a job
// array are one job, as slurmctld keeps them until a task starts: the
// array's record, with the array's job id and eligible time.
func (q *queue) at(dst []prioPending, t, tick int64) []prioPending {
	if t < q.last {
		q.next, q.active = 0, q.active[:0] // back in time: from the start
	}
	q.last = t
	for q.next < len(q.order) && q.jobs[q.order[q.next]].submit <= t {
		q.active = append(q.active, q.order[q.next])
		q.next++
	}
	q.active = slices.DeleteFunc(q.active, func(i int32) bool {
		j := &q.jobs[i]
		return j.start != 0 && j.start <= t || j.end != 0 && j.end <= t
	})
	clear(q.arrays)
	for _, i := range q.active {
		j := &q.jobs[i]
		if j.arrayJob == 0 {
			if j.pendingAt(t) {
				dst = append(dst, prioPending{job: j.job, at: j.computedAt(tick), submit: j.submit})
			}
			continue
		}
		if _, ok := q.arrays[j.arrayJob]; ok {
			continue
		}
		e := q.firstEligible[j.arrayJob]
		if e == 0 || e > t {
			continue // not yet eligible: not listed
		}
		p := prioPending{job: j.job, at: j.computedAt(tick), submit: j.submit, arrayJob: j.arrayJob}
		p.job.ID, p.job.EligibleSec = j.arrayJob, e
		q.arrays[j.arrayJob] = len(dst)
		dst = append(dst, p)
	}
	return dst
}

// latestRecords keeps, of the records of a job that the input gives more
// than once (overlapping sacct files), the last one read: the newest
// state of the job. A record is the job's run from one submission: the
// runs of a requeued job, each submitted anew, are records of their own.
// Records keep their order.
func latestRecords(jobs []prioJob) []prioJob {
	type run struct {
		id     string
		submit int64
	}
	last := make(map[run]int, len(jobs))
	for i := range jobs {
		last[run{jobs[i].jobID, jobs[i].submit}] = i
	}
	if len(last) == len(jobs) {
		return jobs
	}
	out := jobs[:0]
	for i := range jobs {
		if last[run{jobs[i].jobID, jobs[i].submit}] == i {
			out = append(out, jobs[i])
		}
	}
	return out
}

// prioPending is a job sprio lists and the time its factors are of.
type prioPending struct {
	job      priority.Job
	at       int64
	submit   int64  // 0 unknown
	arrayJob uint32 // the array's job id; 0 unless a job array
}

// appendPrioJobs appends the jobs of a sacct batch read with
// RequestColumns and KeepPending to dst.
func (m *prioModel) appendPrioJobs(dst []prioJob, rec arrow.Record) ([]prioJob, error) {
	str := func(name string) (func(i int) string, error) {
		d, codes, names, err := schemas.DictStringColumn(rec, name)
		if err != nil {
			return nil, err
		}
		return func(i int) string {
			if d.IsNull(i) {
				return ""
			}
			return m.intern(names.Value(int(codes[i])))
		}, nil
	}
	ts := func(name string) (*array.Timestamp, error) {
		return schemas.RecordColumn[*array.Timestamp](rec, name, "timestamp")
	}
	i64 := func(name string) (*array.Int64, error) {
		return schemas.RecordColumn[*array.Int64](rec, name, "int64")
	}
	var err error
	var user, account, partition, qos, reqParts func(int) string
	for _, c := range []struct {
		f    *func(int) string
		name string
	}{{&user, schemas.ColUser}, {&account, schemas.ColAccount}, {&partition, schemas.ColPartition},
		{&qos, schemas.ColQOS}, {&reqParts, schemas.ColReqPartitions}} {
		if *c.f, err = str(c.name); err != nil {
			return dst, err
		}
	}
	jobID, err := schemas.RecordColumn[*array.String](rec, schemas.ColJobID, "utf8")
	if err != nil {
		return dst, err
	}
	var submit, eligible, start, end *array.Timestamp
	for _, c := range []struct {
		a    **array.Timestamp
		name string
	}{{&submit, schemas.ColSubmit}, {&eligible, schemas.ColEligible}, {&start, schemas.ColStart}, {&end, schemas.ColEnd}} {
		if *c.a, err = ts(c.name); err != nil {
			return dst, err
		}
	}
	var raw, arrayJob, limit, reqCPUs, reqNodes, nice, allocCPUs, nnodes *array.Int64
	for _, c := range []struct {
		a    **array.Int64
		name string
	}{{&raw, schemas.ColJobIDRaw}, {&arrayJob, schemas.ColArrayJobID}, {&limit, schemas.ColTimelimitMin}, {&reqCPUs, schemas.ColReqCPUs},
		{&reqNodes, schemas.ColReqNodes}, {&nice, schemas.ColNice}, {&allocCPUs, schemas.ColAllocCPUs}, {&nnodes, schemas.ColNNodes}} {
		if *c.a, err = i64(c.name); err != nil {
			return dst, err
		}
	}
	hold, err := schemas.RecordColumn[*array.Boolean](rec, schemas.ColHoldRequested, "bool")
	if err != nil {
		return dst, err
	}
	reqTRES, err := schemas.RecordColumn[*array.Map](rec, schemas.ColReqTRES, "map<utf8, float64>")
	if err != nil {
		return dst, err
	}
	keys, kok := reqTRES.Keys().(*array.String)
	vals, vok := reqTRES.Items().(*array.Float64)
	if !kok || !vok {
		return dst, fmt.Errorf("column %q is %s, want map<utf8, float64>", schemas.ColReqTRES, reqTRES.DataType())
	}
	sec := func(a *array.Timestamp, i int) int64 {
		if a.IsNull(i) {
			return 0
		}
		return int64(a.Value(i))
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		pj := prioJob{jobID: strings.Clone(jobID.Value(i)), qos: qos(i), submit: sec(submit, i), eligible: sec(eligible, i),
			start: sec(start, i), end: sec(end, i), held: hold.IsValid(i) && hold.Value(i)}
		j := &pj.job
		j.ID = uint32(raw.Value(i))
		if arrayJob.IsValid(i) {
			pj.arrayJob = uint32(arrayJob.Value(i))
		}
		j.User, j.Account = user(i), account(i)
		j.EligibleSec = pj.eligible
		j.AssocPriority = m.assoc[prioAssocKey{j.Account, j.User}]
		j.QOS = m.qosOf(pj.qos)
		// While pending a job waits in every partition it asked for
		// (SubmitLine's -p); sacct's Partition is the one it ran in.
		parts := reqParts(i)
		if parts == "" {
			parts = partition(i)
		}
		j.Partitions = m.partitionsOf(parts)
		pj.ran = -1
		if pj.start != 0 {
			if k, ok := m.parts[partition(i)]; ok {
				pj.ran = int32(k)
			}
		}
		if reqNodes.IsValid(i) {
			j.Nodes = uint32(reqNodes.Value(i))
		} else {
			j.Nodes = uint32(nnodes.Value(i))
		}
		if reqCPUs.IsValid(i) {
			j.CPUs = uint32(reqCPUs.Value(i))
		} else {
			j.CPUs = uint32(allocCPUs.Value(i))
		}
		switch {
		case limit.IsValid(i):
			j.TimeLimitMin = uint32(min(max(limit.Value(i), 0), math.MaxUint32))
		case len(j.Partitions) > 0:
			j.TimeLimitMin = m.maxTimeMin[j.Partitions[0]]
		}
		if nice.IsValid(i) {
			j.Nice = int32(nice.Value(i))
		}
		if reqTRES.IsValid(i) {
			vec := slices.Grow(m.vec[:0], len(m.cluster.TRES))[:len(m.cluster.TRES)]
			clear(vec)
			lo, hi := reqTRES.ValueOffsets(i)
			for k := lo; k < hi; k++ {
				if t := slices.Index(m.cluster.TRES, schemas.CanonicalTRES(keys.Value(int(k)))); t >= 0 {
					vec[t] = uint64(max(vals.Value(int(k)), 0))
				}
			}
			m.vec = vec
			j.TRES = m.tresOf(vec)
		}
		dst = append(dst, pj)
	}
	return dst, nil
}

// prioWriter computes the priority table's rows at each fair-share
// snapshot: the jobs waiting then, with their factors as of the snapshot's
// tick and their users' FairShare of the snapshot.
type prioWriter struct {
	m    *prioModel
	jobs []prioJob

	queue   *queue // built at the first snapshot
	pending []prioPending
	rows    []priority.Row
	users   []map[prioAssocKey]int // per tree of the run's model: user association → node
	out     []record.PriorityRow   // the month's rows
	// other holds the submit and start rows of months without a snapshot
	// of the run, by month start.
	other map[int64][]record.PriorityRow

	// The submit and start rows (priority_events.go).
	sched   *decay.Schedule // the decay ticks
	lo, to  int64           // the window: events in (lo, to]
	fs      prioFairShare   // the FairShare in force
	epoch   int             // counts the changes of fs
	events  []prioEvent     // built at the first emit
	evNext  int             // events[evNext:] are not yet made
	rankQ   *queue          // the queue the ranks are taken from
	rkAt    int64           // the start time rkList is of
	rkList  []prioPending   // the jobs waiting just before rkAt
	rkTick  int64           // the tick and FairShare rkPrio is of
	rkEpoch int
	rkPrio  map[[2]uint32]uint32 // (job id, partition) → priority
}

// add appends the rows of the snapshot at time at, whose usage is the
// tick's, from the snapshot's fair-share result r over tree number ti.
func (p *prioWriter) add(at, tick int64, ti int, tree *fairshare.Tree, r *fairshare.Result) {
	if p.users == nil {
		p.users = make([]map[prioAssocKey]int, ti+1)
	}
	for len(p.users) <= ti {
		p.users = append(p.users, nil)
	}
	users := p.users[ti]
	if users == nil {
		users = userNodes(tree)
		p.users[ti] = users
	}
	if p.queue == nil {
		p.queue = newQueue(p.jobs)
	}
	p.setFairShare(at, true, users, r.FairShare)
	p.pending = p.queue.at(p.pending[:0], at, tick)
	snap := time.Unix(at, 0).UTC()
	for i := range p.pending {
		j := &p.pending[i]
		j.job.FairShare = p.fs.of(&j.job)
		p.rows = p.m.params.AppendRows(p.rows[:0], &p.m.cluster, []priority.Job{j.job}, j.at)
		for k := range p.rows {
			row := priorityRow(snap, record.EventPending, j, &p.rows[k], p.m.cluster.TRES)
			row.Snapshot = &snap
			p.out = append(p.out, row)
		}
	}
}

// userNodes maps each user association of tree to its node. A user with
// per-partition associations in an account maps to the first: sprio's
// FAIRSHARE is the job's association's.
func userNodes(tree *fairshare.Tree) map[prioAssocKey]int {
	users := map[prioAssocKey]int{}
	for i := 0; i < tree.Len(); i++ {
		if k := (prioAssocKey{tree.Account[i], tree.User[i]}); tree.User[i] != "" {
			if _, ok := users[k]; !ok {
				users[k] = i
			}
		}
	}
	return users
}

// priorityRow is the history row of one priority.Row at time at.
func priorityRow(at time.Time, event string, p *prioPending, r *priority.Row, tres []string) record.PriorityRow {
	w := &r.Weighted
	out := record.PriorityRow{At: at, Event: event, ComputedAt: time.Unix(p.at, 0).UTC(), JobID: int64(r.JobID), User: r.User,
		Account: r.Account, Partition: r.Partition, QOS: r.QOS, Priority: int64(r.Priority),
		AgeW: w.Age, AssocW: w.Assoc, FairShareW: w.FairShare, JobSizeW: w.JobSize, PartitionW: w.Partition,
		QOSW: w.QOS, TRESW: map[string]float64{}, Site: int64(r.Site), Nice: int64(r.Nice)}
	for i, v := range w.TRES {
		if v != 0 && i < len(tres) {
			out.TRESW[tres[i]] = v
		}
	}
	if p.job.EligibleSec > 0 {
		e := time.Unix(p.job.EligibleSec, 0).UTC()
		out.Eligible = &e
	}
	if p.submit > 0 {
		s := time.Unix(p.submit, 0).UTC()
		out.Submit = &s
	}
	if p.arrayJob != 0 {
		a := int64(p.arrayJob)
		out.ArrayJobID = &a
	}
	return out
}
