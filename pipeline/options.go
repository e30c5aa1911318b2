package pipeline

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/internal/release"
)

// Inputs are a cluster's files, the small ones already parsed.
type Inputs struct {
	// Conf is the cluster's slurm.conf.
	Conf *ingest.Config
	// Assoc are the association tree dumps, oldest first (one undated dump
	// has a zero Effective and is in force at every snapshot).
	Assoc []ingest.DatedAssociations
	// QOS is the QOS table (UsageFactor); nil gives every QOS factor 1.
	QOS *ingest.QOSTable
	// Jobs are the job records' inputs (sacct -P files: ingest.SacctFiles),
	// streamed in order. The run reads them with its own settings on top
	// of each source's options (ingest.JobOptions): the billing table's
	// dense TRES, the cluster and the moment of the run as defaults, job
	// priority's columns with Options.Priority.
	Jobs []ingest.JobSource
	// Files are the other input files (slurm.conf, association dumps, QOS),
	// recorded with their size and SHA-256 in the runs table.
	Files []string
	// SlurmctldLogs are slurmctld's log files (rotated ones in any order),
	// written with DebugFlags=Priority at SlurmctldDebug=verbose or more:
	// over the span they cover the run ticks when slurmctld's decay thread
	// did, and a job end in a tick's second is ordered against the tick
	// as the log orders it. Their times are read in Options.Location.
	SlurmctldLogs []string
}

// Options control a run.
type Options struct {
	// History is the history directory.
	History string
	// Cluster is the history's cluster name; default Conf.ClusterName.
	Cluster string
	// From is where a run without a usable checkpoint starts charging
	// (default: the earliest job start, floored to a tick); with a
	// checkpoint, the run resumes from the newest one at or before From.
	From time.Time
	// To is the end of the window (default: the latest job end, or now
	// when a job is still running).
	To time.Time
	// SacctStart and SacctEnd are the span the sacct input covers: the -S
	// and -E it was fetched with (zero: not given). sacct -S S -E E (no -s)
	// gives every job eligible or running at some time in [S, E], so a run
	// resuming a checkpoint at C is refused when SacctStart is after C (the
	// jobs that ended between are missing) or SacctEnd before To; a fresh
	// start at From before SacctStart is refused, and without From starts
	// no earlier than SacctStart. With SacctEnd and without To, the window
	// ends at SacctEnd. Without them, the records' own extent is checked
	// instead (docs/operations.md, "Window").
	SacctStart, SacctEnd time.Time
	// SnapshotEvery is the interval of fair-share snapshots from local
	// midnight (24h: daily at midnight); 0 takes only the snapshot at To.
	SnapshotEvery time.Duration
	// Location is the site's zone: local midnight, usage resets. It is a
	// property of the history (the checkpoint records its name): a run
	// resuming a checkpoint of another zone is refused (see HistoryZone).
	Location *time.Location
	// TickOrigin is a Unix second at which slurmctld's decay thread ticked
	// (its grid is that second plus multiples of PriorityCalcPeriod); nil
	// takes the history's grid, and for a new history the epoch's (ticks
	// at multiples of PriorityCalcPeriod). The grid is a property of the
	// history: a run resuming a checkpoint computed on another grid is
	// refused; a recompute from the start of the history may change it.
	TickOrigin *int64
	// SlurmVersion is the release series of the site's slurmctld (zero:
	// release.Newest); it is recorded with the run, and the
	// rules that differ between releases follow it (docs/slurm-versions.md).
	SlurmVersion release.Series
	// Priority computes the jobs' multifactor priority at every snapshot
	// into the priority table (historic sprio): the sacct files are read
	// with their request columns and with the jobs that never started
	// (charged nothing), docs/slurm-semantics.md §13.
	Priority bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Version is recorded in the runs table.
	Version string
	// LockWait is how long to wait for another run's lock (0: fail at once).
	LockWait time.Duration
	// KeepCheckpoints is how many checkpoints to keep per cluster (default
	// DefaultKeepCheckpoints).
	KeepCheckpoints int
	// Log receives the run's log lines.
	Log zerolog.Logger
	// Progress, when set, is called after every batch of sacct rows.
	Progress func(Progress)
	// DryRun reads and computes everything a run would, its refusals
	// included, and writes nothing: no history file, checkpoint or runs
	// row, and no spill files (the jobs and usage tables are not built). A
	// missing history directory is not created; an existing one is locked
	// while the dry run reads its checkpoints, as a run locks it.
	DryRun bool
	// BeforeCommit, when set, is called once the run's generation is built,
	// right before it is committed (a dry run: at its end): an error stops
	// the run with nothing committed. The command finishes its side outputs
	// there (the --rejects file written, synced and closed), so that a run
	// whose side output fails commits nothing.
	BeforeCommit func() error

	pieceRecords int // PieceRecords when 0; tests set fewer (export_test.go)
}

// Progress reports how far the job inputs have been read.
type Progress struct {
	// File is the input being read (its JobSource's Name).
	File string
	// BytesDone and BytesTotal count the bytes of all job inputs.
	BytesDone, BytesTotal int64
	// Rows is the number of job records read so far.
	Rows int64
}

// Validate checks what a run derives from the inputs' configuration
// before it reads any job (slurm.conf's decay settings and
// TRESBillingWeights, the association trees), as Run does first: check
// calls it so that it refuses what run refuses. It does no I/O.
func Validate(in Inputs, opt Options) error {
	_, err := newModel(in, opt)
	return err
}
