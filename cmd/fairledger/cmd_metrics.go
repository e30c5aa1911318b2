package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/metrics"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/report"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/schemas"
)

func metricsCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "metrics",
		Usage: "write the fair share as Prometheus metrics: now for node_exporter's textfile collector, or the whole history as OpenMetrics",
		Description: "--format text (default): the latest snapshot of every cluster (or --cluster; or the fair share at --at, as sshare --at shows it) " +
			"in the Prometheus text format that node_exporter's textfile collector reads, without timestamps " +
			"(fairledger_snapshot_timestamp_seconds says when each snapshot was taken). " +
			"--format openmetrics: every snapshot of the history (or of --from..--to) as OpenMetrics with timestamps, " +
			"for `promtool tsdb create-blocks-from openmetrics --max-block-duration=4374h FILE DIR`. --out writes a file atomically (a temporary file " +
			"beside it, renamed into place). The metrics (sshare's columns under the names of the Slurm exporters, " +
			"every association of the tree with its parent and depth, LevelFS, the labs' time to recover, the jobs waiting) are listed in docs/metrics.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "history", Usage: "history directory", Required: true},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text (one snapshot, for the textfile collector) or openmetrics (the history, with timestamps)"},
			&cli.StringFlag{Name: "cluster", Aliases: []string{"M"}, Usage: "only this cluster (default: every cluster of the history)"},
			&cli.StringFlag{Name: "at", Usage: "text: the fair share at this second, as sshare --at shows it (YYYY-MM-DD[THH:MM[:SS]] in --tz, RFC 3339 or @UNIX; default: the latest snapshot)"},
			&cli.StringFlag{Name: "from", Usage: "openmetrics: the first snapshot time written (same forms as --at; default: the first)"},
			&cli.StringFlag{Name: "to", Usage: "openmetrics: the last snapshot time written (same forms as --at; default: the last)"},
			tzFlag(),
			&cli.StringFlag{Name: "out", Value: "-", Usage: "output file, written atomically (- : stdout)"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			opt := metricsOptions{history: c.String("history"), cluster: c.String("cluster"), out: c.String("out"), format: c.String("format")}
			loc, err := location(c.String("tz"))
			if err != nil {
				return err
			}
			for _, f := range []struct {
				name string
				dst  *time.Time
			}{{"at", &opt.at}, {"from", &opt.from}, {"to", &opt.to}} {
				if s := c.String(f.name); s != "" {
					if *f.dst, err = parseTime(f.name, s, loc); err != nil {
						return err
					}
				}
			}
			switch opt.format {
			case "text":
				if !opt.from.IsZero() || !opt.to.IsZero() {
					return usagef("--from and --to go with --format openmetrics; the text format is one snapshot (--at)")
				}
			case "openmetrics":
				if !opt.at.IsZero() {
					return usagef("--at goes with --format text; OpenMetrics takes a window (--from, --to)")
				}
				if !opt.from.IsZero() && !opt.to.IsZero() && opt.to.Before(opt.from) {
					return usagef("--to %s is before --from %s", c.String("to"), c.String("from"))
				}
			default:
				return usagef("--format %q: text or openmetrics", opt.format)
			}
			if err := outsideHistory("out", opt.out, opt.history); err != nil {
				return err
			}
			return runMetrics(opt, stdout)
		},
	}
}

// metricsOptions are the settings of fairledger metrics.
type metricsOptions struct {
	history, cluster, out, format string
	at, from, to                  time.Time
}

// runMetrics writes the metrics opt asks for.
func runMetrics(opt metricsOptions, stdout io.Writer) error {
	v, err := pinHistory(opt.history)
	if err != nil {
		return err
	}
	defer v.Close()
	clusters, err := metricsClusters(v, opt.history, opt.cluster)
	if err != nil {
		return err
	}
	if opt.format == "openmetrics" {
		return writeOpenMetrics(v, opt, clusters, stdout)
	}
	return writeText(v, opt.history, opt.out, clusters, opt.at, stdout)
}

// writeMetricsText writes the text format of the latest snapshot of every
// cluster of the history in dir to the file out, atomically: nightly's
// metrics_file.
func writeMetricsText(dir, out string) error {
	v, err := pinHistory(dir)
	if err != nil {
		return err
	}
	defer v.Close()
	clusters, err := metricsClusters(v, dir, "")
	if err != nil {
		return err
	}
	return writeText(v, dir, out, clusters, time.Time{}, io.Discard)
}

// writeText writes the text format of clusters' fair share at at (zero:
// the latest snapshot) to out, atomically.
func writeText(v *history.View, dir, out string, clusters []string, at time.Time, stdout io.Writer) error {
	var snaps []metrics.Snapshot
	for _, cl := range clusters {
		past, err := fairshareAt(v, dir, cl, at)
		if err != nil {
			return err
		}
		if len(past.Rows) == 0 {
			return fmt.Errorf("history %s: the fair-share partitions of cluster %s hold no rows", dir, cl)
		}
		if past.Before {
			// Before the history: no usage yet, which the rows do not say.
			return fmt.Errorf("--at %s is before the history of cluster %s (first snapshot %s)", at.UTC().Format(time.RFC3339), cl, past.Time.UTC().Format(time.RFC3339))
		}
		pending := past.priority()
		if past.moment == nil {
			if pending, err = v.PriorityAt(cl, past.Time); err != nil {
				return history.DamageHint(err, dir, v.Generation())
			}
		}
		s, err := metricsSnapshot(v, dir, cl, past.Time, past.Rows, pending)
		if err != nil {
			return err
		}
		snaps = append(snaps, s)
	}
	return writeOutput(out, stdout, func(w io.Writer) error { return metrics.WriteText(w, snaps) })
}

// writeOpenMetrics writes every snapshot of clusters in opt's window as
// OpenMetrics to opt.out, atomically.
func writeOpenMetrics(v *history.View, opt metricsOptions, clusters []string, stdout io.Writer) error {
	om, err := metrics.NewOpenMetrics("")
	if err != nil {
		return err
	}
	defer om.Close()
	for _, cl := range clusters {
		if err := addClusterHistory(v, opt, cl, om); err != nil {
			return err
		}
	}
	return writeOutput(opt.out, stdout, func(w io.Writer) error {
		_, err := om.WriteTo(w)
		return err
	})
}

// addClusterHistory adds cluster's snapshots in opt's window to om, the
// priority table read a month at a time.
func addClusterHistory(v *history.View, opt metricsOptions, cluster string, om *metrics.OpenMetrics) error {
	it, err := v.FairshareSnapshots(cluster, opt.from)
	if err != nil {
		return history.DamageHint(err, opt.history, v.Generation())
	}
	defer it.Close()
	pend := pendingByMonth{v: v, cluster: cluster}
	for {
		t, rows, err := it.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return history.DamageHint(err, opt.history, v.Generation())
		}
		if !opt.to.IsZero() && t.After(opt.to) {
			return nil
		}
		pending, err := pend.at(t)
		if err != nil {
			return history.DamageHint(err, opt.history, v.Generation())
		}
		s, err := metricsSnapshot(v, opt.history, cluster, t, rows, pending)
		if err != nil {
			return err
		}
		if err := om.Add(&s); err != nil {
			return err
		}
	}
}

// metricsSnapshot is the metrics.Snapshot of cluster's rows at t: the
// release rules of sshare's account FairShare and the lab recovery from
// the run settings of t.
func metricsSnapshot(v *history.View, dir, cluster string, t time.Time, rows []record.FairshareRow, pending []record.PriorityRow) (metrics.Snapshot, error) {
	cfg, err := v.RunConfig(cluster, t)
	if err != nil {
		return metrics.Snapshot{}, history.DamageHint(err, dir, v.Generation())
	}
	damp := float64(max(cfg.DampeningFactor, 1))
	s := metrics.Snapshot{Cluster: cluster, Time: t, Rows: rows, DampeningFactor: damp, Pending: pending}
	if rel, err := release.Parse(cfg.SlurmVersion); err == nil && len(rows) > 0 {
		if algo, err := fairshare.ParseAlgorithm(rows[0].Algorithm); err == nil {
			s.AccountFairShare, _ = fairshare.SshareRelease(rel, algo)
		}
	}
	s.RecoverySeconds = map[string]float64{}
	recs, err := report.LabRecoveries(rows, cfg.HalfLifeSec)
	if err != nil {
		recs = nil // rows that make no tree: no samples
	}
	for _, acct := range recoveryAccounts(rows) {
		r, ok := recs[acct]
		if !ok {
			continue // not an account of the snapshot's tree: no sample
		}
		switch r.State {
		case report.RecoveryWithin:
			s.RecoverySeconds[acct] = 0
		case report.RecoveryAfter:
			s.RecoverySeconds[acct] = float64(r.Seconds)
		case report.RecoveryNever, report.RecoveryNoDecay, report.RecoveryNoShares:
			s.RecoverySeconds[acct] = math.Inf(1)
		}
	}
	return s, nil
}

// recoveryAccounts are the labs of rows: the accounts with a user
// association of their own, sorted (the lab report's accounts).
func recoveryAccounts(rows []record.FairshareRow) []string {
	var out []string
	for i := range rows {
		if rows[i].IsUser && rows[i].Account != "root" {
			out = append(out, rows[i].Account)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// pendingByMonth reads a cluster's priority partitions a month at a
// time, for snapshots that come in time order.
type pendingByMonth struct {
	v       *history.View
	cluster string
	months  []time.Time // the months with a priority partition, once read
	read    bool
	month   time.Time
	byAt    map[int64][]record.PriorityRow
}

// at returns the pending rows at t.
func (p *pendingByMonth) at(t time.Time) ([]record.PriorityRow, error) {
	if !p.read {
		ms, err := p.v.Months(schemas.TablePriority, p.cluster)
		if err != nil {
			return nil, err
		}
		p.months, p.read = ms, true
	}
	m := schemas.MonthStart(t)
	if p.byAt == nil || !m.Equal(p.month) {
		p.month, p.byAt = m, map[int64][]record.PriorityRow{}
		if slices.ContainsFunc(p.months, m.Equal) {
			var rows []record.PriorityRow
			if err := p.v.ReadPartition(schemas.TablePriority, p.cluster, m, &rows); err != nil {
				return nil, err
			}
			for _, r := range rows {
				if r.Event == record.EventPending {
					k := r.At.UnixMicro()
					p.byAt[k] = append(p.byAt[k], r)
				}
			}
		}
	}
	return p.byAt[t.UnixMicro()], nil
}

// metricsClusters are the clusters to write: the one of --cluster, or
// every cluster with fair-share snapshots.
func metricsClusters(v *history.View, dir, cluster string) ([]string, error) {
	if cluster != "" {
		cl, err := sshareCluster(v, dir, cluster)
		return []string{cl}, err
	}
	clusters := v.Clusters(schemas.TableFairshare)
	if len(clusters) == 0 {
		return nil, fmt.Errorf("history %s has no fair-share snapshots yet (run fairledger run first)", dir)
	}
	return slices.Clone(clusters), nil
}
