package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/urfave/cli/v2"
)

func verifyCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "check the history's manifest (its checksum) and every file against it (size, SHA-256, Parquet footer, rows, statistics); --repair removes the damaged ones, --migrate converts an old-layout history first",
		Description: "Checks the committed generation's manifest against its checksum, then reads every byte of its\n" +
			"files and checks each against the manifest: that it exists, its size and SHA-256, that a Parquet\n" +
			"file's footer is readable and counts the manifest's rows, that its statistics (min_time, max_time,\n" +
			"min_id, max_id, max_end) are its rows', that a checkpoint is valid JSON; and reports files the\n" +
			"manifest does not list.\n" +
			"Prints one line per problem on stdout, \"<path>: <what>; repair: <what to run>\", and a summary\n" +
			"on stderr. Exit 1 when there is a problem. Runs may commit meanwhile: it checks the generation\n" +
			"that was committed when it started.\n" +
			"With --repair, under the history's lock, it then commits one new generation without the damaged\n" +
			"and missing files (a file an older generation still holds intact is linked back instead), prints\n" +
			"what it removed and, once per cluster, the `fairledger run` that recomputes the removed rows.\n" +
			"A file whose statistics alone are wrong is kept with its own recorded. A damaged manifest is\n" +
			"replaced by a copy of the newest older generation whose manifest and files verify; the nights\n" +
			"that generation lacks are printed as runs to recompute (docs/verify.md).\n" +
			"Exit 1 still: the history had a problem, and the recompute is yours to run.\n" +
			"With --migrate, a history written before the generation store (files rewritten in place) is\n" +
			"converted into one first, under the history's lock, and then verified.",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "history", Usage: "history directory", Required: true},
			&cli.StringFlag{Name: "cluster", Usage: "check only this cluster's files (default: every cluster)"},
			&cli.BoolFlag{Name: "repair", Usage: "remove the damaged and missing files from the history in one commit (taking the history's lock; fails at once if a run holds it) and print the run that recomputes them"},
			&cli.BoolFlag{Name: "migrate", Usage: "convert a history of the old layout into the generation store first (no-op otherwise)"},
		},
		Action: func(c *cli.Context) (err error) {
			if err := noArgs(c); err != nil {
				return err
			}
			log := newLogger(c, stderr)
			dir := c.String("history")
			if err := history.CheckExists(dir); err != nil {
				return err
			}
			h, err := history.Open(dir)
			if err != nil {
				return err
			}
			repair := c.Bool("repair")
			if c.Bool("migrate") || repair {
				unlock, err := lockHistory(h, dir)
				if err != nil {
					return err
				}
				defer func() {
					if uerr := unlock(); err == nil {
						err = uerr
					}
				}()
			}
			if c.Bool("migrate") {
				start := time.Now()
				n, err := h.Migrate()
				if err != nil {
					return err
				}
				if n > 0 {
					log.Info().Str("history", dir).Int("files", n).Dur("elapsed", time.Since(start)).
						Msg("history converted to the generation store (generation 1)")
				}
			}
			start := time.Now()
			var rep history.VerifyReport
			if repair {
				rep, err = h.Repair(c.String("cluster"))
			} else {
				rep, err = h.Verify(c.String("cluster"))
			}
			if errors.Is(err, history.ErrOldLayout) {
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
			removed, restored := printRepair(stdout, rep)
			mb := float64(rep.Bytes) / 1e6
			rate := 0.0
			if s := elapsed.Seconds(); s > 0 {
				rate = mb / s
			}
			if logFormat(c.String("log-format"), stderr) == "json" {
				// A plain line would break a JSON log: one record instead.
				ev := log.Info().Str("history", dir).Int64("generation", rep.Generation).Int("files", rep.Files).
					Int64("bytes", rep.Bytes).Float64("mb_per_s", rate).Dur("elapsed", elapsed).
					Int("problems", len(rep.Problems))
				if repair {
					ev = ev.Int64("repaired_generation", rep.Repaired).Int("removed", removed).Int("restored", restored).Int("reruns", len(rep.Reruns))
				}
				ev.Msg("verify finished")
			} else {
				repaired := ""
				if rep.Repaired != 0 {
					repaired = fmt.Sprintf("; repaired: generation %d, %d removed, %d restored", rep.Repaired, removed, restored)
				}
				fmt.Fprintf(stderr, "fairledger verify: generation %d, %d files, %.1f MB in %s (%.0f MB/s); %s%s\n",
					rep.Generation, rep.Files, mb, elapsed.Round(time.Millisecond), rate, problems(len(rep.Problems)), repaired)
			}
			if len(rep.Problems) == 0 {
				return nil
			}
			switch {
			case rep.Repaired != 0 && len(rep.Reruns) > 0:
				return fmt.Errorf("history %s: %s; --repair committed generation %d: run the recompute printed on stdout (listed there, each with what was done)",
					dir, problems(len(rep.Problems)), rep.Repaired)
			case rep.Repaired != 0:
				return fmt.Errorf("history %s: %s; --repair committed generation %d, nothing to recompute (listed on stdout, each with what was done)",
					dir, problems(len(rep.Problems)), rep.Repaired)
			}
			return fmt.Errorf("history %s: %s (listed on stdout, each with its repair)", dir, problems(len(rep.Problems)))
		},
	}
}

// lockHistory takes the history's lock without waiting. A held lock is an
// error naming the holder, as `run` reports it.
func lockHistory(h *history.Store, dir string) (func() error, error) {
	unlock, err := h.Lock(0, time.Now)
	if errors.Is(err, history.ErrLocked) {
		// Lock's message points to run's --lock-wait, which verify has not.
		holder, _ := os.ReadFile(filepath.Join(dir, ".lock"))
		if s := strings.TrimSpace(string(holder)); s != "" {
			err = fmt.Errorf("%w: %s (holder: %s); verify --repair and --migrate change the history and do not wait: "+
				"run it again when that run has finished", history.ErrLocked, dir, s)
		}
	}
	return unlock, err
}

// printRepair prints what Repair did (nothing for Verify's report) and,
// once per cluster, the run that recomputes what it removed; it returns
// the numbers of files removed and restored.
func printRepair(w io.Writer, rep history.VerifyReport) (removed, restored int) {
	if rep.Repaired == 0 {
		return 0, 0
	}
	rel := func(p history.Problem) string { return p.File.Path }
	for _, p := range rep.Problems {
		switch p.Fixed {
		case history.FixedReplaced:
			fmt.Fprintf(w, "replaced by a copy of generation %d (generation %d): the damaged manifest %s\n", rep.Fallback, rep.Repaired, p.Path)
		case history.FixedRecorded:
			fmt.Fprintf(w, "statistics recorded from its rows (generation %d): %s\n", rep.Repaired, rel(p))
		case history.FixedRemoved:
			removed++
			fmt.Fprintf(w, "removed from the history (generation %d): %s\n", rep.Repaired, rel(p))
		case history.FixedRestored:
			restored++
			fmt.Fprintf(w, "restored from %s (generation %d): %s\n", p.Intact, rep.Repaired, rel(p))
		}
	}
	for _, r := range rep.Reruns {
		fmt.Fprintf(w, "recompute cluster %s (%s):\n  %s\n", r.Cluster, history.RerunFlags(r.Cluster), r.Command)
	}
	return removed, restored
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
