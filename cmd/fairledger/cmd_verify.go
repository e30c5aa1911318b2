package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/export"
)

func verifyCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "check every file of the history against its manifest (size, SHA-256, Parquet footer, rows); --migrate converts an old-layout history first",
		Description: "Reads every byte of the committed generation's files and checks each against the manifest:\n" +
			"that it exists, its size and SHA-256, that a Parquet file's footer is readable and counts the\n" +
			"manifest's rows, that a checkpoint is valid JSON; and reports files the manifest does not list.\n" +
			"Prints one line per problem on stdout, \"<path>: <what>; repair: <what to run>\", and a summary\n" +
			"on stderr. Exit 1 when there is a problem. Runs may commit meanwhile: it checks the generation\n" +
			"that was committed when it started.\n" +
			"With --migrate, a history written before the generation store (files rewritten in place) is\n" +
			"converted into one first, under the history's lock, and then verified.",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "history", Usage: "history directory", Required: true},
			&cli.StringFlag{Name: "cluster", Usage: "check only this cluster's files (default: every cluster)"},
			&cli.BoolFlag{Name: "migrate", Usage: "convert a history of the old layout into the generation store first (no-op otherwise)"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			log := newLogger(c, stderr)
			dir := c.String("history")
			if err := export.ExistingHistory(dir); err != nil {
				return err
			}
			h, err := export.Open(dir)
			if err != nil {
				return err
			}
			if c.Bool("migrate") {
				unlock, err := h.Lock(0, time.Now)
				if err != nil {
					return err
				}
				start := time.Now()
				n, err := h.Migrate()
				if uerr := unlock(); err == nil {
					err = uerr
				}
				if err != nil {
					return err
				}
				if n > 0 {
					log.Info().Str("history", dir).Int("files", n).Dur("elapsed", time.Since(start)).
						Msg("history converted to the generation store (generation 1)")
				}
			}
			start := time.Now()
			rep, err := h.Verify(c.String("cluster"))
			if errors.Is(err, export.ErrOldLayout) {
				return fmt.Errorf("history %s has the old layout (files rewritten in place, before the generation store), "+
					"which verify does not check: convert it with `fairledger verify --migrate --history %s` "+
					"(it takes the history's lock, converts, then verifies)", dir, dir)
			}
			if err != nil {
				return err
			}
			elapsed := time.Since(start)
			for _, p := range rep.Problems {
				fmt.Fprintf(stdout, "%s: %s; repair: %s\n", p.Path, p.What, p.Repair)
			}
			mb := float64(rep.Bytes) / 1e6
			rate := 0.0
			if s := elapsed.Seconds(); s > 0 {
				rate = mb / s
			}
			if logFormat(c.String("log-format"), stderr) == "json" {
				// A plain line would break a JSON log: one record instead.
				log.Info().Str("history", dir).Int64("generation", rep.Generation).Int("files", rep.Files).
					Int64("bytes", rep.Bytes).Float64("mb_per_s", rate).Dur("elapsed", elapsed).
					Int("problems", len(rep.Problems)).Msg("verify finished")
			} else {
				fmt.Fprintf(stderr, "fairledger verify: generation %d, %d files, %.1f MB in %s (%.0f MB/s); %s\n",
					rep.Generation, rep.Files, mb, elapsed.Round(time.Millisecond), rate, problems(len(rep.Problems)))
			}
			if len(rep.Problems) > 0 {
				return fmt.Errorf("history %s: %s (listed on stdout, each with its repair)", dir, problems(len(rep.Problems)))
			}
			return nil
		},
	}
}

func problems(n int) string {
	switch n {
	case 0:
		return "no problem"
	case 1:
		return "1 problem"
	}
	return fmt.Sprintf("%d problems", n)
}
