// Package treslist formats a TRES list the way Slurm prints one: name=value
// entries joined by commas, "cpu=96,mem=393216,node=1" (sshare's
// TRESRunMins and GrpTRESMins, sacctmgr's limits, TRESBillingWeights). It is
// the one formatter of that form: billing (Weights.String), fairshare
// (TRESRunMins) and ingest (limits) all call Append.
//
// It sits below the math packages, which must not import each other, and
// imports nothing itself, so any of them can use it. It does no I/O and
// holds no state.
package treslist

// Append appends n entries to b as name=value joined by commas and returns
// the extended slice. name returns the i-th entry's TRES name and value
// appends its value. Neither function is kept, so the closures passed here
// need not allocate.
func Append(b []byte, n int, name func(i int) string, value func(b []byte, i int) []byte) []byte {
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, name(i)...)
		b = append(b, '=')
		b = value(b, i)
	}
	return b
}
