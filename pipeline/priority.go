package pipeline

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fairledger/fairledger/billing"
	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/priority"
	"github.com/fairledger/fairledger/schemas"
)

// prioModel holds what job priority takes from the run's configuration
// (docs/slurm-semantics.md §13): the weights and flags of slurm.conf, the
// cluster's and partitions' totals from its NodeName and PartitionName
// lines, the association priorities of a sacctmgr dump and the QOS
// priorities of the QOS dump. It also holds the tables a prioJob's names
// and requests index, so that the jobs of a run hold no pointers.
type prioModel struct {
	params  priority.Params
	cluster priority.Cluster
	parts   map[string]int // partition name → index in cluster.Partitions
	// maxTimeMin is each partition's MaxTime (minutes; math.MaxUint32 for
	// UNLIMITED), the time limit of a job without one of its own.
	maxTimeMin []uint32
	assoc      map[prioAssocKey]uint32 // (account, user) → effective priority
	qos        *ingest.QOSTable

	// who, wheres and tres are what prioJob.who, .where and .tres index;
	// their names and slices are shared by every job that asks alike (a
	// cluster's jobs ask for a few hundred combinations), and a built
	// priority.Job points into them: the computation only reads them.
	who      []prioWho
	wheres   []prioWhere
	tres     [][]uint64 // tres[0] is nil: no requested TRES
	whoIdx   map[prioAssocKey]uint32
	whereIdx map[prioWhereKey]uint32
	tresIdx  map[string]uint32 // the vector's bytes → index in tres
	qosSets  map[string][]priority.QOS
	qosNames []string          // the rows' QOS names (prioOut.qos)
	qosIdx   map[string]uint16 // name → index in qosNames
	partSets map[string][]int
	vec      []uint64 // scratch: a row's TRES vector
	key      []byte   // scratch: its bytes
	single   []int    // single[k] == k: partitionsAt's lists
	// dumps are the association priorities of each association dump of
	// the run, in the order of the model's trees.
	dumps []prioDump
}

// partitionsAt returns the one-partition list of partition k, shared by
// every job.
func (m *prioModel) partitionsAt(k int) []int {
	return m.single[k : k+1]
}

// prioWho is a job's user and account and its association's priority.
type prioWho struct {
	user, account string
	assocPriority uint32
}

// prioWhere is a job's QOS and the partitions it waits in.
type prioWhere struct {
	qos   []priority.QOS
	parts []int
}

type prioWhereKey struct{ qos, parts string }

// qosOf returns the QOS list of a job of QOS name (a string the model may
// keep), shared by every job of it.
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

// partitionsOf returns the partition indexes of a comma-separated list (a
// string the model may keep; unknown names left out, each once), shared by
// every job with the list.
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
	m.partSets[list] = out
	return out
}

// whoOf returns the index in m.who of the user and account (copied when
// new: an Arrow string points into its batch's buffers, which the model
// must not pin).
func (m *prioModel) whoOf(user, account string) uint32 {
	k := prioAssocKey{account, user}
	if i, ok := m.whoIdx[k]; ok {
		return i
	}
	i := uint32(len(m.who))
	k = prioAssocKey{strings.Clone(account), strings.Clone(user)}
	m.who = append(m.who, prioWho{user: k.user, account: k.account, assocPriority: m.assoc[k]})
	m.whoIdx[k] = i
	return i
}

// whereOf returns the index in m.wheres of the QOS name and partition
// list (copied when new).
func (m *prioModel) whereOf(qos, parts string) uint32 {
	k := prioWhereKey{qos, parts}
	if i, ok := m.whereIdx[k]; ok {
		return i
	}
	i := uint32(len(m.wheres))
	k = prioWhereKey{strings.Clone(qos), strings.Clone(parts)}
	m.wheres = append(m.wheres, prioWhere{qos: m.qosOf(k.qos), parts: m.partitionsOf(k.parts)})
	m.whereIdx[k] = i
	return i
}

// tresOf returns the index in m.tres of a copy of the TRES vector vec
// (never 0, which stands for none).
func (m *prioModel) tresOf(vec []uint64) uint32 {
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
// with the association priority of association dump number dump.
func (m *prioModel) priorityJob(dst *priority.Job, j *prioJob, dump int) {
	w, r := &m.who[j.who], &m.wheres[j.where]
	*dst = priority.Job{ID: j.id, User: w.user, Account: w.account, EligibleSec: j.eligible,
		AssocPriority: w.assocPriority, QOS: r.qos, Partitions: r.parts, Nodes: j.nodes, CPUs: j.cpus,
		TimeLimitMin: j.timeLimitMin, TRES: m.tres[j.tres], Nice: j.nice}
	if len(m.dumps) > 1 && dump != len(m.dumps)-1 {
		dst.AssocPriority = m.dumps[dump].assoc[prioAssocKey{w.account, w.user}]
	}
}

// clusterOf returns the cluster as association dump number dump has it:
// its highest association priority is the dump's.
func (m *prioModel) clusterOf(dump int) *priority.Cluster {
	if len(m.dumps) > 1 && dump != len(m.dumps)-1 {
		return &m.dumps[dump].cluster
	}
	return &m.cluster
}

// prioDump is what job priority takes from one association dump: each
// user association's effective priority and the cluster with the dump's
// highest.
type prioDump struct {
	assoc   map[prioAssocKey]uint32
	cluster priority.Cluster
}

type prioAssocKey struct{ account, user string }

// newPrioModel builds the priority model of a run for the slurmctld
// release rel, with the association priorities of each of the run's
// association dumps (oldest first; those of the newest are the model's
// own: m.assoc, m.cluster).
func newPrioModel(conf *ingest.Config, assocs []*ingest.Associations, qos *ingest.QOSTable, rel release.Series) (*prioModel, error) {
	tres := schemas.ClusterTRES(conf.AccountingStorageTRES)
	m := &prioModel{parts: map[string]int{}, assoc: map[prioAssocKey]uint32{}, qos: qos, tres: [][]uint64{nil},
		whoIdx: map[prioAssocKey]uint32{}, whereIdx: map[prioWhereKey]uint32{}, tresIdx: map[string]uint32{},
		qosSets: map[string][]priority.QOS{}, partSets: map[string][]int{}}
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
		Release: rel}
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
	if qos != nil {
		for _, q := range qos.Rows {
			m.cluster.MaxQOSPriority = max(m.cluster.MaxQOSPriority, uint32(min(max(q.Priority, 0), math.MaxUint32)))
		}
	}
	for _, a := range assocs {
		d := prioDump{assoc: map[prioAssocKey]uint32{}, cluster: m.cluster}
		if a != nil {
			eff := a.EffectivePriorities()
			for i, r := range a.Rows {
				p := uint32(min(max(eff[i], 0), math.MaxUint32))
				d.cluster.MaxAssocPriority = max(d.cluster.MaxAssocPriority, p)
				if r.IsUser() {
					d.assoc[prioAssocKey{r.Account, r.User}] = p
				}
			}
		}
		m.dumps = append(m.dumps, d)
	}
	if n := len(m.dumps); n > 0 {
		m.assoc, m.cluster = m.dumps[n-1].assoc, m.dumps[n-1].cluster
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
// for, and when it was submitted, became eligible, started and ended. It
// holds no pointers (names and requests are indexes into the prioModel's
// tables; prioModel.priorityJob builds its priority.Job), so that the
// garbage collector need not scan the millions of a year's jobs.
type prioJob struct {
	submit       int64  // Unix seconds; 0 unknown
	eligible     int64  // 0 unknown
	start        int64  // 0: never started
	end          int64  // 0: none (still pending or running)
	id           uint32 // JobIDRaw, the id sprio prints
	arrayJob     uint32 // ArrayJobID; 0 unless an array task
	who          uint32 // index in prioModel.who: user, account
	where        uint32 // index in prioModel.wheres: QOS, partitions
	tres         uint32 // index in prioModel.tres; 0: none requested
	nodes, cpus  uint32
	timeLimitMin uint32
	nice         int32
	ran          int16 // the partition it ran in (index of Cluster.Partitions); -1 unknown or never started
	held         bool  // submitted with --hold: eligible is its release
	arrayPending bool  // the pending remainder of an array (JobID A_[…]), whose JobIDRaw its last task keeps
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
	// m builds the priority.Job of each job listed, with the association
	// priorities of dump number dump; without it (a test of the queue
	// alone) a listed job has only its ID and EligibleSec, what the queue
	// itself decides.
	m    *prioModel
	dump int
}

// newQueue prepares the queue of jobs.
func newQueue(jobs []prioJob) *queue {
	q := &queue{jobs: jobs, order: make([]int32, 0, len(jobs)), firstEligible: map[uint32]int64{}, arrays: map[uint32]int{},
		last: math.MinInt64}
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
				dst = append(dst, prioPending{at: j.computedAt(tick), submit: j.submit, who: j.who})
				q.build(&dst[len(dst)-1].job, j)
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
		q.arrays[j.arrayJob] = len(dst)
		dst = append(dst, prioPending{at: j.computedAt(tick), submit: j.submit, arrayJob: j.arrayJob, who: j.who})
		p := &dst[len(dst)-1]
		q.build(&p.job, j)
		p.job.ID, p.job.EligibleSec = j.arrayJob, e
	}
	return dst
}

// build sets *dst to the priority.Job of j (see queue.m).
func (q *queue) build(dst *priority.Job, j *prioJob) {
	if q.m == nil {
		*dst = priority.Job{ID: j.id, EligibleSec: j.eligible}
		return
	}
	q.m.priorityJob(dst, j, q.dump)
}

// latestRecords keeps, of the records of a job that the input gives more
// than once (overlapping sacct files), the last one read: the newest
// state of the job. A job is its JobIDRaw, and the pending remainder of
// an array (A_[…]) is another job than the task that keeps the array's
// id when it starts. A record is the job's run from one submission: the
// runs of a requeued job, each submitted anew, are records of their own.
// Records keep their order.
func latestRecords(jobs []prioJob) []prioJob {
	// Each record as its job's key (33 bits) over its index (31 bits):
	// sorted, a job's records are adjacent, the last read last. sacct
	// lists jobs by id, so the keys of one file are usually in order
	// already and the sort is skipped.
	const idxBits = 31
	if len(jobs) >= 1<<idxBits {
		panic(fmt.Sprintf("latestRecords: %d jobs", len(jobs)))
	}
	key := func(j *prioJob) uint64 {
		k := uint64(j.id) << 1
		if j.arrayPending {
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
				if jobs[keys[a]&idxMask].submit == jobs[keys[b]&idxMask].submit {
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

// prioPending is a job sprio lists and the time its factors are of.
type prioPending struct {
	job      priority.Job // built by the queue's model
	at       int64
	submit   int64  // 0 unknown
	arrayJob uint32 // the array's job id; 0 unless a job array
	who      uint32 // its user association (prioModel.who)
}

// appendPrioJobs appends the jobs of a sacct batch read with
// RequestColumns and KeepPending to dst. Names are looked up in the
// model's tables once per batch dictionary entry, not once per row.
func (m *prioModel) appendPrioJobs(dst []prioJob, rec arrow.RecordBatch) ([]prioJob, error) {
	type dict struct {
		d     *array.Dictionary
		codes []int32
		names *array.String
	}
	str := func(name string) (dict, error) {
		d, codes, names, err := schemas.DictStringColumn(rec, name)
		return dict{d, codes, names}, err
	}
	// code is row i's dictionary code, -1 when null.
	code := func(c dict, i int) int32 {
		if c.d.IsNull(i) {
			return -1
		}
		return c.codes[i]
	}
	value := func(c dict, k int32) string {
		if k < 0 {
			return ""
		}
		return c.names.Value(int(k))
	}
	var err error
	var user, account, partition, qos, reqParts dict
	for _, c := range []struct {
		f    *dict
		name string
	}{{&user, schemas.ColUser}, {&account, schemas.ColAccount}, {&partition, schemas.ColPartition},
		{&qos, schemas.ColQOS}, {&reqParts, schemas.ColReqPartitions}} {
		if *c.f, err = str(c.name); err != nil {
			return dst, err
		}
	}
	var submit, eligible, start, end *array.Timestamp
	for _, c := range []struct {
		a    **array.Timestamp
		name string
	}{{&submit, schemas.ColSubmit}, {&eligible, schemas.ColEligible}, {&start, schemas.ColStart}, {&end, schemas.ColEnd}} {
		if *c.a, err = schemas.RecordColumn[*array.Timestamp](rec, c.name, "timestamp"); err != nil {
			return dst, err
		}
	}
	var raw, arrayJob, arrayTask, limit, reqCPUs, reqNodes, nice, allocCPUs, nnodes *array.Int64
	for _, c := range []struct {
		a    **array.Int64
		name string
	}{{&raw, schemas.ColJobIDRaw}, {&arrayJob, schemas.ColArrayJobID}, {&arrayTask, schemas.ColArrayTaskID},
		{&limit, schemas.ColTimelimitMin}, {&reqCPUs, schemas.ColReqCPUs}, {&reqNodes, schemas.ColReqNodes},
		{&nice, schemas.ColNice}, {&allocCPUs, schemas.ColAllocCPUs}, {&nnodes, schemas.ColNNodes}} {
		if *c.a, err = schemas.RecordColumn[*array.Int64](rec, c.name, "int64"); err != nil {
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
	// The batch's dictionary codes → the model's indexes.
	whoOf := map[[2]int32]uint32{}
	whereOf := map[[3]int32]uint32{}
	ranOf := map[int32]int16{}
	for i := 0; i < int(rec.NumRows()); i++ {
		pj := prioJob{id: uint32(raw.Value(i)), submit: sec(submit, i), eligible: sec(eligible, i),
			start: sec(start, i), end: sec(end, i), held: hold.IsValid(i) && hold.Value(i)}
		if arrayJob.IsValid(i) {
			pj.arrayJob = uint32(arrayJob.Value(i))
			pj.arrayPending = arrayTask.IsNull(i)
		}
		wk := [2]int32{code(user, i), code(account, i)}
		w, ok := whoOf[wk]
		if !ok {
			w = m.whoOf(value(user, wk[0]), value(account, wk[1]))
			whoOf[wk] = w
		}
		pj.who = w
		// While pending a job waits in every partition it asked for
		// (SubmitLine's -p); sacct's Partition is the one it ran in.
		rk := [3]int32{code(qos, i), code(reqParts, i), -1}
		if value(reqParts, rk[1]) == "" {
			rk[1], rk[2] = -1, code(partition, i)
		}
		r, ok := whereOf[rk]
		if !ok {
			parts := value(reqParts, rk[1])
			if rk[1] < 0 {
				parts = value(partition, rk[2])
			}
			r = m.whereOf(value(qos, rk[0]), parts)
			whereOf[rk] = r
		}
		pj.where = r
		pj.ran = -1
		if pj.start != 0 {
			c := code(partition, i)
			k, ok := ranOf[c]
			if !ok {
				k = -1
				if n, found := m.parts[value(partition, c)]; found && n <= math.MaxInt16 {
					k = int16(n)
				}
				ranOf[c] = k
			}
			pj.ran = k
		}
		if reqNodes.IsValid(i) {
			pj.nodes = uint32(reqNodes.Value(i))
		} else {
			pj.nodes = uint32(nnodes.Value(i))
		}
		if reqCPUs.IsValid(i) {
			pj.cpus = uint32(reqCPUs.Value(i))
		} else {
			pj.cpus = uint32(allocCPUs.Value(i))
		}
		switch parts := m.wheres[r].parts; {
		case limit.IsValid(i):
			pj.timeLimitMin = uint32(min(max(limit.Value(i), 0), math.MaxUint32))
		case len(parts) > 0:
			pj.timeLimitMin = m.maxTimeMin[parts[0]]
		}
		if nice.IsValid(i) {
			pj.nice = int32(nice.Value(i))
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
			pj.tres = m.tresOf(vec)
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
	out     prioRows               // the month's rows
	// other holds the submit and start rows of months without a snapshot
	// of the run, by month start.
	other map[int64]*prioRows

	// The submit and start rows (priority_events.go).
	sched  *decay.Schedule   // the decay ticks
	lo, to int64             // the window: events in (lo, to]
	fs     prioFairShare     // the FairShare in force
	epoch  int               // counts the changes of fs
	events []prioEvent       // built at the first emit
	evNext int               // events[evNext:] are not yet made
	rk     *ranker           // the starts' ranks
	cp     priority.Computer // the rows' scratch space
	// dump is the association dump in force (the model's tree number);
	// dumpAt gives it at a time.
	dump   int
	dumpAt func(t int64) int
	// pendingOnly leaves out the submit and start rows: a moment
	// (Moment) lists the queue of one snapshot.
	pendingOnly bool
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
		p.queue.m = p.m
	}
	p.setFairShare(at, true, users, r.FairShare)
	p.useDump(ti)
	p.pending = p.queue.at(p.pending[:0], at, tick)
	for i := range p.pending {
		j := &p.pending[i]
		j.job.FairShare = p.fs.of(&j.job)
		p.rows = p.cp.AppendRows(&p.m.params, p.rows[:0], p.m.clusterOf(p.dump), []priority.Job{j.job}, j.at)
		for k := range p.rows {
			p.out.add(p.m.out(at, evPending, j, j.who, &p.rows[k], at), p.rows[k].Weighted.TRES)
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
