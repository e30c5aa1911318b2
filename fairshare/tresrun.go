package fairshare

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/fairledger/fairledger/internal/treslist"
)

// InfiniteTimeLimitMin is the time limit, in minutes, of a job slurmctld
// runs without one (INFINITE, 0xffffffff): acct_policy multiplies it by 60
// like any other limit, so such a job commits about 4.3 billion minutes of
// every TRES it holds.
const InfiniteTimeLimitMin = math.MaxUint32

// Ticks is where slurmctld's decay thread ticked (PriorityCalcPeriod
// ticks, the times _decay_thread passes to _apply_new_usage):
// *decay.Schedule implements it. The ticks fall every Period seconds,
// except for the Explicit ones (strictly increasing, irregularly spaced):
// every tick before the first explicit one is on the regular grid up to
// Last(first−1), and every tick after the last explicit one follows it by
// whole periods.
type Ticks interface {
	// Last returns the last tick at or before t.
	Last(t int64) int64
	// Next returns the first tick after t.
	Next(t int64) int64
	// Period returns the regular spacing of the ticks, in seconds (> 0).
	Period() int64
	// Explicit returns the irregular ticks, increasing; not modified.
	Explicit() []int64
}

// NotEnded is the RunJob.End of a job still running.
const NotEnded int64 = math.MaxInt64

// RunJob is one job as slurmctld's grp_used_tres_run_secs sees it.
type RunJob struct {
	// Start and End are the job's start and end (Unix seconds); End is
	// NotEnded for a job still running.
	Start, End int64
	// EndsAfterTick is set when End falls in the very second of a tick
	// and the end came after it: that tick decrements the job as running
	// and the end removes what is left from the tick on. Otherwise a job
	// ending in a tick's second ended before that tick.
	EndsAfterTick bool
	// LimitSec is the time limit in seconds (minutes × 60;
	// InfiniteTimeLimitMin × 60 without one).
	LimitSec int64
	// Factor is the QOS UsageFactor q.
	Factor float64
}

// RunSecs adds to dst[k] the TRES-seconds that job j holds at time at in
// grp_used_tres_run_secs (sshare's TRESRunMins × 60) of its association
// and of every ancestor, alloc[k] being its count of TRES k (AllocTRES:
// cpu, mem in MiB, node, the integer billing, gres/..., license/...; the
// caller passes 0 for energy, which is never counted). ticks are the
// decay ticks, restarts the sorted times slurmctld was (re)started at, as
// far as they are known (nil: none). Slurm's rule, the same in every
// release 22.05–26.05, with AccountingStorageEnforce including limits:
//
//  1. at the start (src/slurmctld/acct_policy.c, _adjust_limit_usage,
//     ACCT_POLICY_JOB_BEGIN): += alloc × (uint64)(limit × q), i.e.
//     alloc × ⌊limit·q⌋;
//  2. at each tick T after the previous tick L while the job runs
//     (src/plugins/priority/multifactor/priority_multifactor.c,
//     _apply_new_usage with adjust_for_end false, then
//     _handle_assoc_tres_run_secs): start_period = max(L, start); δ = 0 if
//     start_period ≥ start + limit, else min(T, start + limit) −
//     start_period; −= alloc × (uint64)(δ × q), i.e. alloc × ⌊δ·q⌋;
//  3. at the end (priority_p_job_end → _apply_new_usage(job, L, now,
//     true), L the last tick before the end): −= alloc × ⌊(start + limit
//     − max(L, start))·q⌋, 0 past the limit.
//
// A job with fractional δ·q therefore holds a little more than the closed
// form alloc × ⌊(start + limit − T)·q⌋ while it runs and leaves alloc ×
// (the fractions dropped) behind when it ends: for an ended job (End ≤
// at) RunSecs adds that residue. slurmctld clears every residue when it
// starts (src/slurmctld/read_config.c, _restore_job_accounting →
// assoc_mgr_clear_used_info) and rebuilds the running jobs: step 1 again,
// then _init_grp_used_tres_run_secs(L), L the last tick before the
// restart, removes (uint64)(alloc × q × (L − start)) of each job started
// by L (the truncation of the whole product). So an ended job with a
// restart in (End, at] adds nothing, and a job running at the last
// restart R in (Start, at] (a restart in End's second finds it running)
// holds the rebuilt value minus the ticks after Last(R−1).
//
// A job ends before the ticks in its end's second unless EndsAfterTick.
// Nothing is added before Start, with q ≤ 0 (or NaN), or for jobs that
// never ran past the limit of uint64; where Slurm clamps a whole
// association's value at 0 on underflow ("underflow" error), RunSecs
// clamps the job's own value, which differs only for a job rebuilt past
// its time limit (whose subtraction would eat into its association's
// other jobs in slurmctld).
//
// On a regular stretch of ticks every whole interval removes the same
// ⌊P·q⌋, so the cost is a few operations a job plus one per explicit tick
// in its life.
func RunSecs(t Ticks, restarts []int64, j RunJob, at int64, alloc, dst []uint64) {
	if at < j.Start || !(j.Factor > 0) || j.LimitSec < 0 {
		return
	}
	ended := j.End != NotEnded && j.End <= at
	sum, last, from, cleared := runTicks(t, restarts, j, at)
	if cleared {
		return // the residue was cleared
	}
	if ended {
		sum += truncMul(j.Start+j.LimitSec-max(last, j.Start), j.Factor)
	}
	base := truncMul(j.LimitSec, j.Factor)
	for k, a := range alloc {
		if a == 0 {
			continue
		}
		held := a * base
		if from > j.Start {
			rb := uint64(float64(a) * j.Factor * float64(from-j.Start))
			held = subClamp(held, rb)
		}
		dst[k] += subClamp(held, a*sum)
	}
}

// runTicks returns, for job j at time at (j.Start ≤ at), Σ ⌊δ_T·q⌋ over
// the ticks that decremented it (tickSecs), the last of them (or where
// they count from if none), where they count from (the start, or the
// tick before the last restart in (Start, at], which rebuilt the job's
// value), and whether a restart after the job's end cleared what it left.
func runTicks(t Ticks, restarts []int64, j RunJob, at int64) (sum uint64, last, from int64, cleared bool) {
	ended := j.End != NotEnded && j.End <= at
	from = j.Start
	// The last restart at or before at.
	if r, _ := slices.BinarySearch(restarts, at+1); r > 0 {
		R := restarts[r-1]
		if ended && R > j.End {
			return 0, 0, 0, true
		}
		if R > j.Start {
			from = max(t.Last(R-1), j.Start)
		}
	}
	upTo := at
	if ended {
		upTo = j.End - 1
		if j.EndsAfterTick && t.Last(j.End) == j.End {
			upTo = j.End
		}
	}
	sum, last = tickSecs(t, from, j.Start, j.LimitSec, upTo, j.Factor)
	return sum, last, from, false
}

// TwiceEndSecs adds to dst[k] what slurmctld removes from the
// grp_used_tres_run_secs of ended job j's association and of every
// ancestor beyond RunSecs's step 3 when it charges the job's end a second
// time (docs/slurm-versions.md §10): the tick's pass has decremented the
// job as running, but the end's _apply_new_usage still counts from the
// tick before, from (the end minus the seconds of its "ran for" line), and
// removes alloc × ⌊(start + limit − max(from, start))·q⌋ where RunSecs's
// end removes alloc × ⌊(start + limit − max(last, start))·q⌋, last being
// the pass's tick. alloc and the arguments are RunSecs's.
func TwiceEndSecs(t Ticks, restarts []int64, j RunJob, from int64, alloc, dst []uint64) {
	if j.End == NotEnded || !(j.Factor > 0) || j.LimitSec < 0 || j.End < j.Start {
		return
	}
	_, last, _, cleared := runTicks(t, restarts, j, j.End)
	if cleared {
		return
	}
	end := j.Start + j.LimitSec
	extra := subClamp(truncMul(end-max(from, j.Start), j.Factor), truncMul(end-max(last, j.Start), j.Factor))
	for k, a := range alloc {
		dst[k] += a * extra
	}
}

// tickSecs returns Σ ⌊δ_T·q⌋ over the ticks T of t in (from, to] for a
// job started at start with time limit limit whose previous tick (or
// start, if later) is from, δ_T as in RunSecs's step 2, and the last tick
// it counted (from if none). Whole regular intervals inside the limit are
// counted, not walked: each removes ⌊P·q⌋.
func tickSecs(t Ticks, from, start, limit, to int64, q float64) (sum uint64, last int64) {
	end := start + limit // end_time_exp
	P := t.Period()
	pq := truncMul(P, q)
	ex := t.Explicit()
	L := from
	for L < end {
		T := t.Next(L)
		if T > to {
			break
		}
		sum += truncMul(min(T, end)-max(L, start), q)
		L = T
		if T >= end {
			break
		}
		// The regular stretch from T: up to the grid's last tick before
		// the first explicit one, or for ever after the last; none
		// between explicit ticks.
		span := min(to, end) - T
		switch {
		case len(ex) == 0 || T >= ex[len(ex)-1]:
		case T < ex[0]:
			span = min(span, t.Last(ex[0]-1)-T)
		default:
			span = 0
		}
		if n := span / P; n > 0 {
			sum += uint64(n) * pq
			L = T + n*P
		}
	}
	return sum, L
}

// truncMul returns (uint64)(d × q) as C converts a double to uint64
// (truncation), 0 for d ≤ 0.
func truncMul(d int64, q float64) uint64 {
	if d <= 0 {
		return 0
	}
	if q == 1 {
		return uint64(d)
	}
	return uint64(float64(d) * q)
}

// subClamp returns a − b, 0 if b > a.
func subClamp(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// RollUpTRESRun credits per-TRES values of universe associations to the
// tree of p and sums them up the tree, as acct_policy adds a job's
// committed TRES-seconds to its association and every ancestor up to root:
// own holds nTRES values per universe association (own[i*nTRES+k]), out
// receives nTRES values per tree position (out[pos*nTRES+k]), each the sum
// over the position's own usage and that of all its descendants. The
// crediting of associations the tree lacks follows Projection.RawUsage.
func RollUpTRESRun(p *Projection, nTRES int, own, out []uint64) {
	t := p.Tree
	n := t.Len()
	if len(own) != len(p.Credit)*nTRES || len(out) != n*nTRES {
		panic(fmt.Sprintf("fairshare: RollUpTRESRun: own of length %d for %d associations × %d TRES, out of length %d for a tree of %d",
			len(own), len(p.Credit), nTRES, len(out), n))
	}
	clear(out)
	for i, c := range p.Credit {
		src, dst := own[i*nTRES:(i+1)*nTRES], out[int(c)*nTRES:(int(c)+1)*nTRES]
		for k, v := range src {
			dst[k] += v
		}
	}
	for pos := n - 1; pos > 0; pos-- {
		par := int(t.Parent[pos])
		src, dst := out[pos*nTRES:(pos+1)*nTRES], out[par*nTRES:(par+1)*nTRES]
		for k, v := range src {
			dst[k] += v
		}
	}
}

// AppendTRESRunMins appends the TRESRunMins cell sshare prints for one
// association: name=minutes for every TRES of names (the cluster's TRES in
// schemas.CompareTRES order), minutes = ⌊secs/60⌋ as sshare divides
// grp_used_tres_run_secs by 60 in integer arithmetic, joined by commas:
// "cpu=96,mem=393216,energy=0,node=1,billing=96,...".
func AppendTRESRunMins(b []byte, names []string, secs []uint64) []byte {
	return treslist.Append(b, len(names), func(k int) string { return names[k] },
		func(b []byte, k int) []byte { return strconv.AppendUint(b, secs[k]/60, 10) })
}

// AppendTRESList appends n entries to b the way Slurm prints a TRES list
// (sshare's TRESRunMins and GrpTRESMins, sacctmgr's limits): name=value
// joined by commas, "cpu=96,mem=393216,node=1". name returns the i-th
// entry's TRES name and value appends its value. Neither function is kept,
// so the closures passed here need not allocate. It is treslist.Append, the
// one formatter of the form, for ingest's callers.
func AppendTRESList(b []byte, n int, name func(i int) string, value func(b []byte, i int) []byte) []byte {
	return treslist.Append(b, n, name, value)
}
