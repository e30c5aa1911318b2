package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"time"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/fairshare/live"
	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/priority/queue"
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
// instant at.000, and with job priority the queue. A time not covered by
// a seed is an error wrapping ErrNoMoment.
func Moment(v *history.View, cluster string, at time.Time) (*MomentResult, error) {
	var out *MomentResult
	err := Moments(v, cluster, []time.Time{at}, func(r *MomentResult) error {
		out = r
		return nil
	})
	return out, err
}

// Moments calls fn with the moment of cluster at each of times (sorted,
// taken to the second; a second given twice is computed once), in order:
// the times that share a seed take one replay, so the moments of every
// tick of a day cost about what one does. It stops at the first error,
// fn's or a time not covered by a seed (wrapping ErrNoMoment).
func Moments(v *history.View, cluster string, times []time.Time, fn func(*MomentResult) error) error {
	secs := make([]int64, 0, len(times))
	for _, at := range times {
		t := at.Unix()
		if n := len(secs); n > 0 && t <= secs[n-1] {
			if t == secs[n-1] {
				continue
			}
			return fmt.Errorf("moments of cluster %s: %s is before %s: times must be sorted", cluster, fmtUnix(t), fmtUnix(secs[n-1]))
		}
		secs = append(secs, t)
	}
	models := map[string]*model{}
	seeds := seedTimes(v, cluster)
	for len(secs) > 0 {
		// The newest seed at or before the first time left.
		k, _ := slices.BinarySearch(seeds, secs[0]+1)
		if k == 0 {
			return fmt.Errorf("cluster %s at %s: %w", cluster, fmtUnix(secs[0]), ErrNoMoment)
		}
		name := history.MomentSeedName(seeds[k-1])
		b, err := v.ReadState(cluster, name)
		if err != nil {
			return err
		}
		d, err := decodeSeed(b)
		if err != nil {
			return fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
		}
		if secs[0] > d.Until {
			why := fmt.Sprintf("after %s, the --to of the run that wrote the newest seed before it", fmtUnix(d.To))
			if d.Until < d.To {
				why = fmt.Sprintf("after %s, where the newest seed before it ends: the seed that followed it is gone (verify --repair removes a damaged one)", fmtUnix(d.Until))
			}
			return fmt.Errorf("cluster %s at %s: %s: %w", cluster, fmtUnix(secs[0]), why, ErrNoMoment)
		}
		// The times this seed answers for: up to its end, and before the
		// next seed (which a later run may have written from other data).
		next := int64(math.MaxInt64)
		if k < len(seeds) {
			next = seeds[k]
		}
		n := 1
		for n < len(secs) && secs[n] <= d.Until && secs[n] < next {
			n++
		}
		m := models[d.Model]
		if m == nil {
			if m, err = seedModel(v, cluster, d); err != nil {
				return fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
			}
			models[d.Model] = m
		} else if err := m.checkSeed(d); err != nil {
			return fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
		}
		var st decay.State
		if err := st.UnmarshalBinary(d.State); err != nil {
			return fmt.Errorf("%s of cluster %s: %w", name, cluster, err)
		}
		sp := span{m: m, d: d, st: &st, snaps: secs[:n], to: secs[n-1], logged: true}
		if err := sp.replay(fn); err != nil {
			return fmt.Errorf("replay from %s of cluster %s: %w", name, cluster, err)
		}
		secs = secs[n:]
	}
	return nil
}

// span is one seed's replay: decay runs from st (the seed's state, or
// that of a replay before it) with the seed's jobs to the snapshots snaps
// (sorted, within the seed's span) and on to to (at or after the last
// snapshot), leaving st at the last tick at or before to. With logged,
// decay ticks when slurmctld's log said it did and orders the ends of a
// tick's second as the log did (the seed's Ticks, ends after the tick,
// ends charged twice, restarts); without, on the model's regular grid.
type span struct {
	m      *model
	d      *seedData
	st     *decay.State
	snaps  []int64
	to     int64
	logged bool
	// more are jobs decay charges beside the seed's (none of them running
	// at a snapshot): a replay on another tick grid carries them from the
	// seed before (whatIfCarry).
	more decay.Jobs
}

// replay runs the span and hands each snapshot's moment to fn.
func (sp span) replay(fn func(*MomentResult) error) error {
	m, d := sp.m, sp.d
	var ticks, restarts []int64
	var after map[int32]bool
	var twice map[int32]int64
	var inPass map[int32]bool
	if sp.logged {
		ticks, restarts, after, twice, inPass = d.Ticks, d.Restarts, d.after, d.extra.twice, d.extra.inPass
	}
	sched, err := decay.NewSchedule(sp.st.Tick, m.calcPeriod(), ticks)
	if err != nil {
		return err
	}
	fw := &fairshareWriter{m: m, lo: d.At, to: sp.to, dry: true, snaps: sp.snaps}
	fw.keep = func(at, tick int64, tree *fairshare.Tree, r *fairshare.Result, cells []string) error {
		res := &MomentResult{Time: time.Unix(at, 0).UTC(), Tick: time.Unix(tick, 0).UTC(), Seed: time.Unix(d.At, 0).UTC()}
		res.Rows = record.FairshareRows(res.Time, tree, r)
		for p, c := range cells {
			if c != "" {
				res.Rows[p].TRESRunMins = &cells[p]
			}
		}
		if fw.prio != nil {
			res.Priority = m.prio.AppendRecords([]record.PriorityRow{}, &fw.prio.Out)
			fw.prio.Out.Reset()
		}
		return fn(res)
	}
	if m.prio != nil && d.Prio != nil && len(sp.snaps) > 0 {
		jobs, err := d.Prio.Jobs(m.prio)
		if err != nil {
			return err
		}
		p := &queue.Writer{Model: m.prio, Jobs: jobs, Sched: sched, Lo: d.At, To: sp.snaps[len(sp.snaps)-1], PendingOnly: true,
			DumpAt: func(t int64) int { return m.treeAt(time.Unix(t, 0)) }}
		p.UseDump(m.treeAt(time.Unix(d.At, 0)))
		p.StartQueue(d.Prio.FirstEligible)
		fw.prio = p
	}
	if m.params.LimitsEnforced && len(sp.snaps) > 0 {
		s := &stream{m: m, jobs: d.jobs, extra: d.extra}
		since := int64(math.MaxInt64)
		if d.ResidueFrom != math.MaxInt64 {
			since = max(d.ResidueFrom, d.At+1)
		}
		fw.run = newTRESRun(m, s, d.dict, d.At, sp.snaps, sched, after, restarts, since, tresCarry{d.Residue, d.Debt})
		fw.live = live.NewEnds(d.jobs, sp.snaps, sched, m.calcPeriod(), m.params.HalfLifeSec, live.EndCharges{Sec: twice, InPass: inPass})
	}
	jobs := d.jobs
	if sp.more.Len() > 0 {
		jobs = decay.Jobs{Start: slices.Concat(jobs.Start, sp.more.Start), End: slices.Concat(jobs.End, sp.more.End),
			Rate: slices.Concat(jobs.Rate, sp.more.Rate), Assoc: slices.Concat(jobs.Assoc, sp.more.Assoc)}
	}
	_, err = decay.Advance(m.params, sp.st, decay.Window{
		Parent: m.flatParents(), Jobs: jobs, To: sp.to, Snapshots: sp.snaps, Ticks: ticks, EndsAfterTick: after, EndCharge: twice, EndChargeInPass: inPass, Reloads: restarts,
		OnSnapshot: fw.snapshot,
	})
	if err != nil {
		return fmt.Errorf("decay: %w", err)
	}
	if fw.snapshots != len(sp.snaps) {
		return fmt.Errorf("%d snapshots taken of %d", fw.snapshots, len(sp.snaps))
	}
	return nil
}

// seedTimes are the times of cluster's seeds in v, sorted.
func seedTimes(v *history.View, cluster string) []int64 {
	var out []int64
	for _, p := range v.Files(history.TableState, cluster) {
		if at, ok := history.MomentSeedTime(path.Base(p.Path)); ok {
			out = append(out, at)
		}
	}
	slices.Sort(out)
	return out
}

// seedModel rebuilds the model of the run that wrote the seed d, from the
// configuration it stored: the same universe (checked), tick grid and
// TRES.
func seedModel(v *history.View, cluster string, d *seedData) (*model, error) {
	in, err := readModelInputs(v, cluster, d.Model)
	if err != nil {
		return nil, err
	}
	m, err := in.model()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Model, err)
	}
	return m, m.checkSeed(d)
}

// readModelInputs reads the configuration file name of cluster's state.
func readModelInputs(v *history.View, cluster, name string) (*modelInputs, error) {
	z, err := v.ReadState(cluster, name)
	if err != nil {
		return nil, err
	}
	b, err := decompress(z)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var in modelInputs
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if in.Version != modelVersion {
		return nil, fmt.Errorf("%s: version %d, want %d", name, in.Version, modelVersion)
	}
	return &in, nil
}

// model builds the model the configuration gives.
func (in *modelInputs) model() (*model, error) {
	loc, err := time.LoadLocation(in.Zone)
	if err != nil {
		return nil, fmt.Errorf("zone: %w", err)
	}
	ver, err := release.Parse(in.SlurmVersion)
	if err != nil {
		return nil, err
	}
	return newModel(Inputs{Conf: in.Conf, Assoc: in.Assoc, QOS: in.QOS},
		Options{Cluster: in.Cluster, Location: loc, SlurmVersion: ver, Priority: in.Priority})
}

// checkSeed checks that the seed d was computed on m's universe and sets
// m's tick grid to the seed's.
func (m *model) checkSeed(d *seedData) error {
	if keysSum(m.keys) != d.Keys {
		return fmt.Errorf("%s: its associations are not those the seed's usage is indexed by", d.Model)
	}
	m.params.OriginUnix = d.Origin
	return nil
}
