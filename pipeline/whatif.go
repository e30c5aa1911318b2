package pipeline

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/schemas"
)

// A what-if replays a cluster's fair share from its history under other
// settings (docs/whatif.md). It needs no sacct file: the moment seeds a
// run leaves (moment.go) hold every decay job of their span, the ticks
// slurmctld's log gave and the configuration the run used. The replay
// chains them: decay starts from the history's first seed and runs each
// seed's jobs on to the next seed, under the changed model, and the
// snapshot of every stored snapshot time is taken as the run took it.
// With no change it gives the stored snapshots bit for bit.

// WhatIfShares sets the raw shares of one association in every
// association tree of the replay.
type WhatIfShares struct {
	// Account, User and Partition name the association (User empty for an
	// account's own row).
	Account, User, Partition string
	// Shares are the raw shares; with Parent, FairShare=parent.
	Shares int64
	Parent bool
}

func (s WhatIfShares) String() string {
	name := s.Account
	if s.User != "" {
		name += "/" + s.User
	}
	if s.Partition != "" {
		name += "/" + s.Partition
	}
	if s.Parent {
		return name + "=parent"
	}
	return fmt.Sprintf("%s=%d", name, s.Shares)
}

// WhatIfChange is what a replay changes; the zero value changes nothing.
type WhatIfChange struct {
	// Conf are slurm.conf lines (Key=Value, top-level keys only) applied
	// on top of the slurm.conf of every run of the history
	// (ingest.Config.With); ConfName names them in errors.
	Conf     []string
	ConfName string
	// Assoc, when set, replace the history's association dumps: their
	// trees (with their dates) are in force instead of the recorded ones.
	Assoc []ingest.DatedAssociations
	// Shares are applied to every association tree of the replay, after
	// Assoc.
	Shares []WhatIfShares
	// QOS, when set, replaces the history's QOS dumps; UsageFactors then
	// set the UsageFactor of QOS by name in every one. A changed billing
	// or UsageFactor bills the jobs again from the jobs table.
	QOS          *ingest.QOSTable
	UsageFactors []WhatIfUsageFactor
}

// WhatIfUsageFactor sets the UsageFactor of a QOS.
type WhatIfUsageFactor struct {
	QOS    string
	Factor float64
}

// whatIfKeys are the slurm.conf keys a replay can change: those of decay,
// of the fair-share algorithm and of billing (a partition's
// TRESBillingWeights through a PartitionName line). The others are not
// replayed yet (job priority's weights), decide what a run charged at a
// job's end (AccountingStorageEnforce) or name another cluster.
var whatIfKeys = map[string]bool{
	"prioritydecayhalflife": true, "prioritycalcperiod": true, "priorityusageresetperiod": true,
	"priorityflags": true, "fairsharedampeningfactor": true, "partitionname": true, "accountingstoragetres": true,
}

// whatIfPriorityKeys are the keys of job priority alone, which a replay
// changes where the history has job priority (run --priority).
var whatIfPriorityKeys = map[string]bool{
	"priorityweightage": true, "priorityweightassoc": true, "priorityweightfairshare": true, "priorityweightjobsize": true,
	"priorityweightpartition": true, "priorityweightqos": true, "priorityweighttres": true, "prioritymaxage": true,
	"priorityfavorsmall": true,
}

// WhatIfOptions are what WhatIf replays.
type WhatIfOptions struct {
	// Cluster is the history's cluster.
	Cluster string
	// From and To bound the snapshots compared (zero: every one). The
	// replay starts at the history's first seed whatever From is: usage
	// decays over the whole history, so a changed setting changes what
	// it holds at From.
	From, To time.Time
	// Change is what the replay changes.
	Change WhatIfChange
}

// WhatIfSnapshot is one stored snapshot, as recorded and as replayed. The
// rows come in tree order (parents before children), Recorded as the
// history stores them (in no particular order).
type WhatIfSnapshot struct {
	Time     time.Time
	Recorded []record.FairshareRow
	Replayed []record.FairshareRow
	// RecordedQueue and ReplayedQueue are, where the history has job
	// priority, the jobs waiting at the snapshot (priority rows of event
	// pending) as recorded and as replayed; nil without.
	RecordedQueue, ReplayedQueue []record.PriorityRow
}

// WhatIfSummary tells what a replay did.
type WhatIfSummary struct {
	// Seeds is the number of seeds replayed, Snapshots that of snapshots
	// handed on.
	Seeds, Snapshots int
	// First is the history's first seed (the replay's start), Last the
	// last snapshot handed on.
	First, Last time.Time
	// Recorded and Replayed are the settings of the last model replayed,
	// as recorded and as changed.
	Recorded, Replayed record.RunConfig
	// Regular is set when the replay ticked on the regular grid instead
	// of the ticks of slurmctld's log (a changed PriorityCalcPeriod: the
	// controller would have ticked on the new period).
	Regular bool
	// Folded counts the associations of the recorded trees that the
	// changed ones lack: their jobs' usage goes to their account (or to
	// root without it), as a run resuming a checkpoint credits it.
	Folded []string
	// Rebilled is set when the change bills the jobs otherwise: their
	// rates come from the jobs table billed again (whatif_rates.go).
	// Unbilled counts the seeds' jobs the jobs table has no row for (they
	// keep their recorded rate), Ambiguous those that several rows with
	// different new rates matched equally (jobs alike in all a seed
	// holds: a seed's such jobs take the rows in turn).
	Rebilled            bool
	Unbilled, Ambiguous int64
	// StartUsage is set when the first seed holds usage from before it
	// (the history was begun from a checkpoint of an older one): it is
	// carried into the replay as recorded.
	StartUsage bool
}

// whatIfModel is the recorded model of a run and the changed one.
type whatIfModel struct {
	rec, alt *model
	remap    []int32 // rec's association index → alt's; nil when the same
	rebill   bool    // alt bills the jobs otherwise than rec
}

// WhatIf replays the fair share of opt.Cluster from the history v under
// opt.Change and hands each stored snapshot in [From, To], recorded and
// replayed, to fn in time order. See the comment at the top of whatif.go.
func WhatIf(v *history.View, opt WhatIfOptions, fn func(*WhatIfSnapshot) error) (*WhatIfSummary, error) {
	cluster := opt.Cluster
	seeds := seedTimes(v, cluster)
	if len(seeds) == 0 {
		return nil, fmt.Errorf("what-if of cluster %s: %w: the history holds no moment seed of it (written before fairledger kept them, or no run of it)", cluster, ErrNoMoment)
	}
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if !opt.From.IsZero() {
		from = opt.From.Unix()
	}
	if !opt.To.IsZero() {
		to = opt.To.Unix()
	}
	sum := &WhatIfSummary{First: time.Unix(seeds[0], 0).UTC()}
	rec, err := newRecorded(v, cluster, opt.From)
	if err != nil {
		return nil, err
	}
	defer rec.close()
	queue := &recordedQueue{v: v, cluster: cluster}
	models := map[string]*whatIfModel{}
	folded := map[string]bool{}
	var st *decay.State
	var stKeys []fairshare.Key
	var prev *seedData
	var rb *rebill
	for k, at := range seeds {
		if at >= to {
			break
		}
		name := history.MomentSeedName(at)
		b, err := v.ReadState(cluster, name)
		if err != nil {
			return nil, err
		}
		d, err := decodeSeed(b)
		if err != nil {
			return nil, fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
		}
		end := d.Until
		if k+1 < len(seeds) {
			if d.Until < seeds[k+1] {
				return nil, fmt.Errorf("what-if of cluster %s: %s ends at %s, before the next seed (%s): the seed between them is gone (verify --repair removes a damaged one), so the replay cannot go on",
					cluster, name, fmtUnix(d.Until), fmtUnix(seeds[k+1]))
			}
			end = seeds[k+1]
		}
		wm := models[d.Model]
		if wm == nil {
			if wm, err = whatIfModels(v, cluster, d, opt.Change, folded); err != nil {
				return nil, fmt.Errorf("%w (on the configuration of the run that wrote %s of cluster %s)", err, name, cluster)
			}
			models[d.Model] = wm
		} else if err := wm.rec.checkSeed(d); err != nil {
			return nil, fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
		}
		alt := wm.alt
		regular := alt.calcPeriod() != wm.rec.calcPeriod()
		if regular {
			sum.Regular = true
			if st == nil {
				alt.params.OriginUnix = decay.TickPhase(d.Origin, alt.calcPeriod())
			} else {
				alt.params.OriginUnix = st.OriginUnix
			}
		} else {
			alt.params.OriginUnix = d.Origin
		}
		if st == nil {
			if st, err = whatIfStart(d, wm, regular); err != nil {
				return nil, fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
			}
			sum.StartUsage = slices.ContainsFunc(st.Usage, func(u float64) bool { return u != 0 })
		} else {
			if !slices.Equal(stKeys, alt.keys) {
				st.Usage = remapUsage(st.Usage, stKeys, len(alt.keys), alt.uni.Index)
			}
			// A run resuming a checkpoint takes its model's grid phase
			// (resume), which slurmctld's log may have moved.
			st.OriginUnix = alt.params.OriginUnix
		}
		stKeys = alt.keys
		if wm.rebill {
			if rb == nil {
				rb = &rebill{v: v, cluster: cluster}
			}
			if err := rb.apply(d, wm.rec.keys, alt); err != nil {
				return nil, err
			}
			sum.Rebilled = true
		}
		if wm.remap != nil {
			assoc := make([]int32, len(d.jobs.Assoc))
			for i, a := range d.jobs.Assoc {
				assoc[i] = wm.remap[a]
			}
			d.jobs.Assoc = assoc
		}
		stored, err := rec.within(d.At, min(end, to))
		if err != nil {
			return nil, err
		}
		snaps := make([]int64, 0, len(stored))
		for _, s := range stored {
			if s.at >= from {
				snaps = append(snaps, s.at)
			}
		}
		sp := span{m: alt, d: d, st: st, snaps: snaps, to: end, logged: !regular}
		if regular && prev != nil {
			sp.more = whatIfCarry(prev, d, st.Tick, d.At)
		}
		prev = d
		i := len(stored) - len(snaps)
		err = sp.replay(func(r *MomentResult) error {
			sum.Snapshots++
			sum.Last = r.Time
			s := stored[i]
			i++
			out := &WhatIfSnapshot{Time: r.Time, Recorded: s.rows, Replayed: r.Rows}
			if r.Priority != nil {
				if out.RecordedQueue, err = queue.at(r.Time); err != nil {
					return err
				}
				out.ReplayedQueue = r.Priority
			}
			return fn(out)
		})
		if err != nil {
			return nil, fmt.Errorf("replay from %s of cluster %s: %w", name, cluster, err)
		}
		sum.Seeds++
		sum.Recorded, sum.Replayed = wm.rec.cfg, alt.cfg
	}
	if rb != nil {
		sum.Unbilled, sum.Ambiguous = rb.Unmatched, rb.Ambiguous
	}
	sum.Folded = slices.Sorted(func(yield func(string) bool) {
		for k := range folded {
			if !yield(k) {
				return
			}
		}
	})
	return sum, nil
}

// whatIfCarry returns the jobs of the seed prev that a replay on another
// tick grid than the run's still charges after the state's tick: a seed
// holds the jobs that count after the run's last tick before it, so a job
// that ended between the replay's last tick and the run's is in prev and
// not in d (with limits its end's tail is charged at the next tick; a job
// of the kind in both seeds is d's). Running jobs are in d.
func whatIfCarry(prev, d *seedData, tick, at int64) decay.Jobs {
	type job struct {
		start, end int64
		rate       float64
		assoc      int32
	}
	in := map[job]int{}
	for i, e := range d.jobs.End {
		if e != decay.Running && e > tick && e <= at {
			in[job{d.jobs.Start[i], e, d.jobs.Rate[i], d.jobs.Assoc[i]}]++
		}
	}
	var out decay.Jobs
	for i, e := range prev.jobs.End {
		if e == decay.Running || e <= tick || e > at {
			continue
		}
		j := job{prev.jobs.Start[i], e, prev.jobs.Rate[i], prev.jobs.Assoc[i]}
		if in[j] > 0 {
			in[j]--
			continue
		}
		out.Start = append(out.Start, j.start)
		out.End = append(out.End, j.end)
		out.Rate = append(out.Rate, j.rate)
		out.Assoc = append(out.Assoc, j.assoc)
	}
	return out
}

// recorded reads the stored snapshots in time order for the spans of a
// replay.
type recorded struct {
	it   *history.SnapshotIter
	next *timedSnapshot // read ahead; nil when none is
	done bool
}

type timedSnapshot struct {
	at   int64
	rows []record.FairshareRow
}

func newRecorded(v *history.View, cluster string, from time.Time) (*recorded, error) {
	it, err := v.FairshareSnapshots(cluster, from)
	if err != nil {
		return nil, err
	}
	return &recorded{it: it}, nil
}

// within returns the stored snapshots in (lo, hi], skipping those at or
// before lo.
func (r *recorded) within(lo, hi int64) ([]timedSnapshot, error) {
	var out []timedSnapshot
	for {
		if r.next == nil && !r.done {
			at, rows, err := r.it.Next()
			if err == io.EOF {
				r.done = true
			} else if err != nil {
				return nil, err
			} else {
				r.next = &timedSnapshot{at.Unix(), rows}
			}
		}
		if r.next == nil || r.next.at > hi {
			return out, nil
		}
		if r.next.at > lo {
			out = append(out, *r.next)
		}
		r.next = nil
	}
}

func (r *recorded) close() { r.it.Close() }

// recordedQueue reads the stored waiting jobs of a snapshot, a month of
// the priority table at a time.
type recordedQueue struct {
	v       *history.View
	cluster string
	month   time.Time
	bySnap  map[int64][]record.PriorityRow
}

// at returns the pending rows of the snapshot at (none when no job
// waited then).
func (q *recordedQueue) at(at time.Time) ([]record.PriorityRow, error) {
	if mon := schemas.MonthStart(at); q.bySnap == nil || !mon.Equal(q.month) {
		var rows []record.PriorityRow
		if err := q.v.ReadPartition(schemas.TablePriority, q.cluster, mon, &rows); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("the priority rows of %s: %w", monthKey(mon), err)
		}
		q.month, q.bySnap = mon, map[int64][]record.PriorityRow{}
		for _, r := range rows {
			if r.Event == record.EventPending && r.Snapshot != nil {
				q.bySnap[r.Snapshot.Unix()] = append(q.bySnap[r.Snapshot.Unix()], r)
			}
		}
	}
	return q.bySnap[at.Unix()], nil
}

// whatIfModels builds the recorded model of the seed d's run and the
// changed one, and maps the first's associations onto the second's,
// adding the names of those the changed trees lack to folded.
func whatIfModels(v *history.View, cluster string, d *seedData, c WhatIfChange, folded map[string]bool) (*whatIfModel, error) {
	in, err := readModelInputs(v, cluster, d.Model)
	if err != nil {
		return nil, err
	}
	rec, err := in.model()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Model, err)
	}
	if err := rec.checkSeed(d); err != nil {
		return nil, err
	}
	alt := *in
	if len(c.Conf) > 0 {
		for _, line := range c.Conf {
			if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			k, _, _ := strings.Cut(line, "=")
			k = strings.ToLower(strings.TrimSpace(k))
			switch {
			case whatIfPriorityKeys[k] && !in.Priority:
				return nil, fmt.Errorf("%s: %s: the history was computed without job priority (run --priority), so a replay has no queue to rank", c.ConfName, strings.TrimSpace(line))
			case !whatIfKeys[k] && !whatIfPriorityKeys[k]:
				return nil, fmt.Errorf("%s: %s: a replay can change only %s; %s", c.ConfName, strings.TrimSpace(line), whatIfKeyList(), whyNotKey(k))
			}
		}
		if alt.Conf, err = in.Conf.With(c.ConfName, c.Conf); err != nil {
			return nil, err
		}
	}
	if c.Assoc != nil {
		alt.Assoc = c.Assoc
	}
	if len(c.Shares) > 0 {
		if alt.Assoc, err = withShares(alt.Assoc, c.Shares); err != nil {
			return nil, err
		}
	}
	if c.QOS != nil {
		alt.QOS = c.QOS
	}
	if len(c.UsageFactors) > 0 {
		if alt.QOS, err = withUsageFactors(alt.QOS, c.UsageFactors); err != nil {
			return nil, err
		}
	}
	m, err := alt.model()
	if err != nil {
		return nil, fmt.Errorf("the changed configuration: %w", err)
	}
	wm := &whatIfModel{rec: rec, alt: m, rebill: m.billingSignature() != rec.billingSignature()}
	if !slices.Equal(rec.keys, m.keys) {
		wm.remap = make([]int32, len(rec.keys))
		for i, k := range rec.keys {
			j, exact := foldAssoc(m.uni.Index, k)
			if !exact {
				folded[keyName(k)] = true
			}
			wm.remap[i] = j
		}
	}
	return wm, nil
}

// whatIfStart is the replay's decay state at the history's first seed d:
// the seed's, its usage mapped onto the changed model's associations; on
// another tick grid, a new state at the seed's time holding that usage.
func whatIfStart(d *seedData, wm *whatIfModel, regular bool) (*decay.State, error) {
	var rec decay.State
	if err := rec.UnmarshalBinary(d.State); err != nil {
		return nil, err
	}
	usage := rec.Usage
	if wm.remap != nil {
		usage = remapUsage(rec.Usage, wm.rec.keys, len(wm.alt.keys), wm.alt.uni.Index)
	}
	if !regular {
		st := rec.Clone()
		st.Usage = usage
		return st, nil
	}
	st, err := decay.NewState(wm.alt.params, len(wm.alt.keys), d.At)
	if err != nil {
		return nil, err
	}
	st.Usage = usage
	return st, nil
}

// remapUsage is each association's own usage (indexed by keys) on the n
// associations index gives, an association it lacks folded (foldAssoc).
func remapUsage(usage []float64, keys []fairshare.Key, n int, index func(fairshare.Key) (int32, bool)) []float64 {
	out := make([]float64, n)
	for i, k := range keys {
		j, _ := foldAssoc(index, k)
		out[j] += usage[i]
	}
	return out
}

// withShares returns copies of the dumps with the shares set. An
// association no dump holds is an error.
func withShares(dumps []ingest.DatedAssociations, set []WhatIfShares) ([]ingest.DatedAssociations, error) {
	out := make([]ingest.DatedAssociations, len(dumps))
	found := make([]bool, len(set))
	for i, d := range dumps {
		a := *d.Assoc
		a.Rows = slices.Clone(d.Assoc.Rows)
		for r := range a.Rows {
			row := &a.Rows[r]
			for s, x := range set {
				if row.Account == x.Account && row.User == x.User && row.Partition == x.Partition {
					row.Shares, row.SharesParent, found[s] = x.Shares, x.Parent, true
				}
			}
		}
		out[i] = ingest.DatedAssociations{Effective: d.Effective, Assoc: &a}
	}
	var errs []error
	for s, ok := range found {
		if !ok {
			errs = append(errs, fmt.Errorf("shares %s: no association of the history's trees is %s", set[s], set[s].assocName()))
		}
	}
	return out, errors.Join(errs...)
}

// withUsageFactors returns a copy of the QOS table with the factors set.
// A QOS the table lacks is an error.
func withUsageFactors(t *ingest.QOSTable, set []WhatIfUsageFactor) (*ingest.QOSTable, error) {
	var errs []error
	if t == nil {
		return nil, fmt.Errorf("usage factor %s: the history's runs had no QOS dump (every factor is 1); give one with the changed factors", set[0].QOS)
	}
	out := *t
	out.Rows = slices.Clone(t.Rows)
	for _, x := range set {
		found := false
		for i := range out.Rows {
			if strings.EqualFold(out.Rows[i].Name, x.QOS) {
				out.Rows[i].UsageFactor, found = x.Factor, true
			}
		}
		if !found {
			errs = append(errs, fmt.Errorf("usage factor %s=%g: the history's QOS dump has no QOS %s", x.QOS, x.Factor, x.QOS))
		}
	}
	return &out, errors.Join(errs...)
}

func (s WhatIfShares) assocName() string {
	return keyName(fairshare.Key{Account: s.Account, User: s.User, Partition: s.Partition})
}

// keyName names an association as sshare lists it: the account, the
// user of it, the partition.
func keyName(k fairshare.Key) string {
	switch {
	case k.User == "":
		return "account " + k.Account
	case k.Partition == "":
		return fmt.Sprintf("user %s of account %s", k.User, k.Account)
	}
	return fmt.Sprintf("user %s of account %s in partition %s", k.User, k.Account, k.Partition)
}

func whatIfKeyList() string {
	return "PriorityDecayHalfLife, PriorityCalcPeriod, PriorityUsageResetPeriod, PriorityFlags, FairShareDampeningFactor, AccountingStorageTRES, a partition's TRESBillingWeights and, with job priority, PriorityWeight*, PriorityMaxAge and PriorityFavorSmall"
}

// whyNotKey says why a slurm.conf key is not one a replay changes.
func whyNotKey(k string) string {
	switch {
	case k == "tresbillingweights":
		return "TRESBillingWeights is a partition's: write PartitionName=NAME TRESBillingWeights=… (NAME DEFAULT for every partition)"
	case k == "accountingstorageenforce":
		return "limits decide which job ends a run charged, which the seeds hold as the run found them"
	case k == "clustername":
		return "it names another cluster"
	}
	return "it does not change fair share"
}
