package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

// version is set by the linker (-X main.version=...).
var version = "dev"

// run builds the app and runs it; it never calls os.Exit. The final error
// is printed in the log format of the global flags (auto when they could
// not be read), so a JSON log ends with a JSON line.
func run(args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	format := "auto"
	app.Before = func(c *cli.Context) error {
		format = c.String("log-format")
		if c.Args().First() == "nightly" && !c.IsSet("log-format") {
			// cron mails it and journald keeps it: the line a person reads
			// (the JSON log is nightly's log_file).
			format = "console"
		}
		return nil
	}
	err := app.Run(args)
	return exitCode(err, stderr, logFormat(format, stderr) == "json")
}

// newApp builds the CLI. Everything it needs comes in as arguments: no
// package-level flags or loggers.
func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:    "fairledger",
		Usage:   "recompute a Slurm cluster's fair-share history from its job records",
		Version: version,
		Writer:  stdout, ErrWriter: stderr,
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
			&cli.StringFlag{Name: "log-format", Value: "auto", Usage: "json, console or auto (console on a terminal)"},
		},
		CustomAppHelpTemplate: cli.AppHelpTemplate + "\n" + exitCodesHelp + "\n",
		ExitErrHandler:        func(*cli.Context, error) {}, // exit codes are decided in run
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usagef("%v", err)
		},
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 0 {
				return usagef("unknown command %q", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		Commands: []*cli.Command{
			checkCommand(stdout, stderr),
			genCommand(stdout, stderr),
			sqlCommand(stdout, stderr),
			reportCommand(stdout, stderr),
			sshareCommand(stdout, stderr),
			sprioCommand(stdout, stderr),
			whatifCommand(stdout, stderr),
			metricsCommand(stdout, stderr),
			runCommand(stdout, stderr),
			nightlyCommand(stdout, stderr),
			verifyCommand(stdout, stderr),
			demoCommand(stdout, stderr),
			manCommand(stdout),
		},
	}
	for _, c := range app.Commands {
		c.OnUsageError = app.OnUsageError
	}
	return app
}

// newLogger builds the one logger of a run: JSON lines on stderr for cron,
// a console writer on a terminal.
func newLogger(c *cli.Context, stderr io.Writer) zerolog.Logger {
	var w io.Writer = stderr
	if logFormat(c.String("log-format"), stderr) == "console" {
		w = zerolog.ConsoleWriter{Out: stderr, TimeFormat: time.TimeOnly}
	}
	lvl, err := zerolog.ParseLevel(strings.ToLower(c.String("log-level")))
	if err != nil || lvl == zerolog.NoLevel {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

// logFormat resolves --log-format: "console" for console, or for auto on a
// terminal; "json" otherwise.
func logFormat(flag string, stderr io.Writer) string {
	switch flag {
	case "console":
		return "console"
	case "auto":
		if f, ok := stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
			return "console"
		}
	}
	return "json"
}

// location resolves --tz: an IANA zone name, "UTC", "Local", or empty for
// the TZ environment variable (as sacct itself does), falling back to UTC.
func location(name string) (*time.Location, error) {
	if name == "" {
		name = os.Getenv("TZ")
	}
	switch name {
	case "", "UTC", "utc":
		return time.UTC, nil
	case "Local", "local":
		return time.Local, nil
	}
	loc, err := time.LoadLocation(strings.TrimPrefix(name, ":"))
	if err != nil {
		return nil, usagef("--tz %q: %v", name, err)
	}
	return loc, nil
}

// parseTime reads a time flag: YYYY-MM-DD (local midnight),
// YYYY-MM-DDTHH:MM[:SS] in loc, RFC 3339, or @UNIX seconds.
func parseTime(flag, s string, loc *time.Location) (time.Time, error) {
	if strings.HasPrefix(s, "@") {
		n, err := strconv.ParseInt(s[1:], 10, 64)
		if err != nil {
			return time.Time{}, usagef("--%s %q: bad Unix time", flag, s)
		}
		return time.Unix(n, 0), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02"} {
		t, err := time.ParseInLocation(layout, s, loc)
		if err != nil {
			continue
		}
		if layout != "2006-01-02" { // a day starts once, even where DST skips its midnight
			if err := wallClockOnce(t, layout, s, loc); err != nil {
				return time.Time{}, usagef("--%s %q: %v; give an offset (RFC 3339) or @UNIX", flag, s, err)
			}
		}
		return t, nil
	}
	return time.Time{}, usagef("--%s %q: want YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS], RFC 3339 or @UNIX", flag, s)
}

// wallClockOnce checks that the local time s (parsed with layout into t)
// names exactly one instant in loc: not one a DST change skips (spring
// forward: Go would silently move it by the change) nor one it repeats (fall
// back: Go would silently pick the first).
func wallClockOnce(t time.Time, layout, s string, loc *time.Location) error {
	if t.In(loc).Format(layout) != s {
		return fmt.Errorf("does not exist in %s (a DST change skips it)", loc)
	}
	for _, d := range []time.Duration{-2 * time.Hour, -time.Hour, -30 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour} {
		if t.Add(d).In(loc).Format(layout) == s {
			return fmt.Errorf("is ambiguous in %s (a DST change repeats it)", loc)
		}
	}
	return nil
}
