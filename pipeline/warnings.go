package pipeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/fairledger/fairledger/decay"
)

// staleRunningAfter is how long after the newest job start or end of the
// input a window that ends now because a job is running is suspicious.
const staleRunningAfter = 7 * 24 * time.Hour

// checkClusters refuses an input none of whose rows is of the run's
// cluster: sacct's Cluster column and slurm.conf's ClusterName (or
// --cluster) disagree, and a run would charge nothing up to now. With
// checkpoints of the cluster (a night on which it may simply have had no
// jobs in a file of several clusters) it only warns.
func (s *stream) checkClusters(sum *Summary, fresh bool, log zerolog.Logger) error {
	rs := sum.Resolve
	if rs.Rows == 0 || rs.ByReason[decay.ReasonOtherCluster] != rs.Rows {
		return nil
	}
	names := make([]string, len(rs.OtherClusters))
	for i, c := range rs.OtherClusters {
		names[i] = fmt.Sprintf("%q", c)
	}
	msg := fmt.Sprintf("none of the %d sacct rows is of cluster %q (slurm.conf's ClusterName, or --cluster): their clusters are %s",
		rs.Rows, s.m.cluster, strings.Join(names, ", "))
	if fresh {
		return fmt.Errorf("%s; check the sacct files and ClusterName (or pass --cluster), nothing was written", msg)
	}
	log.Warn().Str("cluster", s.m.cluster).Strs("sacct_clusters", rs.OtherClusters).Msg(msg + "; nothing charged tonight")
	return nil
}

// warnStaleRunning warns when the window ends now only because a job is
// running while the input's newest job start or end is long past: an old
// dump with a RUNNING row would charge that job up to today.
func (s *stream) warnStaleRunning(now int64, log zerolog.Logger) {
	last, days, ok := s.longAfterNewestJob(now)
	if !ok {
		return
	}
	log.Warn().Time("latest_job_time", last).
		Msgf("the window ends now because a job is RUNNING, but the newest job start or end in the sacct files is %s, %d days ago: an old dump charges its running jobs up to today; pass --to (for example --to %s)",
			last.Format(time.RFC3339), days, last.Truncate(24*time.Hour).Add(24*time.Hour).Format(time.DateOnly))
}

// longAfterNewestJob reports whether t is more than staleRunningAfter
// after the input's newest job start or end (false when no job of the
// cluster was read), with that time and how many whole days before t it is.
func (s *stream) longAfterNewestJob(t int64) (time.Time, int64, bool) {
	latest := max(s.maxEnd, s.maxStart)
	if latest <= 0 || time.Duration(t-latest)*time.Second <= staleRunningAfter {
		return time.Time{}, 0, false
	}
	return time.Unix(latest, 0).UTC(), (t - latest) / 86400, true
}
