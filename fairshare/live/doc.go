// Package live holds sshare's query-time rules: what slurmctld would print
// at a snapshot's own second rather than at the decay tick before it. Ends
// adds the usage of the jobs that ended between the tick and the snapshot
// to RawUsage (AccountingStorageEnforce with limits charges a job's last
// chunk at its end); TRESRun computes the TRESRunMins cells of the jobs
// running at each snapshot and the residues of those ended since
// slurmctld last rebuilt its values.
//
// It sits between the run and package fairshare: it reads decay's job
// columns (decay.Jobs) and the run's record.JobDict, and computes through
// fairshare's kernels (fairshare.RunSecs, RollUpTRESRun). It is pure: no
// files, no logger, no Arrow; package pipeline hands it the run's jobs
// and snapshot times.
package live
