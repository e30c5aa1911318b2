package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/report"
	"github.com/fairledger/fairledger/export/whatif"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/pipeline"
)

func whatifCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "whatif",
		Usage: "replay the history's fair share under another half-life, calc period, reset period, algorithm, shares or tree, and compare",
		Description: "Replays the fair share of one cluster from the history alone (its moment seeds: every job decay charged, the ticks slurmctld's log gave, " +
			"the configuration of each run; no sacct file) under the changed settings, from the history's first seed on, and compares every stored snapshot " +
			"in --from..--to with the replay (docs/whatif.md). Nothing is written to the history. " +
			"--set takes slurm.conf lines of the keys that change decay, the fair-share algorithm and billing: PriorityDecayHalfLife, PriorityCalcPeriod " +
			"(the replay then ticks on the new period from the history's start, as slurmctld would have), PriorityUsageResetPeriod, PriorityFlags " +
			"(MAX_TRES too), FairShareDampeningFactor, AccountingStorageTRES, and a partition's weights as \"PartitionName=NAME TRESBillingWeights=…\" " +
			"(NAME DEFAULT: every partition). A changed billing or UsageFactor (--usage-factor, --qos) bills every job again from the history's jobs table " +
			"(its allocated TRES, partition and QOS). --shares sets an association's raw shares " +
			"in every tree of the history; --assoc replaces the trees with a sacctmgr dump (or a directory of dated dumps), whose associations the jobs are " +
			"charged to by account, user and partition (a job of an association it lacks is charged to its account, else to root, and named on stderr). " +
			"The Markdown and HTML forms list the change, both sides' settings, the labs that gain and lose most (their users' FairShare, averaged over the snapshots), " +
			"every lab at the last snapshot with its days to recover at zero use under each side, and what a replay cannot know; the HTML form charts each of " +
			"the labs that gain and lose most, its users' FairShare and its NormUsage over the snapshots, recorded against replayed. Where the history has job priority " +
			"(run --priority) the replay ranks the jobs waiting at each snapshot too, PriorityWeight*, PriorityMaxAge and PriorityFavorSmall can change, and the " +
			"Markdown and HTML forms list the waiting jobs that moved most in their partition's queue (--jobs-out: every one); the CSV form has one line " +
			"per association and snapshot with each column recorded and replayed, and the Parquet form the same rows (for DuckDB: read_parquet). A replay that changes nothing gives the stored snapshots bit for bit.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "history", Usage: "history directory", Required: true},
			&cli.StringFlag{Name: "cluster", Aliases: []string{"M"}, Usage: "cluster (needed when the history holds several)"},
			&cli.StringFlag{Name: "from", Usage: "compare the snapshots from this time on (YYYY-MM-DD[THH:MM[:SS]] in --tz, RFC 3339 or @UNIX; default: the first)"},
			&cli.StringFlag{Name: "to", Usage: "compare the snapshots up to this time (default: the last)"},
			tzFlag(),
			&cli.GenericFlag{Name: "set", Value: &lines{}, Usage: "a slurm.conf line to change (repeatable; taken whole, commas too), e.g. PriorityDecayHalfLife=3-12 or 'PartitionName=gpu TRESBillingWeights=CPU=1,GRES/gpu=10'"},
			&cli.StringFlag{Name: "set-file", Usage: "a file of slurm.conf lines to change, one per line as --set takes them (blank lines and # comments skipped); before --set's"},
			&cli.StringSliceFlag{Name: "shares", Usage: "ACCOUNT[/USER[/PARTITION]]=N or =parent: the association's raw shares in every tree (repeatable)"},
			&cli.StringSliceFlag{Name: "usage-factor", Usage: "QOS=F: the QOS's UsageFactor in every QOS dump of the history (repeatable)"},
			&cli.StringFlag{Name: "qos", Usage: "a sacctmgr -P show qos dump whose UsageFactors replace the history's"},
			&cli.StringFlag{Name: "assoc", Usage: "a sacctmgr -P show assoc dump (a file, or a directory of dated dump files assoc-YYYY-MM-DD.psv, as run --assoc takes) whose tree replaces the history's"},
			&cli.StringFlag{Name: "format", Value: "markdown", Usage: "markdown, html (one page with charts, in the lab reports' style), csv or parquet (the CSV's rows; needs --out)"},
			&cli.StringFlag{Name: "jobs-out", Usage: "with job priority in the history: write every waiting job at every snapshot compared, its rank in its partition's queue recorded and replayed, to this CSV file"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "-", Usage: "write to this file, replaced atomically when the replay succeeds (- for stdout)"},
		},
		Action: func(c *cli.Context) error {
			log := newLogger(c, stderr)
			if err := noArgs(c); err != nil {
				return err
			}
			format := c.String("format")
			switch format {
			case "markdown", "csv", "html":
			case "parquet":
				if c.String("out") == "-" {
					return usagef("--format parquet writes a file: give it with --out")
				}
			default:
				return usagef("--format %q: want markdown, html, csv or parquet", format)
			}
			loc, err := location(c.String("tz"))
			if err != nil {
				return err
			}
			var opt pipeline.WhatIfOptions
			for _, f := range []struct {
				name string
				dst  *time.Time
			}{{"from", &opt.From}, {"to", &opt.To}} {
				if s := c.String(f.name); s != "" {
					if *f.dst, err = parseTime(f.name, s, loc); err != nil {
						return err
					}
				}
			}
			change, lines, err := whatifChange(c, loc)
			if err != nil {
				return err
			}
			opt.Change = change
			if out := c.String("out"); out != "-" {
				if err := outsideHistory("out", out, c.String("history")); err != nil {
					return err
				}
			}
			var jobsOut *outFile
			if p := c.String("jobs-out"); p != "" {
				if err := outsideHistory("jobs-out", p, c.String("history")); err != nil {
					return err
				}
				if jobsOut, err = createOutput(p, stdout); err != nil {
					return err
				}
				defer jobsOut.Discard()
			}
			dir := c.String("history")
			v, err := pinHistory(dir)
			if err != nil {
				return err
			}
			defer v.Close()
			if opt.Cluster, err = sshareCluster(v, dir, c.String("cluster")); err != nil {
				return err
			}
			err = writeOutput(c.String("out"), stdout, func(w io.Writer) error {
				copt := whatif.Options{Cluster: opt.Cluster, Change: lines, Recover: labRecovery}
				if jobsOut != nil {
					copt.JobsCSV = jobsOut
				}
				switch format {
				case "csv":
					copt.CSV = w
				case "parquet":
					copt.Parquet = w
				}
				cmp, err := whatif.New(copt)
				if err != nil {
					return err
				}
				sum, err := pipeline.WhatIf(v, opt, func(s *pipeline.WhatIfSnapshot) error {
					if err := cmp.Add(s.Time, s.Recorded, s.Replayed); err != nil {
						return err
					}
					if s.ReplayedQueue == nil {
						return nil
					}
					return cmp.AddQueue(s.Time, s.RecordedQueue, s.ReplayedQueue)
				})
				if err != nil {
					return err
				}
				cmp.SetSettings(settingsOf(sum.Recorded), settingsOf(sum.Replayed))
				ev := log.Info().Str("cluster", opt.Cluster).Int("seeds", sum.Seeds).Int("snapshots", sum.Snapshots).
					Str("from", sum.First.In(loc).Format(time.RFC3339))
				if sum.Regular {
					ev = ev.Bool("regular_ticks", true)
				}
				ev.Msg("replayed from the history's first seed")
				if sum.Regular {
					log.Warn().Msg("PriorityCalcPeriod changed: the replay ticks on the new period's regular grid, not at the ticks slurmctld's log gave")
				}
				if len(sum.Folded) > 0 {
					log.Warn().Strs("associations", sum.Folded).Msg("associations of the history that the changed trees lack: their jobs are charged to their account (or to root without it)")
				}
				if sum.Unbilled > 0 || sum.Ambiguous > 0 {
					log.Warn().Int64("without_row", sum.Unbilled).Int64("ambiguous", sum.Ambiguous).
						Msg("billed again from the jobs table: jobs it has no row for keep their recorded rate; ambiguous ones (alike in account, user, start second, recorded rate and end, with rows billed differently) took those rows in turn")
				}
				if sum.StartUsage {
					log.Warn().Msg("the history's first seed holds usage from before it (the history began from an older one's checkpoint): it is carried into the replay as recorded")
				}
				if sum.Snapshots == 0 {
					log.Warn().Msg("no stored snapshot in --from..--to: nothing compared")
				}
				switch format {
				case "parquet":
					return cmp.Close()
				case "markdown":
					return cmp.WriteMarkdown(w)
				case "html":
					res, err := cmp.Result()
					if err != nil {
						return err
					}
					return report.WriteWhatIfHTML(w, res)
				}
				return nil
			})
			if err == nil && jobsOut != nil {
				err = jobsOut.Commit()
			}
			return err
		},
	}
}

// whatifChange reads --set, --shares and --assoc, and returns the change
// with its lines as the comparison names them.
func whatifChange(c *cli.Context, loc *time.Location) (pipeline.WhatIfChange, []string, error) {
	ch := pipeline.WhatIfChange{Conf: *c.Generic("set").(*lines), ConfName: "--set"}
	if p := c.String("set-file"); p != "" {
		file, err := setFileLines(p)
		if err != nil {
			return ch, nil, err
		}
		ch.ConfName = p
		if len(ch.Conf) > 0 {
			ch.ConfName = p + " then --set (numbered on after its lines)"
		}
		ch.Conf = append(file, ch.Conf...)
	}
	var lines []string
	for _, l := range ch.Conf {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			lines = append(lines, t)
		}
	}
	for _, s := range c.StringSlice("shares") {
		x, err := parseShares(s)
		if err != nil {
			return ch, nil, err
		}
		ch.Shares = append(ch.Shares, x)
		lines = append(lines, "shares "+x.String())
	}
	if p := c.String("qos"); p != "" {
		f, err := os.Open(p)
		if err != nil {
			return ch, nil, fmt.Errorf("--qos: %w", err)
		}
		q, _, err := ingest.ParseQOS(p, f)
		f.Close()
		if err != nil {
			return ch, nil, err
		}
		ch.QOS = q
		lines = append(lines, "the QOS of "+p)
	}
	for _, s := range c.StringSlice("usage-factor") {
		name, val, ok := strings.Cut(s, "=")
		f, err := strconv.ParseFloat(val, 64)
		if !ok || name == "" || err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return ch, nil, usagef("--usage-factor %q: want QOS=F, F a number ≥ 0", s)
		}
		ch.UsageFactors = append(ch.UsageFactors, pipeline.WhatIfUsageFactor{QOS: name, Factor: f})
		lines = append(lines, "UsageFactor "+name+"="+val)
	}
	if p := c.String("assoc"); p != "" {
		fi, err := os.Stat(p)
		if err != nil {
			return ch, nil, fmt.Errorf("--assoc: %w", err)
		}
		if fi.IsDir() {
			d, _, err := ingest.ReadAssocDir(p, loc)
			if err != nil {
				return ch, nil, err
			}
			ch.Assoc = d
		} else {
			a, _, err := ingest.ReadAssocFile(p)
			if err != nil {
				return ch, nil, err
			}
			ch.Assoc = []ingest.DatedAssociations{{Assoc: a}}
		}
		lines = append(lines, "the association tree of "+p)
	}
	return ch, lines, nil
}

// setFileLines reads the slurm.conf lines of --set-file, each line as it
// is (ingest.Config.With skips blank lines and # comments, and numbers
// the others by their line in the file).
func setFileLines(p string) ([]string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("--set-file: %w", err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), nil
}

// lines is a flag's values, one per use, each taken whole: a slurm.conf
// line holds commas that a StringSliceFlag would split at.
type lines []string

func (l *lines) Set(s string) error { *l = append(*l, s); return nil }
func (l *lines) String() string     { return strings.Join(*l, "\n") }

// parseShares reads ACCOUNT[/USER[/PARTITION]]=N or =parent.
func parseShares(s string) (pipeline.WhatIfShares, error) {
	name, val, ok := strings.Cut(s, "=")
	parts := strings.Split(name, "/")
	if !ok || parts[0] == "" || len(parts) > 3 {
		return pipeline.WhatIfShares{}, usagef("--shares %q: want ACCOUNT[/USER[/PARTITION]]=N or =parent", s)
	}
	x := pipeline.WhatIfShares{Account: parts[0]}
	if len(parts) > 1 {
		x.User = parts[1]
	}
	if len(parts) > 2 {
		x.Partition = parts[2]
	}
	if strings.EqualFold(val, "parent") {
		x.Parent = true
		return x, nil
	}
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil || n < 0 || n > 0x7fffffff-1 {
		return pipeline.WhatIfShares{}, usagef("--shares %q: the shares must be a whole number from 0 to 2147483646, or parent", s)
	}
	x.Shares = n
	return x, nil
}

// settingsOf are the settings of a run's configuration as the
// comparison prints them.
func settingsOf(c record.RunConfig) whatif.Settings {
	s := whatif.Settings{HalfLifeSec: c.HalfLifeSec, CalcPeriodSec: c.CalcPeriodSec, ResetPeriod: c.UsageResetPeriod,
		Algorithm: c.Algorithm, Dampening: c.DampeningFactor, PriorityFlags: c.PriorityFlags}
	for _, p := range c.Partitions {
		s.Weights = append(s.Weights, [2]string{p.Name, p.TRESBillingWeights})
	}
	return s
}

// labRecovery is the lab report's recovery at zero use.
func labRecovery(rows []record.FairshareRow, lab string, half int64, damp float64) (whatif.Recovery, error) {
	r, err := report.LabRecovery(rows, lab, half, damp)
	if err != nil {
		return whatif.Recovery{}, err
	}
	out := whatif.Recovery{Days: math.NaN(), Text: r.State.String()}
	switch r.State {
	case report.RecoveryAfter:
		out.Days = float64(r.Seconds) / 86400
	case report.RecoveryWithin:
		out.Days = 0
	}
	return out, nil
}
