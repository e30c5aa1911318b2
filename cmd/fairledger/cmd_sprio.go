package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/billing"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/priority"
)

func sprioCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "sprio",
		Usage: "print the jobs waiting at a past moment and their priority factors exactly as sprio printed them then",
		Description: "Shows the jobs waiting at --at, any second of one cluster's history (default: the latest snapshot), " +
			"with the factors slurmctld had last computed for them: at the last decay tick at or before that second, " +
			"or at submission or release when later (docs/slurm-semantics.md §13). The queue of a second without a stored snapshot is " +
			"replayed from the history's state at the snapshot or run start before it (docs/moments.md); stderr says which. " +
			"The layout is sprio's of the history's Slurm release (run --slurm-version); -P prints every column whole, '|'-separated. " +
			"What no record holds is not shown: holds placed on a job already pending, a nice changed after submission, " +
			"an administrator's priority, the site factor, and the jobs sacct never recorded as eligible. " +
			"--wait JOBID follows one job instead: its priority, rank and factors at every decay tick of its wait (docs/sprio.md).",
		UseShortOptionHandling: true,
		Flags: append(pastFlags("show the queue at this second (YYYY-MM-DD[THH:MM[:SS]] in --tz, RFC 3339 or @UNIX; default: the latest snapshot)"),
			&cli.BoolFlag{Name: "long", Aliases: []string{"l"}, Usage: "every factor (sprio -l)"},
			&cli.BoolFlag{Name: "norm", Aliases: []string{"n"}, Usage: "the normalised factors instead of the weighted ones (sprio -n)"},
			&cli.BoolFlag{Name: "weights", Aliases: []string{"w"}, Usage: "the weights of each factor (sprio -w)"},
			&cli.BoolFlag{Name: "noheader", Usage: "omit the header (sprio -h, which is --help here)"},
			&cli.BoolFlag{Name: "parsable", Aliases: []string{"P"}, Usage: "'|'-separated columns, none cut, with a header"},
			&cli.StringFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "comma-separated job ids (sprio -j)"},
			&cli.StringFlag{Name: "users", Aliases: []string{"u"}, Usage: "comma-separated users (sprio -u)"},
			&cli.StringFlag{Name: "accounts", Aliases: []string{"A"}, Usage: "comma-separated accounts"},
			&cli.StringFlag{Name: "partitions", Aliases: []string{"p"}, Usage: "comma-separated partitions (sprio -p)"},
			&cli.StringFlag{Name: "format", Aliases: []string{"o"}, Usage: "sprio's output format, e.g. '%.15i %9r %.10Y'"},
			&cli.StringFlag{Name: "wait", Usage: "instead of one queue, job `JOBID` over its whole wait: its priority, rank and weighted factors " +
				"at every decay tick from eligible to start, and what moved it (docs/sprio.md, One job's wait); with -P, --noheader, --tz, --cluster"},
			tzFlag(),
		),
		Action: func(c *cli.Context) error {
			log := newLogger(c, stderr)
			if err := noArgs(c); err != nil {
				return err
			}
			if c.IsSet("wait") {
				return sprioWait(c, log, stdout)
			}
			loc, at, err := atFlag(c)
			if err != nil {
				return err
			}
			var jobs []uint32
			for _, s := range splitList(c.String("jobs")) {
				n, err := strconv.ParseUint(s, 10, 32)
				if err != nil {
					return usagef("--jobs: %q is not a job id", s)
				}
				jobs = append(jobs, uint32(n))
			}
			dir := c.String("history")
			v, err := pinHistory(dir)
			if err != nil {
				return err
			}
			defer v.Close()
			cluster, err := sshareCluster(v, dir, c.String("cluster"))
			if err != nil {
				return err
			}
			past, err := fairshareAt(v, dir, cluster, at)
			if err != nil {
				return err
			}
			snap := past.Snapshot
			if snap.Time.IsZero() || snap.Before {
				return fmt.Errorf("history %s: cluster %s has no fair-share snapshot at or before %s", dir, cluster, at.In(loc).Format(time.RFC3339))
			}
			cfg, err := v.RunConfig(cluster, snap.Time)
			if err != nil {
				return history.DamageHint(err, dir, v.Generation())
			}
			if cfg.PriorityWeights == nil {
				return fmt.Errorf("history %s: the run that wrote cluster %s's snapshot of %s computed no job priority (a history written before fairledger did)",
					dir, cluster, snap.Time.In(loc).Format(time.RFC3339))
			}
			rows := past.priority()
			if rows == nil {
				if rows, err = v.PriorityAt(cluster, snap.Time); err != nil {
					return history.DamageHint(err, dir, v.Generation())
				}
			}
			opt := priority.SprioOptions{Long: c.Bool("long"), Norm: c.Bool("norm"), ShowWeights: c.Bool("weights"),
				NoHeader: c.Bool("noheader"), Format: c.String("format"), Parsable: c.Bool("parsable"), Jobs: jobs,
				Users: splitList(c.String("users")), Accounts: splitList(c.String("accounts")),
				Partitions: splitList(c.String("partitions")), TRES: cfg.TRES}
			if rel, err := release.Parse(cfg.SlurmVersion); err == nil {
				opt.Release = rel
			}
			if opt.Weights, err = sprioWeights(cfg.PriorityWeights, cfg.TRES); err != nil {
				return err
			}
			if err := priority.CheckSprioOptions(opt); err != nil {
				return usagef("%v", err)
			}
			computed := snap.Time
			for _, r := range rows {
				if r.ComputedAt.Before(computed) {
					computed = r.ComputedAt
				}
			}
			what := "stored snapshot " + snap.Time.In(loc).Format(time.RFC3339)
			if m := past.moment; m != nil {
				what = fmt.Sprintf("moment %s, replayed from the history's state at %s (decay tick %s)",
					m.Time.In(loc).Format(time.RFC3339), m.Seed.In(loc).Format(time.RFC3339), m.Tick.In(loc).Format(time.RFC3339))
			} else if past.noMoment != nil {
				what += fmt.Sprintf(", not the moment %s itself: %v (docs/moments.md)", at.In(loc).Format(time.RFC3339), past.noMoment)
			}
			log.Info().Str("cluster", cluster).Str("snapshot", snap.Time.In(loc).Format(time.RFC3339)).Int("jobs", len(rows)).
				Msgf("the queue at %s of cluster %s, each job's factors as slurmctld last computed them (the last decay tick at or before it, or the job's submission or release when later)",
					what, cluster)
			return priority.WriteSprio(stdout, sprioRows(rows, cfg.TRES), opt)
		},
	}
}

// sprioWait runs sprio --wait (runSprioWait) after checking its flags.
func sprioWait(c *cli.Context, log zerolog.Logger, stdout io.Writer) error {
	for _, f := range []string{"at", "long", "norm", "weights", "format", "jobs", "users", "accounts", "partitions"} {
		if c.IsSet(f) {
			return usagef("--wait prints one job's wait in columns of its own: drop --%s (it takes -P, --noheader, --tz and --cluster)", f)
		}
	}
	s := c.String("wait")
	job, err := strconv.ParseUint(s, 10, 32)
	if err != nil || job == 0 {
		return usagef("--wait: %q is not a job id (the JOBID sacct and squeue print; for an array task, its raw id, JobIDRaw)", s)
	}
	loc, err := location(c.String("tz"))
	if err != nil {
		return err
	}
	return runSprioWait(c.Context, log, stdout, waitOptions{dir: c.String("history"), cluster: c.String("cluster"), job: int64(job), loc: loc,
		parsable: c.Bool("parsable"), noHeader: c.Bool("noheader")})
}

// sprioWeights are the run's priority weights, TRES weights laid out in
// the order of the cluster's TRES.
func sprioWeights(pw *record.PriorityWeights, tres []string) (priority.Weights, error) {
	u32 := func(v int64) uint32 { return uint32(min(max(v, 0), math.MaxUint32)) }
	w := priority.Weights{Age: u32(pw.Age), Assoc: u32(pw.Assoc), FairShare: u32(pw.FairShare), JobSize: u32(pw.JobSize),
		Partition: u32(pw.Partition), QOS: u32(pw.QOS), TRESConfig: pw.TRES}
	if pw.TRES != "" {
		ws, err := billing.ParseWeights(pw.TRES, tres)
		if err != nil {
			return w, fmt.Errorf("PriorityWeightTRES=%s: %w", pw.TRES, err)
		}
		w.TRES = make([]float64, len(tres))
		for i, t := range tres {
			w.TRES[i], _ = ws.Get(t)
		}
	}
	return w, nil
}

// sprioRows turns the history's priority rows back into sprio's rows.
func sprioRows(rows []record.PriorityRow, tres []string) []priority.Row {
	out := make([]priority.Row, 0, len(rows))
	for _, r := range rows {
		p := priority.Row{JobID: uint32(r.JobID), User: r.User, Account: r.Account, Partition: r.Partition, QOS: r.QOS,
			Site: r.Site, Nice: r.Nice, Priority: uint32(min(max(r.Priority, 0), math.MaxUint32))}
		p.Weighted = priority.Factors{Age: r.AgeW, Assoc: r.AssocW, FairShare: r.FairShareW, JobSize: r.JobSizeW,
			Partition: r.PartitionW, QOS: r.QOSW, TRES: make([]float64, len(tres))}
		for i, t := range tres {
			p.Weighted.TRES[i] = r.TRESW[t]
		}
		out = append(out, p)
	}
	// The history's order is by job id and partition name; sprio lists a
	// job's partitions in the order slurmctld tried them, which the rows'
	// order within a job does not keep: by job id, as sprio sorts.
	slices.SortStableFunc(out, func(a, b priority.Row) int { return int(int64(a.JobID) - int64(b.JobID)) })
	return out
}
