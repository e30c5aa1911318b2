package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"time"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/ingest"
)

// ErrNoMoment is returned (wrapped) by Moment when the history holds no
// seed that covers the time asked: it is before the cluster's first run,
// after its last run's --to, or in a part written before fairledger kept
// seeds.
var ErrNoMoment = errors.New("no moment seed covers the time")

// MomentResult is a cluster's fair share at one instant, replayed from the
// history (Moment).
type MomentResult struct {
	// Time is the instant (a whole second: Time.000).
	Time time.Time
	// Tick is the decay tick its fair-share values are of: the last at or
	// before Time.
	Tick time.Time
	// Seed is when the replay started: the start of a run's window or one
	// of its stored snapshots.
	Seed time.Time
	// Rows are the fairshare rows a run with a snapshot at Time would have
	// stored, TRESRunMins included.
	Rows []record.FairshareRow
	// Priority are, where the run computed job priority, the rows of the
	// jobs waiting at Time (event pending), as a run with a snapshot then
	// would have stored them; nil without job priority.
	Priority []record.PriorityRow
}

// Moment computes the fair share of cluster at the instant at from the
// history v alone (docs/moments.md): from the newest moment seed at or
// before at, decay runs on to the last tick at or before at, and the
// snapshot at at is taken as a run takes its snapshots: RawUsage with the
// ends since the tick (limits), TRESRunMins of the jobs running at the
// instant at.000. A time not covered by a seed is an error wrapping
// ErrNoMoment.
func Moment(v *history.View, cluster string, at time.Time) (*MomentResult, error) {
	t := at.Unix()
	name, ok := seedAtOrBefore(v, cluster, t)
	if !ok {
		return nil, fmt.Errorf("cluster %s at %s: %w", cluster, fmtUnix(t), ErrNoMoment)
	}
	b, err := v.ReadState(cluster, name)
	if err != nil {
		return nil, err
	}
	d, err := decodeSeed(b)
	if err != nil {
		return nil, fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
	}
	if t > d.To {
		return nil, fmt.Errorf("cluster %s at %s: after %s, the --to of the run that wrote the newest seed before it: %w",
			cluster, fmtUnix(t), fmtUnix(d.To), ErrNoMoment)
	}
	m, err := seedModel(v, cluster, d)
	if err != nil {
		return nil, fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
	}
	var st decay.State
	if err := st.UnmarshalBinary(d.State); err != nil {
		return nil, fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
	}
	sched, err := decay.NewSchedule(st.Tick, m.calcPeriod(), d.Ticks)
	if err != nil {
		return nil, fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
	}
	snaps := []int64{t}
	res := &MomentResult{Time: time.Unix(t, 0).UTC(), Seed: time.Unix(d.At, 0).UTC()}
	fw := &fairshareWriter{m: m, lo: d.At, to: t, dry: true, snaps: snaps}
	fw.keep = func(at, tick int64, tree *fairshare.Tree, r *fairshare.Result, cells []string) error {
		res.Tick = time.Unix(tick, 0).UTC()
		res.Rows = record.FairshareRows(res.Time, tree, r)
		for p, c := range cells {
			if c != "" {
				res.Rows[p].TRESRunMins = &cells[p]
			}
		}
		if fw.prio != nil {
			res.Priority = m.prio.appendRecords([]record.PriorityRow{}, &fw.prio.out)
		}
		return nil
	}
	if m.prio != nil && d.Prio != nil {
		jobs, err := d.Prio.prioJobs(m.prio)
		if err != nil {
			return nil, fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
		}
		p := &prioWriter{m: m.prio, jobs: jobs, sched: sched, lo: d.At, to: t, pendingOnly: true,
			dumpAt: func(t int64) int { return m.treeAt(time.Unix(t, 0)) }}
		p.useDump(m.treeAt(time.Unix(d.At, 0)))
		p.queue = newQueue(jobs)
		p.queue.m = m.prio
		maps.Copy(p.queue.firstEligible, d.Prio.FirstEligible)
		fw.prio = p
	}
	if m.params.LimitsEnforced {
		s := &stream{m: m, jobs: d.jobs, extra: d.extra}
		since := int64(math.MaxInt64)
		if d.ResidueFrom != math.MaxInt64 {
			since = max(d.ResidueFrom, d.At+1)
		}
		fw.run = newTRESRun(m, s, d.dict, d.At, snaps, sched, d.after, d.Restarts, since, d.Residue)
		fw.live = newLiveEnds(d.jobs, snaps, sched, m.calcPeriod(), m.params.HalfLifeSec)
	}
	parents := make([]int32, len(m.keys))
	for i := range parents {
		parents[i] = -1
	}
	if _, err := decay.Advance(m.params, &st, decay.Window{
		Parent: parents, Jobs: d.jobs, To: t, Snapshots: snaps, Ticks: d.Ticks, EndsAfterTick: d.after,
		OnSnapshot: fw.snapshot,
	}); err != nil {
		return nil, fmt.Errorf("replay from %s of cluster %s: decay: %w", name, cluster, err)
	}
	if res.Rows == nil {
		return nil, fmt.Errorf("replay from %s of cluster %s: no snapshot at %s", name, cluster, fmtUnix(t))
	}
	return res, nil
}

// seedAtOrBefore is the name of cluster's newest seed at or before t.
func seedAtOrBefore(v *history.View, cluster string, t int64) (string, bool) {
	best, name := int64(math.MinInt64), ""
	for _, p := range v.Files(history.TableState, cluster) {
		n := path.Base(p.Path)
		if at, ok := history.MomentSeedTime(n); ok && at <= t && at > best {
			best, name = at, n
		}
	}
	return name, name != ""
}

// seedModel rebuilds the model of the run that wrote the seed d, from the
// configuration it stored: the same universe (checked), tick grid and
// TRES.
func seedModel(v *history.View, cluster string, d *seedData) (*model, error) {
	z, err := v.ReadState(cluster, d.Model)
	if err != nil {
		return nil, err
	}
	b, err := decompress(z)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Model, err)
	}
	var in modelInputs
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", d.Model, err)
	}
	if in.Version != modelVersion {
		return nil, fmt.Errorf("%s: version %d, want %d", d.Model, in.Version, modelVersion)
	}
	loc, err := time.LoadLocation(in.Zone)
	if err != nil {
		return nil, fmt.Errorf("%s: zone: %w", d.Model, err)
	}
	ver, err := ingest.ParseSlurmVersion(in.SlurmVersion)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Model, err)
	}
	m, err := newModel(Inputs{Conf: in.Conf, Assoc: in.Assoc, QOS: in.QOS},
		Options{Cluster: in.Cluster, Location: loc, SlurmVersion: ver, Priority: in.Priority})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Model, err)
	}
	if sum := keysSum(m.keys); sum != d.Keys {
		return nil, fmt.Errorf("%s: its associations are not those the seed's usage is indexed by", d.Model)
	}
	m.params.OriginUnix = d.Origin
	return m, nil
}
