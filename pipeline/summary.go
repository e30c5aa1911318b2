package pipeline

import (
	"time"

	"github.com/fairledger/fairledger/billing"
	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/ingest"
)

// Summary accounts for a run: every input row, every job and what was
// written.
type Summary struct {
	// RunID is the run's id in the runs table.
	RunID string
	// Cluster is the cluster the run wrote.
	Cluster string
	// From is where charging started: the resume checkpoint's To, or the
	// fresh start. To is the end of the window.
	From, To time.Time
	// Resumed reports that the run continued from a checkpoint.
	Resumed bool
	// DryRun reports a dry run (Options.DryRun): nothing was written, and
	// RunID, JobsWritten, Unrecharged and Partitions stay zero.
	DryRun bool
	// Files are the per-file counts of the sacct files; Ingest their sum.
	Files  []ingest.Stats
	Ingest ingest.Stats
	// Billing and Resolve count how ingested rows were billed and charged.
	Billing billing.Stats
	Resolve decay.ResolveStats
	// Decay counts the charged jobs and ticks.
	Decay decay.Stats
	// JobsWritten is the number of jobs rows of this run's input written.
	JobsWritten int64
	// OtherCluster counts ingested rows of other clusters (not written).
	OtherCluster int64
	// AfterTo counts rows left for a later run: those that start after To,
	// or at To unless they also end there.
	AfterTo int64
	// Duplicates counts records dropped because the input gives the same
	// job run (job_id_raw, start) of the cluster again: the later record
	// is charged and written (as the jobs table's merge keeps it), the
	// earlier not.
	Duplicates int64
	// EndsAfterTick counts the jobs whose end, in a decay tick's second,
	// came after that tick as slurmctld's log says (Inputs.SlurmctldLogs).
	EndsAfterTick int
	// EndsChargedTwice counts the job ends slurmctld charged on top of
	// its tick's pass, as its log shows (the double charge,
	// docs/slurm-versions.md §10); each is charged as slurmctld did.
	EndsChargedTwice int
	// Unrecharged counts jobs of the history that charge time in the
	// window, which the run recomputes, but are missing from its input
	// (a night rerun with a smaller sacct file): they stay in the jobs
	// and usage tables but are not charged to fair share. A warning names
	// their count.
	Unrecharged int64
	// CarriedUnseen counts jobs running at the checkpoint but absent from
	// this run's input, charged as still running.
	CarriedUnseen int
	// Coverage is the span the sacct input covers, declared or taken
	// from its records (checkCoverage).
	Coverage Coverage
	// Late counts jobs that ran before the checkpoint but appear only now:
	// charged from the checkpoint on.
	Late int
	// Snapshots is the number of fair-share snapshots taken.
	Snapshots int
	// Partitions is the number of history files written (runs excluded).
	Partitions int
	// Compacted is the number of segments compaction merged (see
	// history.Txn.Compact).
	Compacted int
	// Generation is the history generation the run committed.
	Generation int64
	// Started and Finished bound the run.
	Started, Finished time.Time
	// Phases are how long the run's stages took.
	Phases Phases
}

// Phases are how long a run's stages took, by Options.Now. Reading comes
// first; decay and the jobs tables then run side by side, so a run's
// elapsed time is about Read + max(Decay, Jobs), plus the checkpoint and
// the runs table.
type Phases struct {
	// Read is reading the sacct files: parsing, billing and spilling every
	// batch (from the start of the run).
	Read time.Duration
	// Decay is decay and the fair-share snapshots, from the end of Read.
	Decay time.Duration
	// Jobs is the jobs and usage tables, from the end of Read.
	Jobs time.Duration
}
