package ingest

// EffectivePriorities returns, for each row of a.Rows in order, the
// association priority slurmctld uses for the ASSOC factor of job
// priority: the row's own Priority when it has one, else the nearest
// ancestor's that has one, going up the parent chain (a user
// association's parent is its account, an account's its parent account),
// else 0.
//
// This is how slurmdbd fills an association's priority when it hands
// associations to slurmctld and to sacctmgr (the get_parent_limits
// procedure of accounting_storage_mysql.c, used by as_mysql_assoc.c),
// and slurmctld reads a priority still unset as 0 (_set_assoc_norm_priority
// in src/common/assoc_mgr.c). A plain `sacctmgr show assoc` dump already
// prints the inherited values (a blank one is unset all the way up, and
// stays 0 here); a dump with WOPLimits and a sacctmgr script give each
// association's own, and this computes the rest. The ASSOC factor divides
// the value by the largest of all associations' (unless
// PriorityFlags=NO_NORMAL_ASSOC); that is the priority computation's part.
//
// a.Rows must hold each parent before its children, as ParseAssoc and
// ParseAssocScript order them (by cluster, then lineage).
func (a *Associations) EffectivePriorities() []int64 {
	out := make([]int64, len(a.Rows))
	acct := make(map[assocAcctKey]int64) // effective priority of each account row (root included)
	for i := range a.Rows {
		r := &a.Rows[i]
		var p int64
		switch {
		case r.HasPriority:
			p = r.Priority
		case r.IsRoot():
			p = 0
		case r.IsUser():
			p = acct[assocAcctKey{r.Cluster, r.Account}]
		default:
			p = acct[assocAcctKey{r.Cluster, r.Parent}]
		}
		out[i] = p
		if !r.IsUser() {
			acct[assocAcctKey{r.Cluster, r.Account}] = p
		}
	}
	return out
}
