package main

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/internal/synth"
)

// demoFS is the embedded demo cluster: `go test ./cmd/fairledger -run
// TestDemoData -update` regenerates it from demoOptions.
//
//go:embed demodata/slurm.conf demodata/assoc.psv demodata/qos.psv demodata/sacct.psv.gz
var demoFS embed.FS

// demoOptions describe the demo cluster: 12 labs (some under schools, some
// with FairShare=parent users), three months of jobs, sacct run at the end
// of the window.
func demoOptions() synth.Options {
	from := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	return synth.Options{Seed: 2025, Cluster: "demo", Labs: 12, UsersPerLab: 4, Jobs: 20000,
		From: from, To: to, Now: to, StepFraction: 0.2}
}

func demoCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run the whole pipeline on the embedded demo cluster, then show sshare -a -l and two SQL queries",
		Description: "Writes the demo cluster's input files to DIR/input, runs `fairledger run` on them into the\n" +
			"history DIR, prints the latest `sshare -a -l` view and the results of two example queries.\n" +
			"Running it again recomputes the same history.",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "history", Value: "fairledger-demo", Usage: "history directory to write"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return runDemo(c, stdout, stderr)
		},
	}
}

func runDemo(c *cli.Context, stdout, stderr io.Writer) error {
	hist := c.String("history")
	in := filepath.Join(hist, "input")
	if err := writeDemoInput(in); err != nil {
		return err
	}
	to := demoOptions().Now.Format(time.RFC3339)
	global := []string{"fairledger", "--log-level", c.String("log-level"), "--log-format", c.String("log-format")}
	sub := func(args ...string) error {
		fmt.Fprintf(stdout, "\n$ fairledger %s\n", quoteArgs(args))
		return newApp(stdout, stderr).Run(append(append([]string{}, global...), args...))
	}
	err := sub("run", "--slurm-conf", filepath.Join(in, "slurm.conf"), "--assoc", filepath.Join(in, "assoc.psv"),
		"--qos", filepath.Join(in, "qos.psv"), "--sacct", filepath.Join(in, "sacct.psv"),
		"--history", hist, "--to", to, "--tz", "UTC", "--priority", "--priority-partial")
	if err != nil {
		return err
	}
	if err := sub("sshare", "--history", hist, "-a", "-l"); err != nil {
		return err
	}
	for _, q := range exampleQueries()[:2] {
		fmt.Fprintf(stdout, "\n# %s\n", q.Title)
		if err := sub("sql", "--history", hist, q.SQL); err != nil {
			return err
		}
	}
	exe := invokedAs(os.Args[0])
	fmt.Fprintf(stdout, "\nThe history is in %s. Try:\n  %s sshare --history %s -a -l --at 2025-02-15\n"+
		"  %s sprio --history %s -l --at 2025-02-15\n"+
		"  %s report --history %s --account eriksen_lab --format md\n"+
		"  %s whatif --history %s --set PriorityDecayHalfLife=3-12\n"+
		"  %s sql --history %s \"SELECT * FROM usage LIMIT 5\"\n", hist, exe, hist, exe, hist, exe, hist, exe, hist, exe, hist)
	return nil
}

// invokedAs is how to call this binary again from the same directory:
// argv0 when it is a path (./bin/fairledger after make demo), else the
// name on $PATH.
func invokedAs(argv0 string) string {
	if strings.ContainsRune(argv0, os.PathSeparator) && !strings.HasSuffix(argv0, ".test") {
		return argv0
	}
	return "fairledger"
}

// writeDemoInput writes the embedded demo files into dir (through the
// CLI's output writer, see createOutput).
func writeDemoInput(dir string) error {
	if err := outputDir(dir); err != nil {
		return fmt.Errorf("demo input: %w", err)
	}
	for _, name := range []string{"slurm.conf", "assoc.psv", "qos.psv", "sacct.psv.gz"} {
		b, err := demoFS.ReadFile("demodata/" + name)
		if err != nil {
			return fmt.Errorf("demo input: %w", err)
		}
		if filepath.Ext(name) == ".gz" {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return fmt.Errorf("demo input %s: %w", name, err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				return fmt.Errorf("demo input %s: %w", name, err)
			}
			name = name[:len(name)-len(".gz")]
		}
		if err := writeOutputBytes(filepath.Join(dir, name), nil, b); err != nil {
			return fmt.Errorf("demo input: %w", err)
		}
	}
	return nil
}

// quoteArgs prints arguments the way a shell user would type them, in
// single quotes where needed.
func quoteArgs(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a == "" || strings.ContainsAny(a, " \t\n\"'*|;()<>$") {
			b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
		} else {
			b.WriteString(a)
		}
	}
	return b.String()
}
