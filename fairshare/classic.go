package fairshare

import "math"

// Classic computes the classic fair-share values (PriorityFlags=NO_FAIR_TREE,
// docs/slurm-semantics.md §5) for one usage snapshot into r. usage is as for
// FairTree. damp is FairShareDampeningFactor (§5); values below 1 are
// treated as 1, Slurm's default.
//
//   - NormShares S = Π shares/level_shares up the direct chain, skipping
//     FairShare=parent links (0 if a level has no shares); FairShare=parent
//     uses its fs parent's S; root 1 (§4.2).
//   - EffectvUsage, top-down, first rule that applies (§5): children of root
//     UE = UN; FairShare=parent UE = UE(fs parent); no shares at the level
//     UE = UE(fs parent); else UE = UN + (UE(fs parent) − UN)·shares/level_shares.
//   - FairShare F = 2^(−(UE/S)/damp), 0 when S ≤ 0, using the fs parent's UE
//     and S for FairShare=parent (§5); computed for accounts too; root NaN.
//   - LevelFS is NaN (not a classic column); Rank is 0.
//
// Unlike a live slurmctld (§5) every value comes from the same snapshot.
func Classic(t *Tree, usage []float64, damp float64, r *Result) {
	checkUsage(t, usage, "Classic")
	multifactor(t, usage, damp, r, false)
}

// DepthOblivious computes the depth-oblivious values
// (PriorityFlags=DEPTH_OBLIVIOUS, docs/slurm-semantics.md §6) for one usage
// snapshot into r: shares, NormUsage and FairShare as in Classic, and for an
// association A with fs parent p that is not a child of root and not
// FairShare=parent (those follow Classic's first two rules):
//
//	if S(A), S(p), UE(p) and UN(A) are all non-zero:
//	  R_p   = UE(p)/S(p)
//	  r_s   = Σ UN(s) over p's fs children s that are not FairShare=parent / S(p)
//	  r_l   = (UN(A)/S(A)) / r_s
//	  k     = 1/(1 + (5·ln R_p)²) if ln R_p · ln r_l < 0, else 1
//	  UE(A) = R_p · r_l^k · S(A)
//	else UE(A) = UN(A)
//
// so F = 2^(−R_p·r_l^k / damp). This is the converged formula: siblings' UN
// are the current ones, not the stale values a live slurmctld reads (§6).
func DepthOblivious(t *Tree, usage []float64, damp float64, r *Result) {
	checkUsage(t, usage, "DepthOblivious")
	multifactor(t, usage, damp, r, true)
}

func multifactor(t *Tree, usage []float64, damp float64, r *Result, deep bool) {
	n := t.Len()
	algo := ClassicAlgo
	if deep {
		algo = DepthObliviousAlgo
	}
	r.reset(n, algo)
	r.normUsage(usage)
	if !(damp >= 1) {
		damp = 1
	}
	S := t.classicShares
	copy(r.NormShares, S)
	UN, UE := r.NormUsage, r.EffectvUsage

	if deep {
		r.sibUN = grow(r.sibUN, n)
		for p := 0; p < n; p++ {
			sum := 0.0
			for _, c := range t.FSChildren[t.FSChildStart[p]:t.FSChildStart[p+1]] {
				if !t.SharesParent[c] {
					sum += UN[c]
				}
			}
			r.sibUN[p] = sum
		}
	}

	UE[0] = 1
	for p := 1; p < n; p++ {
		fp := t.FSParent[p]
		sib := 0.0
		if deep {
			sib = r.sibUN[fp]
		}
		UE[p] = t.multifactorEffectvUsage(int32(p), UN[p], UE[fp], sib, deep)
	}

	r.FairShare[0] = blank
	r.LevelFS[0] = blank
	for p := 1; p < n; p++ {
		f := int32(p)
		if t.SharesParent[p] {
			f = t.FSParent[p]
		}
		r.FairShare[p] = Factor(UE[f], S[f], damp)
		r.LevelFS[p] = blank
	}
}

// multifactorEffectvUsage is the classic (deep false) or depth-oblivious
// (deep true) EffectvUsage of position p ≥ 1 from its NormUsage un, its fs
// parent's EffectvUsage ueParent and, for depth-oblivious, sibUN: the sum
// of NormUsage over the fs parent's fs children that are not
// FairShare=parent (see Classic and DepthOblivious for the rules). It is
// the one place both the whole-tree pass and EffectvUsageOf compute it.
func (t *Tree) multifactorEffectvUsage(p int32, un, ueParent, sibUN float64, deep bool) float64 {
	S := t.classicShares
	fp := t.FSParent[p]
	switch {
	case fp == 0:
		return un
	case t.SharesParent[p]:
		return ueParent
	case deep:
		if S[p] != 0 && S[fp] != 0 && ueParent != 0 && un != 0 {
			ratioP := ueParent / S[fp]
			ratioS := sibUN / S[fp]
			ratioL := (un / S[p]) / ratioS
			// ln R_p · ln r_l < 0 exactly when R_p and r_l lie on
			// opposite sides of 1 (log is monotone, log 1 = 0), so
			// the logs are only taken when k ≠ 1; with k = 1,
			// pow(r_l, 1) = r_l exactly.
			rl := ratioL
			if (ratioP > 1 && ratioL < 1) || (ratioP < 1 && ratioP > 0 && ratioL > 1) {
				x := 5 * math.Log(ratioP)
				rl = math.Pow(ratioL, 1/(1+x*x))
			}
			return ratioP * rl * S[p]
		}
		return un
	case t.LevelShares[p] == 0:
		return ueParent
	default:
		// float64() rounds the product so no platform fuses it into an
		// FMA: results stay bit-identical everywhere.
		return un + float64((ueParent-un)*(float64(t.Shares[p])/float64(t.LevelShares[p])))
	}
}

// AccountFairShares sets the classic and depth-oblivious factor of r's
// account rows and root, as sshare computed it for them before Slurm 25.11
// (priority_p_calc_fs_factor on each row): Factor of the row's
// EffectvUsage and NormShares (a FairShare=parent account's fair-share
// parent's), and for root, whose NormShares and EffectvUsage are 1,
// 2^(−1/damp). User rows keep theirs.
func AccountFairShares(t *Tree, r *Result, damp float64) {
	for p := range t.IsUser {
		switch {
		case t.IsUser[p]:
		case p == 0:
			r.FairShare[p] = Factor(1, 1, damp)
		default:
			f := int32(p)
			if t.SharesParent[p] {
				f = t.FSParent[p]
			}
			r.FairShare[p] = Factor(r.EffectvUsage[f], r.NormShares[f], damp)
		}
	}
}

// Factor is the classic and depth-oblivious fair-share factor
// F = 2^(−(UE/S)/damp), 0 when S ≤ 0 (PM priority_p_calc_fs_factor, §5).
// Slurm calls C pow(2.0, x); math.Exp2 computes the same function about three
// times faster than math.Pow, and both are within an ulp of the exact value.
func Factor(effectvUsage, normShares, damp float64) float64 {
	if !(normShares > 0) {
		return 0
	}
	return math.Exp2(-((effectvUsage / normShares) / damp))
}
