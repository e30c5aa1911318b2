package metrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
)

// Snapshot is one cluster's fair share at one time, with what the metrics
// need beside its rows.
type Snapshot struct {
	// Cluster names the cluster (the cluster label).
	Cluster string
	// Time is the snapshot's time (or the moment's, for sshare --at).
	Time time.Time
	// Rows are the fair-share rows of the snapshot, as the history holds
	// them (history.View.Snapshot, SnapshotIter.Next).
	Rows []record.FairshareRow
	// AccountFairShare says that the cluster's sshare prints the FairShare
	// of account rows (releases before 25.11, classic and depth-oblivious
	// algorithms: fairshare.SshareRelease); DampeningFactor is
	// FairShareDampeningFactor, which that factor uses.
	AccountFairShare bool
	DampeningFactor  float64
	// RecoverySeconds maps a lab account to the time it needs at zero use
	// to be back at its share (0: within its share; +Inf: never by decay alone,
	// no decay, no shares): the lab report's recovery. An account it
	// lacks has no recovery sample.
	RecoverySeconds map[string]float64
	// Pending are the priority rows of the jobs waiting at Time
	// (history.View.PriorityAt): the waiting-time metrics. A history
	// without job priority has none, and no waiting-time metric.
	Pending []record.PriorityRow
}

// family is one metric family: its name, HELP text and label names.
type family struct {
	name, help string
	labels     []string
}

// The families in the order they are written; docs/metrics.md describes
// each (a test checks that it lists them all).
const (
	famSnapshotTime = iota
	famAccountFairShare
	famAccountRawShares
	famAccountNormShares
	famAccountRawUsage
	famAccountNormUsage
	famUserFairShare
	famUserRawShares
	famUserNormShares
	famUserRawUsage
	famUserNormUsage
	famRawShares
	famNormShares
	famRawUsage
	famNormUsage
	famEffectvUsage
	famFairShare
	famLevelFS
	famRecoverySeconds
	famPendingJobs
	famPendingWaitMax
	famPendingWaitMean
	numFamilies
)

// families returns the metric families, indexed by the fam constants.
func families() [numFamilies]family {
	clusterLabels := []string{"cluster"}
	accountLabels := []string{"cluster", "account"}
	userLabels := []string{"cluster", "account", "user"}
	assocLabels := []string{"cluster", "account", "user", "partition", "parent", "depth"}
	pendingLabels := []string{"cluster", "partition", "account"}
	return [numFamilies]family{
		famSnapshotTime:      {"fairledger_snapshot_timestamp_seconds", "Time of the fair-share snapshot the other metrics of the cluster describe (Unix seconds).", clusterLabels},
		famAccountFairShare:  {"slurm_account_fairshare", "FairShare column of the account's line in sshare (absent where sshare prints it blank: Fair Tree, and every algorithm from Slurm 25.11).", accountLabels},
		famAccountRawShares:  {"slurm_account_fairshare_raw_shares", "RawShares of the account's line in sshare (absent for FairShare=parent and root).", accountLabels},
		famAccountNormShares: {"slurm_account_fairshare_norm_shares", "NormShares of the account's line in sshare.", accountLabels},
		famAccountRawUsage:   {"slurm_account_fairshare_raw_usage_cpu_seconds", "RawUsage of the account's line in sshare: decayed usage in TRES-billing-seconds (CPU-seconds without TRESBillingWeights).", accountLabels},
		famAccountNormUsage:  {"slurm_account_fairshare_norm_usage", "NormUsage of the account's line in sshare (absent for root).", accountLabels},
		famUserFairShare:     {"slurm_user_fairshare", "FairShare factor of the user association in sshare.", userLabels},
		famUserRawShares:     {"slurm_user_fairshare_raw_shares", "RawShares of the user association in sshare (absent for FairShare=parent).", userLabels},
		famUserNormShares:    {"slurm_user_fairshare_norm_shares", "NormShares of the user association in sshare.", userLabels},
		famUserRawUsage:      {"slurm_user_fairshare_raw_usage_cpu_seconds", "RawUsage of the user association in sshare: decayed usage in TRES-billing-seconds.", userLabels},
		famUserNormUsage:     {"slurm_user_fairshare_norm_usage", "NormUsage of the user association in sshare.", userLabels},
		famRawShares:         {"fairledger_association_raw_shares", "RawShares of every association of the tree (absent for FairShare=parent and root).", assocLabels},
		famNormShares:        {"fairledger_association_norm_shares", "NormShares of every association of the tree.", assocLabels},
		famRawUsage:          {"fairledger_association_raw_usage", "RawUsage of every association: decayed usage in TRES-billing-seconds, not truncated.", assocLabels},
		famNormUsage:         {"fairledger_association_norm_usage", "NormUsage of every association (absent for root).", assocLabels},
		famEffectvUsage:      {"fairledger_association_effective_usage", "EffectvUsage of every association.", assocLabels},
		famFairShare:         {"fairledger_association_fair_share", "Fair-share factor of the association (Fair Tree: users only; classic: every association but root).", assocLabels},
		famLevelFS:           {"fairledger_association_level_fs", "LevelFS of the association under Fair Tree (NormShares/EffectvUsage; +Inf without usage).", assocLabels},
		famRecoverySeconds:   {"fairledger_association_recovery_seconds", "Time a lab account needs at zero use to be back at its share (0: within it; +Inf: never by decay alone), as the lab report computes it (seconds).", assocLabels},
		famPendingJobs:       {"fairledger_pending_jobs", "Jobs waiting at the snapshot (priority table), per partition and account.", pendingLabels},
		famPendingWaitMax:    {"fairledger_pending_wait_max_seconds", "Longest time a job waiting at the snapshot has been eligible, per partition and account (seconds).", pendingLabels},
		famPendingWaitMean:   {"fairledger_pending_wait_mean_seconds", "Mean time the jobs waiting at the snapshot have been eligible, per partition and account (seconds).", pendingLabels},
	}
}

// Names returns the names of every metric family, in the order they are
// written.
func Names() []string {
	fs := families()
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out
}

// sampleFunc receives one sample: its family, its label values (in the
// family's label order) and its value.
type sampleFunc func(fam int, labels []string, v float64)

// samples computes every sample of s, in a deterministic order: the
// associations in the tree's position order (sshare's), the pending
// groups by partition and account. NaN values (what sshare prints blank)
// are not emitted.
func (s *Snapshot) samples(emit sampleFunc) error {
	at := s.Time.UTC().Format(time.RFC3339)
	if len(s.Rows) == 0 {
		return fmt.Errorf("snapshot %s of cluster %s: no fair-share rows", at, s.Cluster)
	}
	tree, res, err := record.FairshareFromRows(s.Rows)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", s.Cluster, err)
	}
	// sshare's FairShare column of account rows (fairshare.WriteSshare).
	accountFS := res.FairShare
	if s.AccountFairShare && res.Algorithm != fairshare.FairTreeAlgo {
		r2 := *res
		r2.FairShare = slices.Clone(res.FairShare)
		fairshare.AccountFairShares(tree, &r2, max(s.DampeningFactor, 1))
		accountFS = r2.FairShare
	}
	put := func(fam int, labels []string, v float64) {
		if !math.IsNaN(v) {
			emit(fam, labels, v)
		}
	}
	c := s.Cluster
	put(famSnapshotTime, []string{c}, float64(s.Time.UnixMicro())/1e6)
	for p := range tree.Len() {
		acct, user, part := tree.Account[p], tree.User[p], tree.Partition[p]
		parent := ""
		if q := tree.Parent[p]; q >= 0 {
			parent = tree.Account[q]
		}
		rawShares := math.NaN()
		if p > 0 && !tree.SharesParent[p] {
			rawShares = float64(tree.Shares[p])
		}
		switch {
		case !tree.IsUser[p]:
			l := []string{c, acct}
			if s.AccountFairShare && res.Algorithm != fairshare.FairTreeAlgo {
				put(famAccountFairShare, l, accountFS[p])
			}
			put(famAccountRawShares, l, rawShares)
			put(famAccountNormShares, l, res.NormShares[p])
			put(famAccountRawUsage, l, res.RawUsage[p])
			put(famAccountNormUsage, l, res.NormUsage[p])
		case part == "":
			// A user's partition associations are fairledger's own family
			// only: the exporters' labels cannot tell them apart.
			l := []string{c, acct, user}
			put(famUserFairShare, l, res.FairShare[p])
			put(famUserRawShares, l, rawShares)
			put(famUserNormShares, l, res.NormShares[p])
			put(famUserRawUsage, l, res.RawUsage[p])
			put(famUserNormUsage, l, res.NormUsage[p])
		}
		l := []string{c, acct, user, part, parent, strconv.Itoa(int(tree.Depth[p]))}
		put(famRawShares, l, rawShares)
		put(famNormShares, l, res.NormShares[p])
		put(famRawUsage, l, res.RawUsage[p])
		put(famNormUsage, l, res.NormUsage[p])
		put(famEffectvUsage, l, res.EffectvUsage[p])
		put(famFairShare, l, res.FairShare[p])
		put(famLevelFS, l, res.LevelFS[p])
		if !tree.IsUser[p] && p > 0 {
			if d, ok := s.RecoverySeconds[acct]; ok {
				put(famRecoverySeconds, l, d)
			}
		}
	}
	{
		for _, g := range pendingGroups(s.Pending, s.Time) {
			l := []string{c, g.partition, g.account}
			put(famPendingJobs, l, float64(g.jobs))
			if g.waited > 0 {
				put(famPendingWaitMax, l, g.maxSec)
				put(famPendingWaitMean, l, g.sumSec/float64(g.waited))
			}
		}
	}
	return nil
}

// pendingGroup is the pending jobs of one partition and account.
type pendingGroup struct {
	partition, account string
	jobs, waited       int
	maxSec, sumSec     float64
}

// pendingGroups sums the pending rows at at by partition and account,
// sorted. A job's wait is at − its eligible time (its submit time when
// the row has none), 0 when that is later than at; a row with neither
// counts as a job without a wait.
func pendingGroups(rows []record.PriorityRow, at time.Time) []pendingGroup {
	by := map[[2]string]*pendingGroup{}
	for i := range rows {
		r := &rows[i]
		if r.Event != record.EventPending || !r.At.Equal(at) {
			continue
		}
		k := [2]string{r.Partition, r.Account}
		g := by[k]
		if g == nil {
			g = &pendingGroup{partition: r.Partition, account: r.Account}
			by[k] = g
		}
		g.jobs++
		from := r.Eligible
		if from == nil {
			from = r.Submit
		}
		if from == nil {
			continue
		}
		w := max(at.Sub(*from).Seconds(), 0)
		g.waited++
		g.sumSec += w
		g.maxSec = max(g.maxSec, w)
	}
	out := make([]pendingGroup, 0, len(by))
	for _, g := range by {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b pendingGroup) int {
		return cmp.Or(cmp.Compare(a.partition, b.partition), cmp.Compare(a.account, b.account))
	})
	return out
}
