package pipeline

import (
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fairledger/fairledger/billing"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/priority"
	"github.com/fairledger/fairledger/priority/queue"
	"github.com/fairledger/fairledger/schemas"
)

// newPrioModel builds the priority model of a run for the slurmctld
// release rel from the site's slurm.conf, its QOS dump and each of the
// run's association dumps (oldest first; those of the newest are the
// model's own).
func newPrioModel(conf *ingest.Config, assocs []*ingest.Associations, qos *ingest.QOSTable, rel release.Series) (*queue.Model, error) {
	tres := schemas.ClusterTRES(conf.AccountingStorageTRES, rel)
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
	params := priority.Params{Weights: w, Flags: priority.ParseFlags(conf.PriorityFlags),
		FavorSmall: conf.PriorityFavorSmall, MaxAgeSec: uint32(min(max(conf.PriorityMaxAgeSec, 0), math.MaxUint32)),
		Release: rel}
	cluster := priority.Cluster{TRES: tres, Nodes: uint32(conf.Totals.Nodes), CPUs: uint32(conf.Totals.CPUs)}
	var maxTimeMin []uint32
	for _, p := range conf.Partitions {
		cluster.Partitions = append(cluster.Partitions, priority.Partition{Name: p.Name,
			PriorityJobFactor: uint16(min(max(p.PriorityJobFactor, 0), math.MaxUint16)),
			PriorityTier:      uint16(min(max(p.PriorityTier, 0), math.MaxUint16)),
			TRES:              tresVector(tres, p.Totals.TRES())})
		lim := uint32(math.MaxUint32)
		if p.MaxTimeMin >= 0 {
			lim = uint32(min(p.MaxTimeMin, math.MaxUint32-1))
		}
		maxTimeMin = append(maxTimeMin, lim)
	}
	if qos != nil {
		for _, q := range qos.Rows {
			cluster.MaxQOSPriority = max(cluster.MaxQOSPriority, uint32(min(max(q.Priority, 0), math.MaxUint32)))
		}
	}
	var dumps []queue.Dump
	for _, a := range assocs {
		d := queue.Dump{Assoc: map[queue.AssocKey]uint32{}, Cluster: cluster}
		if a != nil {
			eff := a.EffectivePriorities()
			for i, r := range a.Rows {
				p := uint32(min(max(eff[i], 0), math.MaxUint32))
				d.Cluster.MaxAssocPriority = max(d.Cluster.MaxAssocPriority, p)
				if r.IsUser() {
					d.Assoc[queue.AssocKey{Account: r.Account, User: r.User, Partition: r.Partition}] = p
				}
			}
		}
		dumps = append(dumps, d)
	}
	return queue.NewModel(params, cluster, maxTimeMin, qos.Priority, dumps), nil
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

// appendPrioJobs appends the jobs of a sacct batch read with
// RequestColumns and KeepPending to dst, as m's jobs. Names are looked up
// in the model's tables once per batch dictionary entry, not once per row.
func appendPrioJobs(m *queue.Model, dst []queue.Job, rec arrow.RecordBatch) ([]queue.Job, error) {
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
	var raw, arrayJob, arrayTask, limit, reqCPUs, reqNodes, nice, allocCPUs, nnodes, throttle *array.Int64
	for _, c := range []struct {
		a    **array.Int64
		name string
	}{{&raw, schemas.ColJobIDRaw}, {&arrayJob, schemas.ColArrayJobID}, {&arrayTask, schemas.ColArrayTaskID},
		{&limit, schemas.ColTimelimitMin}, {&reqCPUs, schemas.ColReqCPUs}, {&reqNodes, schemas.ColReqNodes},
		{&nice, schemas.ColNice}, {&allocCPUs, schemas.ColAllocCPUs}, {&nnodes, schemas.ColNNodes},
		{&throttle, schemas.ColArrayThrottle}} {
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
	var vec []uint64 // a row's TRES vector
	for i := 0; i < int(rec.NumRows()); i++ {
		pj := queue.Job{ID: uint32(raw.Value(i)), Submit: sec(submit, i), Eligible: sec(eligible, i),
			Start: sec(start, i), End: sec(end, i), Held: hold.IsValid(i) && hold.Value(i)}
		if arrayJob.IsValid(i) {
			pj.ArrayJob = uint32(arrayJob.Value(i))
			pj.ArrayPending = arrayTask.IsNull(i)
			// Every record of an array has its SubmitLine, and so the
			// array's throttle (the last read holds).
			if throttle.IsValid(i) {
				m.SetArrayThrottle(pj.ArrayJob, uint32(min(max(throttle.Value(i), 0), math.MaxUint32)))
			}
		}
		wk := [2]int32{code(user, i), code(account, i)}
		w, ok := whoOf[wk]
		if !ok {
			w = m.Who(value(user, wk[0]), value(account, wk[1]))
			whoOf[wk] = w
		}
		pj.Who = w
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
			r = m.Where(value(qos, rk[0]), parts)
			whereOf[rk] = r
		}
		pj.Where = r
		pj.Ran = -1
		if pj.Start != 0 {
			c := code(partition, i)
			k, ok := ranOf[c]
			if !ok {
				k = -1
				if n, found := m.Partition(value(partition, c)); found && n <= math.MaxInt16 {
					k = int16(n)
				}
				ranOf[c] = k
			}
			pj.Ran = k
		}
		if reqNodes.IsValid(i) {
			pj.Nodes = uint32(reqNodes.Value(i))
		} else {
			pj.Nodes = uint32(nnodes.Value(i))
		}
		if reqCPUs.IsValid(i) {
			pj.CPUs = uint32(reqCPUs.Value(i))
		} else {
			pj.CPUs = uint32(allocCPUs.Value(i))
		}
		if limit.IsValid(i) {
			pj.TimeLimitMin = uint32(min(max(limit.Value(i), 0), math.MaxUint32))
		} else {
			pj.TimeLimitMin = m.DefaultTimeLimitMin(r)
		}
		if nice.IsValid(i) {
			pj.Nice = int32(nice.Value(i))
		}
		if reqTRES.IsValid(i) {
			vec = slices.Grow(vec[:0], len(m.Cluster.TRES))[:len(m.Cluster.TRES)]
			clear(vec)
			lo, hi := reqTRES.ValueOffsets(i)
			for k := lo; k < hi; k++ {
				if t := slices.Index(m.Cluster.TRES, schemas.CanonicalTRES(keys.Value(int(k)))); t >= 0 {
					vec[t] = uint64(max(vals.Value(int(k)), 0))
				}
			}
			pj.TRES = m.TRESIndex(vec)
		}
		dst = append(dst, pj)
	}
	return dst, nil
}
