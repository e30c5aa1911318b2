package record

import (
	"encoding/json"
	"fmt"
)

// RunConfig is the JSON object stored in the config column of the runs
// table: the slurm.conf values and run settings that produced the history
// rows of that run. Reports read it back to explain a factor.
type RunConfig struct {
	// Cluster is ClusterName.
	Cluster string `json:"cluster"`
	// Algorithm is fair_tree, classic or depth_oblivious (from PriorityFlags).
	Algorithm string `json:"algorithm"`
	// HalfLifeSec is PriorityDecayHalfLife in seconds (0: no decay).
	HalfLifeSec int64 `json:"priority_decay_half_life_sec"`
	// CalcPeriodSec is PriorityCalcPeriod in seconds.
	CalcPeriodSec int64 `json:"priority_calc_period_sec"`
	// TickOriginUnix is the phase of the tick grid (Unix seconds).
	TickOriginUnix int64 `json:"tick_origin_unix"`
	// UsageResetPeriod is PriorityUsageResetPeriod (NONE when unset).
	UsageResetPeriod string `json:"priority_usage_reset_period"`
	// PriorityFlags as written in slurm.conf.
	PriorityFlags []string `json:"priority_flags"`
	// DampeningFactor is FairShareDampeningFactor.
	DampeningFactor int64 `json:"fairshare_dampening_factor"`
	// AccountingStorageEnforce as written in slurm.conf.
	AccountingStorageEnforce []string `json:"accounting_storage_enforce"`
	// LimitsEnforced reports whether job-end tails were charged.
	LimitsEnforced bool `json:"limits_enforced"`
	// TimeZone is the zone of local midnight snapshots and usage resets.
	TimeZone string `json:"time_zone"`
	// SnapshotEvery is the periodic snapshot interval (Go duration; "0s":
	// only at the end of each run).
	SnapshotEvery string `json:"snapshot_every"`
	// TRES are the cluster's TRES in the order sshare lists them
	// (schemas.ClusterTRES of AccountingStorageTRES and the run's Slurm
	// release, which adds gres/gpumem and gres/gpuutil from 23.02); absent in histories
	// written before fairledger recorded them.
	TRES []string `json:"tres,omitempty"`
	// SlurmVersion is the release series of the site's slurmctld the run
	// reproduced (X.YY); absent in histories written before fairledger
	// recorded it.
	SlurmVersion string `json:"slurm_version,omitempty"`
	// Partitions are the partitions with their TRESBillingWeights (DEFAULT
	// resolved; empty weights bill the CPU count).
	Partitions []RunPartition `json:"partitions"`
	// PriorityWeights are the job-priority weights the run's priority
	// rows were computed with; absent in histories written before
	// fairledger computed job priority.
	PriorityWeights *PriorityWeights `json:"priority_weights,omitempty"`
	// SacctCoverage is the span the run's sacct input covered; absent in
	// histories written before fairledger recorded it.
	SacctCoverage *SacctCoverage `json:"sacct_coverage,omitempty"`
}

// SacctCoverage is the span of time a run's sacct input covered (Unix
// seconds; 0: unknown, an input without a job) and where each bound came
// from: "flag" (run --sacct-start, --sacct-end, the -S and -E it was
// fetched with) or "data" (the earliest job start, the latest job start or
// end of the input).
type SacctCoverage struct {
	From       int64  `json:"from,omitempty"`
	FromSource string `json:"from_source"`
	To         int64  `json:"to,omitempty"`
	ToSource   string `json:"to_source"`
}

// PriorityWeights are slurm.conf's PriorityWeight* values.
type PriorityWeights struct {
	Age       int64 `json:"age"`
	Assoc     int64 `json:"assoc"`
	FairShare int64 `json:"fairshare"`
	JobSize   int64 `json:"jobsize"`
	Partition int64 `json:"partition"`
	QOS       int64 `json:"qos"`
	// TRES is PriorityWeightTRES as written ("" for none).
	TRES string `json:"tres,omitempty"`
}

// RunPartition is one partition of RunConfig.
type RunPartition struct {
	// Name is PartitionName.
	Name string `json:"name"`
	// TRESBillingWeights is the partition's weight string.
	TRESBillingWeights string `json:"tres_billing_weights"`
}

// MarshalConfig encodes c as the runs.config JSON.
func MarshalConfig(c RunConfig) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encode run config: %w", err)
	}
	return string(b), nil
}

// ParseRunConfig decodes a runs.config value.
func ParseRunConfig(s string) (RunConfig, error) {
	var c RunConfig
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return RunConfig{}, fmt.Errorf("decode run config: %w", err)
	}
	return c, nil
}
