package fairshare

import "math"

// Result holds the per-association values of one usage snapshot, indexed by
// tree position. NaN marks a cell sshare prints blank (see IsBlank); +Inf in
// LevelFS is printed "inf". A Result is a reusable buffer: pass the same one
// to successive calls and it is overwritten without allocating.
type Result struct {
	// Algorithm is the algorithm that filled the Result.
	Algorithm Algorithm
	// NormShares is S: classic §4.2 (root 1), Fair Tree §4.2 (root
	// shares/NO_VAL, printed 0.000000).
	NormShares []float64
	// RawUsage is the usage the Result was computed from (U_raw). A
	// caller printing sshare between two decay ticks may replace it with
	// the live usage_raw (job-end charges since the tick, which
	// priority_p_job_end adds at once) while the other fields stay those
	// of the tick, as slurmctld's are.
	RawUsage []float64
	// NormUsage is UN = U_raw/U_raw(root) capped at 1 (§4.3); NaN for root.
	NormUsage []float64
	// EffectvUsage is UE: classic §5, depth-oblivious §6, Fair Tree
	// U_raw/U_raw(fs parent) (§7.1); root 1.
	EffectvUsage []float64
	// FairShare is F. Fair Tree: rank/N for users, NaN for accounts and
	// root. Classic and depth-oblivious: 2^(-(UE/S)/damp) for every
	// association but root (NaN); sshare ≥ 25.11 prints it only on user
	// rows (SshareOptions.AccountFairShare prints the account values the
	// way older releases did).
	FairShare []float64
	// LevelFS is Fair Tree's LF = S/U (§7.2), +Inf for no usage; NaN for
	// root and FairShare=parent rows, and for every row under the other
	// algorithms.
	LevelFS []float64
	// Rank is the Fair Tree competition rank of each user (F = Rank/N);
	// 0 for accounts and under the other algorithms.
	Rank []int32

	// Fair Tree scratch: sort keys and the sorted sibling groups.
	key   []float64
	keyLo []float64 // beside key: the rest of the long double LevelFS
	items []sortItem
	stack []frame
	// depth-oblivious scratch: per fs parent, Σ UN of its non-parent
	// fs children.
	sibUN []float64
}

// IsBlank reports whether v marks a cell that sshare prints blank.
func IsBlank(v float64) bool { return math.IsNaN(v) }

// blank is the NaN used for blank cells.
var blank = math.NaN()

// reset sizes every slice of r to n, reusing capacity.
func (r *Result) reset(n int, a Algorithm) {
	r.Algorithm = a
	r.NormShares = grow(r.NormShares, n)
	r.RawUsage = grow(r.RawUsage, n)
	r.NormUsage = grow(r.NormUsage, n)
	r.EffectvUsage = grow(r.EffectvUsage, n)
	r.FairShare = grow(r.FairShare, n)
	r.LevelFS = grow(r.LevelFS, n)
	if cap(r.Rank) < n {
		r.Rank = make([]int32, n)
	}
	r.Rank = r.Rank[:n]
	clear(r.Rank)
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// normUsage fills RawUsage and NormUsage (§4.3, PM set_assoc_usage_norm).
func (r *Result) normUsage(usage []float64) {
	copy(r.RawUsage, usage)
	total := usage[0]
	r.NormUsage[0] = blank
	for p := 1; p < len(r.NormUsage); p++ {
		r.NormUsage[p] = normUsageOf(usage[p], total)
	}
}

// normUsageOf is UN of raw usage u under the cluster total: u/total capped
// at 1, 0 when the total is 0.
func normUsageOf(u, total float64) float64 {
	if total == 0 {
		return 0
	}
	return min(u/total, 1)
}

func checkUsage(t *Tree, usage []float64, fn string) {
	if len(usage) != t.Len() {
		panic("fairshare: " + fn + ": usage length differs from tree size")
	}
}
