package billing

import (
	"fmt"
	"math"
)

// Billable computes the billable TRES B of each job (Slurm's
// assoc_mgr_tres_weighted, src/common/assoc_mgr.c), the double fair-share usage is charged
// with.
//
// part[i] is row i's partition index in t (Table.PartitionIndex); rows with
// part[i] < 0 are left untouched so the caller can fill them another way.
// cols[j] holds the whole-allocation count of TRES t.DenseTRES()[j] for each
// row (mem in MiB). out, part and every cols[j] must have the same length;
// anything else is a programmer error and panics.
//
// Per row, with v_j = cols[j][i] × weight_j of the row's partition, added in
// column order:
//
//   - partition without TRESBillingWeights: B = cols[0][i], the CPU count;
//   - Sum: B = Σ v_j;
//   - MaxTRES / MaxTRESGRES: B = m + g, where m = max(0, v_j over the
//     columns in the max) and g = Σ v_j over the others. The max starts at 0
//     as Slurm's does: Slurm also visits every unweighted tracked TRES
//     (cpu, mem and node always exist) with v = 0.
//
// Each product is rounded to float64 before it is added, so no fused
// multiply-add changes a result on any architecture; the sums are then
// bit-identical to Slurm's C doubles given the same order.
func Billable(out []float64, part []int32, cols [][]float64, t *Table) {
	n := len(out)
	if len(part) != n || len(cols) != len(t.dense) {
		panic(fmt.Sprintf("billing.Billable: %d rows, %d partition indexes, %d columns for %d TRES", n, len(part), len(cols), len(t.dense)))
	}
	for j, c := range cols {
		if len(c) != n {
			panic(fmt.Sprintf("billing.Billable: column %s has %d rows, want %d", t.dense[j], len(c), n))
		}
	}
	if n == 0 {
		return
	}
	if t.mode == Sum {
		billableSum(out, part, cols, t.w, t.noWeights)
		return
	}
	billableMax(out, part, cols, t.wMax, t.wSum, t.noWeights)
}

// billableSum is Billable for Sum. It keeps Slurm's "0 + Σ" shape: s starts
// at 0 and adds every column, weighted or not (an unweighted column adds +0).
func billableSum(out []float64, part []int32, cols [][]float64, w []float64, noWeights []bool) {
	nc := len(cols)
	cpu := cols[0]
	for i := range out {
		p := int(part[i])
		if p < 0 {
			continue
		}
		if noWeights[p] {
			out[i] = cpu[i]
			continue
		}
		wr := w[p*nc : p*nc+nc]
		s := 0.0
		for j, c := range cols {
			s += float64(c[i] * wr[j])
		}
		out[i] = s
	}
}

// billableMax is Billable for MaxTRES and MaxTRESGRES. To stay branch-free
// it visits every column twice, once with wMax (the weight if the column is
// in the max, else 0) and once with wSum (the converse). The extra terms are
// ±0: adding them to the sum changes nothing, and taking them into the max,
// which starts at +0, can at most flip the sign of a zero max; since the sum
// starts at +0 and so is never −0, m + g is then bit-identical to Slurm's
// (for finite counts, the only kind a jobs batch holds).
func billableMax(out []float64, part []int32, cols [][]float64, wMax, wSum []float64, noWeights []bool) {
	nc := len(cols)
	cpu := cols[0]
	for i := range out {
		p := int(part[i])
		if p < 0 {
			continue
		}
		if noWeights[p] {
			out[i] = cpu[i]
			continue
		}
		wm := wMax[p*nc : p*nc+nc]
		ws := wSum[p*nc : p*nc+nc]
		m, g := 0.0, 0.0
		for j, c := range cols {
			x := c[i]
			m = max(m, float64(x*wm[j]))
			g += float64(x * ws[j])
		}
		out[i] = m + g
	}
}

// Truncate stores in out[i] the billing= integer Slurm records in AllocTRES
// for billable value b[i] (job_set_alloc_tres, src/slurmctld/job_mgr.c,
// stores it in a uint64): b truncated toward zero
// (4.5 → 4, 0.9999 → 0).
//
// Slurm stores the value in a uint64, and converting a negative double to
// uint64 is undefined in C. On x86-64 it yields the two's-complement bits of
// the truncated value (−4.5 → 2⁶⁴ − 4, printed by sacct as
// 18446744073709551612); an int64 column holding −4 has exactly those bits,
// so negative B (only possible with negative weights) gives a negative
// result here. NaN gives 0; values beyond the int64 range saturate.
// len(out) must equal len(b).
func Truncate(out []int64, b []float64) {
	out = out[:len(b)]
	for i, v := range b {
		out[i] = truncBilling(v)
	}
}

func truncBilling(v float64) int64 {
	switch {
	case v != v:
		return 0
	case v >= math.MaxInt64: // 2^63 as float64
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(v) // Go converts toward zero
}

// UsageFactor returns the factor a job is charged with for a QOS whose
// UsageFactor is f: f when f >= 0, else 1 (a negative or NaN factor means
// unset, and Slurm's _apply_new_usage charges a job without one at 1).
func UsageFactor(f float64) float64 {
	if f >= 0 {
		return f
	}
	return 1
}

// UsageFactors gathers per-row usage factors: out[i] = perQOS[qos[i]], or 1
// when qos[i] < 0 (the job has no QOS). perQOS values are used as given;
// normalise them with UsageFactor first. len(out) must equal len(qos).
func UsageFactors(out []float64, qos []int32, perQOS []float64) {
	out = out[:len(qos)]
	for i, q := range qos {
		if q < 0 {
			out[i] = 1
			continue
		}
		out[i] = perQOS[q]
	}
}
