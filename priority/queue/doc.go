// Package queue replays a cluster's queue of pending jobs for job
// priority (historic sprio): which jobs waited at a snapshot, when
// slurmctld last computed their factors, their rank among the jobs
// waiting in their partition when one started, and the priority table's
// rows (schemas/priority.md: a pending row per job and partition at each
// snapshot, a submit row and a start row per job).
//
// Place in the pipeline: between the run and package priority. The
// pipeline reads slurm.conf, the association and QOS dumps and the sacct
// batches, and hands this package plain values: a Model (NewModel, from
// the weights, the cluster's partitions and each association dump's
// priorities) and the jobs as Job records, whose names and requests are
// indexes into the model's tables (Model.Who, Model.Where,
// Model.TRESIndex). A Writer then turns each fair-share snapshot
// (Writer.Add) and the submissions and starts between snapshots
// (Writer.Emit) into rows, computed through priority.Params, which the
// pipeline writes month by month (Model.AppendRecords). Ahead ranks a job
// in a stored queue by the same rule as the start rows (sprio --wait).
//
// It is pure: no files, no logger, no Arrow, no ingest; it reads the
// fair-share results of package fairshare, decay's ticks and builds
// export/record's rows.
//
// Memory: a year's run holds every job's priority inputs until its end,
// so a Job is a pointer-free record of 72 bytes and a month's rows are
// held pointer-free in chunks (Rows) until they are written; the
// garbage collector has nothing of them to scan (docs/performance.md).
package queue
