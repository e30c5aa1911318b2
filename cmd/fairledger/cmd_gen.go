package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/internal/synth"
)

func genCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "gen",
		Usage:     "write a deterministic synthetic cluster (slurm.conf, assoc.psv, qos.psv, sacct.psv) for demos, tests and benchmarks",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "output directory", Required: true},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "random seed: the same seed writes the same files"},
			&cli.IntFlag{Name: "jobs", Value: 20000, Usage: "allocation records (steps come on top)"},
			&cli.IntFlag{Name: "labs", Value: 200, Usage: "accounts (labs); from 10 on, some sit below 2–3 school accounts"},
			&cli.IntFlag{Name: "users-per-lab", Value: 6, Usage: "mean users per lab (skewed: many small labs, a few up to 5× the mean); associations ≈ labs × (1 + users-per-lab × 1.04) + 4"},
			&cli.StringFlag{Name: "cluster", Value: "synth", Usage: "cluster name"},
			&cli.TimestampFlag{Name: "from", Layout: time.DateOnly, Usage: "first job start (YYYY-MM-DD, default 2025-01-01)"},
			&cli.TimestampFlag{Name: "to", Layout: time.DateOnly, Usage: "last job start (YYYY-MM-DD, default 2025-04-01)"},
			&cli.StringFlag{Name: "tz", Usage: "zone sacct times are printed in (default UTC)"},
			&cli.BoolFlag{Name: "unix-times", Usage: "print times as Unix seconds (SLURM_TIME_FORMAT=%s)"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			log := newLogger(c, stderr)
			loc, err := location(c.String("tz"))
			if err != nil {
				return err
			}
			o := synth.Options{
				Seed: c.Int64("seed"), Jobs: c.Int("jobs"), Labs: c.Int("labs"), UsersPerLab: c.Int("users-per-lab"), Cluster: c.String("cluster"),
				Location: loc, UnixTimes: c.Bool("unix-times"),
			}
			if t := c.Timestamp("from"); t != nil {
				o.From = *t
			}
			if t := c.Timestamp("to"); t != nil {
				o.To = *t
			}
			if err := outsideHistory("dir", c.String("dir")); err != nil {
				return err
			}
			start := time.Now()
			sum, err := writeSynth(c.String("dir"), o)
			if err != nil {
				return fmt.Errorf("generate: %w", err)
			}
			log.Info().Str("dir", c.String("dir")).Int64("rows", sum.Rows).Int64("jobs", sum.Jobs).
				Int64("steps", sum.Steps).Dur("elapsed", time.Since(start)).Msg("synthetic cluster written")
			fmt.Fprintf(stdout, "wrote %s: %d sacct rows (%d jobs, %d steps)\n", c.String("dir"), sum.Rows, sum.Jobs, sum.Steps)
			return nil
		},
	}
}

// writeSynth writes the files of synth.WriteDir into dir through the CLI's
// output writer (see createOutput): each file is replaced whole, a symlink
// written through.
func writeSynth(dir string, o synth.Options) (synth.Summary, error) {
	if err := o.Validate(); err != nil {
		return synth.Summary{}, err
	}
	if err := outputDir(dir); err != nil {
		return synth.Summary{}, fmt.Errorf("--dir: %w", err)
	}
	c := synth.New(o)
	var sum synth.Summary
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{synth.SlurmConfFile, c.WriteSlurmConf},
		{synth.AssocFile, c.WriteAssoc},
		{synth.QOSFile, c.WriteQOS},
		{synth.SacctFile, func(w io.Writer) (err error) {
			sum, err = c.WriteSacct(w)
			return err
		}},
	}
	for _, f := range files {
		if err := writeOutput(filepath.Join(dir, f.name), nil, f.write); err != nil {
			return synth.Summary{}, err
		}
	}
	return sum, nil
}
