package priority

import (
	"math"
	"slices"
)

// NiceOffset is Slurm's NICE_OFFSET (slurm/slurm.h): slurmctld stores a
// job's nice and site factor as unsigned values offset by it. A job whose
// factors were cleared (an admin-set priority, 22.05, several partitions)
// shows 0 − NiceOffset in sprio's SITE and NICE columns.
const NiceOffset = 0x80000000

// Factors are one job's priority factors. From Params.Compute they are the
// factors as set_priority_factors leaves them: each in [0, 1], or a raw
// priority under a NO_NORMAL_* flag, and 0 where the factor's weight is 0.
// In a Row they are weighted (factor × weight), as slurmctld keeps them and
// sprio receives them.
type Factors struct {
	// Age grows with the time since the job became eligible, up to
	// PriorityMaxAge.
	Age float64
	// Assoc is the association's priority over the highest one.
	Assoc float64
	// FairShare is the association's fair-share factor.
	FairShare float64
	// JobSize is the job's size against the cluster's.
	JobSize float64
	// Partition is the partition's PriorityJobFactor over the highest one.
	Partition float64
	// QOS is the QOS's priority over the highest one.
	QOS float64
	// TRES holds one factor per Cluster.TRES: the job's count over its
	// partition's total; empty when PriorityWeightTRES is unset.
	TRES []float64
}

// Row is one line of sprio: a pending job in one of its partitions (and,
// from 24.11, with one of its QOS), with its weighted factors.
type Row struct {
	// JobID is the job's id (Job.ID).
	JobID uint32
	// User and Account are the job's user and account.
	User, Account string
	// Partition names the row's partition.
	Partition string
	// QOS names the row's QOS ("" when the job has none).
	QOS string
	// Weighted are the weighted factors; all 0, and TRES empty, for a
	// job with an admin-set priority.
	Weighted Factors
	// Site is the site factor and Nice the nice value, signed (0 for a job
	// with an admin-set priority).
	Site, Nice int64
	// Direct is the job's admin-set priority, or 0.
	Direct uint32
	// Priority is slurmctld's priority of the job in this partition (and
	// QOS): the weighted sum clamped to [1, 2³²−1] and truncated, or the
	// admin-set priority. With INCR_ONLY, pass it through Params.Next with
	// the previous tick's. It is what the scheduler orders by; sprio
	// prints Sum instead.
	Priority uint32
}

// Sum is the priority sprio prints (src/sprio/print.c,
// get_priority_from_factors): the admin-set priority if there is one,
// else the weighted factors, plus the site factor, minus nice, plus each
// non-zero TRES term, at least 1. Unlike Priority it is not capped at
// 2³²−1, and INCR_ONLY does not hold it up.
func (r *Row) Sum() float64 {
	if r.Direct > 0 {
		return float64(r.Direct)
	}
	w := &r.Weighted
	p := w.Age + w.Assoc + w.FairShare + w.JobSize + w.Partition + w.QOS +
		float64(r.Site) - float64(r.Nice)
	for _, v := range w.TRES {
		if v != 0 {
			p += v
		}
	}
	if p < 1 {
		p = 1
	}
	return p
}

// Normalized sets dst to the row's factors as `sprio -n` prints them:
// each weighted factor divided by its weight (0 where the weight is 0),
// which gives back the factor Params.Compute computes.
func (r *Row) Normalized(dst *Factors, w *Weights) {
	div := func(v float64, weight uint32) float64 {
		if weight == 0 {
			return 0
		}
		return v / float64(weight)
	}
	f := &r.Weighted
	dst.Age = div(f.Age, w.Age)
	dst.Assoc = div(f.Assoc, w.Assoc)
	dst.FairShare = div(f.FairShare, w.FairShare)
	dst.JobSize = div(f.JobSize, w.JobSize)
	dst.Partition = div(f.Partition, w.Partition)
	dst.QOS = div(f.QOS, w.QOS)
	dst.TRES = dst.TRES[:0]
	for i, v := range f.TRES {
		if wt := tresWeight(w, i); wt != 0 {
			dst.TRES = append(dst.TRES, v/wt)
		} else {
			dst.TRES = append(dst.TRES, 0)
		}
	}
}

// Compute sets f to job j's factors at Unix time at (a decay tick: sprio
// shows the factors of the last tick), for its first partition by
// PriorityTier and its first QOS, as slurmctld's set_priority_factors
// computes them (PM, docs/slurm-semantics.md §13):
//
//   - age: min(at − EligibleSec, MaxAgeSec) / MaxAgeSec, 0 when the
//     eligible time is unknown or later than at, 1 when MaxAgeSec is 0;
//   - fair share: Job.FairShare;
//   - job size: §13.3;
//   - partition: PriorityJobFactor / the highest PriorityJobFactor (at
//     least 1), or raw with NO_NORMAL_PART; 0 for a factor of 0;
//   - QOS: priority / Cluster.MaxQOSPriority, or raw with NO_NORMAL_QOS;
//     0 for a QOS priority of 0;
//   - association: priority / Cluster.MaxAssocPriority (0 when that is 0),
//     or raw with NO_NORMAL_ASSOC;
//   - TRES: count / the partition's total (0 when either is 0), or the
//     raw count with NO_NORMAL_TRES.
//
// A factor whose weight is 0 stays 0. f.TRES is reused. Held jobs and jobs
// with an admin-set priority get the factors they would have.
func (p *Params) Compute(f *Factors, c *Cluster, j *Job, at int64) {
	k := calc{p: p, c: c, partMax: c.maxJobFactor()}
	var partBuf [4]int
	parts := k.partitionOrder(partBuf[:0], j)
	part := -1
	if len(parts) > 0 {
		part = parts[0]
	}
	var qosBuf [4]QOS
	qos := k.qosOrder(qosBuf[:0], j)
	var q *QOS
	if len(qos) > 0 {
		q = &qos[0]
	}
	k.factors(f, j, part, q, at)
}

// AppendRows appends the sprio rows of jobs at Unix time at: one per
// partition of each job (from 24.11, one per partition and QOS), in the
// order slurmctld lists them (partitions by PriorityTier, highest first;
// QOS by priority, highest first; ties in the order given). A held job and
// a job without a partition get none. The caller chooses the jobs: those
// pending at that time whose begin time (submit time with ACCRUE_ALWAYS)
// has passed (doc.go).
//
// Rows beyond len(dst) up to cap(dst) are reused, TRES slices included, so
// a buffer kept from one call to the next stops allocating; a Computer
// kept too also reuses the computation's own scratch space.
func (p *Params) AppendRows(dst []Row, c *Cluster, jobs []Job, at int64) []Row {
	// Scratch space on the stack for the usual sizes.
	var (
		partArr          [8]int
		qosArr           [4]QOS
		baseArr, jobArr  [16]float64
		base, jobWeighed = Factors{TRES: baseArr[:0]}, Factors{TRES: jobArr[:0]}
	)
	k := calc{p: p, c: c, partMax: c.maxJobFactor()}
	dst, _, _ = k.appendRows(dst, jobs, at, partArr[:0], qosArr[:0], &base, &jobWeighed)
	return dst
}

// Computer computes rows as Params.AppendRows does, keeping its scratch
// space from one call to the next: a caller that computes the rows of a
// few jobs at a time, millions of times, allocates nothing once its
// buffers have grown. The zero value is ready to use; a Computer is not
// for concurrent use.
type Computer struct {
	parts      []int
	qos        []QOS
	base, jobW Factors
}

// AppendRows is Params.AppendRows with cp's scratch space.
func (cp *Computer) AppendRows(p *Params, dst []Row, c *Cluster, jobs []Job, at int64) []Row {
	k := calc{p: p, c: c, partMax: c.maxJobFactor()}
	dst, cp.parts, cp.qos = k.appendRows(dst, jobs, at, cp.parts, cp.qos, &cp.base, &cp.jobW)
	return dst
}

// AppendRowsTerms is AppendRows that also appends to terms each row's
// Terms, in the order of the rows.
func (cp *Computer) AppendRowsTerms(p *Params, dst []Row, terms []Terms, c *Cluster, jobs []Job, at int64) ([]Row, []Terms) {
	k := calc{p: p, c: c, partMax: c.maxJobFactor(), terms: &terms}
	dst, cp.parts, cp.qos = k.appendRows(dst, jobs, at, cp.parts, cp.qos, &cp.base, &cp.jobW)
	return dst, terms
}

// Terms is one row's priority without its age term: PriorityAt gives the
// row's priority at another time, as AppendRows computes it then, for a
// job of which nothing but the time has changed. A caller that ranks
// thousands of waiting jobs at every decay tick computes each job's rows
// once and its priority at each tick from them.
type Terms struct {
	// Partition is the row's partition (an index of Cluster.Partitions).
	Partition int
	eligible  int64
	// The weighted terms of the sum but age, site and nice signed.
	assoc, fs, size, part, qos, tres, site, nice float64
	several                                      bool   // a row of a job in several partitions or QOS: the sum's other order
	direct                                       uint32 // an admin-set priority
}

// sum is the row's priority with the weighted age term age, in the order
// _get_priority_internal adds the terms: for a job in several partitions
// or QOS, the partition term is added to the sum of the others.
func (t *Terms) sum(age float64) uint32 {
	if t.several {
		return clampPriority(t.part + (age + t.assoc + t.fs + t.size + t.qos + t.tres + t.site - t.nice))
	}
	return clampPriority(age + t.assoc + t.fs + t.size + t.part + t.qos + t.tres + t.site - t.nice)
}

// PriorityAt is the priority of t's row at Unix time at.
func (p *Params) PriorityAt(t *Terms, at int64) uint32 {
	if t.direct > 0 {
		return t.direct
	}
	return t.sum(float64(p.ageFactor(t.eligible, at) * float64(p.Weights.Age)))
}

// keep appends t to k.terms when the caller asked for them.
func (k *calc) keep(t Terms) {
	if k.terms != nil {
		*k.terms = append(*k.terms, t)
	}
}

// appendRows appends the rows of jobs; parts, qos, base and jobW are
// scratch space, the first two returned grown.
func (k *calc) appendRows(dst []Row, jobs []Job, at int64, parts []int, qos []QOS, base, jobW *Factors) ([]Row, []int, []QOS) {
	for i := range jobs {
		j := &jobs[i]
		if j.Held || len(j.Partitions) == 0 {
			continue
		}
		parts = k.partitionOrder(parts[:0], j)
		qos = k.qosOrder(qos[:0], j)
		dst = k.appendJob(dst, base, jobW, j, parts, qos, at)
	}
	return dst, parts, qos
}

// calc is what the jobs of one computation share.
type calc struct {
	terms   *[]Terms // when not nil, each row's Terms are appended to it
	p       *Params
	c       *Cluster
	partMax uint16 // slurmctld's part_max_priority
}

// partitionOrder appends j's partitions to dst in slurmctld's order for a
// multi-partition job (priority_sort_part_tier: PriorityTier descending;
// glibc's qsort, a merge sort on these sizes, keeps ties in order).
func (k *calc) partitionOrder(dst []int, j *Job) []int {
	dst = append(dst, j.Partitions...)
	if len(dst) > 1 {
		slices.SortStableFunc(dst, func(a, b int) int {
			return int(k.c.Partitions[b].PriorityTier) - int(k.c.Partitions[a].PriorityTier)
		})
	}
	return dst
}

// qosOrder appends the QOS slurmctld uses to dst: from 24.11 all of a
// multi-QOS job's, by priority descending (priority_sort_qos_desc), before
// that only the first.
func (k *calc) qosOrder(dst []QOS, j *Job) []QOS {
	if len(j.QOS) == 0 {
		return dst
	}
	if !k.p.Release.AtLeast(severalQOS) {
		return append(dst, j.QOS[0])
	}
	dst = append(dst, j.QOS...)
	if len(dst) > 1 {
		slices.SortStableFunc(dst, func(a, b QOS) int {
			switch {
			case a.Priority > b.Priority:
				return -1
			case a.Priority < b.Priority:
				return 1
			}
			return 0
		})
	}
	return dst
}

// factors is set_priority_factors for partition index part (-1: none) and
// QOS q (nil: none).
func (k *calc) factors(f *Factors, j *Job, part int, q *QOS, at int64) {
	w := &k.p.Weights
	tres := f.TRES[:0]
	*f = Factors{}

	f.Age = k.p.ageFactor(j.EligibleSec, at)
	if w.FairShare != 0 {
		f.FairShare = j.FairShare
	}
	if w.JobSize != 0 {
		f.JobSize = k.jobSize(j)
	}
	if part >= 0 && w.Partition != 0 && k.c.Partitions[part].PriorityJobFactor != 0 {
		f.Partition = k.partFactor(part)
	}
	if w.Assoc != 0 {
		f.Assoc = k.assocFactor(j)
	}
	if q != nil && q.Priority != 0 && w.QOS != 0 {
		f.QOS = k.qosFactor(q)
	}
	f.TRES = k.tresFactors(tres, j, part)
}

// ageFactor is the age factor at at of a job eligible from eligible
// (set_priority_factors): the time since, up to PriorityMaxAge, over it;
// 0 without an age weight or an eligible time.
func (p *Params) ageFactor(eligible, at int64) float64 {
	if p.Weights.Age == 0 || eligible <= 0 {
		return 0
	}
	// The difference is an unsigned 32-bit count, 0 when the job accrues
	// only from a later time.
	var diff uint32
	if at > eligible {
		diff = uint32(at - eligible)
	}
	if diff < p.MaxAgeSec {
		return float64(diff) / float64(p.MaxAgeSec)
	}
	return 1
}

// jobSize is the job-size factor (set_priority_factors): from the job's
// nodes and CPUs against the cluster's, the job's size in CPUs per minute
// of its time limit with SMALL_RELATIVE_TO_TIME, inverted by
// PriorityFavorSmall, clamped to [0, 1].
func (k *calc) jobSize(j *Job) float64 {
	nodes, cpus := k.c.Nodes, k.c.CPUs
	newer := k.p.Release.AtLeast(jobSizeGuards)
	if newer && (nodes == 0 || cpus == 0) {
		return 0 // 23.02 on: no job-size factor without nodes and CPUs
	}
	minNodes, cpu := j.Nodes, j.CPUs
	var js float64
	switch {
	case k.p.Flags.SmallRelativeToTime:
		// The job's CPUs, at least its nodes' share of the cluster's
		// CPUs, per minute of its time limit, over the cluster's CPUs.
		js = float64(minNodes) * float64(cpus) / float64(nodes)
		if float64(cpu) > js {
			js = float64(cpu)
		}
		limit := j.TimeLimitMin
		if limit == 0 {
			limit = 1
		}
		js /= float64(limit)
		js /= float64(cpus)
		if k.p.FavorSmall {
			js = 1 - js
		}
	case k.p.FavorSmall:
		// 22.05 subtracts unsigned 32-bit counts, so a job asking for
		// more nodes than the cluster has wraps round to a huge factor
		// (clamped to 1 below); 23.02 on gives it 0.
		if !newer || nodes > minNodes {
			js = float64(nodes-minNodes) / float64(nodes)
		}
		if cpu != 0 {
			js += float64(cpus-cpu) / float64(cpus) // unsigned, as in every release
			js /= 2
		}
	default:
		js = float64(minNodes) / float64(nodes)
		if cpu != 0 {
			js += float64(cpu) / float64(cpus)
			js /= 2
		}
	}
	if js < 0 {
		js = 0
	} else if js > 1 {
		js = 1
	}
	return js
}

// partFactor is the partition factor before weighing: the raw
// PriorityJobFactor with NO_NORMAL_PART, else the partition's
// norm_priority.
func (k *calc) partFactor(part int) float64 {
	pjf := k.c.Partitions[part].PriorityJobFactor
	if k.p.Flags.NoNormalPart {
		return float64(pjf)
	}
	return float64(pjf) / float64(k.partMax)
}

// assocFactor is the association factor before weighing (AM
// _set_assoc_norm_priority): 0 when no association has a priority.
func (k *calc) assocFactor(j *Job) float64 {
	if k.p.Flags.NoNormalAssoc {
		return float64(j.AssocPriority)
	}
	if k.c.MaxAssocPriority == 0 {
		return 0
	}
	return float64(j.AssocPriority) / float64(k.c.MaxAssocPriority)
}

// qosFactor is the QOS factor before weighing (AM _set_qos_norm_priority;
// a norm_priority never set is 0).
func (k *calc) qosFactor(q *QOS) float64 {
	if k.p.Flags.NoNormalQOS {
		return float64(q.Priority)
	}
	if k.c.MaxQOSPriority == 0 {
		return 0
	}
	return float64(q.Priority) / float64(k.c.MaxQOSPriority)
}

// tresFactors appends the TRES factors of j in partition part to dst[:0]
// (PM _get_tres_factors): nothing when PriorityWeightTRES is unset.
func (k *calc) tresFactors(dst []float64, j *Job, part int) []float64 {
	dst = dst[:0]
	if k.p.Weights.TRES == nil {
		return dst
	}
	var totals []uint64
	if part >= 0 {
		totals = k.c.Partitions[part].TRES
	}
	for i := range k.c.TRES {
		var v, total uint64
		if i < len(j.TRES) {
			v = j.TRES[i]
		}
		if i < len(totals) {
			total = totals[i]
		}
		var f float64
		switch {
		case k.p.Flags.NoNormalTRES:
			f = float64(v)
		case v != 0 && total != 0:
			f = float64(v) / float64(total)
		}
		dst = append(dst, f)
	}
	return dst
}

// tresWeight is the weight of TRES i, 0 past the end of w.TRES.
func tresWeight(w *Weights, i int) float64 {
	if i < len(w.TRES) {
		return w.TRES[i]
	}
	return 0
}

// weigh sets dst to f × w, as _get_priority_internal multiplies the
// factors in place, and returns the sum of the weighted TRES terms
// (_get_tres_prio_weighted, in TRES order). dst.TRES is reused. The
// float64 conversions keep every product rounded on its own, as the C code
// computes it, where a compiler could otherwise fuse a multiply and an add.
func weigh(dst *Factors, f *Factors, w *Weights) float64 {
	tres := append(dst.TRES[:0], f.TRES...)
	dst.Age = float64(f.Age * float64(w.Age))
	dst.Assoc = float64(f.Assoc * float64(w.Assoc))
	dst.FairShare = float64(f.FairShare * float64(w.FairShare))
	dst.JobSize = float64(f.JobSize * float64(w.JobSize))
	dst.Partition = float64(f.Partition * float64(w.Partition))
	dst.QOS = float64(f.QOS * float64(w.QOS))
	dst.TRES = tres
	return weighTRES(tres, w)
}

// weighTRES multiplies the TRES factors in f by their weights in place and
// returns the sum, starting from 0.
func weighTRES(f []float64, w *Weights) float64 {
	sum := 0.0
	for i := range f {
		f[i] = float64(f[i] * tresWeight(w, i))
		sum += f[i]
	}
	return sum
}

// clampPriority is the end of _get_priority_internal: at least 1 (0 is
// reserved for held jobs), at most 2³²−1, truncated to an integer.
func clampPriority(p float64) uint32 {
	if p < 1 {
		p = 1
	}
	if !(p < 1<<32) {
		return math.MaxUint32
	}
	return uint32(p)
}

// qosAt is &qos[i], or nil when the job has no QOS.
func qosAt(qos []QOS, i int) *QOS {
	if i < len(qos) {
		return &qos[i]
	}
	return nil
}

// next returns dst extended by one row, reusing the slot past its end when
// there is one.
func next(dst []Row) ([]Row, *Row) {
	n := len(dst)
	if n < cap(dst) {
		dst = dst[:n+1]
		tres := dst[n].Weighted.TRES[:0]
		dst[n] = Row{Weighted: Factors{TRES: tres}}
	} else {
		dst = append(dst, Row{})
	}
	return dst, &dst[n]
}

// appendJob appends the rows of one job whose partitions and QOS are in
// slurmctld's order (PM _get_priority_internal, _priority_each_partition,
// _priority_each_qos; the rows as _create_prio_factors_obj /
// _create_prio_list_qos, or 22.05's _filter_job, build them).
//
// base and jobW are scratch space: the job's factors, and those weighed.
func (k *calc) appendJob(dst []Row, base, jobW *Factors, j *Job, parts []int, qos []QOS, at int64) []Row {
	w := &k.p.Weights
	var q0 *QOS
	if len(qos) > 0 {
		q0 = &qos[0]
	}
	start := func(part int, q *QOS) *Row {
		var r *Row
		dst, r = next(dst)
		r.JobID, r.User, r.Account = j.ID, j.User, j.Account
		r.Partition = k.c.Partitions[part].Name
		if q != nil {
			r.QOS = q.Name
		}
		return r
	}

	if j.DirectPriority > 0 {
		if !k.p.Release.AtLeast(adminSetZeroFactors) && len(parts) > 1 {
			// 22.05's _filter_job copies the cleared factors of a job in
			// several partitions without marking them admin-set, and
			// puts each partition's factor back: the row adds up to the
			// partition term, and SITE and NICE print 0 − NICE_OFFSET.
			for _, part := range parts {
				r := start(part, q0)
				r.Weighted.Partition = float64(k.partFactor(part) * float64(w.Partition))
				r.Site, r.Nice = -NiceOffset, -NiceOffset
				r.Priority = j.DirectPriority
				k.keep(Terms{Partition: part, direct: j.DirectPriority})
			}
			return dst
		}
		for _, part := range parts {
			for i := range max(1, len(qos)) {
				r := start(part, qosAt(qos, i))
				r.Direct, r.Priority = j.DirectPriority, j.DirectPriority
				k.keep(Terms{Partition: part, direct: j.DirectPriority})
			}
		}
		return dst
	}

	k.factors(base, j, parts[0], q0, at)
	site, nice := float64(j.Site), float64(j.Nice)
	if len(parts) == 1 && len(qos) <= 1 {
		r := start(parts[0], q0)
		tres := weigh(&r.Weighted, base, w)
		f := &r.Weighted
		r.Site, r.Nice = int64(j.Site), int64(j.Nice)
		t := Terms{Partition: parts[0], eligible: j.EligibleSec, assoc: f.Assoc, fs: f.FairShare, size: f.JobSize,
			part: f.Partition, qos: f.QOS, tres: tres, site: site, nice: nice}
		r.Priority = t.sum(f.Age)
		k.keep(t)
		return dst
	}

	// Several partitions or QOS: the partition and TRES terms are those of
	// each partition, the QOS term that of each QOS (from 24.11; a QOS of
	// priority 0 keeps the job's own QOS term), and the priority adds the
	// partition term to the sum of the others.
	weigh(jobW, base, w)
	perQOS := k.p.Release.AtLeast(severalQOS)
	for _, part := range parts {
		for i := range max(1, len(qos)) {
			q := qosAt(qos, i)
			r := start(part, q)
			f := &r.Weighted
			// jobW's factors but its TRES, whose slice is scratch space
			// (copying it would alias the row to it).
			f.Age, f.Assoc, f.FairShare, f.JobSize, f.Partition, f.QOS = jobW.Age, jobW.Assoc, jobW.FairShare, jobW.JobSize, jobW.Partition, jobW.QOS
			f.TRES = k.tresFactors(f.TRES[:0], j, part)
			partTRES := weighTRES(f.TRES, w)
			f.Partition = float64(k.partFactor(part) * float64(w.Partition))
			if perQOS && q != nil && q.Priority != 0 && w.QOS != 0 {
				f.QOS = float64(k.qosFactor(q) * float64(w.QOS))
			}
			r.Site, r.Nice = int64(j.Site), int64(j.Nice)
			t := Terms{Partition: part, eligible: j.EligibleSec, assoc: f.Assoc, fs: f.FairShare, size: f.JobSize,
				part: f.Partition, qos: f.QOS, tres: partTRES, site: site, nice: nice, several: true}
			r.Priority = t.sum(f.Age)
			k.keep(t)
		}
	}
	return dst
}
