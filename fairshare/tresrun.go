package fairshare

import (
	"fmt"
	"math"
	"strconv"
)

// InfiniteTimeLimitMin is the time limit, in minutes, of a job slurmctld
// runs without one (INFINITE, 0xffffffff): acct_policy multiplies it by 60
// like any other limit, so such a job commits about 4.3 billion minutes of
// every TRES it holds.
const InfiniteTimeLimitMin = math.MaxUint32

// CommittedSecs returns the TRES-seconds of one allocated TRES that a job
// running at tick still holds in grp_used_tres_run_secs (sshare's
// TRESRunMins × 60): alloc × ⌊remaining × factor⌋, where remaining =
// max(0, start + limitSec − tick) is the part of the time limit not yet
// charged, alloc the job's count of the TRES (AllocTRES: cpu, mem in MiB,
// node, the integer billing, gres/..., license/...; energy is never
// counted) and factor its QOS UsageFactor. A job past its limit holds 0.
//
// What it relies on (Slurm's src/slurmctld/acct_policy.c,
// _adjust_limit_usage, ACCT_POLICY_JOB_BEGIN, and src/plugins/priority/
// multifactor/priority_multifactor.c, _apply_new_usage and
// _handle_assoc_tres_run_secs; SLURM-SEMANTICS.md §1.11): when a job
// starts, alloc × (uint64)(time_limit × 60 × UsageFactor) is added to the
// job's association and every association above it up to root; at each
// PriorityCalcPeriod tick the seconds of the interval (max(last tick,
// start), tick] that fall before start + time limit are removed again,
// along the same chain; at the job's end what is left is removed. Between
// start and end the value is therefore the committed time of the limit
// not yet used, which is what this returns; the truncation toward zero of
// the C cast is applied to the remaining seconds × factor. All of it only
// happens with AccountingStorageEnforce including limits (both functions
// return early otherwise), so without limits every value is 0.
func CommittedSecs(alloc uint64, start, limitSec, tick int64, factor float64) uint64 {
	rem := start + limitSec - tick
	if rem <= 0 || alloc == 0 || !(factor > 0) {
		return 0
	}
	secs := uint64(rem)
	if factor != 1 {
		secs = uint64(float64(rem) * factor)
	}
	return alloc * secs
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
	for k, name := range names {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, name...)
		b = append(b, '=')
		b = strconv.AppendUint(b, secs[k]/60, 10)
	}
	return b
}
