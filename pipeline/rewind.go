package pipeline

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"
)

// A history holds, for a cluster, snapshots, usage and jobs up to its
// newest checkpoint, all computed from one start (the checkpoints'
// Origin). A run may continue the history or recompute a part of it up to
// that checkpoint or later; the checks here refuse the windows that would
// leave the history disagreeing with itself, before anything is written.

// checkWindowEnd refuses a window ending at to, from the source toFrom
// (the flag or the default that gave it), when the history's newest
// checkpoint of the cluster is later (the snapshots, usage and jobs after
// to would be those of another computation), or when an explicit --to is
// after now (running jobs would be charged for time that has not passed).
func checkWindowEnd(cps []*storedCheckpoint, cluster, dir string, to int64, toFrom string, explicit bool, now int64) error {
	if explicit && to > now {
		return fmt.Errorf("window: --to %s is after now (%s): running jobs would be charged for time that has not passed",
			fmtUnix(to), fmtUnix(now))
	}
	if len(cps) == 0 {
		return nil
	}
	newest := cps[len(cps)-1].To
	if newest > now {
		return fmt.Errorf("window: the history of cluster %q reaches %s, after now (%s): a run charged job times that had not happened yet; "+
			"fairledger verify --repair --history %s cuts the history back to its newest checkpoint before now and says what to run then; nothing was written",
			cluster, fmtUnix(newest), fmtUnix(now), dir)
	}
	if to >= newest {
		return nil
	}
	return fmt.Errorf("window: the run would end at %s (%s), before %s, where the history of cluster %q already reaches (its newest checkpoint): "+
		"the snapshots, usage and jobs after %s would no longer agree with the rest; end the run at %s or later (--to), "+
		"and to recompute an earlier period give --from and every sacct file from then on; nothing was written",
		fmtUnix(to), toFrom, fmtUnix(newest), cluster, fmtUnix(to), fmtUnix(newest))
}

// checkFreshStart refuses a fresh start at lo (no checkpoint at or before
// it) on a history whose charging of the cluster started earlier, at the
// checkpoints' Origin: the usage charged before lo would be lost. A start
// at or before the origin recomputes the whole history and is allowed;
// so is any start when the checkpoints do not record their origin.
func checkFreshStart(cps []*storedCheckpoint, cluster string, lo int64, loFrom string) error {
	if err := loadAll(cps); err != nil { // their origins
		return err
	}
	origin := int64(0)
	for _, c := range cps {
		if c.Origin != 0 && (origin == 0 || c.Origin < origin) {
			origin = c.Origin
		}
	}
	if origin == 0 || lo <= origin {
		return nil
	}
	return fmt.Errorf("window: the run would start afresh at %s (%s), but the history of cluster %q was charged from %s on and has no checkpoint at or before %s: "+
		"the usage charged before %s would be lost; give every sacct file from %s on (or --from %s), or a --from at a checkpoint; nothing was written",
		fmtUnix(lo), loFrom, cluster, fmtUnix(origin), fmtUnix(lo), fmtUnix(lo), fmtUnix(origin), fmtUnix(origin))
}

// warnFarTo warns when an explicit --to is long after the input's newest
// job start or end: a typo in the date charges running jobs up to it and
// takes snapshots of an empty future.
func (s *stream) warnFarTo(to int64, log zerolog.Logger) {
	last, days, ok := s.longAfterNewestJob(to)
	if !ok {
		return
	}
	log.Warn().Time("latest_job_time", last).
		Msgf("--to %s is %d days after the newest job start or end in the sacct files (%s): running jobs are charged up to it; check the date",
			fmtUnix(to), days, last.Format(time.RFC3339))
}

// supersededCheckpoints are the names of the checkpoints of cps strictly
// inside the window (lo, to) of a run that recomputed it: they hold usage
// of an earlier computation of that period, and a later run resuming from
// one would mix the two.
func supersededCheckpoints(cps []*storedCheckpoint, lo, to int64) []string {
	var out []string
	for _, c := range cps {
		if c.To > lo && c.To < to {
			out = append(out, checkpointName(c.To))
		}
	}
	return out
}
