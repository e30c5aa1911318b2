package schemas

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Column names of a jobs batch: one row per charged allocation run, as
// ingest emits it (billing appends Billing, BillingSlurm and UsageFactor);
// with JobsOptions.Pending also one per job that never started, start null.
//
// Low-cardinality strings (cluster, user, account, partition, qos, state,
// source file) are dictionary-encoded so that later stages map a batch's few
// distinct values once and then index per row.
const (
	ColCluster      = "cluster"        // dictionary<int32, utf8>
	ColJobID        = "job_id"         // utf8, as sacct prints it: 123, 123_4, 123+1
	ColJobIDRaw     = "job_id_raw"     // int64; without a JobIDRaw column: a plain JobID, or a het leader + offset
	ColArrayJobID   = "array_job_id"   // int64, null unless an array task
	ColArrayTaskID  = "array_task_id"  // int64, null unless an array task
	ColHetJobID     = "het_job_id"     // int64, null unless a het-job component
	ColHetJobOffset = "het_job_offset" // int64, null unless a het-job component
	ColUser         = "user"           // dictionary<int32, utf8>
	ColAccount      = "account"        // dictionary<int32, utf8>
	ColPartition    = "partition"      // dictionary<int32, utf8>
	ColQOS          = "qos"            // dictionary<int32, utf8>, null if the file has no QOS column
	ColState        = "state"          // dictionary<int32, utf8>, base state: COMPLETED, CANCELLED, REQUEUED, RUNNING, ...
	ColCancelledBy  = "cancelled_by"   // utf8, uid from "CANCELLED by <uid>" (a user name from sacct --json), null otherwise
	ColSubmit       = "submit"         // timestamp[s, UTC], null when Unknown/None/absent
	ColEligible     = "eligible"       // timestamp[s, UTC]
	ColStart        = "start"          // timestamp[s, UTC]; null only in a batch of JobsOptions.Pending, for a job that never started
	ColEnd          = "end"            // timestamp[s, UTC], null while the job runs
	ColElapsedSec   = "elapsed_sec"    // int64, sacct Elapsed/ElapsedRaw (excludes suspended time), null if absent
	ColSuspendedSec = "suspended_sec"  // int64, null if absent
	ColTimelimitMin = "timelimit_min"  // int64, null if absent or UNLIMITED
	ColNNodes       = "nnodes"         // int64
	ColAllocCPUs    = "alloc_cpus"     // int64
	ColExitCode     = "exit_code"      // utf8, "exit:signal"
	ColJobName      = "job_name"       // utf8
	ColAllocTRES    = "alloc_tres"     // map<utf8, float64>: every AllocTRES entry, mem and bb in MiB
	ColAllocTRESSet = "alloc_tres_set" // int32, optional: the row's alloc_tres within its batch (see below)
	ColBillingSacct = "billing_sacct"  // float64, sacct's billing= (truncated by Slurm), null if absent
	ColSourceFile   = "source_file"    // dictionary<int32, utf8>
	ColSourceLine   = "source_line"    // int64, first physical line of the record

	// ColAllocTRESSet numbers a batch's alloc_tres maps so that a consumer
	// can treat each distinct map once per batch instead of once per row:
	// rows with the same number have the same alloc_tres entries in the
	// same order. Ingest numbers them 0, 1, 2, ... in order of first
	// appearance; a slice of a batch keeps the first property but not the
	// second, and a batch joined from two does not keep either. Two numbers
	// may stand for the same entries (ingest numbers AllocTRES strings, and
	// two strings can parse alike). The column is optional: a consumer
	// reads alloc_tres row by row when a batch has none.

	// Appended by billing.
	ColBilling      = "billing"       // float64, exact billable TRES used for usage
	ColBillingSlurm = "billing_slurm" // int64, Slurm's truncated billing=
	ColUsageFactor  = "usage_factor"  // float64, QOS UsageFactor (1 by default)
)

// Request columns: what a job asked for and how it was submitted, the
// inputs of its multifactor priority that sacct records (JOBSIZE from the
// requested nodes and CPUs, TRES from ReqTRES, NICE, the partition list of
// a job submitted to several). A jobs batch carries them, after
// source_line, when its reader is asked for them (JobsOptions.Request);
// each is null in every row when the sacct file lacks the column it comes
// from. The four SubmitLine columns hold what the command line alone says:
// #SBATCH lines of the script, SBATCH_* environment variables, job_submit
// plugins and a later scontrol update are in no record (docs/inputs.md).
const (
	ColReqCPUs        = "req_cpus"        // int64, ReqCPUS; null when blank
	ColReqNodes       = "req_nodes"       // int64, ReqNodes (sacct prints 1024 as 1K); null when blank
	ColReqTRES        = "req_tres"        // map<utf8, float64>: every ReqTRES entry, as alloc_tres; null when blank
	ColPrioritySacct  = "priority_sacct"  // int64, sacct's Priority: the job's priority when the database first recorded it (at submit); null when blank
	ColNice           = "nice"            // int64, --nice from SubmitLine (0 without it, 100 for a bare --nice); null when SubmitLine is blank or unread
	ColReqPartitions  = "req_partitions"  // dictionary<int32, utf8>, -p/--partition from SubmitLine as given ("a,b"); null without it
	ColBeginRequested = "begin_requested" // bool, SubmitLine has -b/--begin; null when SubmitLine is blank or unread
	ColHoldRequested  = "hold_requested"  // bool, SubmitLine has -H/--hold; null when SubmitLine is blank or unread
	ColArrayThrottle  = "array_throttle"  // int64, the %N of SubmitLine's -a/--array (0 without one); null when SubmitLine is blank or unread
)

// Dense TRES columns. Every jobs batch carries float64 columns for cpu,
// mem (MiB), node and gres/gpu (the total GPU count: gres/gpu when present,
// else the sum of typed gres/gpu:TYPE), plus one for each extra TRES the
// reader was asked for (typically every TRES named by a TRESBillingWeights).
// Absent TRES are 0.
const densePrefix = "tres:"

// DefaultDenseTRES are the TRES every jobs batch carries as dense columns.
var DefaultDenseTRES = []string{"cpu", "mem", "node", "gres/gpu"}

// CanonicalTRES returns Slurm's case-insensitive TRES name in the canonical
// lower-case form used for column names and map keys ("GRES/gpu:A100" →
// "gres/gpu:a100").
func CanonicalTRES(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// DenseTRESColumn is the column name of the dense float64 column of a TRES:
// "tres:cpu", "tres:gres/gpu:a100".
func DenseTRESColumn(tres string) string { return densePrefix + CanonicalTRES(tres) }

// IsDenseTRESColumn reports whether a column holds a dense TRES count and
// returns the TRES name.
func IsDenseTRESColumn(col string) (string, bool) {
	if strings.HasPrefix(col, densePrefix) {
		return col[len(densePrefix):], true
	}
	return "", false
}

// DenseTRESList merges DefaultDenseTRES with extra (canonicalised,
// de-duplicated, defaults first, extras in the order given).
func DenseTRESList(extra []string) []string {
	out := append([]string(nil), DefaultDenseTRES...)
	seen := make(map[string]bool, len(out)+len(extra))
	for _, t := range out {
		seen[t] = true
	}
	for _, t := range extra {
		c := CanonicalTRES(t)
		if c == "" || seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, c)
	}
	return out
}

var (
	dictString = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	// Timestamp is the type of every time column: seconds since the Unix epoch, UTC.
	Timestamp = &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}
)

// DictString is the dictionary type used for low-cardinality string columns.
func DictString() *arrow.DictionaryType { return dictString }

// JobsOptions selects the optional parts of a jobs batch's schema.
type JobsOptions struct {
	// DenseTRES names the TRES, beyond DefaultDenseTRES, that get a dense
	// column (see DenseTRESList).
	DenseTRES []string
	// Request appends the request columns (RequestFields) after
	// source_line.
	Request bool
	// Pending makes start nullable: the batch may hold rows of jobs that
	// never started (pending when sacct looked, or cancelled while
	// pending), whose start is null. Nothing is charged for such a row.
	Pending bool
}

// Jobs returns the schema of an ingested jobs batch whose dense TRES columns
// are DenseTRESList(extraTRES), without the optional parts of JobsOptions.
func Jobs(extraTRES []string) *arrow.Schema {
	return JobsWith(JobsOptions{DenseTRES: extraTRES})
}

// JobsWith returns the schema of an ingested jobs batch with the optional
// parts o selects.
func JobsWith(o JobsOptions) *arrow.Schema {
	extraTRES := o.DenseTRES
	f := []arrow.Field{
		{Name: ColCluster, Type: dictString},
		{Name: ColJobID, Type: arrow.BinaryTypes.String},
		{Name: ColJobIDRaw, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColArrayJobID, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColArrayTaskID, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColHetJobID, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColHetJobOffset, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColUser, Type: dictString},
		{Name: ColAccount, Type: dictString},
		{Name: ColPartition, Type: dictString},
		{Name: ColQOS, Type: dictString, Nullable: true},
		{Name: ColState, Type: dictString},
		{Name: ColCancelledBy, Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: ColSubmit, Type: Timestamp, Nullable: true},
		{Name: ColEligible, Type: Timestamp, Nullable: true},
		{Name: ColStart, Type: Timestamp, Nullable: o.Pending},
		{Name: ColEnd, Type: Timestamp, Nullable: true},
		{Name: ColElapsedSec, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColSuspendedSec, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColTimelimitMin, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColNNodes, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColAllocCPUs, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColExitCode, Type: arrow.BinaryTypes.String},
		{Name: ColJobName, Type: arrow.BinaryTypes.String},
		{Name: ColAllocTRES, Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64)},
		{Name: ColAllocTRESSet, Type: arrow.PrimitiveTypes.Int32},
		{Name: ColBillingSacct, Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}
	for _, t := range DenseTRESList(extraTRES) {
		f = append(f, arrow.Field{Name: DenseTRESColumn(t), Type: arrow.PrimitiveTypes.Float64})
	}
	f = append(f,
		arrow.Field{Name: ColSourceFile, Type: dictString},
		arrow.Field{Name: ColSourceLine, Type: arrow.PrimitiveTypes.Int64},
	)
	if o.Request {
		f = append(f, RequestFields()...)
	}
	return arrow.NewSchema(f, nil)
}

// RequestFields are the request columns, in the order JobsWith appends
// them; all nullable.
func RequestFields() []arrow.Field {
	return []arrow.Field{
		{Name: ColReqCPUs, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColReqNodes, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColReqTRES, Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: ColPrioritySacct, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColNice, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColReqPartitions, Type: dictString, Nullable: true},
		{Name: ColBeginRequested, Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: ColHoldRequested, Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: ColArrayThrottle, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}
}

// BillingFields are the fields billing appends to a jobs batch.
func BillingFields() []arrow.Field {
	return []arrow.Field{
		{Name: ColBilling, Type: arrow.PrimitiveTypes.Float64},
		{Name: ColBillingSlurm, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColUsageFactor, Type: arrow.PrimitiveTypes.Float64},
	}
}

// Index returns the index of the named field in s, or an error naming the
// missing column.
func Index(s *arrow.Schema, name string) (int, error) {
	idx := s.FieldIndices(name)
	if len(idx) == 0 {
		return -1, fmt.Errorf("schema has no column %q", name)
	}
	return idx[0], nil
}

// RecordColumn returns the named column of rec as the array type A (e.g.
// *array.Float64); want names the expected type in the error
// ("float64", "timestamp[s]"). Callers add their own context.
func RecordColumn[A arrow.Array](rec arrow.RecordBatch, name, want string) (A, error) {
	var zero A
	i, err := Index(rec.Schema(), name)
	if err != nil {
		return zero, err
	}
	a, ok := rec.Column(i).(A)
	if !ok {
		return zero, fmt.Errorf("column %q is %s, want %s", name, rec.Column(i).DataType(), want)
	}
	return a, nil
}

// DictStringColumn returns the named dictionary<int32, utf8> column of rec
// with its codes and its dictionary values.
func DictStringColumn(rec arrow.RecordBatch, name string) (*array.Dictionary, []int32, *array.String, error) {
	const want = "dictionary<int32, utf8>"
	d, err := RecordColumn[*array.Dictionary](rec, name, want)
	if err != nil {
		return nil, nil, nil, err
	}
	idx, ok1 := d.Indices().(*array.Int32)
	names, ok2 := d.Dictionary().(*array.String)
	if !ok1 || !ok2 {
		return nil, nil, nil, fmt.Errorf("column %q is %s, want %s", name, d.DataType(), want)
	}
	return d, idx.Int32Values(), names, nil
}
