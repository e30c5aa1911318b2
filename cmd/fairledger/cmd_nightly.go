package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/nightly"
	"github.com/fairledger/fairledger/pipeline"
)

func nightlyCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "nightly",
		Usage: "the nightly job in one command: fetch each cluster's inputs from sacct and sacctmgr since the history's last night, and run it",
		Description: "Reads the configuration file (TOML; docs/operations.md), and for each [[cluster]]: finds where\n" +
			"the history's last night ended, asks sacct for exactly the span since then (with an overlap, in\n" +
			"chunks of max_query_range), dumps the association tree and the QOS table, and runs the night\n" +
			"(fairledger run) with what it fetched. On an empty history it backfills from first_day.\n" +
			"Silent when all is well: a line on stderr for each warning a person should read, and one line\n" +
			"per cluster that failed. Exit 1 when a cluster failed (nothing written for it), 2 for a bad\n" +
			"command line or configuration, 3 when rows were rejected (the night committed; see the spool),\n" +
			"4 when metrics_file could not be written (the nights committed; docs/metrics.md).",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Value: nightly.DefaultConfigPath, EnvVars: []string{"FAIRLEDGER_CONFIG"}, Usage: "the configuration file"},
			&cli.StringSliceFlag{Name: "cluster", Usage: "run only this [[cluster]] section, by name (repeatable; default: every section, in order)"},
			&cli.StringFlag{Name: "to", Usage: "end the night here instead of at window_end (YYYY-MM-DD[THH:MM[:SS]] in the cluster's zone, RFC 3339 or @UNIX): catch up to a given time"},
			&cli.BoolFlag{Name: "dry-run", Usage: "fetch and compute everything (run --dry-run) and write nothing to the history; the fetched files are not kept"},
			&cli.BoolFlag{Name: "verbose", Usage: "print each night's summary line on stdout and its log on stderr"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return runNightly(c, stdout, stderr)
		},
	}
}

// runNightly runs the night of each configured cluster, one after the
// other: a cluster that fails does not stop the others.
func runNightly(c *cli.Context, stdout, stderr io.Writer) error {
	cfg, err := nightly.Load(c.String("config"))
	if err != nil {
		return usagef("%v", err)
	}
	if err := checkRunFlags(cfg); err != nil {
		return usagef("%v", err)
	}
	clusters, err := pickClusters(cfg, c.StringSlice("cluster"))
	if err != nil {
		return err
	}
	if cfg.MetricsFile != "" {
		if err := outsideHistory("metrics_file", cfg.MetricsFile, cfg.History); err != nil {
			return usagef("config %s: metrics_file: %v", cfg.File, err)
		}
	}
	logw, err := newNightlyLog(cfg.LogFile, stderr, c.Bool("verbose"))
	if err != nil {
		return err
	}
	defer logw.Close()
	ctx, stop := signalContext(c.Context)
	defer stop()
	var failed []error
	rejected := false
	for _, cl := range clusters {
		n := &nightRun{cfg: cfg, cl: cl, to: c.String("to"), dry: c.Bool("dry-run"), verbose: c.Bool("verbose"),
			stdout: stdout, logw: logw, runner: nightly.ExecRunner{}, now: time.Now}
		err := n.run(ctx)
		switch {
		case errors.Is(err, errRejected):
			rejected = true
		case err != nil:
			failed = append(failed, fmt.Errorf("cluster %s: %w", n.name(), interrupted(ctx, err, n.dry)))
		}
		if ctx.Err() != nil {
			break
		}
	}
	// The textfile for node_exporter, of every cluster of the history:
	// a failure is reported, and does not undo the committed nights.
	var merr error
	if cfg.MetricsFile != "" && !c.Bool("dry-run") && ctx.Err() == nil {
		if err := writeMetricsText(cfg.History, cfg.MetricsFile); err != nil {
			merr = fmt.Errorf("%w: %s: %v", errMetrics, cfg.MetricsFile, err)
		}
	}
	switch {
	case merr != nil && (len(failed) > 0 || rejected):
		// The worse exit code stands; the line is printed all the same.
		fmt.Fprintf(stderr, "fairledger: %v\n", merr)
	case merr != nil:
		return merr
	}
	if len(failed) > 0 {
		return errors.Join(failed...)
	}
	if rejected {
		return errRejected
	}
	return nil
}

// checkRunFlags refuses a [run] key that is not a flag of fairledger run.
func checkRunFlags(cfg *nightly.Config) error {
	known := map[string]bool{}
	for _, f := range runCommand(io.Discard, io.Discard).Flags {
		for _, n := range f.Names() {
			known[n] = true
		}
	}
	var errs []error
	for _, cl := range cfg.Clusters {
		for _, f := range cl.RunFlags() {
			name, _, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
			if !known[name] {
				errs = append(errs, fmt.Errorf("config %s: [[cluster]] %q: run.%s: not a flag of fairledger run", cfg.File, cl.Name, name))
			}
		}
	}
	return errors.Join(errs...)
}

// pickClusters are the sections --cluster names, in the file's order.
func pickClusters(cfg *nightly.Config, names []string) ([]*nightly.Cluster, error) {
	var out []*nightly.Cluster
	for i := range cfg.Clusters {
		cl := &cfg.Clusters[i]
		if len(names) == 0 || slices.Contains(names, cl.Name) {
			out = append(out, cl)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(cfg.Clusters, func(cl nightly.Cluster) bool { return cl.Name == n }) {
			return nil, usagef("--cluster %s: no [[cluster]] section with name = %q in %s", n, n, cfg.File)
		}
	}
	return out, nil
}

// nightRun is one night of one cluster.
type nightRun struct {
	cfg     *nightly.Config
	cl      *nightly.Cluster
	to      string // --to
	dry     bool
	verbose bool
	stdout  io.Writer
	logw    *nightlyLog
	runner  nightly.Runner
	now     func() time.Time

	conf *ingest.Config
	log  zerolog.Logger
}

// name is the cluster's name: the section's, else slurm.conf's.
func (n *nightRun) name() string {
	if n.cl.Name != "" {
		return n.cl.Name
	}
	if n.conf != nil && n.conf.ClusterName != "" {
		return n.conf.ClusterName
	}
	return n.cl.SlurmConf
}

func (n *nightRun) run(ctx context.Context) error {
	conf, err := ingest.ReadSlurmConf(n.cl.SlurmConf)
	if err != nil {
		return err
	}
	n.conf = conf
	if n.cl.Name == "" {
		if conf.ClusterName == "" {
			return fmt.Errorf("%s has no ClusterName: set name in the [[cluster]] section", n.cl.SlurmConf)
		}
		n.cl.Name = conf.ClusterName
	}
	name := n.cl.Name
	n.log = n.logw.logger().With().Str("cluster", name).Logger()
	newest, _, err := pipeline.NewestCheckpoint(n.cfg.History, name)
	if err != nil {
		return err
	}
	last := newest.To
	loc, zoneFrom, err := n.zone(newest.Zone)
	if err != nil {
		return err
	}
	var to time.Time
	if n.to != "" {
		if to, err = parseTime("to", n.to, loc); err != nil {
			return err
		}
	}
	now := n.now()
	var first time.Time
	if n.cl.FirstDay != "" {
		if first, err = parseTime("first_day", n.cl.FirstDay, loc); err != nil {
			return usagef("config %s: [[cluster]] %q: %s", n.cfg.File, name, strings.TrimPrefix(err.Error(), "--"))
		}
	}
	plan, err := nightly.PlanNight(n.cl, last, first, now, to, loc)
	if err != nil {
		return err
	}
	if plan.UpToDate {
		n.log.Info().Time("last", plan.Last).Time("to", plan.To).Msg("the history already reaches the night's end: nothing to do")
		return nil
	}
	n.log.Info().Time("last", plan.Last).Time("from", plan.From).Time("to", plan.To).Time("fetch_from", plan.Fetch.From).
		Time("fetch_to", plan.Fetch.To).Int("chunks", len(plan.Chunks)).Str("zone", loc.String()).Str("zone_from", zoneFrom).Msg("night planned")

	f := &nightly.Fetcher{SacctPath: n.cfg.Sacct, SacctmgrPath: n.cfg.Sacctmgr, Cluster: name, SlurmConf: n.cl.SlurmConf,
		Priority: *n.cl.Priority, Timeout: n.cl.SacctTimeout.Duration, Runner: n.runner}
	version := n.cl.SlurmVersion
	if version == "auto" {
		v, err := f.Version(ctx)
		if err != nil {
			return err
		}
		version = v.String()
	}
	night, err := nightly.NewNight(n.cfg.Spool, name, plan.To)
	if err != nil {
		return err
	}
	kept := false
	defer func() {
		if !kept {
			if err := night.Discard(); err != nil {
				n.log.Warn().Err(err).Msg("the failed night's files could not be removed from the spool")
			}
		}
	}()
	sacct, err := n.fetch(ctx, f, plan, night, loc)
	if err != nil {
		return err
	}
	args := n.runArgs(plan, night, sacct, loc, version)
	n.log.Debug().Strs("args", args).Msg("run")
	err = n.runRun(ctx, args)
	if n.dry || (err != nil && !errors.Is(err, errRejected)) {
		return err
	}
	kept = true
	if cerr := night.Commit(); cerr != nil {
		n.log.Warn().Err(cerr).Msg("the night committed, but its fetched files could not be kept in the spool")
	}
	if old, perr := nightly.Prune(night.ClusterDir, now, *n.cfg.KeepDays); perr != nil {
		n.log.Warn().Err(perr).Msg("pruning the spool failed")
	} else if len(old) > 0 {
		n.log.Info().Strs("nights", old).Int("keep_days", *n.cfg.KeepDays).Msg("pruned the fetched files of old nights")
	}
	if errors.Is(err, errRejected) {
		n.log.Warn().Str("rejects", night.ClusterDir+"/nights/"+night.Stamp+"/rejects.tsv").
			Msg("sacct rows were rejected (the night committed without them): read the rejected rows and the reasons")
	}
	return err
}

// zone is the cluster's zone: the section's timezone, else the history's
// (z, recorded by its newest checkpoint), else $TZ, else UTC; and where it
// came from.
func (n *nightRun) zone(z string) (*time.Location, string, error) {
	if n.cl.Timezone != "" {
		loc, err := time.LoadLocation(n.cl.Timezone)
		return loc, "timezone", err
	}
	if z != "" {
		loc, err := time.LoadLocation(z)
		if err != nil {
			return nil, "", fmt.Errorf("the history's zone %q: %w", z, err)
		}
		return loc, "the history", nil
	}
	loc, err := location("")
	return loc, "$TZ", err
}

// fetch fetches the night's inputs into its staging directory and returns
// the sacct files.
func (n *nightRun) fetch(ctx context.Context, f *nightly.Fetcher, plan nightly.Plan, night *nightly.Night, loc *time.Location) ([]string, error) {
	start := time.Now()
	if err := f.Assoc(ctx, night.FetchedAssoc()); err != nil {
		return nil, err
	}
	if err := f.QOS(ctx, night.QOSFile()); err != nil {
		return nil, err
	}
	progress := func(done, total int, s nightly.Span, took time.Duration) {
		n.log.Info().Int("chunk", done).Int("chunks", total).Time("from", s.From).Time("to", s.To).Dur("took", took).Msg("sacct")
	}
	files, err := f.Sacct(ctx, plan.Chunks, night.SacctDir(), progress)
	if err != nil {
		return nil, fmt.Errorf("%w; nothing was written (the command that failed: %s)", err, f.SacctCommand(plan.Fetch))
	}
	lo := plan.Last
	if lo.IsZero() {
		lo = plan.From
	}
	isNew, err := night.PrepareAssoc(lo, plan.To, loc)
	if err != nil {
		return nil, err
	}
	n.log.Info().Dur("took", time.Since(start)).Bool("tree_changed", isNew).Int("sacct_files", len(files)).Msg("fetched")
	return files, nil
}

// runArgs are the night's fairledger run arguments.
func (n *nightRun) runArgs(plan nightly.Plan, night *nightly.Night, sacct []string, loc *time.Location, version string) []string {
	unix := func(t time.Time) string { return fmt.Sprintf("@%d", t.Unix()) }
	args := []string{"fairledger", "--log-format", "json", "--log-level", "info", "run",
		"--slurm-conf", n.cl.SlurmConf, "--assoc", night.AssocDir(), "--qos", night.QOSFile(),
		"--history", n.cfg.History, "--cluster", n.name(), "--to", unix(plan.To),
		"--sacct-start", unix(plan.Fetch.From), "--sacct-end", unix(plan.Fetch.To),
		"--tz", loc.String(), "--slurm-version", version, "--rejects", night.RejectsFile(), "--progress", "always"}
	if !plan.From.IsZero() {
		args = append(args, "--from", unix(plan.From))
	}
	if *n.cl.Priority {
		args = append(args, "--priority")
	}
	if n.dry {
		args = append(args, "--dry-run")
	}
	for _, l := range n.ctldLogs() {
		args = append(args, "--slurmctld-log", l)
	}
	for _, s := range sacct {
		args = append(args, "--sacct", s)
	}
	return append(args, n.cl.RunFlags()...)
}

// ctldLogs are slurmctld's log files the night reads: with slurmctld_log
// auto, slurm.conf's SlurmctldLogFile and its rotated .1 when DebugFlags has
// Priority (the decay lines); a path and its .1 as given; none with none.
func (n *nightRun) ctldLogs() []string {
	base := n.cl.SlurmctldLog
	switch base {
	case "none":
		return nil
	case "auto":
		if n.conf.SlurmctldLogFile == "" || !slices.ContainsFunc(n.conf.DebugFlags, func(f string) bool { return strings.EqualFold(f, "Priority") }) {
			n.log.Info().Msg("slurmctld's log is not read: slurm.conf sets no SlurmctldLogFile with DebugFlags=Priority (ticks on PriorityCalcPeriod's grid)")
			return nil
		}
		base = n.conf.SlurmctldLogFile
	}
	var out []string
	for _, p := range []string{base + ".1", base} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		n.log.Warn().Str("slurmctld_log", base).Msg("slurmctld's log is missing: the night ticks on PriorityCalcPeriod's grid")
	}
	return out
}

// runRun runs fairledger run in this process, its log into the nightly
// log and its summary line onto stdout when verbose.
func (n *nightRun) runRun(ctx context.Context, args []string) error {
	var out bytes.Buffer
	err := newApp(&out, n.logw.runWriter(n.name())).RunContext(ctx, args)
	if n.verbose || n.dry {
		n.stdout.Write(out.Bytes())
	}
	if s := strings.TrimSpace(out.String()); s != "" {
		n.log.Info().Str("summary", s).Msg("night finished")
	}
	return err
}

// nightlyLog is where the nightly job's log goes: every record as JSON
// into the log file (if any); warnings and errors, and with verbose every
// record, as plain lines on stderr, which cron mails and journald keeps.
type nightlyLog struct {
	mu      sync.Mutex
	file    *os.File
	stderr  io.Writer
	verbose bool
	// seen counts the plain lines per message: after maxSameLines of one
	// message (a warning per job), the rest are counted, and Close says how
	// many there were.
	seen  map[string]int
	order []string
}

// maxSameLines is how many warnings of one message reach stderr; the log
// file has them all.
const maxSameLines = 3

func newNightlyLog(path string, stderr io.Writer, verbose bool) (*nightlyLog, error) {
	l := &nightlyLog{stderr: stderr, verbose: verbose, seen: map[string]int{}}
	if path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("log_file: %w", err)
		}
		l.file = f
	}
	return l, nil
}

// Close says how many lines of each message were left out, and closes
// the log file.
func (l *nightlyLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, key := range l.order {
		if n := l.seen[key] - maxSameLines; n > 0 {
			where := "the log"
			if l.file != nil {
				where = l.file.Name()
			}
			fmt.Fprintf(l.stderr, "%s (%d more like this in %s)\n", key, n, where)
		}
	}
	if l.file == nil {
		return nil
	}
	return l.file.Close()
}

func (l *nightlyLog) logger() zerolog.Logger {
	return zerolog.New(l.runWriter("")).With().Timestamp().Logger()
}

// runWriter is a writer of JSON records whose plain lines name cluster
// when the records do not.
func (l *nightlyLog) runWriter(cluster string) io.Writer {
	return writerFunc(func(p []byte) (int, error) { return l.write(p, cluster) })
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// write takes one JSON record (zerolog writes each with one Write).
func (l *nightlyLog) write(p []byte, cluster string) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file != nil {
		if _, err := l.file.Write(p); err != nil {
			return 0, err
		}
	}
	var rec map[string]any
	if json.Unmarshal(p, &rec) != nil {
		return len(p), nil
	}
	level, _ := rec["level"].(string)
	if level != "warn" && level != "error" && !l.verbose {
		return len(p), nil
	}
	if level == "warn" {
		key := plainPrefix(rec, cluster)
		if l.seen[key] == 0 {
			l.order = append(l.order, key)
		}
		if l.seen[key]++; l.seen[key] > maxSameLines {
			return len(p), nil
		}
	}
	fmt.Fprintln(l.stderr, plainRecord(rec, cluster))
	return len(p), nil
}

// plainRecord is a log record as one line: "fairledger nightly: cluster
// C: warning: message (key=value …)".
func plainRecord(rec map[string]any, cluster string) string {
	var b strings.Builder
	b.WriteString(plainPrefix(rec, cluster))
	var keys []string
	for k := range rec {
		switch k {
		case "level", "time", "message", "cluster":
		default:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var kv []string
	for _, k := range keys {
		v, _ := json.Marshal(rec[k])
		s := string(v)
		if len(s) > 120 {
			s = s[:117] + "…"
		}
		kv = append(kv, k+"="+s)
	}
	if len(kv) > 0 {
		b.WriteString(" (" + strings.Join(kv, " ") + ")")
	}
	return b.String()
}

// plainPrefix is a record's line without its fields: "fairledger
// nightly: cluster C: warning: message".
func plainPrefix(rec map[string]any, cluster string) string {
	if c, ok := rec["cluster"].(string); ok {
		cluster = c
	}
	var b strings.Builder
	b.WriteString("fairledger nightly: ")
	if cluster != "" {
		b.WriteString("cluster " + cluster + ": ")
	}
	switch rec["level"] {
	case "warn":
		b.WriteString("warning: ")
	case "error":
		b.WriteString("error: ")
	}
	msg, _ := rec["message"].(string)
	b.WriteString(msg)
	return b.String()
}
