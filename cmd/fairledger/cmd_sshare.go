package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/schemas"
)

func sshareCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "sshare",
		Usage: "print a fair-share snapshot of the history exactly as sshare printed it then",
		Description: "Shows the fair share of one cluster at --at, any second of its history (default: the latest snapshot): " +
			"the stored snapshot of that second, else the moment replayed from the history's state at the snapshot or run start before it " +
			"(docs/moments.md): the values of slurmctld's last decay tick at or before --at, and RawUsage and TRESRunMins at the instant --at.000; " +
			"stderr says which. A part of the history written before fairledger kept moments shows the stored snapshot at or before --at, with a note. " +
			"An --at before the cluster's history shows its first snapshot's associations with zero usage, as slurmctld prints them before its first decay tick " +
			"(exit 0, with a note on stderr). " +
			"RawUsage is slurmctld's at that second: with AccountingStorageEnforce=limits it includes the jobs that ended " +
			"since the last decay tick, charged at their end (a job ending in the second asked still runs at its instant); the other usage and fair-share columns are those of the tick. " +
			"Rows as sshare selects them: without -a, all account rows and the user rows of --users, " +
			"else of $USER, else of the current user (none when that fails); --accounts keeps the rows of the named accounts only (not their " +
			"sub-accounts), as slurmctld does. GrpTRESMins is each association's limit from the " +
			"association dump's GrpTRESMins column or the sacctmgr script's GrpTRESMins/GrpCPUMins (blank without one), printed as sshare does (raw counts, " +
			"mem in MiB, in TRES order); TRESRunMins lists every TRES of the cluster with the TRES-minutes " +
			"that the jobs running at that second (of the association and all below it) still hold of " +
			"their time limits, × UsageFactor, as slurmctld counts them with AccountingStorageEnforce=limits " +
			"(all 0 without limits); the FairShare of classic accounts is blank, as in sshare ≥ 25.11.",
		UseShortOptionHandling: true,
		Flags: append(pastFlags("show the fair share at this second (YYYY-MM-DD[THH:MM[:SS]] in --tz, RFC 3339 or @UNIX; "+
			"default: the latest snapshot; before the history: its first snapshot's associations with zero usage)"),
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "list all users (sshare -a)"},
			&cli.BoolFlag{Name: "long", Aliases: []string{"l"}, Usage: "add NormUsage, LevelFS (Fair Tree), GrpTRESMins and TRESRunMins (sshare -l)"},
			&cli.BoolFlag{Name: "parsable2", Aliases: []string{"P"}, Usage: "'|'-separated output without a trailing '|' (sshare -P)"},
			&cli.BoolFlag{Name: "parsable", Aliases: []string{"p"}, Usage: "'|'-separated output with a trailing '|' (sshare -p)"},
			&cli.BoolFlag{Name: "noheader", Aliases: []string{"n"}, Usage: "omit the header (sshare -n)"},
			&cli.BoolFlag{Name: "partition", Aliases: []string{"m"}, Usage: "add the Partition column (sshare -m)"},
			&cli.StringFlag{Name: "accounts", Aliases: []string{"A"}, Usage: "comma-separated accounts: only their own rows (sshare -A)"},
			&cli.StringFlag{Name: "users", Aliases: []string{"u"}, Usage: "comma-separated users whose rows are listed (sshare -u; default: $USER)"},
			tzFlag(),
			&cli.StringFlag{Name: "format", Aliases: []string{"o"}, Usage: "comma-separated fields, each a prefix of a column name with an optional %LENGTH (-1024..1024, negative left-justifies), instead of the default columns (sshare -o), e.g. account,fairshare"},
		),
		Action: func(c *cli.Context) error {
			log := newLogger(c, stderr)
			if err := noArgs(c); err != nil {
				return err
			}
			if c.Bool("parsable") && c.Bool("parsable2") {
				return usagef("-p and -P exclude each other")
			}
			if err := fairshare.CheckSshareFields(splitList(c.String("format"))); err != nil {
				return usagef("--format: %v", err)
			}
			loc, at, err := atFlag(c)
			if err != nil {
				return err
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
			if len(snap.Rows) == 0 {
				return fmt.Errorf("history %s: the fair-share partitions of cluster %s hold no rows", dir, cluster)
			}
			tree, res, err := pipeline.SshareTree(snap.Rows, snap.Time)
			if err != nil {
				return err
			}
			cfg, err := v.RunConfig(snap.Cluster, snap.Time)
			if err != nil {
				return history.DamageHint(err, dir, v.Generation())
			}
			if snap.Before {
				// Before the history's first snapshot: the tree as
				// slurmctld prints it before its first decay tick.
				zeroUsage(tree, res, float64(max(cfg.DampeningFactor, 1)))
				log.Warn().Str("cluster", snap.Cluster).Str("at", at.In(loc).Format(time.RFC3339)).
					Str("first_snapshot", snap.Time.In(loc).Format(time.RFC3339)).
					Msgf("%s is before the history of cluster %s, whose first snapshot is at %s: its associations with zero usage, as slurmctld prints them before its first decay tick",
						at.In(loc).Format(time.RFC3339), snap.Cluster, snap.Time.In(loc).Format(time.RFC3339))
			}
			// The release rules of sshare (fairshare.SshareRelease); a run
			// that recorded no release series prints as the newest.
			accountFS, nameOrder := false, false
			if rel, err := release.Parse(cfg.SlurmVersion); err == nil {
				accountFS, nameOrder = fairshare.SshareRelease(rel, res.Algorithm)
			}
			if accountFS {
				fairshare.AccountFairShares(tree, res, float64(max(cfg.DampeningFactor, 1)))
			}
			opt := fairshare.SshareOptions{
				Long:             c.Bool("long"),
				FixedWidth:       !c.Bool("parsable") && !c.Bool("parsable2"),
				TrailingSep:      c.Bool("parsable"),
				NoHeader:         c.Bool("noheader"),
				Partitions:       c.Bool("partition"),
				Accounts:         splitList(c.String("accounts")),
				Fields:           splitList(c.String("format")),
				Cluster:          snap.Cluster,
				TRES:             cfg.TRES,
				AccountFairShare: accountFS,
				NameOrder:        nameOrder,
			}
			if !snap.Before {
				opt.TRESRunMins = record.TRESRunMinsFromRows(snap.Rows, tree)
			}
			// sshare.c: -a lists every user; otherwise the -u list, or
			// the calling user when there is none (src/sshare/sshare.c).
			if !c.Bool("all") {
				opt.Users = splitList(c.String("users"))
				if len(opt.Users) == 0 {
					name, err := callerName(os.Getenv, user.Current)
					if err != nil {
						log.Warn().Err(err).Msg("cannot tell who is calling: no user rows shown (pass -u USER or -a)")
						opt.NoUserRows = true
					} else {
						opt.Users = []string{name}
					}
				}
			}
			if snap.Before {
				return fairshare.WriteSshare(stdout, tree, res, opt)
			}
			past.note(log, loc, at, snap.Rows[0].Algorithm)
			return fairshare.WriteSshare(stdout, tree, res, opt)
		},
	}
}

// pastState is the fair share a command shows for --at: a stored
// snapshot, or a moment replayed from the history (pipeline.Moment).
type pastState struct {
	history.Snapshot
	// moment is the replay; nil for a stored snapshot.
	moment *pipeline.MomentResult
	// noMoment says why a stored snapshot before --at is shown instead
	// of the moment (nil: none was asked for, or it is --at's own).
	noMoment error
}

// fairshareAt is cluster's fair share at at (zero: the latest snapshot)
// in v, the pinned generation of the history in dir: the stored snapshot
// of that second, else the moment replayed from the history, else (a
// part of the history without moment seeds) the stored snapshot at or
// before at.
func fairshareAt(v *history.View, dir, cluster string, at time.Time) (pastState, error) {
	snap, err := v.Snapshot(cluster, at)
	if err != nil {
		return pastState{}, history.DamageHint(err, dir, v.Generation())
	}
	if at.IsZero() || !snap.Before && snap.Time.Equal(at) {
		return pastState{Snapshot: snap}, nil
	}
	m, err := pipeline.Moment(v, cluster, at)
	switch {
	case errors.Is(err, pipeline.ErrNoMoment):
		return pastState{Snapshot: snap, noMoment: err}, nil
	case err != nil:
		return pastState{}, history.DamageHint(err, dir, v.Generation())
	}
	return pastState{Snapshot: history.Snapshot{Cluster: cluster, Time: m.Time, Rows: m.Rows}, moment: m}, nil
}

// priority are the priority rows of a moment; nil for a stored snapshot
// (history.View.PriorityAt reads its rows).
func (p pastState) priority() []record.PriorityRow {
	if p.moment == nil {
		return nil
	}
	return p.moment.Priority
}

// note says on stderr what p is: a stored snapshot or a moment, and of
// which decay tick.
func (p pastState) note(log zerolog.Logger, loc *time.Location, at time.Time, algorithm string) {
	f := func(t time.Time) string { return t.In(loc).Format(time.RFC3339) }
	if p.moment != nil {
		m := p.moment
		log.Info().Str("cluster", p.Cluster).Str("at", f(m.Time)).Str("tick", f(m.Tick)).Str("replayed_from", f(m.Seed)).Str("algorithm", algorithm).
			Msgf("moment %s of cluster %s, replayed from the history's state at %s: fair share as of slurmctld's decay tick at %s; "+
				"RawUsage (with limits: the jobs ended since the tick) and TRESRunMins as of the instant %s.000; %s",
				f(m.Time), p.Cluster, f(m.Seed), f(m.Tick), f(m.Time), algorithm)
		return
	}
	ev := log.Info().Str("cluster", p.Cluster).Str("snapshot", f(p.Time)).Str("algorithm", algorithm)
	if !at.IsZero() {
		ev = ev.Str("at", f(at))
	}
	why := ""
	if p.noMoment != nil {
		why = fmt.Sprintf("; not the moment %s itself: %v (docs/moments.md)", f(at), p.noMoment)
	}
	ev.Msgf("stored snapshot %s (fair share as of the last decay tick at or before it; with limits, RawUsage includes the jobs ended since), cluster %s, %s%s",
		f(p.Time), p.Cluster, algorithm, why)
}

// pastFlags are the flags of a command that prints a view of a past
// snapshot (sshare, sprio): --history, --at (atUsage says what it picks)
// and --cluster; tzFlag goes with them.
func pastFlags(atUsage string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "history", Usage: "history directory", Required: true},
		&cli.StringFlag{Name: "at", Usage: atUsage},
		&cli.StringFlag{Name: "cluster", Aliases: []string{"M"}, Usage: "cluster (needed when the history holds several)"},
	}
}

// tzFlag is --tz of the commands of pastFlags, which atFlag reads.
func tzFlag() cli.Flag {
	return &cli.StringFlag{Name: "tz", Usage: "time zone of --at and of the times reported (default: $TZ, else UTC)"}
}

// atFlag reads --tz and --at: the zone, and the time in it (zero when
// --at is not given).
func atFlag(c *cli.Context) (*time.Location, time.Time, error) {
	loc, err := location(c.String("tz"))
	if err != nil {
		return nil, time.Time{}, err
	}
	s := c.String("at")
	if s == "" {
		return loc, time.Time{}, nil
	}
	at, err := parseTime("at", s, loc)
	if err != nil {
		return nil, time.Time{}, err
	}
	return loc, at.In(loc), nil
}

// pinHistory pins the committed generation of the history in dir for a
// command that only reads it: a run committing meanwhile changes nothing
// read through the view. A missing directory is an error (history.Open
// would create it). The caller closes the view.
func pinHistory(dir string) (*history.View, error) {
	if err := history.CheckExists(dir); err != nil {
		return nil, err
	}
	h, err := history.Open(dir)
	if err != nil {
		return nil, err
	}
	return h.View()
}

// callerName is the user whose rows sshare shows by default: $USER, else
// the account of the process's uid (as sshare asks slurmctld for the uid's
// own associations). getenv and current are os.Getenv and user.Current
// outside tests.
func callerName(getenv func(string) string, current func() (*user.User, error)) (string, error) {
	if u := getenv("USER"); u != "" {
		return u, nil
	}
	u, err := current()
	if err != nil {
		return "", fmt.Errorf("$USER is unset and the current user is unknown: %w", err)
	}
	if u.Username == "" {
		return "", fmt.Errorf("$USER is unset and uid %s has no user name", u.Uid)
	}
	return u.Username, nil
}

// zeroUsage recomputes res for tree with every association's usage 0, by
// the algorithm that filled it: what slurmctld's sshare prints before its
// first decay tick, when no usage_raw has been set yet (every
// association's usage starts at 0 in assoc_mgr; NormUsage and EffectvUsage
// are 0, and Fair Tree ranks the users by LevelFS, +Inf for all of them).
// damp is FairShareDampeningFactor (classic and depth-oblivious).
func zeroUsage(tree *fairshare.Tree, res *fairshare.Result, damp float64) {
	usage := make([]float64, tree.Len())
	fairshare.Compute(res.Algorithm, tree, usage, damp, res)
}

// sshareCluster picks the cluster of --cluster in v, the pinned
// generation of the history in dir: the one given, or the only one the
// history's fair-share snapshots have.
func sshareCluster(v *history.View, dir, cluster string) (string, error) {
	clusters := v.Clusters(schemas.TableFairshare)
	switch {
	case len(clusters) == 0:
		return "", fmt.Errorf("history %s has no fair-share snapshots yet (run fairledger run first)", dir)
	case cluster == "" && len(clusters) > 1:
		return "", usagef("history %s holds clusters %s: choose one with --cluster", dir, strings.Join(clusters, ", "))
	case cluster == "":
		return clusters[0], nil
	case !slices.Contains(clusters, cluster):
		return "", fmt.Errorf("history %s has no fair-share snapshots of cluster %q (clusters: %s)", dir, cluster, strings.Join(clusters, ", "))
	}
	return cluster, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
