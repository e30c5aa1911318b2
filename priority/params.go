package priority

import (
	"strings"

	"github.com/fairledger/fairledger/internal/release"
)

// The release series where a rule of this package changes
// (docs/slurm-semantics.md §13.7); internal/release.Rules lists them. The
// zero release.Series in Params and SprioOptions is the newest series, for
// which every newer rule holds.
var (
	// jobSizeGuards: from 23.02 the job-size factor's N is
	// active_node_record_count (commit 88a95272e6), the factor is 0 when N
	// or C is 0, and with PriorityFavorSmall nodes ≥ N gives a node term of
	// 0 instead of wrapping round as unsigned (commit cd3ae7c28c;
	// priority_multifactor.c, _get_priority_internal, slurm-23-02-8-1).
	jobSizeGuards = release.Series{Major: 23, Minor: 2}
	// sprioAccountQOS: from 23.02 sprio knows the ACCOUNT (%o) and QOSNAME
	// (%n) columns, and its -l and -n -l layouts print them
	// (src/sprio/sprio.c and opts.c, slurm-23-02-8-1 against
	// slurm-22-05-8-1).
	sprioAccountQOS = release.Series{Major: 23, Minor: 2}
	// sprioFilters: from 23.02 sprio applies -j, -u and -p to what
	// slurmctld sent, so "Unable to find jobs matching user/id(s)
	// specified" follows whether any job was pending at all (commit
	// 72b4b049cc).
	sprioFilters = release.Series{Major: 23, Minor: 2}
	// adminSetZeroFactors: from 23.02 every factor column of a job with an
	// admin-set priority prints 0, in one row per partition; 22.05's
	// _filter_job puts each partition's factor back (commit c11b345d45).
	adminSetZeroFactors = release.Series{Major: 23, Minor: 2}
	// severalQOS: from 24.11 a job may ask for several QOS (--qos=a,b;
	// commit ae61a7c88b), with one priority and sprio row per partition
	// and QOS.
	severalQOS = release.Series{Major: 24, Minor: 11}
	// sprioSLUID: from 26.05 sprio knows the SLUID format letter (%s;
	// src/sprio/opts.c, slurm-26-05-3-1).
	sprioSLUID = release.Series{Major: 26, Minor: 5}
)

// Weights are the PriorityWeight* values of slurm.conf (unsigned 32-bit,
// default 0): a factor whose weight is 0 is not computed at all, so it is 0
// in the factors as well as in the weighted sum.
type Weights struct {
	// Age is PriorityWeightAge.
	Age uint32
	// Assoc is PriorityWeightAssoc.
	Assoc uint32
	// FairShare is PriorityWeightFairshare.
	FairShare uint32
	// JobSize is PriorityWeightJobSize.
	JobSize uint32
	// Partition is PriorityWeightPartition.
	Partition uint32
	// QOS is PriorityWeightQOS.
	QOS uint32
	// TRES is PriorityWeightTRES as a weight per TRES of Cluster.TRES, in
	// the same order (per MiB for mem and bb/*, as billing.ParseWeights
	// reads the string); nil when PriorityWeightTRES is not set, which
	// turns the TRES factors off. A shorter slice weighs the rest 0.
	TRES []float64
	// TRESConfig is PriorityWeightTRES as written in slurm.conf ("" when
	// unset), which the weights line of `sprio -w` prints and whose presence
	// adds the TRES column to sprio's short layout.
	TRESConfig string
}

// Flags are the PriorityFlags bits job priority depends on.
type Flags struct {
	// NoNormalAssoc: the association factor is the raw association
	// priority, not that priority over the highest one.
	NoNormalAssoc bool
	// NoNormalPart: the partition factor is the raw PriorityJobFactor.
	NoNormalPart bool
	// NoNormalQOS: the QOS factor is the raw QOS priority.
	NoNormalQOS bool
	// NoNormalTRES: each TRES factor is the raw count, not the count over
	// the partition's total.
	NoNormalTRES bool
	// SmallRelativeToTime: the job-size factor divides the job's size by
	// its time limit (SMALL_RELATIVE_TO_TIME).
	SmallRelativeToTime bool
	// IncrOnly: a pending job's priority never goes down (Params.Next).
	IncrOnly bool
	// AccrueAlways: age accrues from submission whatever holds and
	// dependencies say. This package takes the accrue time as given
	// (Job.EligibleSec); the flag is for the caller choosing it, and for
	// choosing which jobs sprio lists (doc.go).
	AccrueAlways bool
	// CalculateRunning: running jobs' priorities are recomputed and listed
	// by sprio too. For the caller, like AccrueAlways.
	CalculateRunning bool
}

// ParseFlags reads the PriorityFlags items (ingest.Config.PriorityFlags)
// the way slurmctld reads the value (src/common/read_config.c,
// PriorityFlags): every word is found by case-insensitive substring, and
// NO_NORMAL_ALL sets the four NO_NORMAL_* flags.
func ParseFlags(items []string) Flags {
	has := func(word string) bool {
		for _, it := range items {
			if strings.Contains(strings.ToUpper(it), word) {
				return true
			}
		}
		return false
	}
	all := has("NO_NORMAL_ALL")
	return Flags{
		NoNormalAssoc:       all || has("NO_NORMAL_ASSOC"),
		NoNormalPart:        all || has("NO_NORMAL_PART"),
		NoNormalQOS:         all || has("NO_NORMAL_QOS"),
		NoNormalTRES:        all || has("NO_NORMAL_TRES"),
		SmallRelativeToTime: has("SMALL_RELATIVE_TO_TIME"),
		IncrOnly:            has("INCR_ONLY"),
		AccrueAlways:        has("ACCRUE_ALWAYS"),
		CalculateRunning:    has("CALCULATE_RUNNING"),
	}
}

// Params are the slurm.conf settings of the priority computation.
type Params struct {
	// Weights are the PriorityWeight* values.
	Weights Weights
	// Flags are the PriorityFlags bits.
	Flags Flags
	// FavorSmall is PriorityFavorSmall.
	FavorSmall bool
	// MaxAgeSec is PriorityMaxAge in seconds, as slurmctld keeps it (an
	// unsigned 32-bit count; ingest.Config.PriorityMaxAgeSec, default
	// 604800). 0 gives every job with an accrue time the full age factor.
	MaxAgeSec uint32
	// Release is the Slurm release series to reproduce (zero: the
	// newest).
	Release release.Series
}

// Next is the priority slurmctld keeps when a tick recomputes a pending job
// whose priority was prev: the computed one, or with PriorityFlags=INCR_ONLY
// the larger of the two (PM decay_apply_weighted_factors). sprio does not
// show it: it adds up the factors again (Row.Sum).
func (p *Params) Next(prev, computed uint32) uint32 {
	if p.Flags.IncrOnly && prev > computed {
		return prev
	}
	return computed
}

// Cluster is what the factors are normalised by: the cluster's nodes,
// CPUs, TRES and partitions, and the highest association and QOS
// priorities.
type Cluster struct {
	// TRES are the names of the cluster's TRES in slurmctld's order
	// (schemas.ClusterTRES: cpu, mem, energy, node, billing, …, then
	// gres/gpu and the other dynamic TRES); Weights.TRES, Partition.TRES
	// and Job.TRES are indexed like it, and sprio's TRES column names them.
	TRES []string
	// Nodes is the number of nodes slurmctld knows: every node of
	// slurm.conf's NodeName lines (node_record_count in 22.05,
	// active_node_record_count from 23.02; the two differ only with
	// dynamic nodes).
	Nodes uint32
	// CPUs is the cluster's CPU count, the CPUs of all those nodes
	// (cluster_cpus).
	CPUs uint32
	// MaxAssocPriority is the highest association priority of the
	// cluster's associations (0 when none has one).
	MaxAssocPriority uint32
	// MaxQOSPriority is the highest priority of all QOS.
	MaxQOSPriority uint32
	// Partitions are all the cluster's partitions (slurmctld normalises
	// PriorityJobFactor by the highest of them); Job.Partitions indexes
	// them.
	Partitions []Partition
}

// Partition is one partition's part of the computation.
type Partition struct {
	// Name is the partition name, printed by sprio.
	Name string
	// PriorityJobFactor is the partition's PriorityJobFactor (an unsigned
	// 16-bit value, default 1).
	PriorityJobFactor uint16
	// PriorityTier orders a multi-partition job's partitions, highest
	// first.
	PriorityTier uint16
	// TRES are the partition's totals per Cluster.TRES (the CPUs, memory
	// in MiB, nodes and GRES of its nodes, and the cluster's licences); a
	// shorter slice counts the rest 0.
	TRES []uint64
}

// maxJobFactor is slurmctld's part_max_priority: the highest
// PriorityJobFactor of all partitions, starting from
// DEF_PART_MAX_PRIORITY (1), so that it is never 0 (src/slurmctld/
// read_config.c, _sync_part_prio).
func (c *Cluster) maxJobFactor() uint16 {
	m := uint16(1)
	for _, p := range c.Partitions {
		m = max(m, p.PriorityJobFactor)
	}
	return m
}

// Job is what one job's priority depends on.
type Job struct {
	// ID is the job id sprio prints: sacct's JobIDRaw (an array task that
	// has its own record has its own id; the pending remainder of an array
	// has the array's).
	ID uint32
	// User and Account name the job's user and account, for sprio.
	User, Account string
	// EligibleSec is the time the job started to accrue age (Unix seconds;
	// sacct's Eligible, which equals slurmctld's accrue time). 0 or less:
	// unknown, and the age factor is 0.
	EligibleSec int64
	// FairShare is the fair-share factor of the job's association at the
	// time of the computation (sshare's FairShare for its user).
	FairShare float64
	// AssocPriority is the priority of the job's association as slurmctld
	// sees it: its own, or inherited from the nearest ancestor that has
	// one (what sacctmgr's Priority column prints); 0 when none has.
	AssocPriority uint32
	// QOS is the job's QOS. From 24.11 a job may name several
	// (--qos=a,b); slurmctld orders them by priority, highest first, the
	// first being the job's QOS, and keeps one priority per partition and
	// QOS. Before 24.11 only the first counts. Empty: no QOS.
	QOS []QOS
	// Partitions index Cluster.Partitions: the job's partition, or for a
	// job submitted to several, all of them in the order requested
	// (slurmctld orders them by PriorityTier, highest first). Empty: sprio
	// lists the job nowhere.
	Partitions []int
	// Nodes is the job's requested (minimum) node count, ReqNodes.
	Nodes uint32
	// CPUs is the job's CPU count: allocated if it has one, else the
	// requested count (ReqCPUS).
	CPUs uint32
	// TimeLimitMin is the job's time limit in minutes, or its partition's
	// MaxTime when it has none; UNLIMITED is math.MaxUint32. 0 (unknown)
	// counts as 1 minute, slurmctld's own fallback. Only
	// SMALL_RELATIVE_TO_TIME reads it.
	TimeLimitMin uint32
	// TRES are the job's counts per Cluster.TRES: allocated if it has
	// them, else requested (ReqTRES; mem in MiB). A shorter slice counts
	// the rest 0.
	TRES []uint64
	// Nice is the job's nice value (the --nice of its SubmitLine; 0 by
	// default); it is subtracted from the priority.
	Nice int32
	// Site is the job's site factor (0 unless a site_factor plugin or
	// scontrol set one); it is added to the priority.
	Site int32
	// Held marks a job known to be held (priority 0): slurmctld does not
	// recompute it and sprio does not list it. A hold placed on a job that
	// was already pending is in no record.
	Held bool
	// DirectPriority is a priority an administrator set on the job
	// (scontrol update priority=N); when not 0 it replaces the computed
	// priority and sprio prints no factors.
	DirectPriority uint32
}

// QOS is one QOS of a job.
type QOS struct {
	// Name is the QOS name (sprio's QOSNAME).
	Name string
	// Priority is the QOS's priority (sacctmgr show qos format=Priority).
	Priority uint32
}
