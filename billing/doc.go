// Package billing computes each job's billable TRES exactly as Slurm's
// calc_job_billable_tres does (src/slurmctld/job_mgr.c): the partition's
// TRESBillingWeights applied to the job's allocated TRES totals, combined as
// a sum or, with PriorityFlags=MAX_TRES / MAX_TRES_GRES, as a max over
// node-level TRES plus a sum over the rest; the CPU count when the partition
// has no weights.
//
// Place in the pipeline: ingest → billing → decay. billing reads jobs batches
// produced by ingest (schemas.Jobs) and appends three columns
// (schemas.BillingFields): the exact billable TRES used for fair-share usage,
// the truncated integer Slurm stores as billing= in AllocTRES, and the job
// QOS's UsageFactor.
//
// The package has three layers:
//
//   - ParseWeights and Compile turn slurm.conf text (TRESBillingWeights per
//     partition, PriorityFlags, AccountingStorageTRES) into a Table and report
//     every configuration problem at once.
//   - Billable, Truncate and UsageFactors are pure kernels over column slices:
//     the caller allocates the output, there are no errors, maps or
//     allocations per row.
//   - Table.Apply is a thin Arrow adapter that maps a batch's partition and
//     QOS dictionaries once, runs the kernels into Arrow buffers and returns a
//     new record; rows it cannot bill from slurm.conf are counted in Stats
//     under a stated reason.
//
// billing touches no files, does no logging and holds no global mutable state.
package billing
