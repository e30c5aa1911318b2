// Package decay recomputes Slurm's decayed association usage (sshare's
// RawUsage) from job records: the PriorityCalcPeriod tick grid, the
// PriorityDecayHalfLife decay d = 1 − 0.693/H, the PriorityUsageResetPeriod
// resets and the job-end tails charged only when AccountingStorageEnforce
// includes limits (docs/slurm-semantics.md §2, offline model §2.8).
//
// Place in the pipeline: ingest → billing → decay → fairshare. decay takes
// jobs already resolved to dense association indices, with their billable
// TRES × QOS UsageFactor as a rate, and the association tree as a parent
// index slice ordered parents-before-children. It returns the usage vector at
// the snapshot times the caller asks for, and a State to resume from the next
// night. decay is pure computation: it reads and writes no files, imports
// neither os nor a logger, and reports Stats instead of logging. A thin
// Arrow adapter (arrow.go) turns jobs batches into Jobs through a Resolver
// (resolve.go) that maps (account, user, partition) to associations.
//
// # Algorithm
//
// Every job is reduced to at most two point events on the tick grid: a
// start event (its partial first chunk, and the moment its rate joins its
// association's running rate) and an end event (its rate leaves; with limits,
// its end tail). Events are grouped by tick (counted per tick and placed, or
// radix-sorted when the window has far more ticks than jobs), and then all
// associations advance together, tick by tick, as one pass over float64
// slices:
//
//	U(a, T) = U(a, L)·f + rate(a)·P·d^P + points(a) + Σ_children new(child)
//
// where f = max(d^(T−L), DBL_MIN). Memory is O(jobs + associations) and does
// not depend on the number of ticks; no work is done per job per tick.
//
// # Floating point
//
// Slurm adds each job's chunk B·q·δ·d^δ separately to the association and to
// every ancestor. decay instead sums, per association and tick, the rates of
// the running jobs and the point chunks first, and propagates one sum per
// association to its parent; a job-end tail is multiplied by the tick's
// decay f on its own rather than together with the usage it joined. These
// reorderings change results only in the last bits (relative 1e-15).
//
// To make results independent of job order and bit-identical across a
// checkpoint, running rates and point chunks are summed exactly, in 128-bit
// fixed point with 64 fractional bits, before being converted to float64.
// Each job's rate and chunk is truncated to a multiple of 2^-64 first, which
// is exact for values ≥ 2^-11 and otherwise loses less than 2^-64 absolute.
//
// # Resumption
//
// A State holds the last processed tick, the usage of every association at
// that tick and the reset bookkeeping; it marshals to a versioned,
// checksummed little-endian blob. Advance charges jobs only for ticks after
// State.Tick, so a job charged as running up to last night's last tick and
// seen finished tonight is charged exactly the ticks it has left: one run
// over a whole window and two runs split at any tick give bit-identical
// usage.
//
// # Conventions
//
// The tick grid is T_k = OriginUnix + k·CalcPeriodSec (Slurm's real phase is
// its controller's start time, which sacct does not record). Where the
// caller knows the ticks slurmctld really ran (its log), Window.Ticks gives
// them: each decays over its real distance from the one before, f = d^(T−L)
// and a whole interval's chunk (T−L)·d^(T−L), and the grid goes on every
// CalcPeriodSec from the last of them; Schedule answers where the ticks of
// such a window fall. A job whose end equals a tick time is ended before
// that tick (§2.5), unless Window.EndsAfterTick says the log saw it end
// after. Suspended time is charged, as Slurm does.
package decay
