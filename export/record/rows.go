package record

import (
	"cmp"
	"strings"
	"time"
)

// The row types below are the Go form of the history tables; their parquet
// tags must match schemas.Tables column for column (the history store checks
// it when a history is opened, through its list of tables). Nullable columns are pointers. Timestamps are
// stored as microseconds since the epoch, UTC; strings are dictionary
// encoded where they repeat.

// JobRow is one row of the jobs table (see schemas/jobs.md).
type JobRow struct {
	JobID        string             `parquet:"job_id"`
	JobIDRaw     int64              `parquet:"job_id_raw"`
	ArrayJobID   *int64             `parquet:"array_job_id"`
	ArrayTaskID  *int64             `parquet:"array_task_id"`
	HetJobID     *int64             `parquet:"het_job_id"`
	HetJobOffset *int64             `parquet:"het_job_offset"`
	User         string             `parquet:"user,dict"`
	Account      string             `parquet:"account,dict"`
	Partition    string             `parquet:"partition,dict"`
	QOS          string             `parquet:"qos,dict"`
	State        string             `parquet:"state,dict"`
	CancelledBy  *string            `parquet:"cancelled_by"`
	Submit       *time.Time         `parquet:"submit,timestamp(microsecond:utc)"`
	Eligible     *time.Time         `parquet:"eligible,timestamp(microsecond:utc)"`
	Start        time.Time          `parquet:"start,timestamp(microsecond:utc)"`
	End          *time.Time         `parquet:"end,timestamp(microsecond:utc)"`
	ElapsedSec   *int64             `parquet:"elapsed_sec"`
	ChargedSec   int64              `parquet:"charged_sec"`
	SuspendedSec *int64             `parquet:"suspended_sec"`
	TimelimitMin *int64             `parquet:"timelimit_min"`
	NNodes       int64              `parquet:"nnodes"`
	AllocCPUs    int64              `parquet:"alloc_cpus"`
	MemMB        float64            `parquet:"mem_mb"`
	NodeCount    float64            `parquet:"node_count"`
	GPU          float64            `parquet:"gpu"`
	TRES         map[string]float64 `parquet:"tres"`
	Billing      float64            `parquet:"billing"`
	BillingSlurm int64              `parquet:"billing_slurm"`
	UsageFactor  float64            `parquet:"usage_factor"`
	SourceFile   string             `parquet:"source_file,dict"`
	SourceLine   int64              `parquet:"source_line"`
}

// UsageRow is one row of the usage table (see schemas/usage.md).
type UsageRow struct {
	Account     string    `parquet:"account,dict"`
	User        string    `parquet:"user,dict"`
	Partition   string    `parquet:"partition,dict"`
	PeriodStart time.Time `parquet:"period_start,timestamp(microsecond:utc)"`
	BillingSec  float64   `parquet:"billing_sec"`
	CPUSec      float64   `parquet:"cpu_sec"`
	MemMBSec    float64   `parquet:"mem_mb_sec"`
	GPUSec      float64   `parquet:"gpu_sec"`
}

// FairshareRow is one row of the fairshare table (see schemas/fairshare.md).
// A nil pointer is a cell sshare prints blank.
type FairshareRow struct {
	Snapshot     time.Time `parquet:"snapshot,timestamp(microsecond:utc)"`
	Algorithm    string    `parquet:"algorithm,dict"`
	Account      string    `parquet:"account,dict"`
	User         string    `parquet:"user,dict"`
	Partition    string    `parquet:"partition,dict"`
	Parent       string    `parquet:"parent,dict"`
	Depth        int32     `parquet:"depth"`
	IsUser       bool      `parquet:"is_user"`
	RawShares    *int64    `parquet:"raw_shares"`
	SharesParent bool      `parquet:"shares_parent"`
	NormShares   *float64  `parquet:"norm_shares"`
	RawUsage     *float64  `parquet:"raw_usage"`
	NormUsage    *float64  `parquet:"norm_usage"`
	EffectvUsage *float64  `parquet:"effectv_usage"`
	FairShare    *float64  `parquet:"fair_share"`
	LevelFS      *float64  `parquet:"level_fs"`
	Rank         *int32    `parquet:"rank"`
	GrpTRESMins  *string   `parquet:"grp_tres_mins"`
	TRESRunMins  *string   `parquet:"tres_run_mins"`
	AssocLine    *int32    `parquet:"assoc_line"`
}

// AssociationRow is one row of the associations table (see
// schemas/associations.md).
type AssociationRow struct {
	Snapshot     time.Time `parquet:"snapshot,timestamp(microsecond:utc)"`
	Account      string    `parquet:"account,dict"`
	User         string    `parquet:"user,dict"`
	Partition    string    `parquet:"partition,dict"`
	Parent       string    `parquet:"parent,dict"`
	Shares       *int64    `parquet:"shares"`
	SharesParent bool      `parquet:"shares_parent"`
	Lineage      string    `parquet:"lineage"`
	SourceFile   string    `parquet:"source_file,dict"`
}

// RunRow is the single row of a run file (see schemas/runs.md).
type RunRow struct {
	RunID       string           `parquet:"run_id"`
	Started     time.Time        `parquet:"started,timestamp(microsecond:utc)"`
	Finished    time.Time        `parquet:"finished,timestamp(microsecond:utc)"`
	Version     string           `parquet:"version"`
	Inputs      []RunInput       `parquet:"inputs,list"`
	Config      string           `parquet:"config"`
	Read        int64            `parquet:"read"`
	Ingested    int64            `parquet:"ingested"`
	Rejected    int64            `parquet:"rejected"`
	Skipped     map[string]int64 `parquet:"skipped"`
	JobsCharged int64            `parquet:"jobs_charged"`
	Snapshots   int64            `parquet:"snapshots"`
}

// PriorityRow is one row of the priority table (see schemas/priority.md):
// a job's weighted priority factors in one partition, at a snapshot it
// waited at (EventPending), at its submission or at its start.
type PriorityRow struct {
	At         time.Time          `parquet:"event_time,timestamp(microsecond:utc)"`
	Event      string             `parquet:"event,dict"`
	Snapshot   *time.Time         `parquet:"snapshot,optional,timestamp(microsecond:utc)"`
	ComputedAt time.Time          `parquet:"computed_at,timestamp(microsecond:utc)"`
	JobID      int64              `parquet:"job_id"`
	ArrayJobID *int64             `parquet:"array_job_id,optional"`
	User       string             `parquet:"user,dict"`
	Account    string             `parquet:"account,dict"`
	Partition  string             `parquet:"partition,dict"`
	QOS        string             `parquet:"qos,dict"`
	Priority   int64              `parquet:"priority"`
	AgeW       float64            `parquet:"age_w"`
	AssocW     float64            `parquet:"assoc_w"`
	FairShareW float64            `parquet:"fairshare_w"`
	JobSizeW   float64            `parquet:"jobsize_w"`
	PartitionW float64            `parquet:"partition_w"`
	QOSW       float64            `parquet:"qos_w"`
	TRESW      map[string]float64 `parquet:"tres_w"`
	Site       int64              `parquet:"site"`
	Nice       int64              `parquet:"nice"`
	Submit     *time.Time         `parquet:"submit,optional,timestamp(microsecond:utc)"`
	Eligible   *time.Time         `parquet:"eligible,optional,timestamp(microsecond:utc)"`
	WaitSec    *int64             `parquet:"wait_sec,optional"`
	Rank       *int64             `parquet:"rank,optional"`
	Waiting    *int64             `parquet:"waiting,optional"`
}

// The events of the priority table's rows (PriorityRow.Event).
const (
	// EventSubmit is a job's priority when it was submitted.
	EventSubmit = "submit"
	// EventPending is a job waiting at a snapshot: sprio's row.
	EventPending = "pending"
	// EventStart is a job's priority when it started.
	EventStart = "start"
)

// ComparePriority orders priority rows by time, job id, partition and
// event (schemas/priority.md's SortBy).
func ComparePriority(a, b *PriorityRow) int {
	if c := a.At.Compare(b.At); c != 0 {
		return c
	}
	if c := cmp.Compare(a.JobID, b.JobID); c != 0 {
		return c
	}
	if c := strings.Compare(a.Partition, b.Partition); c != 0 {
		return c
	}
	return strings.Compare(a.Event, b.Event)
}

// RunInput is one input file of a run.
type RunInput struct {
	Path      string `parquet:"path"`
	SizeBytes int64  `parquet:"size_bytes"`
	SHA256    string `parquet:"sha256"`
}

// The sort orders of schemas.Tables (SortBy), as comparison functions: the
// encoders write each table's rows in its order, and the history sorts the
// union of a partition's segments by it.

// CompareJobs orders jobs rows by (account, user, start, job_id_raw,
// job_id).
func CompareJobs(a, b *JobRow) int {
	if c := strings.Compare(a.Account, b.Account); c != 0 {
		return c
	}
	if c := strings.Compare(a.User, b.User); c != 0 {
		return c
	}
	if c := a.Start.Compare(b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.JobIDRaw, b.JobIDRaw); c != 0 {
		return c
	}
	return strings.Compare(a.JobID, b.JobID)
}

// CompareUsage orders usage rows by (account, user, partition,
// period_start).
func CompareUsage(a, b *UsageRow) int {
	if c := strings.Compare(a.Account, b.Account); c != 0 {
		return c
	}
	if c := strings.Compare(a.User, b.User); c != 0 {
		return c
	}
	if c := strings.Compare(a.Partition, b.Partition); c != 0 {
		return c
	}
	return a.PeriodStart.Compare(b.PeriodStart)
}

// CompareFairshare orders fairshare rows by (snapshot, account, user,
// partition).
func CompareFairshare(a, b *FairshareRow) int {
	if c := a.Snapshot.Compare(b.Snapshot); c != 0 {
		return c
	}
	if c := strings.Compare(a.Account, b.Account); c != 0 {
		return c
	}
	if c := strings.Compare(a.User, b.User); c != 0 {
		return c
	}
	return strings.Compare(a.Partition, b.Partition)
}

// CompareAssociations orders associations rows by (snapshot, account,
// user, partition).
func CompareAssociations(a, b *AssociationRow) int {
	if c := a.Snapshot.Compare(b.Snapshot); c != 0 {
		return c
	}
	if c := strings.Compare(a.Account, b.Account); c != 0 {
		return c
	}
	if c := strings.Compare(a.User, b.User); c != 0 {
		return c
	}
	return strings.Compare(a.Partition, b.Partition)
}

// CompareRuns orders runs rows by their start.
func CompareRuns(a, b *RunRow) int { return a.Started.Compare(b.Started) }

// JobCharge is what billing a job again needs of its jobs row
// (schemas/jobs.md): who, where and when, its allocated TRES and what it
// was charged. history.View.EachJobCharge reads only these columns.
type JobCharge struct {
	User        string             `parquet:"user,dict"`
	Account     string             `parquet:"account,dict"`
	Partition   string             `parquet:"partition,dict"`
	QOS         string             `parquet:"qos,dict"`
	Start       time.Time          `parquet:"start,timestamp(microsecond:utc)"`
	End         *time.Time         `parquet:"end,timestamp(microsecond:utc)"`
	TRES        map[string]float64 `parquet:"tres"`
	Billing     float64            `parquet:"billing"`
	UsageFactor float64            `parquet:"usage_factor"`
}
