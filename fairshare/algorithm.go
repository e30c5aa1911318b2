package fairshare

import "fmt"

// Algorithm names the fair-share algorithm that filled a Result; it is the
// one spelling of the algorithm in every package (slurm.conf's
// PriorityFlags select it, the history stores String).
type Algorithm uint8

const (
	// FairTreeAlgo is Slurm's default Fair Tree (§7).
	FairTreeAlgo Algorithm = iota + 1
	// ClassicAlgo is PriorityFlags=NO_FAIR_TREE (§5).
	ClassicAlgo
	// DepthObliviousAlgo is PriorityFlags=DEPTH_OBLIVIOUS (§6).
	DepthObliviousAlgo
)

// The names of the algorithms as the history stores them (the algorithm
// column of the fairshare table, RunConfig.Algorithm).
const (
	fairTreeName       = "fair_tree"
	classicName        = "classic"
	depthObliviousName = "depth_oblivious"
)

// String returns the name the history stores: fair_tree, classic or
// depth_oblivious ("unknown" for any other value).
func (a Algorithm) String() string {
	switch a {
	case FairTreeAlgo:
		return fairTreeName
	case ClassicAlgo:
		return classicName
	case DepthObliviousAlgo:
		return depthObliviousName
	}
	return "unknown"
}

// Flag returns the PriorityFlags spelling of the algorithm: FAIR_TREE,
// NO_FAIR_TREE or DEPTH_OBLIVIOUS ("unknown" for any other value).
func (a Algorithm) Flag() string {
	switch a {
	case FairTreeAlgo:
		return "FAIR_TREE"
	case ClassicAlgo:
		return "NO_FAIR_TREE"
	case DepthObliviousAlgo:
		return "DEPTH_OBLIVIOUS"
	}
	return "unknown"
}

// Valid reports whether a is one of the three algorithms.
func (a Algorithm) Valid() bool { return a >= FairTreeAlgo && a <= DepthObliviousAlgo }

// ParseAlgorithm is the inverse of String: it accepts exactly the stored
// names.
func ParseAlgorithm(s string) (Algorithm, error) {
	switch s {
	case fairTreeName:
		return FairTreeAlgo, nil
	case classicName:
		return ClassicAlgo, nil
	case depthObliviousName:
		return DepthObliviousAlgo, nil
	}
	return 0, fmt.Errorf("unknown fair-share algorithm %q (want %s, %s or %s)", s, fairTreeName, classicName, depthObliviousName)
}

// Compute fills r with the fair-share values of usage on t under the
// algorithm a: Classic or DepthOblivious with the dampening factor damp,
// FairTree (which ignores damp) for FairTreeAlgo and, as slurmctld's
// default, for any other value.
func Compute(a Algorithm, t *Tree, usage []float64, damp float64, r *Result) {
	switch a {
	case ClassicAlgo:
		Classic(t, usage, damp, r)
	case DepthObliviousAlgo:
		DepthOblivious(t, usage, damp, r)
	default:
		FairTree(t, usage, r)
	}
}
