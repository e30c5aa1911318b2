package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/export/query"
	"github.com/fairledger/fairledger/export/report"
	"github.com/fairledger/fairledger/schemas"
)

func reportCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write a lab's fair-share report (HTML with charts, Markdown or CSV) from the history",
		Description: `A report explains a lab's fair-share factor over a period: the factor over time for
the lab and each user, usage against share, TRES-hours per month, top users, top
partitions, biggest jobs, when the lab would recover at zero use, and the site's
settings.

--out FILE writes one report to FILE (- for stdout, the default). --all-accounts
writes one report per lab (every account with users directly under it) into
--out-dir, named <account>.<format>, and index.html linking every report by the
lab's real name (for md and csv too). An account that is not a plain file name
(ASCII letters, digits, '-', '_', '.'; not starting with '.' or '-'; at most 100 bytes;
not "index"), and two names equal but for case, are sanitised ('_' for each
other character), cut, and given "-" and 8 hex digits of the SHA-256 of the name
("a/b" -> a_b-c14cddc0.html beside a_b.html): no two labs share a file, and a lab
keeps its file from night to night (--log-level debug logs each mapping).

A file is replaced whole (written beside it, fsynced, renamed over it, keeping
its permissions; 0644 when new); a symlink is written through to the file it
names and stays a link; a character device or a FIFO (a terminal, a named pipe)
is written as it is, and /dev/stdout redirected to a file is appended to. A
directory, a dangling symlink, a socket or a read-only file is refused.

Dates are UTC days; --to is inclusive (--from 2025-03-01 --to 2025-03-31, or
--from 2025-03 --to 2025-03 for March). Defaults: the whole history.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "history", Usage: "history directory", Required: true},
			&cli.StringFlag{Name: "account", Usage: "the lab (account) to report on"},
			&cli.BoolFlag{Name: "all-accounts", Usage: "one report per lab, into --out-dir"},
			&cli.StringFlag{Name: "cluster", Usage: "cluster (default: the only one in the history)"},
			&cli.StringFlag{Name: "from", Usage: "first day, YYYY-MM-DD or YYYY-MM (default: start of the history)"},
			&cli.StringFlag{Name: "to", Usage: "last day (inclusive), YYYY-MM-DD or YYYY-MM (default: last snapshot)"},
			&cli.StringFlag{Name: "out", Value: "-", Usage: "output file (- for stdout; a symlink is written through, a device or FIFO written as it is)"},
			&cli.StringFlag{Name: "out-dir", Usage: "directory of the --all-accounts reports and their index.html (created if needed)"},
			&cli.StringFlag{Name: "format", Value: report.FormatHTML, Usage: "html, md or csv"},
			&cli.IntFlag{Name: "top", Value: 10, Usage: fmt.Sprintf("rows of the top users, partitions and jobs tables (1 to %d)", report.MaxTopN)},
		},
		ArgsUsage: " ",
		// SIGTERM stops the report as SIGINT does: its session directory
		// and temporary output files are removed before it exits.
		Action: interruptibleAction(func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			log := newLogger(c, stderr)
			format := c.String("format")
			switch format {
			case report.FormatHTML, report.FormatMarkdown, report.FormatCSV:
			default:
				return usagef("--format %q: want html, md or csv", format)
			}
			account, all := c.String("account"), c.Bool("all-accounts")
			switch {
			case account == "" && !all:
				return usagef("report needs --account LAB or --all-accounts")
			case account != "" && all:
				return usagef("--account and --all-accounts exclude each other")
			case all && c.String("out-dir") == "":
				return usagef("--all-accounts needs --out-dir DIR")
			case all && c.String("out-dir") == "-":
				return usagef("--out-dir -: --all-accounts writes files into a directory (--account LAB writes to stdout)")
			case all && c.IsSet("out"):
				return usagef("--out is for one account; --all-accounts writes into --out-dir")
			case !all && c.IsSet("out-dir"):
				return usagef("--out-dir goes with --all-accounts (use --out for one account)")
			case c.Int("top") < 1 || c.Int("top") > report.MaxTopN:
				return usagef("--top %d: want 1 to %d", c.Int("top"), report.MaxTopN)
			}
			// Nothing is written into a history, the one read included.
			var err error
			if all {
				err = outsideHistory("out-dir", c.String("out-dir"), c.String("history"))
			} else {
				err = outsideHistory("out", c.String("out"), c.String("history"))
			}
			if err != nil {
				return err
			}
			opt := report.Options{Cluster: c.String("cluster"), TopN: c.Int("top")}
			if opt.From, err = parseDay(c.String("from"), false); err != nil {
				return usagef("--from: %v", err)
			}
			if opt.To, err = parseDay(c.String("to"), true); err != nil {
				return usagef("--to: %v", err)
			}
			if !opt.From.IsZero() && !opt.To.IsZero() && !opt.From.Before(opt.To) {
				return usagef("--from %s is after --to %s", c.String("from"), c.String("to"))
			}

			start := time.Now()
			db, err := query.OpenDuckDB(c.Context, c.String("history"))
			if err != nil {
				return err
			}
			defer db.Close()
			if !all {
				d, err := report.Load(c.Context, db, []string{account}, opt)
				if err != nil {
					return err
				}
				r, err := d.Report(account)
				if err != nil {
					return err
				}
				var b bytes.Buffer
				if err := r.Write(&b, format); err != nil {
					return err
				}
				if err := writeOutputBytes(c.String("out"), stdout, b.Bytes()); err != nil {
					return fmt.Errorf("report --out: %w", err)
				}
				return nil
			}
			// Every lab's rows are read a batch of labs at a time, so
			// that all the reports take the memory of a few.
			d, err := report.LoadShared(c.Context, db, opt)
			if err != nil {
				return err
			}
			dir := c.String("out-dir")
			if err := outputDir(dir); err != nil {
				return fmt.Errorf("report --out-dir: %w", err)
			}
			labs := d.Labs()
			files, err := report.FileNames(labs)
			if err != nil {
				return err
			}
			index := make([]report.IndexEntry, len(labs))
			err = d.Reports(c.Context, db, labs, func(i int, r *report.Report) error {
				lab, file := labs[i], files[i]+"."+format
				log.Debug().Str("account", lab).Str("file", file).Msg("report file")
				var b bytes.Buffer
				if err := r.Write(&b, format); err != nil {
					return err
				}
				if err := writeOutputBytes(filepath.Join(dir, file), nil, b.Bytes()); err != nil {
					return fmt.Errorf("report of %q: %w", lab, err) // %q: the name may hold controls
				}
				index[i] = report.IndexEntry{Account: lab, File: file}
				return nil
			})
			if err != nil {
				return err
			}
			var b bytes.Buffer
			if err := d.WriteIndex(&b, index); err != nil {
				return err
			}
			if err := writeOutputBytes(filepath.Join(dir, report.IndexName+".html"), nil, b.Bytes()); err != nil {
				return fmt.Errorf("report index: %w", err)
			}
			log.Info().Int("reports", len(labs)).Str("dir", dir).Str("index", report.IndexName+".html").Str("cluster", d.Cluster).
				Time("from", d.From).Time("to", d.To).Dur("took", time.Since(start)).Msg("reports written")
			return nil
		}),
	}
}

// parseDay reads YYYY-MM-DD or YYYY-MM as a UTC time. For an end (--to,
// inclusive) it returns the start of the next day or month.
func parseDay(s string, end bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		if end {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	t, err := schemas.ParseMonth(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date (YYYY-MM-DD or YYYY-MM)", s)
	}
	if end {
		t = t.AddDate(0, 1, 0)
	}
	return t, nil
}
