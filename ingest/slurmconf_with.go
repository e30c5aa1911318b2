package ingest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// With returns a copy of c with the slurm.conf lines given applied on
// top, as if they were written at the end of the file: the same syntax,
// the same checks and defaults as ParseSlurmConf. A line is a top-level
// Key=Value pair ("PriorityDecayHalfLife=14-0"), or a partition's new
// billing weights, "PartitionName=gpu TRESBillingWeights=CPU=1,GRES/gpu=10"
// (PartitionName=DEFAULT: every partition's); blank lines and # comments
// are skipped. name names the lines in
// errors (a line of it is its 1-based position). A line that is neither,
// another record line (NodeName, …), a partition the file lacks or a bad
// value is an error naming name, its position, the key and the value; c
// is never changed.
func (c *Config) With(name string, lines []string) (*Config, error) {
	cp := *c
	cp.PriorityFlags = slices.Clone(c.PriorityFlags)
	cp.AccountingStorageEnforce = slices.Clone(c.AccountingStorageEnforce)
	cp.AccountingStorageTRES = slices.Clone(c.AccountingStorageTRES)
	cp.DebugFlags = slices.Clone(c.DebugFlags)
	cp.Partitions = slices.Clone(c.Partitions)
	cp.NodeGroups = slices.Clone(c.NodeGroups)
	cp.Set = maps.Clone(c.Set)
	if cp.Set == nil {
		cp.Set = map[string]bool{}
	}
	cp.Warnings = nil
	p := &confParser{cfg: &cp, values: map[string]confValue{}}
	for i, text := range lines {
		if t := strings.TrimSpace(text); t == "" || strings.HasPrefix(t, "#") {
			continue // a blank line or a comment, as in slurm.conf
		}
		pair, ok, why := confScanPair(text, 0)
		switch {
		case !ok:
			p.addErr(i, name, i+1, pair.key, strings.TrimSpace(text), fmt.Errorf("not a Key=Value pair: %s", why))
			continue
		case strings.EqualFold(pair.key, "PartitionName"):
			p.withPartition(name, i, text, pair)
			continue
		case confRecordKeys[strings.ToLower(pair.key)]:
			p.addErr(i, name, i+1, pair.key, pair.value,
				errors.New("a record line: only top-level keys and a partition's TRESBillingWeights can be set this way"))
			continue
		case pair.op != 0:
			p.addErr(i, name, i+1, pair.key, pair.value, fmt.Errorf("operator %c= is not supported here", pair.op))
			continue
		}
		if rest := strings.TrimSpace(text[pair.end:]); rest != "" {
			p.addErr(i, name, i+1, pair.key, pair.value, fmt.Errorf("unexpected text %q after the value (one Key=Value per line)", rest))
			continue
		}
		p.values[strings.ToLower(pair.key)] = confValue{key: pair.key, value: pair.value, quoted: pair.quoted, file: name, line: i + 1, seq: i}
	}
	if len(p.errs) == 0 {
		p.applyWith(c)
		p.priorityFlags()
	}
	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].seq < p.errs[j].seq })
	errs := make([]error, len(p.errs))
	for i, e := range p.errs {
		errs[i] = e.err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &cp, nil
}

// withPartition applies a With line "PartitionName=X TRESBillingWeights=W"
// (the line's text, its first pair first) to the copy's partitions.
func (p *confParser) withPartition(name string, i int, text string, first confPair) {
	pr, ok, why := confScanPair(text, first.end)
	switch {
	case !ok:
		p.addErr(i, name, i+1, first.key, first.value, fmt.Errorf("want PartitionName=NAME TRESBillingWeights=WEIGHTS: %s", why))
		return
	case !strings.EqualFold(pr.key, "TRESBillingWeights"):
		p.addErr(i, name, i+1, pr.key, pr.value, errors.New("only a partition's TRESBillingWeights can be set this way"))
		return
	}
	if rest := strings.TrimSpace(text[pr.end:]); rest != "" {
		p.addErr(i, name, i+1, pr.key, pr.value, fmt.Errorf("unexpected text %q after the weights", rest))
		return
	}
	found := false
	for k := range p.cfg.Partitions {
		part := &p.cfg.Partitions[k]
		if strings.EqualFold(first.value, "DEFAULT") || part.Name == first.value {
			part.TRESBillingWeights, part.WeightsFile, part.WeightsLine = pr.value, name, i+1
			found = true
		}
	}
	if !found {
		p.addErr(i, name, i+1, first.key, first.value, errors.New("no such partition in the slurm.conf"))
	}
}

// applyWith applies the values of a With call on top of the file's
// configuration c, with the check apply makes on the result: a zero
// half-life needs a reset period, given here or in the file.
func (p *confParser) applyWith(c *Config) {
	keys := slices.Sorted(maps.Keys(p.values))
	for _, k := range keys {
		v := p.values[k]
		if err := p.applyOne(k, v); err != nil {
			p.addErr(v.seq, v.file, v.line, v.key, v.value, err)
			continue
		}
		p.cfg.Set[k] = true
	}
	if hl, ok := p.values["prioritydecayhalflife"]; ok && p.cfg.DecayHalfLifeSec == 0 {
		if _, given := p.values["priorityusageresetperiod"]; !given && !c.Set["priorityusageresetperiod"] {
			p.addErr(hl.seq, hl.file, hl.line, hl.key, hl.value,
				errors.New("PriorityDecayHalfLife=0 needs PriorityUsageResetPeriod set (slurmctld refuses this configuration)"))
		}
	}
}
