package synth

import (
	"slices"
	"strings"
)

// Weight is one parsed TRESBillingWeights item (docs/slurm-semantics.md §3.2):
// the TRES name in lower case ("cpu", "mem", "node", "gres/gpu:a100",
// "license/lic1") and the weight per base unit of that TRES, i.e. per MiB for
// mem (`Mem=0.25G` parses to 0.25/1024) and per count for everything else.
type Weight struct {
	TRES    string  // lower-case TRES name
	PerUnit float64 // weight per base unit
}

// TRES is one name=count entry of an allocation other than cpu, mem and
// node, e.g. {"gres/gpu:a100", 2}.
type TRES struct {
	Name  string // lower-case TRES name, e.g. "gres/gpu:a100"
	Count int64  // whole-allocation count
}

// Alloc holds a job's whole-allocation TRES totals as Slurm's billing sees
// them (tres_alloc_cnt): CPUs, memory in MiB, nodes, and the gres/license
// entries.
type Alloc struct {
	CPU    int64  // allocated CPUs
	MemMiB int64  // allocated memory in MiB
	Node   int64  // allocated nodes
	Other  []TRES // gres/license entries, e.g. gres/gpu and gres/gpu:a100
}

// Billable returns the billable TRES B of an allocation under a partition's
// weights, PriorityFlags without MAX_TRES (docs/slurm-semantics.md §3.3):
//
//	B = Σ count_i × weight_i
//
// summed in this fixed order so that the float64 result is bit-stable:
// cpu, mem (per MiB), node, then the Other entries in byte order of their
// names ("gres/gpu" before "gres/gpu:a100"). Names are matched
// case-insensitively and entries without a weight add nothing. With no
// weights at all B is the CPU count (§3.1). This is the untruncated value
// fair-share usage is charged with (§2.1); Billing gives the integer sacct
// prints.
func Billable(weights []Weight, a Alloc) float64 {
	if len(weights) == 0 {
		return float64(a.CPU)
	}
	b := float64(a.CPU) * weightOf(weights, "cpu")
	b += float64(a.MemMiB) * weightOf(weights, "mem")
	b += float64(a.Node) * weightOf(weights, "node")
	other := a.Other
	byName := func(x, y TRES) int { return strings.Compare(x.Name, y.Name) }
	if !slices.IsSortedFunc(other, byName) {
		other = slices.SortedFunc(slices.Values(other), byName)
	}
	for _, t := range other {
		b += float64(t.Count) * weightOf(weights, t.Name)
	}
	return b
}

// Billing returns the `billing=` value Slurm stores in AllocTRES and ReqTRES:
// Billable truncated toward zero into an integer (docs/slurm-semantics.md §3.4;
// 16.25 → 16, 4.5 → 4, 0.9999 → 0).
func Billing(weights []Weight, a Alloc) int64 {
	return int64(Billable(weights, a))
}

// weightOf returns the weight configured for the TRES called name, or 0.
func weightOf(weights []Weight, name string) float64 {
	for _, w := range weights {
		if strings.EqualFold(w.TRES, name) {
			return w.PerUnit
		}
	}
	return 0
}
