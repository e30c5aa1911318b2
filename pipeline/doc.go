// Package pipeline is fairledger's nightly job: it streams a cluster's sacct
// files through ingest, billing and decay, takes fair-share snapshots and
// writes the Parquet history (jobs, usage, fairshare, associations, runs),
// resuming from the checkpoint the previous night left.
//
// It is the one place where the stages meet, and it does I/O: it reads the
// job inputs through ingest.JobSource (Inputs.Jobs), keeps the jobs as export/record's JobTables (spilled to disk
// month by month through internal/spill until the jobs table takes them),
// writes the history through package export/history and logs with the
// caller's zerolog logger. The computation itself stays in the pure
// packages: sshare's query-time rules (the live RawUsage between ticks,
// TRESRunMins at a snapshot's second) in fairshare/live, which pipeline
// hands the run's jobs and snapshot times; job priority's queue replay in
// priority/queue, to which priority.go hands the model read from
// slurm.conf and the dumps and each sacct batch's jobs as queue.Jobs.
// What stays here is the run's phases and their wiring: reading
// (stream.go: billing, decay's jobs, the input's duplicate runs,
// dedup.go), decay with the fair-share snapshots and their priority rows
// (fairshare_writer.go), the jobs merge
// (write.go), checkpoints, the moment seeds and Moment. It does not link
// DuckDB.
//
// # Incremental runs
//
// Every run ends by storing a checkpoint of the cluster (state/cluster=<c>/
// in the generation it commits): the decay State at the run's --to (each
// association's own decayed usage, keyed by association) and the jobs that
// were still running at --to. A run resumes from the newest checkpoint
// taken before its --to (or at or before --from when given), so
//
//   - the next night continues where the last one stopped: decay charges only
//     the ticks after the checkpoint, so a job seen RUNNING last night and
//     finished tonight is charged its remaining ticks exactly once;
//   - running the same night again resumes from the same checkpoint and
//     recomputes the same rows, which replace the previous ones: every
//     table holds the same rows (only a runs row is added);
//   - everything a run writes, checkpoint included, goes into one commit
//     (history.Txn): a run that fails or is killed at any point leaves the
//     history exactly as it was, so running it again recomputes the night
//     from the previous checkpoint.
//
// A job that was running at the checkpoint but is missing from tonight's
// sacct files is charged as still running, with a warning. A job tonight's
// files show for the first time although it ran before the checkpoint is
// charged only from the checkpoint on (its earlier ticks are already past);
// the run warns, because it means last night's sacct window missed it.
//
// # What gets rewritten
//
// The jobs table is keyed by (job_id_raw, start): a row of tonight's input
// replaces the row with the same key, except that a finished row is never
// replaced by a running one. A night reads and rewrites only the hot
// segments — the jobs charged up to less than HotWindow before --to,
// running ones among them — and any settled segment that holds a key of
// its input (found through the segments' statistics). Usage is recomputed
// from the earliest day whose charge changed, from every job charged on
// the days after it, in the order a single run sums them. Fair-share
// snapshots and their association trees in (resume point, --to] replace
// those already there. Before the commit, the store's compaction
// (history.Txn.Compact) keeps the number of segments bounded. The layout
// and its reasons: docs/history-store.md.
package pipeline

// DefaultMemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit)
// `fairledger run` sets when GOMEMLIMIT is not set: a run's live heap on a
// 5 M-job year stays well below it, and the limit keeps the garbage
// collector from letting the heap grow to twice that.
const DefaultMemoryLimit = 768 << 20

// DefaultPriorityMemoryLimit is the soft memory limit `fairledger run
// --priority` sets instead when neither GOMEMLIMIT nor --memory-limit is
// given: every job's priority inputs (72 bytes each) and the month's
// priority rows live beside the run's heap, and a 5 M-job year peaks at
// about 1.7 GiB; under the plain run's limit the collector would run
// back to back (docs/performance.md).
const DefaultPriorityMemoryLimit = 2048 << 20
