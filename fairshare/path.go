package fairshare

// NormSharesOf returns the NormShares of position p that Compute(a, t, ...)
// stores in Result.NormShares[p]: it depends on the tree alone, not on the
// usage.
func (t *Tree) NormSharesOf(a Algorithm, p int32) float64 {
	if a == ClassicAlgo || a == DepthObliviousAlgo {
		return t.classicShares[p]
	}
	return t.treeShares[p]
}

// EffectvUsageOf returns the EffectvUsage of position p that Compute(a, t,
// usage, damp, r) stores in r.EffectvUsage[p], bit for bit, reading only
// the usage it depends on: under Fair Tree p's and its fs parent's; under
// the classic algorithm root's and that of p's fs ancestors, which it
// recomputes top-down (O(depth)); under depth-oblivious also that of their
// fs children (the siblings' NormUsage sums). A caller that changes a few
// associations' usage and watches a few positions (the time a lab takes
// to recover, export/report) need not recompute the whole tree. usage is
// as for Compute.
func EffectvUsageOf(a Algorithm, t *Tree, usage []float64, p int32) float64 {
	checkUsage(t, usage, "EffectvUsageOf")
	if p == 0 {
		return 1
	}
	if a != ClassicAlgo && a != DepthObliviousAlgo {
		return fairTreeEffectvUsage(usage[p], usage[t.FSParent[p]])
	}
	deep := a == DepthObliviousAlgo
	total := usage[0]
	// The fs ancestors below root, p first; trees are shallow.
	var buf [16]int32
	chain := buf[:0]
	for q := p; q > 0; q = t.FSParent[q] {
		chain = append(chain, q)
	}
	ue := 1.0 // root's
	for i := len(chain) - 1; i >= 0; i-- {
		q := chain[i]
		sib := 0.0
		if fp := t.FSParent[q]; deep {
			for _, c := range t.FSChildren[t.FSChildStart[fp]:t.FSChildStart[fp+1]] {
				if !t.SharesParent[c] {
					sib += normUsageOf(usage[c], total)
				}
			}
		}
		ue = t.multifactorEffectvUsage(q, normUsageOf(usage[q], total), ue, sib, deep)
	}
	return ue
}
