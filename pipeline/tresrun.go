package pipeline

import (
	"math"
	"slices"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/fairshare/live"
)

// jobExtra holds, beside decay's columns (same index), what sshare's
// TRESRunMins needs of a job: its AllocTRES set and QOS as JobDict
// indexes and its time limit in minutes (fairshare.InfiniteTimeLimitMin
// when sacct gave none). It is kept only when AccountingStorageEnforce
// includes limits (12 bytes a job); otherwise it stays empty.
type jobExtra struct {
	tres, qos, limitMin []uint32
	// after, with a slurmctld log only, says of every job whether it ended
	// after the tick of its end's second (decay.Window.EndsAfterTick).
	after []bool
	// twice, with a slurmctld log only, holds the jobs whose end slurmctld
	// charged on top of its tick's pass (ctldLog.chargedTwice): the
	// seconds the end charged (decay.Window.EndCharge).
	twice map[int32]int64
	// inPass are the jobs of twice whose end's charge came before the
	// Fair Tree fair-share step of the tick's pass
	// (decay.Window.EndChargeInPass).
	inPass map[int32]bool
}

// endCharges returns the ends charged twice as live.Ends takes them.
func (x *jobExtra) endCharges() live.EndCharges {
	return live.EndCharges{Sec: x.twice, InPass: x.inPass}
}

// add appends the extra columns of one job record.
func (x *jobExtra) add(r *record.JobRec) {
	x.tres = append(x.tres, r.TRES)
	x.qos = append(x.qos, r.QOS)
	x.limitMin = append(x.limitMin, timeLimitMin(r))
}

// timeLimitMin is a record's time limit in minutes,
// fairshare.InfiniteTimeLimitMin when sacct gave none.
func timeLimitMin(r *record.JobRec) uint32 {
	if r.Valid&record.ValidTimelimitMin == 0 {
		return fairshare.InfiniteTimeLimitMin
	}
	return uint32(min(max(r.TimelimitMin, 0), math.MaxUint32))
}

// addCarried appends a job carried from a checkpoint that the input lacks,
// with the TRES, QOS and time limit the checkpoint kept (adding them to
// dict); one kept without them (an older checkpoint) holds nothing.
func (x *jobExtra) addCarried(dict *record.JobDict, j carriedJob) {
	var tres, qos, limit uint32
	if len(j.TRES) > 0 {
		tres, qos, limit = dict.TRESSet(j.TRES), dict.Name(j.QOS), j.TimelimitMin
	}
	x.tres = append(x.tres, tres)
	x.qos = append(x.qos, qos)
	x.limitMin = append(x.limitMin, limit)
}

// reserve makes room for n jobs in all.
func (x *jobExtra) reserve(n int) {
	x.tres, x.qos, x.limitMin = reserve(x.tres, n), reserve(x.qos, n), reserve(x.limitMin, n)
}

func reserve[T any](s []T, n int) []T {
	if n > cap(s) {
		s = slices.Grow(s, n-len(s))
	}
	return s
}

// move copies job src's columns to job dst (dedup's compaction).
func (x *jobExtra) move(dst, src int) {
	if len(x.after) > 0 {
		x.after[dst] = x.after[src]
	}
	if sec, ok := x.twice[int32(src)]; ok {
		x.twice[int32(dst)] = sec
		delete(x.twice, int32(src))
	} else {
		delete(x.twice, int32(dst))
	}
	if x.inPass[int32(src)] {
		x.inPass[int32(dst)] = true
		delete(x.inPass, int32(src))
	} else {
		delete(x.inPass, int32(dst))
	}
	if len(x.tres) == 0 {
		return
	}
	x.tres[dst], x.qos[dst], x.limitMin[dst] = x.tres[src], x.qos[src], x.limitMin[src]
}

// truncate keeps the first n jobs.
func (x *jobExtra) truncate(n int) {
	if len(x.after) > 0 {
		x.after = x.after[:n]
	}
	for j := range x.twice {
		if int(j) >= n {
			delete(x.twice, j)
		}
	}
	for j := range x.inPass {
		if int(j) >= n {
			delete(x.inPass, j)
		}
	}
	if len(x.tres) == 0 {
		return
	}
	x.tres, x.qos, x.limitMin = x.tres[:n], x.qos[:n], x.limitMin[:n]
}

// tresCarry is what TRESRunMins carries from one run (or snapshot) to the
// next beside the running jobs: per association, the residues ended jobs
// left and the debts double-charged ends left (live.TRESRun.Residues and
// Debts).
type tresCarry struct {
	Residue, Debt []residue
}

// newTRESRun prepares the TRESRunMins of the snapshots snaps of a run
// whose stream has read every job (live.NewTRESRun); dict is a read-only
// snapshot of the run's dictionary, sched the run's decay ticks, after the
// jobs (decay indexes) whose end in a tick's second came after the tick,
// restarts the sorted times slurmctld rebuilt its values at (nil: none
// known), since when residues start to count (the log's beginning,
// ctldLog.residuesFrom; math.MaxInt64 without a log).
//
// carried are the residues and debts of the checkpoint the run resumes
// from, what jobs that ended by lo left; since must then be after lo.
func newTRESRun(m *model, st *stream, dict *record.JobDict, lo int64, snaps []int64, sched *decay.Schedule, after map[int32]bool, restarts []int64, since int64, carried tresCarry) *live.TRESRun {
	c := live.TRESRunConfig{
		Names: m.cfg.TRES, Jobs: st.jobs, Dict: dict,
		Extra:  live.Extra{TRES: st.extra.tres, QOS: st.extra.qos, LimitMin: st.extra.limitMin},
		Factor: func(qos string) float64 { f, _ := st.usageFactor(qos); return f },
		Sched:  sched, After: after, Restarts: restarts, Lo: lo, Snaps: snaps,
		PeriodSec: m.calcPeriod(), Since: since, Twice: st.extra.twice,
	}
	// A residue of an association gone from the tree stays with its
	// account, as its usage does; a debt is on every ancestor's own
	// value already, and goes with the association.
	c.Carried = m.perUniverse(carried.Residue, true)
	c.CarriedDebt = m.perUniverse(carried.Debt, false)
	return live.NewTRESRun(c)
}

// perUniverse spreads per-association values over the universe's
// associations × the cluster's TRES, nil for none; one of an association
// the universe lacks goes to its account when toAccount, else nowhere.
func (m *model) perUniverse(list []residue, toAccount bool) []uint64 {
	if len(list) == 0 {
		return nil
	}
	nT := len(m.cfg.TRES)
	out := make([]uint64, len(m.keys)*nT)
	for _, r := range list {
		a, ok := m.uni.Index(keyOf(r.Key))
		if !ok && toAccount {
			a, ok = m.uni.Index(fairshare.Key{Account: r.Key[0]})
		}
		if !ok {
			continue
		}
		for name, v := range r.Secs {
			if k := slices.Index(m.cfg.TRES, name); k >= 0 {
				out[int(a)*nT+k] += v
			}
		}
	}
	return out
}

// carry returns the residues and debts run holds after its last snapshot
// (the run's --to), for its checkpoint or a seed; names are the cluster's
// TRES, keys the universe's associations.
func carry(run *live.TRESRun, names []string, keys []fairshare.Key) tresCarry {
	return tresCarry{Residue: perAssoc(run.Residues(), names, keys), Debt: perAssoc(run.Debts(), names, keys)}
}

// perAssoc lists per association with any the values vals holds per
// universe association × TRES, in index order.
func perAssoc(vals []uint64, names []string, keys []fairshare.Key) []residue {
	nT := len(names)
	var out []residue
	for a := 0; a*nT < len(vals); a++ {
		var secs map[string]uint64
		for k, v := range vals[a*nT : (a+1)*nT] {
			if v > 0 {
				if secs == nil {
					secs = map[string]uint64{}
				}
				secs[names[k]] = v
			}
		}
		if secs != nil {
			out = append(out, residue{Key: keyArray(keys[a]), Secs: secs})
		}
	}
	return out
}
