package live

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
)

// Extra holds, beside decay's columns (same index), what sshare's
// TRESRunMins needs of a job: its AllocTRES set and QOS as record.JobDict
// indexes and its time limit in minutes (fairshare.InfiniteTimeLimitMin
// when sacct gave none).
type Extra struct {
	TRES, QOS, LimitMin []uint32
}

// TRESRunConfig is what NewTRESRun takes of a run.
type TRESRunConfig struct {
	Names  []string                 // the cluster's TRES, in sshare's order
	Jobs   decay.Jobs               // the run's decay jobs: Start, End and Assoc are read
	Extra  Extra                    // beside Jobs, same index
	Dict   *record.JobDict          // a read-only snapshot of the run's dictionary, that Extra indexes
	Factor func(qos string) float64 // a QOS's UsageFactor
	Sched  *decay.Schedule          // the run's decay ticks
	// After holds the jobs (Jobs indexes) whose end in a tick's second
	// came after the tick.
	After map[int32]bool
	// Restarts are the sorted times slurmctld rebuilt its values at (nil:
	// none known): its starts and, where they rebuild too
	// (docs/slurm-versions.md §6), its reconfigures.
	Restarts []int64
	Lo       int64   // the window's start: restarts up to it are the checkpoint's
	Snaps    []int64 // the snapshot times, sorted
	// PeriodSec is PriorityCalcPeriod in seconds.
	PeriodSec int64
	// Since is when residues start to count (math.MaxInt64: never).
	Since int64
	// Carried are the residues of the checkpoint the run resumes from,
	// per universe association × TRES (Names); nil for none.
	Carried []uint64
	// Twice are the jobs whose end slurmctld charged a second time, with
	// the seconds that charge counted (its "ran for" line), and
	// CarriedDebt what such ends before Lo took beyond the jobs' values,
	// per universe association × TRES (TRESRun.Debts); nil for none.
	Twice       map[int32]int64
	CarriedDebt []uint64
}

// NewTRESRun prepares the TRESRunMins of the snapshots c.Snaps of a run
// whose jobs are all read.
//
// Residues (what a job with a fractional UsageFactor leaves behind after
// its end, fairshare.RunSecs) stay in slurmctld until it restarts, and
// fairledger knows restarts only from slurmctld's log. So they are counted
// only for jobs ending at or after c.Since, the log's beginning (its first
// tick or start), and (in RunSecs) only until the next known restart.
// Without a log (Since = math.MaxInt64) no residue is counted; running
// jobs still get the per-tick truncation on the grid. c.Carried holds what
// jobs that ended by c.Lo left; c.Since must then be after c.Lo.
func NewTRESRun(c TRESRunConfig) *TRESRun {
	r := &TRESRun{
		names: c.Names, jobs: c.Jobs, extra: &c.Extra, dict: c.Dict, factor: c.Factor,
		sched: c.Sched, after: c.After, restarts: c.Restarts, lo: c.Lo, snaps: c.Snaps,
		qos: map[uint32]float64{}, resid: c.Carried, since: c.Since, debt: c.CarriedDebt,
	}
	r.at, r.ended = runningAt(c.Jobs, c.Snaps, c.PeriodSec, c.Since, r.endBy)
	r.twice = twiceEnds(c.Jobs, c.Twice, r.endBy)
	return r
}

// Residues returns the residues held after the last snapshot (the run's
// --to), for its checkpoint: per universe association × TRES, nil when
// none was ever held. The slice is the TRESRun's own.
func (r *TRESRun) Residues() []uint64 { return r.resid }

// TRESRun computes the TRESRunMins cells of each snapshot as slurmctld
// would answer sshare at the snapshot's second: from the jobs running then
// (started before it, not ended by it) and, where slurmctld's log
// tells when its values were last rebuilt, the residues of jobs ended
// since (fairshare.RunSecs). runningAt lists both per snapshot once, in
// one pass over the jobs' starts and ends.
type TRESRun struct {
	names    []string        // the cluster's TRES, in sshare's order
	jobs     decay.Jobs      // Start, End and Assoc are read
	extra    *Extra          // same index as jobs
	dict     *record.JobDict // a read-only snapshot of the run's dictionary
	factor   func(qos string) float64
	sched    *decay.Schedule // the decay ticks
	after    map[int32]bool  // jobs ending in a tick's second after the tick
	restarts []int64         // slurmctld's known (re)starts, sorted
	lo       int64           // the window's start: restarts up to it are the checkpoint's
	snaps    []int64         // the snapshot times
	at       [][]int32       // the jobs running at snaps[i]
	ended    [][]int32       // the jobs whose residue counts from snaps[i] on

	alloc map[uint32][]uint64 // per TRES set: its counts of names
	qos   map[uint32]float64  // per QOS name: its UsageFactor
	own   []uint64            // per universe association × TRES
	resid []uint64            // residues per universe association × TRES, as of the last snapshot
	since int64               // when residues start to count
	twice []twiceEnd          // the ends charged twice, in order
	debt  []uint64            // what they took beyond the jobs, per universe association × TRES
	// byStart are the jobs by start time, built when a debt needs them.
	byStart []int32
	out     []uint64 // per tree position × TRES
	buf     []byte
}

// runningAt returns, for each snapshot time (sorted), the indexes of the
// jobs running at it (start < snapshot, and not ended by it: see endedBy;
// a job starting in the snapshot's very second counts from the next one, as
// a run ending at that second leaves it to the next run, Summary.AfterTo,
// and a snapshot must not depend on where its run ended) and those whose
// residue starts to count at it: ended by it and after the previous
// snapshot (the first snapshot takes every earlier end), at or after since
// (math.MaxInt64: none). endBy(j) is the first second at whose instant job
// j (not running) counts as ended. A time is placed by a table of the
// first snapshot in or after each period of length period from the first
// snapshot (a binary search over the snapshots when the window has too
// many periods for one), then a step over the few snapshots of its own
// period, so the pass costs a few operations a job.
func runningAt(jobs decay.Jobs, snaps []int64, period, since int64, endBy func(j int) int64) (at, ended [][]int32) {
	at = make([][]int32, len(snaps))
	ended = make([][]int32, len(snaps))
	n := len(snaps)
	if n == 0 {
		return at, ended
	}
	lo, hi := snaps[0], snaps[n-1]
	kOf := make([]int64, n) // period index of each snapshot
	for i, s := range snaps {
		kOf[i] = (s - lo) / period
	}
	kHi := kOf[n-1]
	// table[k] is the first snapshot whose period index is ≥ k, for k in
	// [0, kHi].
	var table []uint32
	if kHi < 1<<22 {
		table = make([]uint32, kHi+1)
		i := 0
		for k := range kHi + 1 {
			for kOf[i] < k {
				i++
			}
			table[k] = uint32(i)
		}
	}
	// first returns the first snapshot at or after t, n if none.
	first := func(t int64) int {
		if t <= lo {
			return 0
		}
		if t > hi {
			return n
		}
		k := (t - lo) / period
		var i int
		if table != nil {
			i = int(table[k])
		} else {
			i, _ = slices.BinarySearch(kOf, k)
		}
		for i < n && snaps[i] < t {
			i++
		}
		return i
	}
	for j, s := range jobs.Start {
		e := jobs.End[j]
		by := e
		if e != decay.Running {
			by = endBy(j)
		}
		if by > lo && s <= hi && s < e {
			i1 := n
			if e != decay.Running {
				i1 = first(by)
			}
			for i := first(s + 1); i < i1; i++ {
				at[i] = append(at[i], int32(j))
			}
		}
		if e != decay.Running && e >= since && by <= hi {
			i := first(by)
			ended[i] = append(ended[i], int32(j))
		}
	}
	return at, ended
}

// Cells returns the TRESRunMins cell of every position of p's tree for
// snapshot i, taken at its time at: what the jobs running then hold and
// the residues still counted (fairshare.RunSecs), credited to their
// associations and rolled up to root (fairshare.RollUpTRESRun). Snapshots
// must come in order: the residues are carried from one to the next. A
// position that holds nothing gets "" (stored as NULL, printed as zeros):
// most do (58 % of the 5 M-job benchmark's rows), and a NULL costs the
// Parquet writer nothing.
func (r *TRESRun) Cells(i int, at int64, p *fairshare.Projection, nAssoc int) ([]string, error) {
	if r.snaps[i] != at {
		return nil, fmt.Errorf("snapshot %d: decay took it at %d, TRESRunMins expected %d", i, at, r.snaps[i])
	}
	nT := len(r.names)
	r.own = slices.Grow(r.own[:0], nAssoc*nT)[:nAssoc*nT]
	clear(r.own)
	for _, j := range r.at[i] {
		r.add(j, at, r.own)
	}
	prev := r.lo // the checkpoint's residues and debts hold what came before
	if i > 0 {
		prev = r.snaps[i-1]
	}
	owing := len(r.twice) > 0 || slices.ContainsFunc(r.debt, func(v uint64) bool { return v > 0 })
	var residPrev []uint64
	if owing && len(r.resid) > 0 {
		residPrev = slices.Clone(r.resid)
	}
	if len(r.ended[i]) > 0 || len(r.resid) > 0 {
		if len(r.resid) < nAssoc*nT {
			r.resid = append(r.resid, make([]uint64, nAssoc*nT-len(r.resid))...)
		}
		if k, _ := slices.BinarySearch(r.restarts, prev+1); k < len(r.restarts) && r.restarts[k] <= at {
			clear(r.resid) // slurmctld restarted in (prev, at]
		}
		for _, j := range r.ended[i] {
			r.add(j, at, r.resid)
		}
		for k, v := range r.resid[:nAssoc*nT] {
			r.own[k] += v
		}
	}
	n := p.Tree.Len()
	r.out = slices.Grow(r.out[:0], n*nT)[:n*nT]
	fairshare.RollUpTRESRun(p, nT, r.own, r.out)
	if owing {
		r.payDebts(i, at, prev, p, nAssoc, residPrev)
	}
	cells := make([]string, n)
	for pos := range n {
		secs := r.out[pos*nT : (pos+1)*nT]
		if !slices.ContainsFunc(secs, func(v uint64) bool { return v >= 60 }) {
			continue // every TRES at 0 minutes
		}
		r.buf = fairshare.AppendTRESRunMins(r.buf[:0], r.names, secs)
		cells[pos] = string(r.buf)
	}
	return cells, nil
}

// add adds to dst (per universe association × TRES) what job j holds at
// at: its commitment while it runs, its residue once it ended.
func (r *TRESRun) add(j int32, at int64, dst []uint64) {
	nT := len(r.names)
	a := int(r.jobs.Assoc[j])
	r.addAt(j, at, dst[a*nT:(a+1)*nT])
}

// addAt adds to dst (per TRES) what job j holds at at.
func (r *TRESRun) addAt(j int32, at int64, dst []uint64) {
	alloc := r.counts(r.extra.TRES[j])
	if alloc == nil {
		return
	}
	fairshare.RunSecs(r.sched, r.restarts, r.runJob(j, at), at, alloc, dst)
}

// runJob is job j as fairshare.RunSecs takes it at at: ended if it
// counts as ended by then.
func (r *TRESRun) runJob(j int32, at int64) fairshare.RunJob {
	q, ok := r.qos[r.extra.QOS[j]]
	if !ok {
		q = r.factor(r.dict.Names()[r.extra.QOS[j]])
		r.qos[r.extra.QOS[j]] = q
	}
	job := fairshare.RunJob{
		Start: r.jobs.Start[j], End: fairshare.NotEnded,
		LimitSec: int64(r.extra.LimitMin[j]) * 60, Factor: q,
	}
	if e := r.jobs.End[j]; e != decay.Running && r.endBy(int(j)) <= at {
		job.End, job.EndsAfterTick = e, r.after[j]
	}
	return job
}

// endBy is the first second at whose instant the ended job j counts as
// ended (docs/slurm-semantics.md §2.9): a snapshot at T is the instant
// T.000, and sacct's End E the second the job ended in, so the job still
// runs at E.000, unless a decay tick of E's second came after its end
// (slurmctld's log orders them; without it the end is taken as before the
// tick): ticks are known to the second, and one at E counts as at E.000.
func (r *TRESRun) endBy(j int) int64 {
	e := r.jobs.End[j]
	if r.sched.Last(e) == e && !r.after[int32(j)] {
		return e
	}
	return e + 1
}

// counts returns the counts of TRES set id for r.names (nil for the empty
// set): the AllocTRES entry of each name, truncated to an integer as
// slurmctld's tres_alloc_cnt holds it; energy is never counted.
func (r *TRESRun) counts(id uint32) []uint64 {
	if id == 0 {
		return nil
	}
	if c, ok := r.alloc[id]; ok {
		return c
	}
	m := r.dict.TRESMap(id)
	c := make([]uint64, len(r.names))
	for k, name := range r.names {
		if v := m[strings.ToLower(name)]; v > 0 && name != "energy" {
			c[k] = uint64(min(v, 1<<62))
		}
	}
	if r.alloc == nil {
		r.alloc = map[uint32][]uint64{}
	}
	r.alloc[id] = c
	return c
}
