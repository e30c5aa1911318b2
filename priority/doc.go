// Package priority computes Slurm's multifactor job priority for any past
// minute — the age, association, fair-share, job-size, partition, QOS and
// TRES factors, the site factor and nice, and their weighted sum — and
// prints it the way `sprio` prints it (-l, -n, -w, -o, the short layout of
// every release, and fairledger's parsable -P).
//
// Place in the pipeline: beside fairshare. fairshare gives each user's
// FairShare at every tick; ingest gives the jobs (Eligible, ReqNodes,
// ReqCPUS, ReqTRES, Timelimit, the nice and partitions of the SubmitLine),
// the association and QOS priorities and slurm.conf's PriorityWeight*,
// PriorityMaxAge, PriorityFavorSmall, PriorityFlags, partitions and nodes.
// This package turns them into Factors (Params.Compute) and sprio Rows
// (Params.AppendRows) for one time, and WriteSprio prints rows to an
// io.Writer. It reads no files, does no logging and imports neither os nor
// Arrow.
//
// The rules follow slurmctld's priority/multifactor plugin and sprio, read
// at the release tags 22.05.8 to 26.05.3 of SchedMD's repository; they are
// written out, with the functions they come from, in
// docs/slurm-semantics.md §13. The release series matters in a few places
// (Params.Release, SprioOptions.Release; §13.7), each a release.Series
// value in params.go listed by internal/release.Rules: the job-size
// factor's guards, sprio's ACCOUNT and QOSNAME columns, its own filtering
// and its admin-set rows (23.02), one priority per partition and QOS for a
// job that asks for several QOS (24.11), the SLUID letter (26.05).
//
// What the caller decides (§13.6): which jobs sprio lists at a time T —
// those pending at T (running ones too with PriorityFlags=CALCULATE_RUNNING)
// whose begin time (submit time with ACCRUE_ALWAYS) is set and not after T,
// not held — and which time to compute them at: slurmctld recomputes
// factors at each decay tick (and at submission, release or update), and
// sprio prints those stored factors, so T is the last tick at or before the
// minute asked for. Holds placed on a job already pending, a nice changed
// with scontrol, and an administrator's priority are in no record; Job has
// fields for them, which stay at their defaults when unknown.
//
// Data layout: TRES are indexed like Cluster.TRES in Weights, Partition,
// Job, Factors and Row, a struct of small slices per job rather than maps,
// so that the sums run in slurmctld's TRES order and the output never
// depends on map order. AppendRows reuses the rows (and their TRES slices)
// past the end of the slice it is given, so a buffer kept between ticks
// stops allocating.
package priority
