package report

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/query"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/schemas"
)

// Report is the fair-share report of one lab over one period: every
// number the HTML, Markdown and CSV forms print.
type Report struct {
	// Cluster and Account name the lab; Parent is its parent account.
	Cluster, Account, Parent string
	// From and To are the period; Last is the last snapshot in it.
	From, To, Last time.Time
	// Algorithm is the fair-share algorithm of the Last snapshot.
	Algorithm fairshare.Algorithm
	// Settings are the site settings that produced the history.
	Settings Settings
	// Snapshots are the times of the series (all snapshots in the period,
	// or the last of each k-day bucket beyond 400).
	Snapshots []time.Time
	// Lab is the lab's account row over the snapshots.
	Lab Series
	// Users are the lab's user associations (its subtree's), sorted by
	// billing-hours in the period, most first, then by name.
	Users []UserSeries
	// Charted is how many of Users the factor chart draws.
	Charted int
	// Months is the lab's undecayed usage per UTC month of the period.
	Months []MonthUsage
	// Total is the sum of Months.
	Total MonthUsage
	// TopUsers, TopPartitions and BiggestJobs are the top-N tables.
	TopUsers      []UserUsage
	TopPartitions []PartitionUsage
	BiggestJobs   []JobUsage
	// Recovery explains the current factor.
	Recovery Recovery
	// LimitParent is the parent account of Recovery.Limit.
	LimitParent string
	// ClusterUsers is the number of user associations of the cluster
	// (Fair Tree's N: a user's factor is rank/N).
	ClusterUsers int
	// Waits is the section "Why did our jobs wait" (priority table).
	Waits Waits
}

// Series are the lab's (or a user's) sshare columns over Report.Snapshots;
// NaN is a blank cell (or no row at that snapshot).
type Series struct {
	NormShares, NormUsage, EffectvUsage, FairShare, LevelFS []float64
}

// last returns the value at the last snapshot.
func last(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return v[len(v)-1]
}

// UserSeries is one user association of the lab.
type UserSeries struct {
	// User, Account and Partition name the association.
	User, Account, Partition string
	Series
	// BillingHours is the user's undecayed billing-hours in the period.
	BillingHours float64
}

// Label is the name shown for the association: the user, with its
// account when it is a sub-account's and its partition when it has one.
func (u UserSeries) label(lab string) string {
	s := u.User
	var q []string
	if u.Account != lab {
		q = append(q, u.Account)
	}
	if u.Partition != "" {
		q = append(q, u.Partition)
	}
	if len(q) > 0 {
		s += " (" + strings.Join(q, ", ") + ")"
	}
	return s
}

// MonthUsage is undecayed usage in one UTC month (or a total).
type MonthUsage struct {
	// Month is YYYY-MM.
	Month string
	// BillingHours is Σ billing × UsageFactor × hours; CPUHours, GPUHours
	// and MemGiBHours (GiB × hours) are the allocated TRES × hours.
	BillingHours, CPUHours, GPUHours, MemGiBHours float64
}

// UserUsage is one row of the top users table.
type UserUsage struct {
	User                                          string
	BillingHours, CPUHours, GPUHours, MemGiBHours float64
	// Share is the user's fraction of the lab's billing-hours.
	Share float64
}

// PartitionUsage is one row of the top partitions table.
type PartitionUsage struct {
	Partition                    string
	Jobs                         int64
	BillingHours, CPUHours       float64
	GPUHours, MemGiBHours, Share float64
}

// JobUsage is one row of the biggest jobs table: a job run, counted for
// the part of it inside the period.
type JobUsage struct {
	JobID, User, Account, Partition, State string
	Start                                  time.Time
	// End is nil while the job runs.
	End          *time.Time
	CPUs         int64
	GPUs, MemGiB float64
	BillingHours float64
}

// Settings are the site settings shown in a report.
type Settings struct {
	// Known is false when the history has no run record.
	Known bool
	// Run and RunStarted identify the run whose config is shown.
	Run        string
	RunStarted time.Time
	// HalfLifeSec is PriorityDecayHalfLife; CalcPeriodSec PriorityCalcPeriod.
	HalfLifeSec, CalcPeriodSec int64
	// ResetPeriod is PriorityUsageResetPeriod.
	ResetPeriod string
	// Flags are PriorityFlags; Damp is FairShareDampeningFactor.
	Flags []string
	Damp  int64
	// LimitsEnforced: job-end tails charged (AccountingStorageEnforce).
	LimitsEnforced bool
	// TimeZone is the site's zone.
	TimeZone string
	// Partitions are the partitions the lab used in the period, with
	// their TRESBillingWeights (empty: billed by CPU count).
	Partitions []Partition
}

// Partition is a partition and its TRESBillingWeights.
type Partition struct{ Name, Weights string }

// Build opens the history in dir and returns the report of one account.
func Build(ctx context.Context, dir, account string, opt Options) (*Report, error) {
	db, err := query.OpenDuckDB(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	d, err := Load(ctx, db, []string{account}, opt)
	if err != nil {
		return nil, err
	}
	return d.Report(account)
}

// Report builds the report of one account from the dataset (which must
// have been loaded for it, or for all labs, by Load).
func (d *Dataset) Report(account string) (*Report, error) {
	lab, ok := d.tree.account(account)
	if !ok || account == "" {
		return nil, d.notFound(account)
	}
	if _, loaded := slices.BinarySearch(d.rows.filter, account); d.rows.filter != nil && !loaded {
		return nil, fmt.Errorf("report: account %q was not loaded (Load was given other accounts, or LoadShared none: see Reports)", account)
	}
	r := d.newReport(account, lab)
	accounts := d.tree.subtreeAccounts(lab)
	inLab := func(a string) bool { _, ok := slices.BinarySearch(accounts, a); return ok }
	assocBilling := d.usage(r, inLab)
	d.userSeries(r, lab, inLab, assocBilling)
	partNames := d.partitions(r, inLab)
	d.biggestJobs(r, inLab)
	half, damp := d.settings(r, partNames)
	d.explain(r, lab, half, damp)
	d.waits(r, inLab)
	return r, nil
}

// newReport is the report of the account at tree index lab with the
// dataset's period and the lab's own series.
func (d *Dataset) newReport(account string, lab int32) *Report {
	t := d.tree
	r := &Report{Cluster: d.Cluster, Account: account, From: d.From, To: d.To, Last: d.Last,
		Algorithm: d.Algorithm, Snapshots: d.snapshots}
	if pp := t.t.Parent[lab]; pp >= 0 {
		r.Parent = t.keys[pp].Account
	}
	r.Lab = d.seriesOf(assocKey{Account: account})
	r.ClusterUsers = t.t.Users
	return r
}

// usage sets the lab's undecayed usage: per month, per user association,
// per user; rows are sorted by (account, user, month), so each sum runs in
// a fixed order. It returns the billing hours of each user association
// (without partition).
func (d *Dataset) usage(r *Report, inLab func(string) bool) map[assocKey]float64 {
	months := map[string]*MonthUsage{}
	users := map[string]*UserUsage{}
	assocBilling := map[assocKey]float64{}
	var userNames []string
	for _, m := range d.rows.months {
		if !inLab(m.Account) {
			continue
		}
		mu := months[m.Month]
		if mu == nil {
			mu = &MonthUsage{Month: m.Month}
			months[m.Month] = mu
		}
		uu := users[m.User]
		if uu == nil {
			uu = &UserUsage{User: m.User}
			users[m.User] = uu
			userNames = append(userNames, m.User)
		}
		mu.BillingHours += m.BillingSec / 3600
		mu.CPUHours += m.CPUSec / 3600
		mu.GPUHours += m.GPUSec / 3600
		mu.MemGiBHours += m.MemMBSec / 1024 / 3600
		uu.BillingHours += m.BillingSec / 3600
		uu.CPUHours += m.CPUSec / 3600
		uu.GPUHours += m.GPUSec / 3600
		uu.MemGiBHours += m.MemMBSec / 1024 / 3600
		assocBilling[assocKey{Account: m.Account, User: m.User}] += m.BillingSec / 3600
	}
	// Every UTC month of the period gets a row, used or not.
	r.Total.Month = "total"
	for m := time.Date(d.From.Year(), d.From.Month(), 1, 0, 0, 0, 0, time.UTC); m.Before(d.To); m = m.AddDate(0, 1, 0) {
		mu := MonthUsage{Month: m.Format(schemas.MonthLayout)}
		if p := months[mu.Month]; p != nil {
			mu = *p
		}
		r.Months = append(r.Months, mu)
		r.Total.BillingHours += mu.BillingHours
		r.Total.CPUHours += mu.CPUHours
		r.Total.GPUHours += mu.GPUHours
		r.Total.MemGiBHours += mu.MemGiBHours
	}
	slices.Sort(userNames)
	for _, u := range userNames {
		uu := *users[u]
		uu.Share = ratioOf(uu.BillingHours, r.Total.BillingHours)
		r.TopUsers = append(r.TopUsers, uu)
	}
	slices.SortStableFunc(r.TopUsers, func(a, b UserUsage) int { return cmp.Compare(b.BillingHours, a.BillingHours) })
	r.TopUsers = r.TopUsers[:min(len(r.TopUsers), d.opts.topN())]
	return assocBilling
}

// userSeries sets the series of the lab's user associations: those in
// the tree now, and any with a series row in the period under one of the
// lab's accounts.
func (d *Dataset) userSeries(r *Report, lab int32, inLab func(string) bool, assocBilling map[assocKey]float64) {
	seen := map[assocKey]bool{}
	var keys []assocKey
	for _, k := range d.tree.subtreeUsers(lab) {
		seen[k] = true
		keys = append(keys, k)
	}
	var extra []assocKey
	for k := range d.rows.series {
		if k.User != "" && !seen[k] && inLab(k.Account) {
			extra = append(extra, k)
		}
	}
	slices.SortFunc(extra, assocKey.compare)
	keys = append(keys, extra...)
	for _, k := range keys {
		u := UserSeries{User: k.User, Account: k.Account, Partition: k.Partition, Series: d.seriesOf(k)}
		if k.Partition == "" {
			u.BillingHours = assocBilling[assocKey{Account: k.Account, User: k.User}]
		}
		r.Users = append(r.Users, u)
	}
	slices.SortStableFunc(r.Users, func(a, b UserSeries) int {
		if c := cmp.Compare(b.BillingHours, a.BillingHours); c != 0 {
			return c
		}
		return assocKey{a.Account, a.User, a.Partition}.compare(assocKey{b.Account, b.User, b.Partition})
	})
	r.Charted = min(len(r.Users), d.opts.maxUsers())
}

// partitions sets the lab's top partitions, from the jobs table, and
// returns the names of all it used, sorted.
func (d *Dataset) partitions(r *Report, inLab func(string) bool) []string {
	parts := map[string]*PartitionUsage{}
	var partNames []string
	for _, p := range d.rows.parts {
		if !inLab(p.Account) {
			continue
		}
		pu := parts[p.Partition]
		if pu == nil {
			pu = &PartitionUsage{Partition: p.Partition}
			parts[p.Partition] = pu
			partNames = append(partNames, p.Partition)
		}
		pu.Jobs += int64(p.Jobs)
		pu.BillingHours += p.BillingSec / 3600
		pu.CPUHours += p.CPUSec / 3600
		pu.GPUHours += p.GPUSec / 3600
		pu.MemGiBHours += p.MemMBSec / 1024 / 3600
	}
	slices.Sort(partNames)
	var partTotal float64
	for _, p := range partNames {
		partTotal += parts[p].BillingHours
	}
	for _, p := range partNames {
		pu := *parts[p]
		pu.Share = ratioOf(pu.BillingHours, partTotal)
		r.TopPartitions = append(r.TopPartitions, pu)
	}
	slices.SortStableFunc(r.TopPartitions, func(a, b PartitionUsage) int { return cmp.Compare(b.BillingHours, a.BillingHours) })
	r.TopPartitions = r.TopPartitions[:min(len(r.TopPartitions), d.opts.topN())]
	return partNames
}

// biggestJobs sets the lab's biggest jobs, from the jobs table.
func (d *Dataset) biggestJobs(r *Report, inLab func(string) bool) {
	for _, j := range d.rows.jobs {
		if inLab(j.Account) {
			r.BiggestJobs = append(r.BiggestJobs, j)
		}
	}
	slices.SortStableFunc(r.BiggestJobs, func(a, b JobUsage) int {
		if c := cmp.Compare(b.BillingHours, a.BillingHours); c != 0 {
			return c
		}
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.JobID, b.JobID)
	})
	r.BiggestJobs = r.BiggestJobs[:min(len(r.BiggestJobs), d.opts.topN())]
}

// settings sets the site settings that produced the history (the
// dataset's run record), with the weights of the partitions the lab used
// (partNames), and returns the half-life (0 when unknown) and the
// dampening factor (at least 1).
func (d *Dataset) settings(r *Report, partNames []string) (half int64, damp float64) {
	damp = 1.0
	if c := d.Config; c != nil {
		s := Settings{Known: true, Run: d.ConfigRun, RunStarted: d.ConfigStarted, HalfLifeSec: c.HalfLifeSec,
			CalcPeriodSec: c.CalcPeriodSec, ResetPeriod: c.UsageResetPeriod, Flags: c.PriorityFlags,
			Damp: c.DampeningFactor, LimitsEnforced: c.LimitsEnforced, TimeZone: c.TimeZone}
		weights := map[string]string{}
		for _, p := range c.Partitions {
			weights[p.Name] = p.TRESBillingWeights
		}
		for _, p := range partNames {
			s.Partitions = append(s.Partitions, Partition{Name: p, Weights: weights[p]})
		}
		r.Settings = s
		half = c.HalfLifeSec
		if c.DampeningFactor > 1 {
			damp = float64(c.DampeningFactor)
		}
	}
	return half, damp
}

// explain sets the explanation: the lab's fair-share factor where the
// history keeps none, and how it recovers.
func (d *Dataset) explain(r *Report, lab int32, half int64, damp float64) {
	t := d.tree
	if !r.fairTree() {
		// The history keeps no FairShare on account rows (sshare ≥ 25.11
		// prints it on users only): the lab's factor is Slurm's
		// 2^(−(UE/S)/damp) of its stored EffectvUsage and NormShares.
		r.Lab.FairShare = slices.Clone(r.Lab.FairShare)
		for i, f := range r.Lab.FairShare {
			if math.IsNaN(f) && !math.IsNaN(r.Lab.EffectvUsage[i]) && !math.IsNaN(r.Lab.NormShares[i]) {
				r.Lab.FairShare[i] = fairshare.Factor(r.Lab.EffectvUsage[i], r.Lab.NormShares[i], damp)
			}
		}
	}
	r.Recovery = t.recover(lab, half)
	if p, ok := t.account(r.Recovery.Limit); ok && r.Recovery.Limit != "" {
		if pp := t.t.Parent[p]; pp >= 0 {
			r.LimitParent = t.keys[pp].Account
		}
	}
	if !r.Settings.Known && r.Recovery.State != RecoveryWithin && r.Recovery.State != RecoveryNoShares {
		r.Recovery.State = RecoveryUnknown
	}
}

// seriesOf returns the series of an association (all NaN when it has no
// row in the period).
func (d *Dataset) seriesOf(k assocKey) Series {
	s := d.rows.series[k]
	if s == nil {
		s = newSeries(len(d.snapshots))
	}
	return Series(*s)
}

func ratioOf(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// fairTree reports whether the report's algorithm is Fair Tree.
func (r *Report) fairTree() bool {
	return r.Algorithm != fairshare.ClassicAlgo && r.Algorithm != fairshare.DepthObliviousAlgo
}

// effectiveHalfLifeDays is the time usage really takes to halve (d =
// 1 − 0.693/H is not exactly 2^(−1/H)).
func (r *Report) effectiveHalfLifeDays() float64 {
	return decay.EffectiveHalfLife(r.Settings.HalfLifeSec) / 86400
}

// periodLabel is the period as inclusive UTC dates, "2025-01-01 to
// 2025-03-31".
func (r *Report) periodLabel() string { return periodLabel(r.From, r.To) }
