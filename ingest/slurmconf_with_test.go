package ingest

import (
	"errors"
	"strings"
	"testing"
)

func TestConfigWith(t *testing.T) {
	base, err := ParseSlurmConf("slurm.conf", strings.NewReader(
		"ClusterName=c\nPriorityType=priority/multifactor\nPriorityDecayHalfLife=7-0\nPriorityFlags=MAX_TRES\n"+
			"PartitionName=p Nodes=ALL TRESBillingWeights=CPU=1.0\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := base.With("--set", []string{"# a comment", "PriorityDecayHalfLife=3-12", "", " priorityweightfairshare = 1000", "PriorityFlags=FAIR_TREE,NO_NORMAL_ALL"})
	if err != nil {
		t.Fatal(err)
	}
	// 3-12 is 3.5 days: 302400 s.
	if got.DecayHalfLifeSec != 302400 || got.PriorityWeightFairshare != 1000 ||
		strings.Join(got.PriorityFlags, ",") != "FAIR_TREE,NO_NORMAL_ALL" || !got.Set["priorityweightfairshare"] {
		t.Errorf("With: half-life %d, weight %d, flags %v, set %v", got.DecayHalfLifeSec, got.PriorityWeightFairshare, got.PriorityFlags, got.Set)
	}
	if base.DecayHalfLifeSec != 604800 || base.PriorityWeightFairshare != 0 || strings.Join(base.PriorityFlags, ",") != "MAX_TRES" || base.Set["priorityweightfairshare"] {
		t.Errorf("With changed its receiver: %+v", base)
	}
	if len(got.Partitions) != 1 || got.Partitions[0].TRESBillingWeights != "CPU=1.0" || got.ClusterName != "c" {
		t.Errorf("With lost the file's other settings: %+v", got)
	}
	for _, tc := range []struct {
		line, field, value, why string
	}{
		{"PriorityCalcPeriod=0", "PriorityCalcPeriod", "0", "at least 1 minute"},
		{"PriorityDecayHalfLife=0", "PriorityDecayHalfLife", "0", "needs PriorityUsageResetPeriod"},
		{"NodeName=n1 CPUs=2", "NodeName", "n1", "a record line"},
		{"PartitionName=q TRESBillingWeights=CPU=2", "PartitionName", "q", "no such partition"},
		{"PartitionName=p MaxTime=10", "MaxTime", "10", "only a partition's TRESBillingWeights"},
		{"PriorityWeightAge+=10", "PriorityWeightAge", "10", "operator +="},
		{"PriorityUsageResetPeriod=HOURLY", "PriorityUsageResetPeriod", "HOURLY", "unknown reset period"},
		{"no pair here", "no", "no pair here", "not a Key=Value pair"},
		{"PriorityWeightQOS=1 PriorityWeightAge=2", "PriorityWeightQOS", "1", "one Key=Value per line"},
	} {
		_, err := base.With("--set", []string{"PriorityWeightAge=5", tc.line})
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: error %v, want a ParseError", tc.line, err)
			continue
		}
		if pe.File != "--set" || pe.Line != 2 || pe.Field != tc.field || pe.Value != tc.value || !strings.Contains(pe.Error(), tc.why) {
			t.Errorf("%q: %s (file %q line %d field %q value %q), want line 2, field %q, value %q, %q",
				tc.line, pe, pe.File, pe.Line, pe.Field, pe.Value, tc.field, tc.value, tc.why)
		}
	}
	// A partition's weights, and every partition's.
	two, err := ParseSlurmConf("slurm.conf", strings.NewReader("ClusterName=c\nPartitionName=p Nodes=ALL TRESBillingWeights=CPU=1.0\nPartitionName=g Nodes=ALL\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := two.With("--set", []string{"PartitionName=g TRESBillingWeights=CPU=1,GRES/gpu=10"}); err != nil ||
		c.Partitions[0].TRESBillingWeights != "CPU=1.0" || c.Partitions[1].TRESBillingWeights != "CPU=1,GRES/gpu=10" || c.Partitions[1].WeightsLine != 1 {
		t.Errorf("one partition's weights: %v, %+v", err, c)
	}
	if c, err := two.With("--set", []string{"PartitionName=DEFAULT TRESBillingWeights=CPU=2"}); err != nil ||
		c.Partitions[0].TRESBillingWeights != "CPU=2" || c.Partitions[1].TRESBillingWeights != "CPU=2" || two.Partitions[1].TRESBillingWeights != "" {
		t.Errorf("every partition's weights: %v, %+v", err, c)
	}
	// A zero half-life with a reset period given beside it is taken.
	if c, err := base.With("--set", []string{"PriorityDecayHalfLife=0", "PriorityUsageResetPeriod=MONTHLY"}); err != nil || c.DecayHalfLifeSec != 0 || c.UsageResetPeriod != "MONTHLY" {
		t.Errorf("half-life 0 with a reset period: %v, %+v", err, c)
	}
}
