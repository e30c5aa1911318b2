package pipeline

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare/live"
	"github.com/fairledger/fairledger/internal/spill"
	"github.com/fairledger/fairledger/priority/queue"
)

// Run executes one night for one cluster: see the package documentation.
func Run(ctx context.Context, in Inputs, opt Options) (*Summary, error) {
	r, err := startRun(in, opt)
	if err != nil {
		return nil, err
	}
	defer r.cleanup()
	if err := r.openBase(); err != nil {
		return nil, err
	}
	if err := r.readCheckpoints(); err != nil {
		return nil, err
	}
	if err := r.readInputs(ctx); err != nil {
		return nil, err
	}
	if err := r.setWindow(); err != nil {
		return nil, err
	}
	carriedMonths := r.st.settle(r.resumed(), r.lo, r.to, r.sum, r.log)
	ticks, after, err := r.decayTicks()
	if err != nil {
		return nil, err
	}
	fw, err := r.newFairshareWriter(ticks, after)
	if err != nil {
		return nil, err
	}
	tc, err := r.decayAndJobs(ctx, fw, ticks, after, carriedMonths)
	if err != nil {
		return nil, err
	}
	if r.opt.DryRun {
		r.sum.AfterTo = r.st.afterToCount(r.to)
		r.sum.Finished = r.opt.Now()
		if err := r.beforeCommit(); err != nil {
			return nil, err
		}
		return r.sum, nil
	}
	r.warnUnrecharged()
	if err := r.commit(ctx, tc); err != nil {
		return nil, err
	}
	return r.sum, nil
}

// runState is what Run's phases hand each other, set phase by phase.
type runState struct {
	in  Inputs
	opt Options // with Run's defaults
	sum *Summary
	m   *model

	// From openBase: the history, locked, and its committed generation.
	h         *history.Store
	tx        *history.Txn // nil in a dry run
	base      *history.Manifest
	readState func(history.Partition) ([]byte, error)
	// From readCheckpoints: the cluster's checkpoints, oldest first.
	cps []*storedCheckpoint
	// From readInputs.
	sp   *spill.Jobs // nil in a dry run: the jobs tables are not built
	dict *record.JobDict
	st   *stream
	read time.Time // when reading ended

	// From setWindow: the window (lo, to] and the decay state at lo.
	lo, to int64
	origin int64             // where the history's charging of the cluster started (checkpoint.Origin)
	ck     *storedCheckpoint // the checkpoint resumed; nil for a fresh start
	state  *decay.State
	log    zerolog.Logger // opt.Log with the cluster

	// From newFairshareWriter: when the run begins counting the residues
	// of ended jobs (math.MaxInt64: none, without a log), and when the
	// chain of runs began counting them.
	residueFrom, residueChain int64

	// undo are the deferred cleanups of the phases, in the order they
	// were deferred: cleanup runs them in reverse, as Run's defers.
	undo []func()
}

// startRun sets Run's defaults, derives the model from the configuration
// and reads the slurmctld logs.
func startRun(in Inputs, opt Options) (*runState, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Location == nil {
		opt.Location = time.UTC
	}
	if opt.KeepCheckpoints <= 0 {
		opt.KeepCheckpoints = DefaultKeepCheckpoints
	}
	if err := CheckSnapshotEvery(opt.SnapshotEvery); err != nil {
		return nil, err // before hours of reading
	}
	if s, e := opt.SacctStart, opt.SacctEnd; !s.IsZero() && !e.IsZero() && e.Before(s) {
		return nil, fmt.Errorf("coverage: --sacct-end %s is before --sacct-start %s", fmtUnix(e.Unix()), fmtUnix(s.Unix()))
	}
	sum := &Summary{Started: opt.Now(), DryRun: opt.DryRun}
	m, err := newModel(in, opt)
	if err != nil {
		return nil, err
	}
	sum.Cluster = m.cluster
	if len(in.SlurmctldLogs) > 0 {
		if m.ctld, err = readCtldLog(in.SlurmctldLogs, opt.Location); err != nil {
			return nil, err
		}
		l := m.ctld
		if m.prio != nil {
			l.addToPrio(m.prio)
		}
		ev := opt.Log.Info().Int("ticks", len(l.ticks)).Time("first_tick", time.Unix(l.ticks[0], 0).UTC()).
			Time("last_tick", time.Unix(l.ticks[len(l.ticks)-1], 0).UTC()).Int("job_ends", l.jobEnds).
			Int("job_ends_after_tick", len(l.after)).Int("holds", len(l.holds)).Int64("lines", l.lines)
		ev.Msg("slurmctld log")
		if !l.ordered {
			opt.Log.Warn().Msg("slurmctld log without milliseconds: a job end in a tick's second is taken as before the tick")
		}
	}
	return &runState{in: in, opt: opt, sum: sum, m: m}, nil
}

// deferCleanup has cleanup call f, as a defer in Run would.
func (r *runState) deferCleanup(f func()) { r.undo = append(r.undo, f) }

// cleanup runs the deferred cleanups, the last deferred first.
func (r *runState) cleanup() {
	for _, f := range r.undo {
		defer f()
	}
}

// openBase opens and locks the history and its base. Everything a run
// writes goes into one commit on top of the committed generation (its
// base); a dry run reads that generation, pinned.
func (r *runState) openBase() error {
	opt := r.opt
	h, unlock, err := openHistory(opt)
	if err != nil {
		return err
	}
	r.deferCleanup(func() { unlock() })
	// A run that commits nothing on a path that held no history (a
	// failure, a dry run) leaves the path as it found it: after the
	// commit's Abort, before the unlock.
	r.deferCleanup(func() {
		if err := h.RemoveUnused(); err != nil {
			opt.Log.Warn().Err(err).Str("history", h.Dir).Msg("could not remove what the run created")
		}
	})
	r.h = h
	if opt.DryRun {
		v, err := h.View()
		if err != nil {
			return err
		}
		r.deferCleanup(func() { v.Close() })
		// What CheckBase refuses below, a dry run refuses too.
		if err := v.CheckFooters(); err != nil {
			return fmt.Errorf("%w; run fairledger verify --history %s", err, opt.History)
		}
		r.base = &v.Manifest
		r.readState = func(p history.Partition) ([]byte, error) { return v.ReadState(p.Cluster, path.Base(p.Path)) }
		return nil
	}
	tx, err := h.Begin()
	if err != nil {
		return err
	}
	r.tx = tx
	r.deferCleanup(func() { tx.Abort() }) // nothing after Commit
	if err := tx.CheckBase(); err != nil {
		return fmt.Errorf("%w; nothing was written: run fairledger verify --history %s", err, opt.History)
	}
	r.base, r.readState = tx.Base(), tx.ReadBytes
	return nil
}

// readCheckpoints lists the cluster's checkpoints in the base and sets
// the phase of the tick grid from them.
func (r *runState) readCheckpoints() error {
	cps, err := loadCheckpoints(r.base, r.readState, r.m.cluster)
	if err != nil {
		return err
	}
	r.cps = cps
	return r.m.setTickPhase(cps, r.opt.TickOrigin)
}

// readInputs reads the job inputs (Inputs.Jobs): it bills every batch, hands its jobs
// to decay and spills its rows for the jobs tables.
func (r *runState) readInputs(ctx context.Context) error {
	opt := r.opt
	if !opt.DryRun {
		sp, err := spill.New(r.h.Dir)
		if err != nil {
			return err
		}
		r.sp = sp
		r.deferCleanup(func() { sp.Close() })
	}

	r.dict = record.NewJobDict() // the names and TRES sets of every jobs record of the run
	// The checkpoints whose running jobs the input may continue: with --to
	// given (as cron gives it), the one the run resumes from; else any.
	maybe := r.cps
	if !opt.To.IsZero() {
		maybe = nil
		if c := pickCheckpoint(r.cps, opt.From, opt.To.Unix()); c != nil {
			maybe = []*storedCheckpoint{c}
		}
	}
	if err := loadAll(maybe); err != nil {
		return err
	}
	if err := r.checkBeforeReading(maybe); err != nil {
		return err // before hours of reading; setWindow checks again
	}
	r.st = newStream(r.m, r.cps, maybe, opt, r.sp, r.dict)
	if err := r.st.readAll(ctx, r.in, opt, r.sum); err != nil {
		return err
	}
	if err := r.st.checkClusters(r.sum, len(r.cps) == 0, opt.Log); err != nil {
		return err
	}
	r.read = opt.Now()
	r.sum.Phases.Read = r.read.Sub(r.sum.Started)
	return nil
}

// checkBeforeReading refuses, when --to gives the window before the sacct
// files are read, a checkpoint of another zone and a declared sacct span
// that does not cover the window; loaded is the checkpoint resumed.
func (r *runState) checkBeforeReading(loaded []*storedCheckpoint) error {
	opt := r.opt
	if opt.To.IsZero() {
		return nil
	}
	switch {
	case len(loaded) == 1:
		if err := checkZone(&loaded[0].checkpoint, opt.Location, r.m.cluster); err != nil {
			return err
		}
		return checkSacctSpan(opt, r.m.cluster, loaded[0].To, opt.To.Unix(), true, r.m.prio != nil)
	case !opt.From.IsZero():
		return checkSacctSpan(opt, r.m.cluster, opt.From.Unix(), opt.To.Unix(), false, r.m.prio != nil)
	}
	return nil
}

// setWindow sets the window (lo, to] and the decay state at lo: resumed
// from the checkpoint the run picks, or a fresh start.
func (r *runState) setWindow() error {
	opt, m := r.opt, r.m
	to, err := r.windowEnd()
	if err != nil {
		return err
	}
	r.to = to
	r.ck = pickCheckpoint(r.cps, opt.From, to)
	if r.ck != nil {
		err = r.resume()
	} else {
		err = r.freshStart()
	}
	if err != nil {
		return err
	}
	if to < r.lo {
		return fmt.Errorf("window: --to %s is before the start %s", fmtUnix(to), fmtUnix(r.lo))
	}
	r.sum.From, r.sum.To = time.Unix(r.lo, 0).UTC(), time.Unix(to, 0).UTC()
	r.log = opt.Log.With().Str("cluster", m.cluster).Logger()
	r.log.Info().Time("from", r.sum.From).Time("to", r.sum.To).Bool("resumed", r.sum.Resumed).Msg("window")
	return r.checkCoverage()
}

// windowEnd is the window's end: --to, else from the jobs read; the
// history's checkpoints may refuse it (checkWindowEnd).
func (r *runState) windowEnd() (int64, error) {
	opt, st := r.opt, r.st
	to, toFrom := opt.To.Unix(), "--to"
	if opt.To.IsZero() {
		switch {
		case !opt.SacctEnd.IsZero():
			to, toFrom = opt.SacctEnd.Unix(), "--sacct-end"
		case st.anyRunning:
			to, toFrom = opt.Now().Unix(), "now: a job is running"
			st.warnStaleRunning(to, opt.Log)
		case st.maxEnd > opt.Now().Unix():
			// Within ingest.ClockSkew: the controller's clock is ahead.
			to, toFrom = opt.Now().Unix(), "now: the latest job end is later"
		case st.maxEnd > math.MinInt64:
			to, toFrom = st.maxEnd, "the latest job end"
		default:
			to, toFrom = opt.Now().Unix(), "now: no job ended"
		}
	} else {
		st.warnFarTo(to, opt.Log)
	}
	explicit := !opt.To.IsZero() || !opt.SacctEnd.IsZero()
	if err := checkWindowEnd(r.cps, r.m.cluster, opt.History, to, toFrom, explicit, opt.Now().Unix()); err != nil {
		return 0, err
	}
	return to, nil
}

// resume takes the decay state of the checkpoint r.ck, refusing one of
// another tick grid or PriorityCalcPeriod.
func (r *runState) resume() error {
	opt, m, ck := r.opt, r.m, r.ck
	if err := ck.load(); err != nil {
		return err
	}
	if err := checkZone(&ck.checkpoint, opt.Location, m.cluster); err != nil {
		return err
	}
	state, folded, err := resumeState(&ck.checkpoint, m.keys, m.uni.Index)
	if err != nil {
		return err
	}
	if m.ctld != nil && opt.TickOrigin == nil {
		// The log's ticks follow the checkpoint's, whatever their phase.
		m.params.OriginUnix = decay.TickPhase(state.OriginUnix, m.calcPeriod())
	}
	if p := decay.TickPhase(state.OriginUnix, m.calcPeriod()); state.CalcPeriodSec == m.calcPeriod() && p != m.params.OriginUnix {
		return fmt.Errorf("--tick-phase %d s: the history of cluster %q was computed on ticks at %d s past each multiple of PriorityCalcPeriod "+
			"(checkpoint at %s): a run resuming it must use the same grid (leave --tick-phase out to take the history's); to change it, "+
			"recompute from the start of the history (--from its first day, with every sacct file); nothing was written",
			m.params.OriginUnix, m.cluster, p, fmtUnix(ck.To))
	}
	state.OriginUnix = m.params.OriginUnix
	if state.CalcPeriodSec != m.calcPeriod() {
		return fmt.Errorf("slurm.conf %s: PriorityCalcPeriod is %d s, but the history of cluster %q was computed with %d s "+
			"(checkpoint at %s): usage decays per period, so a change needs a recompute from the start of the history "+
			"(--from its first day, with every sacct file); nothing was written",
			m.conf.File, m.calcPeriod(), m.cluster, state.CalcPeriodSec, fmtUnix(ck.To))
	}
	if folded > 0 {
		opt.Log.Warn().Int("associations", folded).Msg("checkpoint associations missing from the association dumps: usage credited to their account")
	}
	r.state = state
	r.lo, r.origin, r.sum.Resumed = ck.To, ck.Origin, true
	return nil
}

// freshStart starts decay without a checkpoint, at --from or the earliest
// job start, floored to a tick.
func (r *runState) freshStart() error {
	opt, m, st := r.opt, r.m, r.st
	r.logPhase()
	from, fromFrom := opt.From.Unix(), "--from"
	if opt.From.IsZero() {
		from, fromFrom = floorTick(r.to, m.params.OriginUnix, m.calcPeriod()), "the window's end: no job started"
		if st.minStart < math.MaxInt64 {
			from, fromFrom = floorTick(st.minStart, m.params.OriginUnix, m.calcPeriod()), "the earliest job start"
		}
		if s := opt.SacctStart; !s.IsZero() && s.Unix() > from {
			// The input holds no job that ended before it: the jobs
			// running then are charged from it on.
			from, fromFrom = s.Unix(), "--sacct-start"
		}
	}
	if err := checkFreshStart(r.cps, m.cluster, from, fromFrom); err != nil {
		return err
	}
	state, err := decay.NewState(m.params, len(m.keys), from)
	if err != nil {
		return err
	}
	r.state = state
	r.lo, r.origin = from, from
	return nil
}

// logPhase puts a fresh start's tick grid on the phase of slurmctld's
// log, when the run has one and no --tick-phase: the state then starts at
// the log's last tick at or before the window's start, as slurmctld's
// usage did, and the first tick decays what jobs ended before it over its
// real distance from that tick (on the epoch's grid a job ending before
// the log's first tick after the start was decayed over less, and
// charged more, than slurmctld charged it).
func (r *runState) logPhase() {
	opt, m, st := r.opt, r.m, r.st
	if m.ctld == nil || opt.TickOrigin != nil {
		return
	}
	ref := r.to
	switch {
	case !opt.From.IsZero():
		ref = opt.From.Unix()
	case st.minStart < math.MaxInt64:
		ref = st.minStart
	}
	ticks := m.ctld.ticks
	k, _ := slices.BinarySearch(ticks, ref+1)
	if k == 0 {
		return // the log begins after the start: the epoch's grid until its first tick
	}
	phase := decay.TickPhase(ticks[k-1], m.calcPeriod())
	m.params.OriginUnix, m.cfg.TickOriginUnix = phase, phase
}

// resumed is the checkpoint the run resumed, or nil.
func (r *runState) resumed() *checkpoint {
	if r.ck == nil {
		return nil
	}
	return &r.ck.checkpoint
}

// decayTicks are the ticks of the slurmctld log and the decay jobs whose
// end the log orders after the tick of its second (nil without a log).
func (r *runState) decayTicks() (ticks []int64, after map[int32]bool, err error) {
	m, st := r.m, r.st
	if m.ctld == nil {
		return nil, nil, nil
	}
	if len(st.extra.after) != len(st.jobs.Start) {
		return nil, nil, fmt.Errorf("%d job-end orders for %d decay jobs", len(st.extra.after), len(st.jobs.Start))
	}
	ticks = m.ctld.ticks
	for j, a := range st.extra.after {
		if a {
			if after == nil {
				after = map[int32]bool{}
			}
			after[int32(j)] = true
		}
	}
	r.sum.EndsAfterTick = len(after)
	r.sum.EndsChargedTwice = len(st.extra.twice)
	return ticks, after, nil
}

// newFairshareWriter sets up the fair-share snapshots of the window: their
// times, and with limits enforced their TRESRunMins and live usage.
func (r *runState) newFairshareWriter(ticks []int64, after map[int32]bool) (*fairshareWriter, error) {
	opt, m, st, lo, to, ck := r.opt, r.m, r.st, r.lo, r.to, r.ck
	// Where decay ticks in the window: what the live RawUsage and
	// TRESRunMins of a snapshot between two ticks are counted from.
	sched, err := decay.NewSchedule(r.state.Tick, m.calcPeriod(), ticks)
	if err != nil {
		return nil, fmt.Errorf("decay: %w", err)
	}
	snaps, err := snapshotTimes(lo, to, opt.SnapshotEvery, opt.Location)
	if err != nil {
		return nil, err
	}
	if len(snaps) == 0 {
		snaps = []int64{to}
	}
	fw := &fairshareWriter{tx: r.tx, m: m, lo: lo, to: to, dry: opt.DryRun, snaps: snaps}
	if m.prio != nil {
		if fw.prio, err = r.newPrioWriter(sched); err != nil {
			return nil, err
		}
	}
	residueFrom := int64(math.MaxInt64) // none counted without a log
	var residueChain int64              // when the chain of runs began counting them
	if m.params.LimitsEnforced {
		// Before the jobs writer adds to dict: a snapshot of it is read
		// while it does.
		var restarts []int64
		var carried tresCarry
		if m.ctld != nil {
			restarts, residueFrom = m.ctld.restarts, m.ctld.residuesFrom()
			residueChain = residueFrom
			if ck != nil && ck.ResidueFrom != 0 {
				// The checkpoint holds what jobs ended by lo left.
				carried, residueFrom, residueChain = tresCarry{ck.Residue, ck.Debt}, lo+1, ck.ResidueFrom
			}
		}
		fw.dict = r.dict.Snapshot()
		runSched, err := r.chainSchedule(sched, ticks)
		if err != nil {
			return nil, err
		}
		fw.run = newTRESRun(m, st, fw.dict, lo, snaps, runSched, after, restarts, residueFrom, carried)
		fw.live = live.NewEnds(st.jobs, snaps, sched, m.calcPeriod(), m.params.HalfLifeSec, st.extra.endCharges())
	}
	r.residueFrom, r.residueChain = residueFrom, residueChain
	return fw, nil
}

// chainSchedule is the tick schedule TRESRunMins walks (sched, the
// window's, for a fresh start): a job running at a resumed run's start
// had its values decremented at every tick since its own start, before
// the checkpoint too, and rebuilt at a slurmctld start from the tick
// before it (fairshare.RunSecs). The window's schedule knows only the
// ticks after the checkpoint's and puts those before it on a regular grid
// back from it, which is not where slurmctld ticked when a restart (an
// irregular tick, a new phase) came before the checkpoint: a job of QOS
// UsageFactor 0.5 running across it was rebuilt from the wrong tick and
// held less than one run over the whole span gives it. With slurmctld's
// log, the chain's schedule is the one its fresh run used, from the
// checkpoint's Origin with every tick of the log, so that the resumed run
// walks the ticks one run walks.
func (r *runState) chainSchedule(sched *decay.Schedule, ticks []int64) (*decay.Schedule, error) {
	if r.ck == nil || len(ticks) == 0 || r.origin == 0 || r.origin >= r.state.Tick {
		return sched, nil
	}
	s, err := decay.NewSchedule(r.origin, r.m.calcPeriod(), ticks)
	if err != nil {
		return nil, fmt.Errorf("decay: the ticks since the history's origin: %w", err)
	}
	return s, nil
}

// newPrioWriter sets up the priority table's rows of the window, with the
// FairShare in force at its start: a resumed run's, that of the history's
// last snapshot at or before it; a fresh start's, that of no usage.
func (r *runState) newPrioWriter(sched *decay.Schedule) (*queue.Writer, error) {
	m := r.m
	p := &queue.Writer{Model: m.prio, Jobs: queue.LatestRecords(r.st.prio), Sched: sched, Lo: r.lo, To: r.to,
		DumpAt: func(t int64) int { return m.treeAt(time.Unix(t, 0)) }}
	p.UseDump(m.treeAt(time.Unix(r.lo, 0)))
	var snap history.Snapshot
	if r.ck != nil && r.tx != nil {
		var err error
		if snap, err = r.tx.BaseView().Snapshot(m.cluster, time.Unix(r.lo, 0).UTC()); err != nil {
			return nil, fmt.Errorf("priority: the FairShare at the window's start: %w", err)
		}
		if snap.Before {
			snap.Rows = nil // none at or before lo
		}
	}
	p.InitFairShare(snap.Time.Unix(), snap.Rows, m.algo, m.trees[m.treeAt(time.Unix(r.lo, 0))], m.damp)
	return p, nil
}

// decayAndJobs runs decay and the fair-share snapshots (fw) while the
// jobs and usage tables are written, which do not depend on decay. It
// returns the residues of ended jobs and the debts of double-charged ends
// for the checkpoint.
func (r *runState) decayAndJobs(ctx context.Context, fw *fairshareWriter, ticks []int64, after map[int32]bool, carriedMonths []string) (tresCarry, error) {
	opt, m, st, sum, state, lo, to, read := r.opt, r.m, r.st, r.sum, r.state, r.lo, r.to, r.read
	jw := &jobsWriter{tx: r.tx, cluster: m.cluster, to: to, lo: lo, hotFrom: to - int64(HotWindow/time.Second), spill: r.sp, dict: r.dict, piece: opt.pieceRecords}
	// The first of the two to fail stops the other: a failed run commits
	// nothing, so there is nothing left for the other to do.
	wctx, stopWriters := context.WithCancel(ctx)
	r.deferCleanup(stopWriters)
	jobsDone := make(chan error, 1)
	if opt.DryRun {
		jobsDone <- nil
	} else {
		go func() {
			err := jw.write(wctx, lo, carriedMonths, sum)
			sum.Phases.Jobs = opt.Now().Sub(read) // read by Run after jobsDone
			if err != nil {
				stopWriters()
			}
			jobsDone <- err
		}()
	}

	// The moment seeds: at lo, and at every snapshot but the one at to
	// (moment.go); a dry run writes none.
	var seeds []seedPoint
	seedAt := func(at int64) {
		if !opt.DryRun {
			p := seedPoint{at: at, state: state.Clone()}
			if fw.run != nil {
				p.carry = carry(fw.run, m.cfg.TRES, m.keys)
			}
			seeds = append(seeds, p)
		}
	}
	seedAt(lo)
	var reloads []int64 // slurmctld's starts: each reads usage back rounded
	if m.ctld != nil {
		reloads = m.ctld.restarts
	}
	var err error
	sum.Decay, err = decay.Advance(m.params, state, decay.Window{
		Parent: m.flatParents(), Jobs: st.jobs, To: to, Snapshots: fw.snaps, Ticks: ticks, EndsAfterTick: after, EndCharge: st.extra.twice, EndChargeInPass: st.extra.inPass, Reloads: reloads,
		OnSnapshot: func(at, tick int64, usage []float64) error {
			if err := wctx.Err(); err != nil {
				return err
			}
			if err := fw.snapshot(at, tick, usage); err != nil {
				return err
			}
			if at < to {
				seedAt(at)
			}
			return nil
		},
	})
	if err == nil {
		err = fw.finish()
	} else {
		err = fmt.Errorf("decay: %w", err)
	}
	if err == nil && !opt.DryRun {
		var dict *record.JobDict
		if fw.run != nil {
			dict = fw.dict
		}
		var prio []queue.Job
		if fw.prio != nil {
			prio = fw.prio.Jobs
		}
		err = r.writeSeeds(seeds, ticks, after, dict, prio)
	}
	if err != nil {
		stopWriters()
		fw.abort()
	}
	sum.Phases.Decay = opt.Now().Sub(read)
	var tc tresCarry
	if fw.run != nil && r.residueFrom != math.MaxInt64 {
		tc = carry(fw.run, m.cfg.TRES, m.keys)
	}
	st.jobs, st.extra, fw.run, fw.live = decay.Jobs{}, jobExtra{}, nil, nil
	if m.ctld != nil {
		// The grid goes on from the last tick the log showed.
		m.cfg.TickOriginUnix = state.OriginUnix
	}
	switch jerr := <-jobsDone; {
	case err == nil:
		err = jerr
	case jerr != nil && ctx.Err() == nil && errors.Is(err, context.Canceled):
		err = jerr // the failure that stopped decay, not the stop
	}
	if err != nil {
		return tresCarry{}, err
	}
	sum.Snapshots, sum.Partitions = fw.snapshots, fw.files+jw.files
	return tc, nil
}

// warnUnrecharged warns of the jobs of the history in the window that the
// input lacks (Summary.Unrecharged).
func (r *runState) warnUnrecharged() {
	if r.sum.Unrecharged > 0 {
		r.log.Warn().Int64("jobs", r.sum.Unrecharged).
			Msg("jobs of the history in the recomputed window are missing from the sacct input: they stay in the jobs and usage tables but are not charged to fair share; rerun the window with every sacct file of it")
	}
}

// commit stores the checkpoint at to, drops those it supersedes, compacts,
// appends the runs row and commits the run's generation.
func (r *runState) commit(ctx context.Context, tc tresCarry) error {
	opt, m, sum, tx, to := r.opt, r.m, r.sum, r.tx, r.to
	blob, err := r.state.MarshalBinary()
	if err != nil {
		return err
	}
	keys := make([][3]string, len(m.keys))
	for i, k := range m.keys {
		keys[i] = keyArray(k)
	}
	cp := &checkpoint{Version: checkpointVersion, Cluster: m.cluster, To: to, Origin: r.origin, Keys: keys, State: blob,
		Residue: tc.Residue, Debt: tc.Debt, ResidueFrom: r.residueChain,
		Running: r.st.nextRunning(to), Zone: opt.Location.String()}
	if err := saveCheckpoint(tx, cp, opt.KeepCheckpoints); err != nil {
		return err
	}
	for _, name := range supersededCheckpoints(r.cps, r.lo, to) {
		tx.RemoveState(m.cluster, name)
	}
	compacted, err := tx.Compact(m.cluster)
	if err != nil {
		return err
	}
	sum.Compacted = compacted
	sum.Finished = opt.Now()
	if err := appendRun(tx, m, r.in, r.st, sum, opt); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := r.beforeCommit(); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	sum.Generation = tx.Generation()
	return nil
}

// beforeCommit calls Options.BeforeCommit, if set.
func (r *runState) beforeCommit() error {
	if r.opt.BeforeCommit == nil {
		return nil
	}
	if err := r.opt.BeforeCommit(); err != nil {
		return fmt.Errorf("before the commit (nothing was committed): %w", err)
	}
	return nil
}

// openHistory opens the history of a run and locks it; the caller defers
// unlock. A run creates a missing directory, removes what an interrupted
// run left (spill files; Begin removes stages) and converts a history of
// the layout before generations (history.Store.Migrate); a dry run does
// none of that: it reads a missing directory as an empty history, without
// locking it, and refuses an old layout.
func openHistory(opt Options) (h *history.Store, unlock func() error, err error) {
	if opt.DryRun {
		if _, err := os.Stat(opt.History); errors.Is(err, fs.ErrNotExist) {
			return &history.Store{Dir: opt.History}, func() error { return nil }, nil
		}
	}
	if h, err = history.Open(opt.History); err != nil {
		return nil, nil, err
	}
	if unlock, err = h.Lock(opt.LockWait, opt.Now); err != nil {
		return nil, nil, err
	}
	if opt.DryRun {
		return h, unlock, nil
	}
	if err := spill.RemoveStale(h.Dir); err != nil {
		unlock()
		return nil, nil, err
	}
	n, err := h.Migrate()
	if err != nil {
		unlock()
		return nil, nil, err
	}
	if n > 0 {
		opt.Log.Warn().Int("files", n).Str("history", h.Dir).
			Msg("converted a history of the layout before generations (data.parquet files) into generation 1")
	}
	return h, unlock, nil
}

func fmtUnix(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }

// appendRun writes the run's row to the runs table.
func appendRun(tx *history.Txn, m *model, in Inputs, st *stream, sum *Summary, opt Options) error {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("run id: %w", err)
	}
	sum.RunID = sum.Started.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(rnd[:])
	var inputs []record.RunInput
	for _, p := range in.Files {
		ri, err := hashFile(p)
		if err != nil {
			return err
		}
		inputs = append(inputs, ri)
	}
	inputs = append(inputs, st.inputs...)
	cfg := m.cfg
	cfg.SacctCoverage = sum.Coverage.record()
	cfgJSON, err := record.MarshalConfig(cfg)
	if err != nil {
		return err
	}
	skipped := maps.Clone(sum.Ingest.Skipped)
	if skipped == nil {
		skipped = map[string]int64{}
	}
	_, err = tx.AppendRun(m.cluster, record.RunRow{
		RunID: sum.RunID, Started: sum.Started.UTC(), Finished: sum.Finished.UTC(), Version: opt.Version,
		Inputs: inputs, Config: cfgJSON, Read: sum.Ingest.Read, Ingested: sum.Ingest.Ingested,
		Rejected: sum.Ingest.Rejected, Skipped: skipped, JobsCharged: int64(sum.Decay.JobsCharged),
		Snapshots: int64(sum.Snapshots),
	})
	return err
}

func hashFile(p string) (record.RunInput, error) {
	f, err := os.Open(p)
	if err != nil {
		return record.RunInput{}, fmt.Errorf("hash input: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return record.RunInput{}, fmt.Errorf("hash input %s: %w", p, err)
	}
	return record.RunInput{Path: p, SizeBytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
