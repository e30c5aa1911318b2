package release

// Rule is one rule of what fairledger computes or prints that changes with
// the Slurm release series: from Since on, the newer behaviour holds. The
// rule itself is a Series value named Name, declared in Package beside the
// code it changes, with a doc comment citing the Slurm source or CHANGELOG
// line it was read from.
type Rule struct {
	// Since is the first release series with the newer behaviour.
	Since Series
	// Package is the module-relative path of the package whose code
	// follows the rule ("fairshare").
	Package string
	// Name is the Go identifier of the rule's Series value in Package.
	Name string
	// Text says what changes at Since, as the table of
	// docs/slurm-versions.md says it.
	Text string
}

// Rules returns every rule that depends on the release series, by Since,
// then Package, then Name: the one list of them, which
// docs/slurm-versions.md's table "The rules in the code" repeats row by
// row. A new rule is a Series value beside its code and a row here (and
// in that table).
func Rules() []Rule {
	return []Rule{
		{Series{23, 2}, "priority", "adminSetZeroFactors",
			"sprio prints 0 in every factor column of a job with an admin-set priority, one row per partition"},
		{Series{23, 2}, "priority", "jobSizeGuards",
			"the job-size factor counts active nodes, is 0 without nodes or CPUs, and PriorityFavorSmall no longer wraps round"},
		{Series{23, 2}, "priority", "sprioAccountQOS",
			"sprio has the ACCOUNT (%o) and QOSNAME (%n) columns, in its -l layouts too"},
		{Series{23, 2}, "priority", "sprioFilters",
			"sprio applies -j, -u and -p itself: no match is reported only when no job is pending at all"},
		{Series{23, 2}, "schemas", "gpuUsageTRES",
			"a cluster whose AccountingStorageTRES names gres/gpu also tracks gres/gpumem and gres/gpuutil (sshare's GrpTRESMins and TRESRunMins list them)"},
		{Series{23, 11}, "fairshare", "lineageRowOrder",
			"sshare lists its rows in lineage order; before, each parent's users before its sub-accounts, by name"},
		{Series{23, 11}, "ingest", "defaultMultifactor",
			"the default PriorityType is priority/multifactor; before, a slurm.conf without PriorityType is warned about"},
		{Series{23, 11}, "schemas", "gpuUsageTRESExact",
			"gres/gpumem and gres/gpuutil come only with an AccountingStorageTRES item gres/gpu itself; before, with any item containing gres/gpu (gres/gpu:a100)"},
		{Series{24, 11}, "priority", "severalQOS",
			"a job that asks for several QOS has a priority and a sprio row per partition and QOS"},
		{Series{25, 5}, "billing", "maxTRESGRES",
			"PriorityFlags=MAX_TRES_GRES bills max(cpu, mem, node) + gres + global; before, it is refused (slurmctld bills it as MAX_TRES)"},
		{Series{25, 11}, "fairshare", "blankAccountFairShare",
			"sshare leaves the classic and depth-oblivious FairShare of account and root rows blank; before, it prints them"},
		{Series{26, 5}, "priority", "sprioSLUID",
			"sprio has the SLUID format letter (%s)"},
	}
}
