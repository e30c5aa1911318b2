package schemas

import (
	"fmt"
	"strings"
)

// Names of the history tables (export/history writes them as Parquet).
const (
	TableJobs         = "jobs"
	TableUsage        = "usage"
	TableFairshare    = "fairshare"
	TableAssociations = "associations"
	TableRuns         = "runs"
	TablePriority     = "priority"
)

// Type is the type of a history table column, spelt the way the Parquet
// file stores it (physical type plus logical annotation). Every type is one
// that DuckDB, Spark, Trino and pyarrow read without extensions.
type Type string

// Column types used by the history tables.
const (
	// TypeInt64 is INT64 (SQL BIGINT).
	TypeInt64 Type = "INT64"
	// TypeInt32 is INT32 (SQL INTEGER).
	TypeInt32 Type = "INT32"
	// TypeDouble is DOUBLE; +Inf is stored as the IEEE infinity.
	TypeDouble Type = "DOUBLE"
	// TypeString is BYTE_ARRAY annotated STRING (UTF-8).
	TypeString Type = "STRING"
	// TypeBool is BOOLEAN.
	TypeBool Type = "BOOLEAN"
	// TypeTimestamp is INT64 annotated TIMESTAMP(MICROS, isAdjustedToUTC=true).
	TypeTimestamp Type = "TIMESTAMP(MICROS,UTC)"
	// TypeMapStringDouble is MAP<STRING,DOUBLE> with required keys and values.
	TypeMapStringDouble Type = "MAP<STRING,DOUBLE>"
	// TypeMapStringInt64 is MAP<STRING,INT64> with required keys and values.
	TypeMapStringInt64 Type = "MAP<STRING,INT64>"
	// TypeInputList is the list of a run's input files.
	TypeInputList Type = "LIST<STRUCT<path:STRING,size_bytes:INT64,sha256:STRING>>"
)

// SQL returns the DuckDB spelling of the type, for views and docs; "" for
// a type not listed above.
func (t Type) SQL() string {
	switch t {
	case TypeInt64:
		return "BIGINT"
	case TypeInt32:
		return "INTEGER"
	case TypeDouble:
		return "DOUBLE"
	case TypeString:
		return "VARCHAR"
	case TypeBool:
		return "BOOLEAN"
	case TypeTimestamp:
		return "TIMESTAMP WITH TIME ZONE"
	case TypeMapStringDouble:
		return "MAP(VARCHAR, DOUBLE)"
	case TypeMapStringInt64:
		return "MAP(VARCHAR, BIGINT)"
	case TypeInputList:
		return "STRUCT(path VARCHAR, size_bytes BIGINT, sha256 VARCHAR)[]"
	}
	return ""
}

// Column describes one column of a history table.
type Column struct {
	// Name is the snake_case column name, its unit as a suffix (_sec, _mb).
	Name string
	// Type is the stored type.
	Type Type
	// Nullable reports whether the column may hold NULL.
	Nullable bool
	// Unit is the unit of the values ("" when none applies).
	Unit string
	// Description says what the value is and where it comes from.
	Description string
}

// Table describes one history table: its columns in file order, the order
// of its rows and where its files live.
type Table struct {
	// Name is the table (and top-level directory) name.
	Name string
	// Description is a paragraph on what one row is.
	Description string
	// Layout is the path of a partition's file under the history directory.
	Layout string
	// SortBy lists the columns the rows of a file are sorted by.
	SortBy []string
	// Partition are the hive partition columns: they live only in the path.
	Partition []Column
	// Columns are the columns stored in the files, in file order.
	Columns []Column
}

// Column returns the named column and whether it exists.
func (t Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// partitionColumns are the hive partition columns every table shares.
func partitionColumns() []Column {
	return []Column{
		{Name: "cluster", Type: TypeString, Description: "Slurm ClusterName the rows belong to (directory `cluster=<name>`)."},
		{Name: "month", Type: TypeString, Unit: "YYYY-MM", Description: "UTC calendar month of the partition (directory `month=<YYYY-MM>`)."},
	}
}

// partitionLayout is where a table's files are: in the committed
// generation (current -> gen/<N>), one or more segment files per
// partition, each named by the first 16 hex digits of its SHA-256 (hot-
// for a segment later runs are expected to replace).
const partitionLayout = "<history>/current/%s/cluster=<cluster>/month=<YYYY-MM>/{part,hot}-<16 hex of SHA-256>.parquet"

// Tables returns every history table definition, in a fixed order (jobs,
// usage, fairshare, associations, runs, priority). Each call returns fresh
// values the caller may modify.
func Tables() []Table {
	return []Table{jobsTable(), usageTable(), fairshareTable(), associationsTable(), runsTable(), priorityTable()}
}

// TableByName returns the definition of the named table.
func TableByName(name string) (Table, error) {
	for _, t := range Tables() {
		if t.Name == name {
			return t, nil
		}
	}
	return Table{}, fmt.Errorf("unknown history table %q", name)
}

func jobsTable() Table {
	return Table{
		Name: TableJobs,
		Description: "One row per allocation run (a job, array task or het-job component) that ran in a window, " +
			"as ingested from `sacct -P` and billed, in the partition of the UTC month it started in. A job " +
			"that spans a month boundary appears once, in its start month, with its whole charged_sec: " +
			"for usage per month or day, use the usage table, which splits each job's time by UTC day. " +
			"Integer and timestamp columns are DELTA_BINARY_PACKED, but for timelimit_min, alloc_cpus and billing_slurm; " +
			"those, the TRES map, the resource amounts (mem_mb, node_count, gpu, usage_factor) and billing " +
			"are dictionary encoded.",
		Layout:    fmt.Sprintf(partitionLayout, TableJobs),
		SortBy:    []string{"account", "user", "start", "job_id_raw", "job_id"},
		Partition: partitionColumns(),
		Columns: []Column{
			{"job_id", TypeString, false, "", "JobID as sacct prints it: `123`, `123_4`, `123+1`."},
			{"job_id_raw", TypeInt64, false, "", "JobIDRaw: the numeric job id."},
			{"array_job_id", TypeInt64, true, "", "ArrayJobID; NULL unless an array task."},
			{"array_task_id", TypeInt64, true, "", "ArrayTaskID; NULL unless an array task."},
			{"het_job_id", TypeInt64, true, "", "HetJobID; NULL unless a het-job component."},
			{"het_job_offset", TypeInt64, true, "", "HetJobOffset; NULL unless a het-job component."},
			{"user", TypeString, false, "", "User name."},
			{"account", TypeString, false, "", "Account charged."},
			{"partition", TypeString, false, "", "Partition the job ran in (empty if sacct printed none)."},
			{"qos", TypeString, false, "", "QOS name (empty if sacct printed none)."},
			{"state", TypeString, false, "", "Base state: COMPLETED, CANCELLED, FAILED, TIMEOUT, REQUEUED, RUNNING, ..."},
			{"cancelled_by", TypeString, true, "uid", "The uid from `CANCELLED by <uid>` (from a `sacct --json` file, the user's name, but 0 for root); NULL otherwise."},
			{"submit", TypeTimestamp, true, "UTC", "Submit time; NULL when sacct printed Unknown/None."},
			{"eligible", TypeTimestamp, true, "UTC", "Eligible time; NULL when sacct printed Unknown/None."},
			{"start", TypeTimestamp, false, "UTC", "Start time."},
			{"end", TypeTimestamp, true, "UTC", "End time; NULL while the job runs."},
			{"elapsed_sec", TypeInt64, true, "s", "sacct ElapsedRaw (suspended time excluded); NULL if absent."},
			{"charged_sec", TypeInt64, false, "s", "Seconds the run ran in the charged window: end (or window end) − start, suspended time included. Fair share is charged per PriorityCalcPeriod tick, so without `limits` in AccountingStorageEnforce the seconds after a job's last tick (all of a job between two ticks) are in charged_sec and the usage table but not in raw_usage."},
			{"suspended_sec", TypeInt64, true, "s", "Suspended time; NULL if absent."},
			{"timelimit_min", TypeInt64, true, "min", "Time limit; NULL if absent or UNLIMITED."},
			{"nnodes", TypeInt64, false, "nodes", "NNodes."},
			{"alloc_cpus", TypeInt64, false, "CPUs", "AllocCPUS."},
			{"mem_mb", TypeDouble, false, "MiB", "Allocated memory: AllocTRES mem (0 if absent)."},
			{"node_count", TypeDouble, false, "nodes", "AllocTRES node (0 if absent)."},
			{"gpu", TypeDouble, false, "GPUs", "Total GPUs: AllocTRES gres/gpu, else the sum of typed gres/gpu:TYPE (0 if none)."},
			{"tres", TypeMapStringDouble, false, "", "Every AllocTRES entry, lower-case TRES name → count (mem and bb in MiB)."},
			{"billing", TypeDouble, false, "billing units", "Exact billable TRES (TRESBillingWeights applied), the value usage is computed from."},
			{"billing_slurm", TypeInt64, false, "billing units", "Slurm's truncated billing= for the same allocation."},
			{"usage_factor", TypeDouble, false, "", "QOS UsageFactor applied to usage (1 by default)."},
			{"source_file", TypeString, false, "", "Input file the record was read from."},
			{"source_line", TypeInt64, false, "", "First physical line of the record in source_file (1-based)."},
		},
	}
}

func usageTable() Table {
	return Table{
		Name: TableUsage,
		Description: "Undecayed usage per user, account, partition and UTC day, computed from the jobs table: " +
			"one row per (account, user, partition the jobs ran in, day) with any charged time; a running job " +
			"counts up to the run's --to. Association and account totals are sums over these rows.",
		Layout:    fmt.Sprintf(partitionLayout, TableUsage),
		SortBy:    []string{"account", "user", "partition", "period_start"},
		Partition: partitionColumns(),
		Columns: []Column{
			{"account", TypeString, false, "", "Account the jobs were charged to."},
			{"user", TypeString, false, "", "User who ran the jobs."},
			{"partition", TypeString, false, "", "Partition the jobs ran in."},
			{"period_start", TypeTimestamp, false, "UTC", "Start of the UTC day the usage fell in."},
			{"billing_sec", TypeDouble, false, "billing·s", "Σ billing × usage_factor × seconds run in the day, undecayed."},
			{"cpu_sec", TypeDouble, false, "CPU·s", "Σ allocated CPUs × seconds run in the day."},
			{"mem_mb_sec", TypeDouble, false, "MiB·s", "Σ allocated memory × seconds run in the day."},
			{"gpu_sec", TypeDouble, false, "GPU·s", "Σ allocated GPUs × seconds run in the day."},
		},
	}
}

func fairshareTable() Table {
	return Table{
		Name: TableFairshare,
		Description: "The `sshare -l` view at each snapshot: one row per association (root included) " +
			"and snapshot, as computed by the named algorithm. NULL marks a cell sshare prints blank.",
		Layout:    fmt.Sprintf(partitionLayout, TableFairshare),
		SortBy:    []string{"snapshot", "account", "user", "partition"},
		Partition: partitionColumns(),
		Columns: []Column{
			{"snapshot", TypeTimestamp, false, "UTC", "Time of the snapshot; the usage is as decayed at the last PriorityCalcPeriod tick at or before it, as a live sshare then showed it."},
			{"algorithm", TypeString, false, "", "fair_tree, classic (NO_FAIR_TREE) or depth_oblivious."},
			{"account", TypeString, false, "", "Account (for a user association: its account); root for the root."},
			{"user", TypeString, false, "", "User name; empty for accounts and root."},
			{"partition", TypeString, false, "", "Partition of a per-partition user association; empty otherwise."},
			{"parent", TypeString, false, "", "Parent account; empty for root."},
			{"depth", TypeInt32, false, "", "0 for root, 1 for its children, ..."},
			{"is_user", TypeBool, false, "", "True for user associations."},
			{"raw_shares", TypeInt64, true, "shares", "Share count (sacctmgr Share); NULL for root and FairShare=parent."},
			{"shares_parent", TypeBool, false, "", "True for FairShare=parent."},
			{"norm_shares", TypeDouble, true, "", "NormShares."},
			{"raw_usage", TypeDouble, true, "billing·s", "RawUsage (decayed) at the snapshot's second: the last tick's usage plus, with `limits` in AccountingStorageEnforce, the jobs that ended between that tick and the snapshot, charged at their end as slurmctld does (`priority_p_job_end`); the other usage columns are the tick's."},
			{"norm_usage", TypeDouble, true, "", "NormUsage; NULL for root."},
			{"effectv_usage", TypeDouble, true, "", "EffectvUsage."},
			{"fair_share", TypeDouble, true, "", "FairShare; NULL where sshare prints it blank."},
			{"level_fs", TypeDouble, true, "", "Fair Tree LevelFS, +Infinity for no usage; NULL for root, FairShare=parent and other algorithms."},
			{"rank", TypeInt32, true, "", "Fair Tree rank of a user (FairShare = rank/N); NULL for accounts and other algorithms."},
			{"grp_tres_mins", TypeString, true, "", "The association's GrpTRESMins limit as sacctmgr prints it (`cpu=1000,gres/gpu=50`, TRES-minutes), shown by sshare -l; NULL when none is set."},
			{"tres_run_mins", TypeString, true, "TRES-minutes", "sshare -l TRESRunMins as sshare printed it (`cpu=96,mem=393216,energy=0,node=1,...`, every TRES of the cluster in sshare's order, mem in MiB) at the snapshot's second: Slurm's grp_used_tres_run_secs ⌊÷60⌋ of the association and every association below it — each running job's AllocTRES × ⌊time limit × UsageFactor⌋ seconds, less ⌊δ × UsageFactor⌋ at every decay tick it ran through (the truncation slurmctld applies tick by tick), and with a slurmctld log (`run --slurmctld-log`) what ended jobs left behind by that truncation until slurmctld's next start, less what a job end slurmctld charged twice took beyond the job's value (clamped at 0 per association, until the next start: docs/slurm-versions.md §10); a job without a time limit (timelimit_min NULL) holds slurmctld's INFINITE limit of 4294967295 minutes. NULL where every TRES is at 0 minutes, always when AccountingStorageEnforce lacks limits (slurmctld keeps no such count then), and in snapshots written before the column existed: sshare prints zeros for all three."},
			{"assoc_line", TypeInt32, true, "", "Line of the association in the sacctmgr dump (or script) the tree was read from: the order slurmdbd returned the associations in, its `lft` order on Slurm 22.05–23.02, where sshare prints one user's per-partition rows in it (docs/slurm-versions.md §3); NULL when not known (trees rebuilt from rows, snapshots written before the column existed: lineage order then)."},
		},
	}
}

func associationsTable() Table {
	return Table{
		Name: TableAssociations,
		Description: "The association tree in force at each snapshot, as read from `sacctmgr show assoc -P`: " +
			"one row per association (root included).",
		Layout:    fmt.Sprintf(partitionLayout, TableAssociations),
		SortBy:    []string{"snapshot", "account", "user", "partition"},
		Partition: partitionColumns(),
		Columns: []Column{
			{"snapshot", TypeTimestamp, false, "UTC", "Time of the fair-share snapshot this copy of the tree belongs to (the tree in force then)."},
			{"account", TypeString, false, "", "Account (for a user association: its account)."},
			{"user", TypeString, false, "", "User name; empty for accounts and root."},
			{"partition", TypeString, false, "", "Partition of a per-partition user association; empty otherwise."},
			{"parent", TypeString, false, "", "Parent account; empty for root."},
			{"shares", TypeInt64, true, "shares", "Raw share count; NULL when FairShare=parent."},
			{"shares_parent", TypeBool, false, "", "True for FairShare=parent."},
			{"lineage", TypeString, false, "", "Slurm lineage path `/acct/sub/` or `/acct/0-user/[part/]`."},
			{"source_file", TypeString, false, "", "Input file the tree was read from."},
		},
	}
}

func runsTable() Table {
	return Table{
		Name: TableRuns,
		Description: "One row per fairledger run, appended (never rewritten) as its own file: what was read " +
			"and how every input row was accounted for (read = ingested + rejected + Σ skipped).",
		Layout:    fmt.Sprintf(partitionLayout, TableRuns),
		SortBy:    []string{"started"},
		Partition: partitionColumns(),
		Columns: []Column{
			{"run_id", TypeString, false, "", "Unique id of the run."},
			{"started", TypeTimestamp, false, "UTC", "Run start."},
			{"finished", TypeTimestamp, false, "UTC", "Run end."},
			{"version", TypeString, false, "", "fairledger version."},
			{"inputs", TypeInputList, false, "", "Input files: path, size in bytes and SHA-256 (hex)."},
			{"config", TypeString, false, "", "JSON object of the slurm.conf values in force, the zone, the snapshot interval and the span the sacct input covered (`sacct_coverage`: `from`, `to` in Unix seconds, each with its source, `flag` for `--sacct-start`/`--sacct-end` or `data` for the jobs' own extent)."},
			{"read", TypeInt64, false, "rows", "Input records read."},
			{"ingested", TypeInt64, false, "rows", "Records ingested."},
			{"rejected", TypeInt64, false, "rows", "Records rejected (each reported with its error)."},
			{"skipped", TypeMapStringInt64, false, "rows", "Records skipped on purpose, per reason."},
			{"jobs_charged", TypeInt64, false, "rows", "Job rows charged to fair share."},
			{"snapshots", TypeInt64, false, "", "Fair-share snapshots computed."},
		},
	}
}

func priorityTable() Table {
	return Table{
		Name: TablePriority,
		Description: "Each job's multifactor priority over its life in the queue, as slurmctld had last computed it " +
			"(docs/slurm-semantics.md §13), in three kinds of row (`event`). `pending`: the `sprio -l` view at each " +
			"fair-share snapshot, one row per job waiting at the snapshot and partition it waited in (a job " +
			"submitted to several partitions has a row in each), its factors those of the last PriorityCalcPeriod " +
			"tick at or before the snapshot, or of its submission or release if later. `submit`: the priority it was " +
			"given when submitted, in each partition it asked for. `start`: the priority it had when it started, in " +
			"the partition it ran in, with its wait and its rank among the jobs then waiting there. Submit and start " +
			"rows take the FairShare of the last snapshot at or before them (`snapshot` names it). The factors are " +
			"weighted (factor × PriorityWeight*), as sprio -l prints them before rounding; the weights are in the " +
			"runs table's config. The pending tasks of a job array are one row, with the array's job id, as " +
			"slurmctld keeps them; each task that starts has its own start row. Jobs sacct never recorded as " +
			"eligible, holds placed on a job already pending and a nice changed after submission are in no record " +
			"and so in no row.",
		Layout:    fmt.Sprintf(partitionLayout, TablePriority),
		SortBy:    []string{"event_time", "job_id", "partition", "event"},
		Partition: partitionColumns(),
		Columns: []Column{
			{"event_time", TypeTimestamp, false, "UTC", "The moment the row describes: the snapshot (`pending`), the submission (`submit`) or the start (`start`). The row's month is this time's; `fairledger sprio --at` shows the `pending` rows of the last snapshot at or before its time."},
			{"event", TypeString, false, "", "`submit`, `pending` or `start`."},
			{"snapshot", TypeTimestamp, true, "UTC", "The fair-share snapshot (the fairshare table's) whose FairShare the row uses: `event_time` itself for `pending` rows, the last at or before `event_time` otherwise; null before the history's first snapshot, when no usage was charged yet (FairShare computed from none)."},
			{"computed_at", TypeTimestamp, false, "UTC", "When slurmctld computed these factors: the last decay tick at or before `event_time`, or the job's submission or release when later."},
			{"job_id", TypeInt64, false, "", "The job id sprio prints: JobIDRaw, or for the pending tasks of an array (and the array's submission) the array's job id; a task's `start` row has the task's JobIDRaw."},
			{"array_job_id", TypeInt64, true, "", "For a job array, the array's job id (the `job_id` of its submit and pending rows); null for other jobs."},
			{"user", TypeString, false, "", "User name."},
			{"account", TypeString, false, "", "Account."},
			{"partition", TypeString, false, "", "Partition the job waited in (for `start` rows, the one it ran in)."},
			{"qos", TypeString, false, "", "QOS name (empty if sacct printed none)."},
			{"priority", TypeInt64, false, "", "PRIORITY as sprio prints it: the sum of the weighted factors plus the site factor minus nice, at least 1, truncated."},
			{"age_w", TypeDouble, false, "", "AGE: min(time eligible / PriorityMaxAge, 1) × PriorityWeightAge."},
			{"assoc_w", TypeDouble, false, "", "ASSOC: association priority (own or inherited) / the highest × PriorityWeightAssoc."},
			{"fairshare_w", TypeDouble, false, "", "FAIRSHARE: the user's FairShare at `snapshot` × PriorityWeightFairshare."},
			{"jobsize_w", TypeDouble, false, "", "JOBSIZE: the job-size factor (requested nodes and CPUs against the cluster's, PriorityFavorSmall) × PriorityWeightJobSize."},
			{"partition_w", TypeDouble, false, "", "PARTITION: PriorityJobFactor / the highest × PriorityWeightPartition."},
			{"qos_w", TypeDouble, false, "", "QOS: QOS priority / the highest × PriorityWeightQOS."},
			{"tres_w", TypeMapStringDouble, false, "", "TRES: per TRES, requested / the partition's total × its PriorityWeightTRES weight (only non-zero terms)."},
			{"site", TypeInt64, false, "", "SITE: the site factor (0: no record holds one)."},
			{"nice", TypeInt64, false, "", "NICE: the --nice of the job's SubmitLine (0 without one)."},
			{"submit", TypeTimestamp, true, "UTC", "Submit time."},
			{"eligible", TypeTimestamp, true, "UTC", "Eligible time the age counts from."},
			{"wait_sec", TypeInt64, true, "s", "`start` rows: the time the job waited while eligible, start − eligible (sacct's Planned, formerly Reserved); null otherwise."},
			{"rank", TypeInt64, true, "", "`start` rows: 1 + the number of jobs waiting in the partition when it started whose priority was higher (1: it was first in line; more: it started ahead of higher-priority jobs, by backfill or because they did not fit); null otherwise."},
			{"waiting", TypeInt64, true, "jobs", "`start` rows: the jobs waiting in the partition when it started, itself included; null otherwise."},
		},
	}
}

// Markdown renders the table's documentation page (schemas/<name>.md).
func (t Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# `%s`\n\n", t.Name)
	b.WriteString("<!-- Generated from schemas/tables.go by `go test ./schemas -run TestTableDocs -update`. Do not edit. -->\n\n")
	b.WriteString(t.Description)
	b.WriteString("\n\n")
	codec := "zstd Parquet"
	if t.Name == TableJobs {
		codec = "Parquet; zstd, Snappy or none per column, whichever pays"
	}
	fmt.Fprintf(&b, "Files: `%s` (%s).\n\n", t.Layout, codec)
	fmt.Fprintf(&b, "Rows sorted by: %s.\n\n", codeList(t.SortBy))
	b.WriteString("## Partition columns (in the path only)\n\n")
	writeColumns(&b, t.Partition)
	b.WriteString("\n## Columns\n\n")
	writeColumns(&b, t.Columns)
	return b.String()
}

func codeList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}

func writeColumns(b *strings.Builder, cols []Column) {
	b.WriteString("| column | Parquet type | SQL type | null | unit | description |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, c := range cols {
		null := "no"
		if c.Nullable {
			null = "yes"
		}
		fmt.Fprintf(b, "| `%s` | `%s` | `%s` | %s | %s | %s |\n",
			c.Name, c.Type, c.Type.SQL(), null, c.Unit, strings.ReplaceAll(c.Description, "|", "\\|"))
	}
}
