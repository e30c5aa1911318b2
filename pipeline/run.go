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
	"time"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
)

// Run executes one night for one cluster: see the package documentation.
func Run(ctx context.Context, in Inputs, opt Options) (*Summary, error) {
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
		ev := opt.Log.Info().Int("ticks", len(l.ticks)).Time("first_tick", time.Unix(l.ticks[0], 0).UTC()).
			Time("last_tick", time.Unix(l.ticks[len(l.ticks)-1], 0).UTC()).Int("job_ends", l.jobEnds).
			Int("job_ends_after_tick", len(l.after)).Int64("lines", l.lines)
		ev.Msg("slurmctld log")
		if !l.ordered {
			opt.Log.Warn().Msg("slurmctld log without milliseconds: a job end in a tick's second is taken as before the tick")
		}
	}
	h, unlock, err := openHistory(opt)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Everything a run writes goes into one commit on top of the committed
	// generation (its base); a dry run reads that generation, pinned.
	var tx *history.Txn
	var base *history.Manifest
	var readState func(history.Partition) ([]byte, error)
	if opt.DryRun {
		v, err := h.View()
		if err != nil {
			return nil, err
		}
		defer v.Close()
		// What CheckBase refuses below, a dry run refuses too.
		if err := v.CheckFooters(); err != nil {
			return nil, fmt.Errorf("%w; run fairledger verify --history %s", err, opt.History)
		}
		base = &v.Manifest
		readState = func(p history.Partition) ([]byte, error) { return v.ReadState(p.Cluster, path.Base(p.Path)) }
	} else {
		if tx, err = h.Begin(); err != nil {
			return nil, err
		}
		defer tx.Abort() // nothing after Commit
		if err := tx.CheckBase(); err != nil {
			return nil, fmt.Errorf("%w; nothing was written: run fairledger verify --history %s", err, opt.History)
		}
		base, readState = tx.Base(), tx.ReadBytes
	}
	cps, err := loadCheckpoints(base, readState, m.cluster)
	if err != nil {
		return nil, err
	}
	if err := m.setTickPhase(cps, opt.TickOrigin); err != nil {
		return nil, err
	}
	var sp *spill // nil in a dry run: the jobs tables are not built
	if !opt.DryRun {
		if sp, err = newSpill(h.Dir); err != nil {
			return nil, err
		}
		defer sp.close()
	}

	dict := record.NewJobDict() // the names and TRES sets of every jobs record of the run
	// The checkpoints whose running jobs the input may continue: with --to
	// given (as cron gives it), the one the run resumes from; else any.
	maybe := cps
	if !opt.To.IsZero() {
		maybe = nil
		if c := pickCheckpoint(cps, opt.From, opt.To.Unix()); c != nil {
			maybe = []*storedCheckpoint{c}
		}
	}
	if err := loadAll(maybe); err != nil {
		return nil, err
	}
	st := newStream(m, cps, maybe, opt, sp, dict)
	if err := st.readAll(ctx, in, opt, sum); err != nil {
		return nil, err
	}
	if err := st.checkClusters(sum, len(cps) == 0, opt.Log); err != nil {
		return nil, err
	}
	read := opt.Now()
	sum.Phases.Read = read.Sub(sum.Started)

	// The window.
	to, toFrom := opt.To.Unix(), "--to"
	if opt.To.IsZero() {
		switch {
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
	if err := checkWindowEnd(cps, m.cluster, opt.History, to, toFrom, !opt.To.IsZero(), opt.Now().Unix()); err != nil {
		return nil, err
	}
	ck := pickCheckpoint(cps, opt.From, to)
	var state *decay.State
	var lo, origin int64
	if ck != nil {
		if err := ck.load(); err != nil {
			return nil, err
		}
		var folded int
		state, folded, err = resumeState(&ck.checkpoint, m.keys, m.uni.Index)
		if err != nil {
			return nil, err
		}
		if m.ctld != nil && opt.TickOrigin == nil {
			// The log's ticks follow the checkpoint's, whatever their phase.
			m.params.OriginUnix = posMod(state.OriginUnix, m.calcPeriod())
		}
		if p := posMod(state.OriginUnix, m.calcPeriod()); state.CalcPeriodSec == m.calcPeriod() && p != m.params.OriginUnix {
			return nil, fmt.Errorf("--tick-phase %d s: the history of cluster %q was computed on ticks at %d s past each multiple of PriorityCalcPeriod "+
				"(checkpoint at %s): a run resuming it must use the same grid (leave --tick-phase out to take the history's); to change it, "+
				"recompute from the start of the history (--from its first day, with every sacct file); nothing was written",
				m.params.OriginUnix, m.cluster, p, fmtUnix(ck.To))
		}
		state.OriginUnix = m.params.OriginUnix
		if state.CalcPeriodSec != m.calcPeriod() {
			return nil, fmt.Errorf("slurm.conf %s: PriorityCalcPeriod is %d s, but the history of cluster %q was computed with %d s "+
				"(checkpoint at %s): usage decays per period, so a change needs a recompute from the start of the history "+
				"(--from its first day, with every sacct file); nothing was written",
				m.conf.File, m.calcPeriod(), m.cluster, state.CalcPeriodSec, fmtUnix(ck.To))
		}
		if folded > 0 {
			opt.Log.Warn().Int("associations", folded).Msg("checkpoint associations missing from the association dumps: usage credited to their account")
		}
		lo, origin, sum.Resumed = ck.To, ck.Origin, true
	} else {
		from, fromFrom := opt.From.Unix(), "--from"
		if opt.From.IsZero() {
			from, fromFrom = floorTick(to, m.params.OriginUnix, m.calcPeriod()), "the window's end: no job started"
			if st.minStart < math.MaxInt64 {
				from, fromFrom = floorTick(st.minStart, m.params.OriginUnix, m.calcPeriod()), "the earliest job start"
			}
		}
		if err := checkFreshStart(cps, m.cluster, from, fromFrom); err != nil {
			return nil, err
		}
		if state, err = decay.NewState(m.params, len(m.keys), from); err != nil {
			return nil, err
		}
		lo, origin = from, from
	}
	if to < lo {
		return nil, fmt.Errorf("window: --to %s is before the start %s", fmtUnix(to), fmtUnix(lo))
	}
	sum.From, sum.To = time.Unix(lo, 0).UTC(), time.Unix(to, 0).UTC()
	log := opt.Log.With().Str("cluster", m.cluster).Logger()
	log.Info().Time("from", sum.From).Time("to", sum.To).Bool("resumed", sum.Resumed).Msg("window")

	var resumed *checkpoint
	if ck != nil {
		resumed = &ck.checkpoint
	}
	carriedMonths := st.settle(resumed, lo, to, sum, log)

	var ticks []int64
	var after map[int32]bool
	if m.ctld != nil {
		if len(st.extra.after) != len(st.jobs.Start) {
			return nil, fmt.Errorf("%d job-end orders for %d decay jobs", len(st.extra.after), len(st.jobs.Start))
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
		sum.EndsAfterTick = len(after)
	}
	// Where decay ticks in the window: what the live RawUsage and
	// TRESRunMins of a snapshot between two ticks are counted from.
	sched, err := decay.NewSchedule(state.Tick, m.calcPeriod(), ticks)
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
	fw := &fairshareWriter{tx: tx, m: m, lo: lo, to: to, dry: opt.DryRun, snaps: snaps}
	residueFrom := int64(math.MaxInt64) // none counted without a log
	var residueChain int64              // when the chain of runs began counting them
	if m.params.LimitsEnforced {
		// Before the jobs writer adds to dict: a snapshot of it is read
		// while it does.
		var restarts []int64
		var carried []residue
		if m.ctld != nil {
			restarts, residueFrom = m.ctld.restarts, m.ctld.residuesFrom()
			residueChain = residueFrom
			if ck != nil && ck.ResidueFrom != 0 {
				// The checkpoint holds what jobs ended by lo left.
				carried, residueFrom, residueChain = ck.Residue, lo+1, ck.ResidueFrom
			}
		}
		fw.run = newTRESRun(m, st, dict.Snapshot(), lo, snaps, sched, after, restarts, residueFrom, carried)
		fw.live = newLiveEnds(st.jobs, snaps, sched, m.calcPeriod(), m.params.HalfLifeSec)
	}
	// The jobs and usage tables do not depend on decay: write them while
	// decay and the fair-share snapshots run.
	jw := &jobsWriter{tx: tx, cluster: m.cluster, to: to, lo: lo, hotFrom: to - int64(HotWindow/time.Second), spill: sp, dict: dict}
	// The first of the two to fail stops the other: a failed run commits
	// nothing, so there is nothing left for the other to do.
	wctx, stopWriters := context.WithCancel(ctx)
	defer stopWriters()
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

	parents := make([]int32, len(m.keys))
	for i := range parents {
		parents[i] = -1
	}
	sum.Decay, err = decay.Advance(m.params, state, decay.Window{
		Parent: parents, Jobs: st.jobs, To: to, Snapshots: snaps, Ticks: ticks, EndsAfterTick: after,
		OnSnapshot: func(at, tick int64, usage []float64) error {
			if err := wctx.Err(); err != nil {
				return err
			}
			return fw.snapshot(at, tick, usage)
		},
	})
	if err == nil {
		err = fw.flush()
	} else {
		err = fmt.Errorf("decay: %w", err)
	}
	if err != nil {
		stopWriters()
		fw.abort()
	}
	sum.Phases.Decay = opt.Now().Sub(read)
	var resid []residue
	if fw.run != nil && residueFrom != math.MaxInt64 {
		resid = fw.run.residues(m.keys)
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
		return nil, err
	}
	sum.Snapshots, sum.Partitions = fw.snapshots, fw.files+jw.files
	if opt.DryRun {
		sum.AfterTo = st.afterToCount(to)
		sum.Finished = opt.Now()
		return sum, nil
	}
	if sum.Unrecharged > 0 {
		log.Warn().Int64("jobs", sum.Unrecharged).
			Msg("jobs of the history in the recomputed window are missing from the sacct input: they stay in the jobs and usage tables but are not charged to fair share; rerun the window with every sacct file of it")
	}

	blob, err := state.MarshalBinary()
	if err != nil {
		return nil, err
	}
	keys := make([][3]string, len(m.keys))
	for i, k := range m.keys {
		keys[i] = keyArray(k)
	}
	cp := &checkpoint{Version: checkpointVersion, Cluster: m.cluster, To: to, Origin: origin, Keys: keys, State: blob,
		Residue: resid, ResidueFrom: residueChain,
		Running: st.nextRunning(to)}
	if err := saveCheckpoint(tx, cp, opt.KeepCheckpoints); err != nil {
		return nil, err
	}
	for _, name := range supersededCheckpoints(cps, lo, to) {
		tx.RemoveState(m.cluster, name)
	}
	compacted, err := compact(tx, m.cluster)
	if err != nil {
		return nil, err
	}
	sum.Compacted = compacted
	sum.Finished = opt.Now()
	if err := appendRun(tx, m, in, st, sum, opt); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	sum.Generation = tx.Generation()
	return sum, nil
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
	if err := removeStaleSpills(h.Dir); err != nil {
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
	cfg, err := record.MarshalConfig(m.cfg)
	if err != nil {
		return err
	}
	skipped := maps.Clone(sum.Ingest.Skipped)
	if skipped == nil {
		skipped = map[string]int64{}
	}
	_, err = tx.AppendRun(m.cluster, record.RunRow{
		RunID: sum.RunID, Started: sum.Started.UTC(), Finished: sum.Finished.UTC(), Version: opt.Version,
		Inputs: inputs, Config: cfg, Read: sum.Ingest.Read, Ingested: sum.Ingest.Ingested,
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
