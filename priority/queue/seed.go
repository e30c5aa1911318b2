package queue

import "errors"

// Seed are jobs as job priority needs them (Job), column by
// column, their names and requests in tables of their own (Who indexes
// Users and Accounts, Where QOS and Parts, TRES Vectors, whose [0] is
// none). FirstEligible holds, for each array of the jobs, the earliest
// eligible time of all its tasks the run knew: the time its pending
// remainder waits from.
type Seed struct {
	Submit, Eligible, Start, End                          []int64
	ID, ArrayJob, Who, Where, TRES, Nodes, CPUs, LimitMin []uint32
	Nice                                                  []int32
	Ran                                                   []int16
	Held, ArrayPending                                    []int32 // indexes
	Users, Accounts, QOS, Parts                           []string
	Vectors                                               [][]uint64
	FirstEligible                                         map[uint32]int64
	// Throttle holds the ArrayTaskThrottle of each array of the jobs that
	// has one (Model.SetArrayThrottle); absent from a seed written before
	// it was kept.
	Throttle map[uint32]uint32 `json:",omitempty"`
	// Holds holds the holds from slurmctld's log of the jobs (Model.AddHold).
	Holds map[uint32][]Hold `json:",omitempty"`
	// Restarts are slurmctld's starts from its log (Model.AddRestart).
	Restarts []Restart `json:",omitempty"`
}

// Seed lays out the jobs idx of jobs for a seed.
func (m *Model) Seed(jobs []Job, idx []int32, firstEligible map[uint32]int64) *Seed {
	out := &Seed{Vectors: [][]uint64{nil}, FirstEligible: map[uint32]int64{}, Restarts: m.restarts}
	wheres := make(map[uint32]whereKey, len(m.whereIdx))
	for k, i := range m.whereIdx {
		wheres[i] = k
	}
	whoIdx, whereIdx, tresIdx := map[uint32]uint32{}, map[uint32]uint32{}, map[uint32]uint32{0: 0}
	intern := func(seen map[uint32]uint32, i uint32, add func()) uint32 {
		if k, ok := seen[i]; ok {
			return k
		}
		k := uint32(len(seen)) // tresIdx starts with none at 0
		seen[i] = k
		add()
		return k
	}
	for k, j := range idx {
		pj := &jobs[j]
		out.Submit = append(out.Submit, pj.Submit)
		out.Eligible = append(out.Eligible, pj.Eligible)
		out.Start = append(out.Start, pj.Start)
		out.End = append(out.End, pj.End)
		out.ID = append(out.ID, pj.ID)
		out.ArrayJob = append(out.ArrayJob, pj.ArrayJob)
		out.Who = append(out.Who, intern(whoIdx, pj.Who, func() {
			out.Users = append(out.Users, m.whos[pj.Who].user)
			out.Accounts = append(out.Accounts, m.whos[pj.Who].account)
		}))
		out.Where = append(out.Where, intern(whereIdx, pj.Where, func() {
			out.QOS = append(out.QOS, wheres[pj.Where].qos)
			out.Parts = append(out.Parts, wheres[pj.Where].parts)
		}))
		out.TRES = append(out.TRES, intern(tresIdx, pj.TRES, func() { out.Vectors = append(out.Vectors, m.tres[pj.TRES]) }))
		out.Nodes = append(out.Nodes, pj.Nodes)
		out.CPUs = append(out.CPUs, pj.CPUs)
		out.LimitMin = append(out.LimitMin, pj.TimeLimitMin)
		out.Nice = append(out.Nice, pj.Nice)
		out.Ran = append(out.Ran, pj.Ran)
		if pj.Held {
			out.Held = append(out.Held, int32(k))
		}
		if pj.ArrayPending {
			out.ArrayPending = append(out.ArrayPending, int32(k))
		}
		for _, id := range []uint32{pj.ID, pj.ArrayJob} {
			if h := m.holds[id]; id != 0 && len(h) > 0 {
				if out.Holds == nil {
					out.Holds = map[uint32][]Hold{}
				}
				out.Holds[id] = h
			}
		}
		if pj.ArrayJob != 0 {
			out.FirstEligible[pj.ArrayJob] = firstEligible[pj.ArrayJob]
			if lim := m.throttle[pj.ArrayJob]; lim != 0 {
				if out.Throttle == nil {
					out.Throttle = map[uint32]uint32{}
				}
				out.Throttle[pj.ArrayJob] = lim
			}
		}
	}
	return out
}

// Jobs rebuilds the jobs of s for model m (interning their names and
// requests in m's tables).
func (s *Seed) Jobs(m *Model) ([]Job, error) {
	n := len(s.Submit)
	for _, l := range []int{len(s.Eligible), len(s.Start), len(s.End), len(s.ID), len(s.ArrayJob), len(s.Who), len(s.Where),
		len(s.TRES), len(s.Nodes), len(s.CPUs), len(s.LimitMin), len(s.Nice), len(s.Ran)} {
		if l != n {
			return nil, errors.New("moment seed: priority columns of unequal lengths")
		}
	}
	if len(s.Users) != len(s.Accounts) || len(s.QOS) != len(s.Parts) {
		return nil, errors.New("moment seed: priority name tables of unequal lengths")
	}
	who := make([]uint32, len(s.Users))
	for i := range who {
		who[i] = m.Who(s.Users[i], s.Accounts[i])
	}
	where := make([]uint32, len(s.QOS))
	for i := range where {
		where[i] = m.Where(s.QOS[i], s.Parts[i])
	}
	tres := make([]uint32, len(s.Vectors))
	for i, v := range s.Vectors {
		if i > 0 {
			tres[i] = m.TRESIndex(v)
		}
	}
	for a, lim := range s.Throttle {
		m.SetArrayThrottle(a, lim)
	}
	if len(m.restarts) == 0 {
		for _, r := range s.Restarts {
			m.AddRestart(r.LastRan, r.Tick)
		}
	}
	for id, hs := range s.Holds {
		if len(m.holds[id]) == 0 {
			for _, h := range hs {
				m.AddHold(id, h.From, h.Until)
			}
		}
	}
	jobs := make([]Job, n)
	for k := range jobs {
		if s.Who[k] >= uint32(len(who)) || s.Where[k] >= uint32(len(where)) || s.TRES[k] >= uint32(len(tres)) {
			return nil, errors.New("moment seed: a priority job's name or request out of range")
		}
		jobs[k] = Job{Submit: s.Submit[k], Eligible: s.Eligible[k], Start: s.Start[k], End: s.End[k], ID: s.ID[k],
			ArrayJob: s.ArrayJob[k], Who: who[s.Who[k]], Where: where[s.Where[k]], TRES: tres[s.TRES[k]], Nodes: s.Nodes[k],
			CPUs: s.CPUs[k], TimeLimitMin: s.LimitMin[k], Nice: s.Nice[k], Ran: s.Ran[k]}
	}
	for _, list := range []struct {
		idx []int32
		set func(*Job)
	}{{s.Held, func(j *Job) { j.Held = true }}, {s.ArrayPending, func(j *Job) { j.ArrayPending = true }}} {
		for _, k := range list.idx {
			if k < 0 || int(k) >= n {
				return nil, errors.New("moment seed: a priority flag's job out of range")
			}
			list.set(&jobs[k])
		}
	}
	return jobs, nil
}
