package encode

import (
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// jobField is a leaf column of the jobs table as the encoder fills it
// (jobColumns): one per record.JobRow field, two for the TRES map (its keys and
// its values). The encoder finds each field's column by name in the
// writer's schema (jobLeaves), never by position.
type jobField uint8

const (
	jobJobID jobField = iota
	jobJobIDRaw
	jobArrayJobID
	jobArrayTaskID
	jobHetJobID
	jobHetJobOffset
	jobUser
	jobAccount
	jobPartition
	jobQOS
	jobState
	jobCancelledBy
	jobSubmit
	jobEligible
	jobStart
	jobEnd
	jobElapsedSec
	jobChargedSec
	jobSuspendedSec
	jobTimelimitMin
	jobNNodes
	jobAllocCPUs
	jobMemMB
	jobNodeCount
	jobGPU
	jobTRESKey
	jobTRESValue
	jobBilling
	jobBillingSlurm
	jobUsageFactor
	jobSourceFile
	jobSourceLine
	// numJobFields is the number of fields.
	numJobFields
)

// path returns the field's leaf column path in the jobs schema, the
// parquet tags of record.JobRow ("tres/key_value/key" for a map's keys), or
// "field N" for a value that is no field.
func (f jobField) path() string {
	switch f {
	case jobJobID:
		return "job_id"
	case jobJobIDRaw:
		return "job_id_raw"
	case jobArrayJobID:
		return "array_job_id"
	case jobArrayTaskID:
		return "array_task_id"
	case jobHetJobID:
		return "het_job_id"
	case jobHetJobOffset:
		return "het_job_offset"
	case jobUser:
		return "user"
	case jobAccount:
		return "account"
	case jobPartition:
		return "partition"
	case jobQOS:
		return "qos"
	case jobState:
		return "state"
	case jobCancelledBy:
		return "cancelled_by"
	case jobSubmit:
		return "submit"
	case jobEligible:
		return "eligible"
	case jobStart:
		return "start"
	case jobEnd:
		return "end"
	case jobElapsedSec:
		return "elapsed_sec"
	case jobChargedSec:
		return "charged_sec"
	case jobSuspendedSec:
		return "suspended_sec"
	case jobTimelimitMin:
		return "timelimit_min"
	case jobNNodes:
		return "nnodes"
	case jobAllocCPUs:
		return "alloc_cpus"
	case jobMemMB:
		return "mem_mb"
	case jobNodeCount:
		return "node_count"
	case jobGPU:
		return "gpu"
	case jobTRESKey:
		return "tres/key_value/key"
	case jobTRESValue:
		return "tres/key_value/value"
	case jobBilling:
		return "billing"
	case jobBillingSlurm:
		return "billing_slurm"
	case jobUsageFactor:
		return "usage_factor"
	case jobSourceFile:
		return "source_file"
	case jobSourceLine:
		return "source_line"
	}
	return fmt.Sprintf("field %d", f)
}

// jobLeaves resolves every field's leaf column in s by name, once per
// file, and returns the field of each leaf column in the schema's order
// (the order of its column writers). It is an error for s to lack a
// field's column or to hold a column no field fills.
func jobLeaves(s *parquet.Schema) ([]jobField, error) {
	if n := len(s.Columns()); n != int(numJobFields) {
		return nil, fmt.Errorf("jobs schema has %d leaf columns, the encoder writes %d", n, numJobFields)
	}
	leaves := make([]jobField, numJobFields)
	seen := make([]bool, numJobFields)
	for f := range numJobFields {
		leaf, ok := s.Lookup(strings.Split(f.path(), "/")...)
		if !ok {
			return nil, fmt.Errorf("jobs schema has no column %s", f.path())
		}
		if c := leaf.ColumnIndex; c < 0 || c >= len(leaves) || seen[c] {
			return nil, fmt.Errorf("jobs schema: column %s at index %d", f.path(), c)
		}
		leaves[leaf.ColumnIndex], seen[leaf.ColumnIndex] = f, true
	}
	return leaves, nil
}
