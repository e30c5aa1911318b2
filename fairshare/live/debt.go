package live

import (
	"cmp"
	"slices"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/fairshare"
)

// A double-charged end (docs/slurm-versions.md §10) removes more from
// TRESRunMins than the job still holds: fairshare.TwiceEndSecs, D, from
// its association and every ancestor. slurmctld's counter of each of them
// then stands D below what fairledger computes (fairshare.RunSecs summed
// up the tree) until a subtraction would take it below 0: slurmctld sets
// it to 0 instead (_handle_assoc_tres_run_secs, "underflow"), and from
// then on it stands below fairledger's value by what that value was right
// after the subtraction. A restart rebuilds every counter and ends the
// debt. So an association's debt after a stretch of time is
// min(debt, its lowest value in the stretch), and only subtractions (ticks,
// ends) lower a value: the lowest comes right before a job below it starts
// or at the stretch's end.

// twiceEnd is one end slurmctld charged twice.
type twiceEnd struct {
	j    int32 // the job (Jobs index)
	at   int64 // the instant the job counts as ended (TRESRun.endBy)
	from int64 // where the end's charge counted from: End − δ
}

// twiceEnds lists the ends of twice (job → seconds its end charged) in
// the order they happened.
func twiceEnds(jobs decay.Jobs, twice map[int32]int64, endBy func(j int) int64) []twiceEnd {
	var out []twiceEnd
	for j, sec := range twice {
		if e := jobs.End[j]; e != decay.Running {
			out = append(out, twiceEnd{j: j, at: endBy(int(j)), from: e - sec})
		}
	}
	slices.SortFunc(out, func(a, b twiceEnd) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.j, b.j))
	})
	return out
}

// Debts returns what double-charged ends took from each association's
// TRESRunMins beyond its jobs, as of the last snapshot: per universe
// association × TRES, nil when none was ever taken. The slice is the
// TRESRun's own.
func (r *TRESRun) Debts() []uint64 { return r.debt }

// payDebts lowers r.out (per position of p's tree × TRES), fairledger's
// values at snapshot i (taken at at), by the debts of the associations,
// after adding those of the double-charged ends in (prev, at] and
// lowering each to the association's lowest value since prev
// (lowerDebts). A restart in (prev, at] clears what came before it.
// residPrev holds the residues as of prev (per universe association ×
// TRES), nil for none.
func (r *TRESRun) payDebts(i int, at, prev int64, p *fairshare.Projection, nAssoc int, residPrev []uint64) {
	nT := len(r.names)
	if len(r.debt) < nAssoc*nT {
		r.debt = append(r.debt, make([]uint64, nAssoc*nT-len(r.debt))...)
	}
	from := prev
	if k, _ := slices.BinarySearch(r.restarts, prev+1); k < len(r.restarts) && r.restarts[k] <= at {
		clear(r.debt)
		residPrev = nil
		for k < len(r.restarts) && r.restarts[k] <= at {
			from = r.restarts[k]
			k++
		}
	}
	k0, _ := slices.BinarySearchFunc(r.twice, from+1, func(e twiceEnd, t int64) int { return cmp.Compare(e.at, t) })
	seg := from
	d := make([]uint64, nT)
	for _, e := range r.twice[k0:] {
		if e.at > at {
			break
		}
		r.lowerDebts(i, seg, e.at, at, prev, p, residPrev)
		seg = e.at
		alloc := r.counts(r.extra.TRES[e.j])
		if alloc == nil {
			continue
		}
		clear(d)
		fairshare.TwiceEndSecs(r.sched, r.restarts, r.runJob(e.j, e.at), e.from, alloc, d)
		for pos := int(p.Credit[r.jobs.Assoc[e.j]]); pos >= 0; pos = int(p.Tree.Parent[pos]) {
			if u := int(p.Index[pos]); u >= 0 {
				for k, v := range d {
					r.debt[u*nT+k] += v
				}
			}
		}
	}
	r.lowerDebts(i, seg, at, at, prev, p, residPrev)
	for pos := range p.Tree.Len() {
		u := int(p.Index[pos])
		if u < 0 {
			continue
		}
		for k := range nT {
			r.out[pos*nT+k] -= r.debt[u*nT+k] // lowerDebts kept it ≤ out
		}
	}
}

// lowerDebts lowers the debt of every association of p's tree that has
// one to its lowest value in [a, b] (b ≤ at, snapshot i's time; prev the
// previous snapshot's): at b = at, r.out gives it; when the jobs below it
// running through the stretch hold at least the debt at its end, nothing
// lower can come; otherwise its value is summed right before each start
// below it in (a, b] and at both ends (slowest, and rare: an association
// nearly idle while it owes).
func (r *TRESRun) lowerDebts(i int, a, b, at, prev int64, p *fairshare.Projection, residPrev []uint64) {
	nT := len(r.names)
	t := p.Tree
	lb := make([]uint64, nT)
	for pos := range t.Len() {
		u := int(p.Index[pos])
		if u < 0 {
			continue
		}
		debt := r.debt[u*nT : (u+1)*nT]
		if !slices.ContainsFunc(debt, func(v uint64) bool { return v > 0 }) {
			continue
		}
		if b == at {
			for k := range debt {
				debt[k] = min(debt[k], r.out[pos*nT+k])
			}
		}
		// The jobs below pos running from before a to at hold at least
		// their value at at all through [a, b].
		clear(lb)
		for _, j := range r.at[i] {
			if r.jobs.Start[j] < a && below(t, pos, int(p.Credit[r.jobs.Assoc[j]])) {
				r.addAt(j, at, lb)
			}
		}
		covered := true
		for k, v := range debt {
			if v > lb[k] {
				covered = false
			}
		}
		if covered {
			continue
		}
		r.lowestBelow(i, pos, a, b, prev, p, residPrev, debt)
	}
}

// lowestBelow lowers debt (position pos's, per TRES) to pos's value at a,
// at b and right before each start of a job below pos in (a, b].
func (r *TRESRun) lowestBelow(i, pos int, a, b, prev int64, p *fairshare.Projection, residPrev []uint64, debt []uint64) {
	nT := len(r.names)
	t := p.Tree
	var cand []int32
	for _, j := range r.liveIn(i, prev, b) {
		if below(t, pos, int(p.Credit[r.jobs.Assoc[j]])) {
			cand = append(cand, j)
		}
	}
	base := make([]uint64, nT) // the residues of jobs ended by prev
	for u := 0; u*nT < len(residPrev); u++ {
		if below(t, pos, int(p.Credit[u])) {
			for k := range nT {
				base[k] += residPrev[u*nT+k]
			}
		}
	}
	instants := []int64{a, b}
	for _, j := range cand {
		if s := r.jobs.Start[j]; s > a && s <= b {
			instants = append(instants, s)
		}
	}
	v := make([]uint64, nT)
	for _, in := range instants {
		copy(v, base)
		for _, j := range cand {
			if r.jobs.Start[j] >= in {
				continue // right before its start
			}
			if e := r.jobs.End[j]; e != decay.Running && r.endBy(int(j)) <= in && e < r.since {
				continue // its residue is not counted
			}
			r.addAt(j, in, v)
		}
		for k := range debt {
			debt[k] = min(debt[k], v[k])
		}
	}
}

// liveIn returns the jobs that may hold something in (prev, b] of
// snapshot i's stretch: those running at prev (the previous snapshot's,
// or every job not ended by prev for the first) and those starting in
// [prev, b].
func (r *TRESRun) liveIn(i int, prev, b int64) []int32 {
	if r.byStart == nil {
		r.byStart = make([]int32, len(r.jobs.Start))
		for j := range r.byStart {
			r.byStart[j] = int32(j)
		}
		slices.SortFunc(r.byStart, func(x, y int32) int { return cmp.Compare(r.jobs.Start[x], r.jobs.Start[y]) })
	}
	var out []int32
	if i > 0 {
		out = append(out, r.at[i-1]...)
	} else {
		for j, s := range r.jobs.Start {
			if s < prev && (r.jobs.End[j] == decay.Running || r.endBy(j) > prev) {
				out = append(out, int32(j))
			}
		}
	}
	k, _ := slices.BinarySearchFunc(r.byStart, prev, func(j int32, t int64) int { return cmp.Compare(r.jobs.Start[j], t) })
	for ; k < len(r.byStart) && r.jobs.Start[r.byStart[k]] <= b; k++ {
		out = append(out, r.byStart[k])
	}
	return out
}

// below reports whether tree position q is pos or below it.
func below(t *fairshare.Tree, pos, q int) bool {
	for ; q >= 0; q = int(t.Parent[q]) {
		if q == pos {
			return true
		}
	}
	return false
}
