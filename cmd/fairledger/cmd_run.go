package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/pipeline"
)

func runCommand(stdout, stderr io.Writer) *cli.Command {
	flags := append(inputFlags(true),
		&cli.StringFlag{Name: "history", Usage: "history directory (created if missing; shared by several clusters)", Required: true},
		&cli.StringFlag{Name: "from", Usage: "start of a fresh window, or recompute from the newest checkpoint at or before it (YYYY-MM-DD[THH:MM[:SS]] in --tz, RFC 3339 or @UNIX; default: resume, else the earliest job start)"},
		&cli.StringFlag{Name: "to", Usage: "end of the window (default: --sacct-end, else the latest job end, or now when jobs are running)"},
		&cli.StringFlag{Name: "sacct-start", Usage: "the sacct -S the sacct files were fetched with (same syntax as --from): a start after the checkpoint the run resumes (or after --from) is refused as a gap; default: judged from the jobs in the files"},
		&cli.StringFlag{Name: "sacct-end", Usage: "the sacct -E the sacct files were fetched with (same syntax as --to): an end before --to is refused; default: judged from the jobs in the files"},
		&cli.DurationFlag{Name: "snapshot-every", Value: 24 * time.Hour, Usage: "fair-share snapshot interval from local midnight (divides 24h or whole days, not shorter than PriorityCalcPeriod; 0: only at --to); a snapshot is always taken at --to"},
		&cli.DurationFlag{Name: "lock-wait", Value: 0, Usage: "wait this long for another run holding the history's lock (default: fail at once)"},
		&cli.IntFlag{Name: "keep-checkpoints", Value: pipeline.DefaultKeepCheckpoints, Usage: "checkpoints kept per cluster (how many nights back a re-run can start)"},
		&cli.Int64Flag{Name: "memory-limit", Value: pipeline.DefaultMemoryLimit >> 20, Usage: "soft memory limit in MiB for the Go runtime (ignored when GOMEMLIMIT is set; 0: none; " +
			fmt.Sprintf("%d with --priority)", pipeline.DefaultPriorityMemoryLimit>>20)},
		&cli.StringFlag{Name: "progress", Value: "auto", Usage: "progress line on stderr: auto (on a terminal), always or never"},
		&cli.StringFlag{Name: "tick-phase", Usage: "when slurmctld's decay thread ticks: seconds past each multiple of PriorityCalcPeriod since the epoch (0 to PriorityCalcPeriod-1), or @UNIX, the Unix time of one tick from its log; kept by the history (default: the history's, 0 for a new one; changing it needs a recompute from the start)"},
		&cli.StringSliceFlag{Name: "slurmctld-log", Usage: "slurmctld's log, written with DebugFlags=Priority at SlurmctldDebug=verbose (repeatable; rotated files in any order; times in --tz): over the span it covers, usage decays at the ticks slurmctld really ran and a job end in a tick's second is ordered against it as the log says"},
		&cli.BoolFlag{Name: "priority", Usage: "compute every waiting job's multifactor priority at each snapshot into the priority table, which fairledger sprio prints (the sacct files need every state, -s PD,R,CD,CA,F,TO,NF,PR,OOM,…, and the columns " +
			strings.Join(ingest.PriorityRequired, ",") + ": a file without them is refused; the jobs that never started are read and charged nothing)"},
		priorityPartialFlag(),
		&cli.BoolFlag{Name: "dry-run", Usage: "read and compute everything (refusals and exit codes included) and write nothing to --history: check tonight's files or a slurm.conf change first"},
	)
	return &cli.Command{
		Name:  "run",
		Usage: "one night from a site's files: ingest → billing → decay → fair share → Parquet history, resuming from the last night (fairledger nightly fetches the files itself and runs it)",
		Description: "Reads the sacct files, bills every job, charges decayed usage on the PriorityCalcPeriod grid,\n" +
			"takes fair-share snapshots (daily at local midnight and at --to) and writes the jobs, usage,\n" +
			"fairshare, associations and runs tables. Run it again the next night with that night's sacct\n" +
			"file and the same --history: it resumes from the checkpoint. Exit 3 when rows were rejected.",
		ArgsUsage: " ",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			log := newLogger(c, stderr)
			return runRun(c, log, stdout, stderr)
		},
	}
}

func runRun(c *cli.Context, log zerolog.Logger, stdout, stderr io.Writer) error {
	loc, err := runZone(c, log)
	if err != nil {
		return err
	}
	var from, to, sacctStart, sacctEnd time.Time
	for _, f := range []struct {
		name string
		t    *time.Time
	}{{"from", &from}, {"to", &to}, {"sacct-start", &sacctStart}, {"sacct-end", &sacctEnd}} {
		if s := c.String(f.name); s != "" {
			if *f.t, err = parseTime(f.name, s, loc); err != nil {
				return err
			}
		}
	}
	if !sacctStart.IsZero() && !sacctEnd.IsZero() && sacctEnd.Before(sacctStart) {
		return usagef("--sacct-end %s is before --sacct-start %s", c.String("sacct-end"), c.String("sacct-start"))
	}
	if err := pipeline.CheckSnapshotEvery(c.Duration("snapshot-every")); err != nil {
		return usagef("%v", err)
	}
	lim := c.Int64("memory-limit")
	if c.Bool("priority") && !c.IsSet("memory-limit") {
		lim = pipeline.DefaultPriorityMemoryLimit >> 20
	}
	if lim > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(lim << 20)
	}
	in, err := readInputs(c, log, stdout, loc)
	if err != nil {
		return err
	}
	if len(in.errs) > 0 {
		in.reject.close()
		return errors.Join(in.errs...)
	}
	site := in.site
	if err := in.forPriority(c, "run --priority"); err != nil {
		in.reject.close()
		return err
	}
	if err := pipeline.CheckSnapshotPeriod(c.Duration("snapshot-every"), time.Duration(site.Conf.CalcPeriodSec)*time.Second); err != nil {
		in.reject.close()
		return usagef("%v", err)
	}
	if site.QOS == nil {
		log.Info().Msg("no --qos: every job is charged with UsageFactor 1")
	}
	tickOrigin, err := parseTickPhase(c.String("tick-phase"), site.Conf.CalcPeriodSec)
	if err != nil {
		in.reject.close()
		return err
	}
	pin := pipeline.Inputs{Conf: site.Conf, Assoc: site.Assoc, QOS: site.QOS, Jobs: site.Jobs(),
		Files: slices.Concat(site.Files, c.StringSlice("slurmctld-log")), SlurmctldLogs: c.StringSlice("slurmctld-log")}
	opt := pipeline.Options{
		History: c.String("history"), Cluster: c.String("cluster"), From: from, To: to, SacctStart: sacctStart, SacctEnd: sacctEnd,
		SnapshotEvery: c.Duration("snapshot-every"), Location: loc, Version: version,
		LockWait: c.Duration("lock-wait"), KeepCheckpoints: c.Int("keep-checkpoints"), Log: log,
		DryRun: c.Bool("dry-run"), TickOrigin: tickOrigin, SlurmVersion: in.version, Priority: c.Bool("priority"),
		// The --rejects file is written, synced and closed before the
		// commit: a run that cannot write it commits nothing.
		BeforeCommit: in.reject.close,
	}
	var bar *progressLine
	if showProgress(c.String("progress"), stderr) {
		if logFormat(c.String("log-format"), stderr) == "json" {
			// A redrawn line would corrupt the JSON lines: log records instead.
			opt.Progress = (&progressLog{log: log, every: progressLogEvery, now: time.Now, start: time.Now()}).update
		} else {
			bar = &progressLine{w: stderr, start: time.Now()}
			opt.Progress = bar.update
		}
	}
	ctx, stop := signalContext(c.Context)
	defer stop()
	sum, err := pipeline.Run(ctx, pin, opt)
	if bar != nil {
		bar.done()
	}
	if cerr := in.reject.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return interrupted(ctx, err, opt.DryRun)
	}
	warnUnknownQOS(log, sum)
	logSummary(log, sum)
	fmt.Fprintln(stdout, summaryLine(sum))
	if sum.Ingest.Rejected > 0 {
		return errRejected
	}
	return nil
}

// runZone is run's zone: --tz when given, else the zone the history of the
// cluster (--cluster, else slurm.conf's ClusterName) is computed in, else
// $TZ, else UTC. A history's zone decides how sacct's local times are
// read, so it is taken before any input is; a --tz that differs from it is
// refused by the run.
func runZone(c *cli.Context, log zerolog.Logger) (*time.Location, error) {
	if c.IsSet("tz") {
		return location(c.String("tz"))
	}
	cluster := c.String("cluster")
	if cluster == "" {
		conf, err := ingest.ReadSlurmConf(c.String("slurm-conf"))
		if err != nil {
			return location("") // readInputs reports the error with the others
		}
		cluster = conf.ClusterName
	}
	zone, err := pipeline.HistoryZone(c.String("history"), cluster)
	if err != nil {
		return nil, err
	}
	if zone == "" {
		return location("")
	}
	loc, err := location(zone)
	if err != nil {
		return nil, fmt.Errorf("the zone %q of the history of cluster %q: %w; pass --tz", zone, cluster, err)
	}
	log.Info().Str("cluster", cluster).Str("zone", zone).Msg("time zone: the history's (no --tz)")
	return loc, nil
}

// interruptError is the cause of a run's cancellation by a signal; it
// exits 128 + the signal's number, as a shell reports a process the signal
// killed (130 for SIGINT, 143 for SIGTERM).
type interruptError struct{ sig syscall.Signal }

func (e *interruptError) Error() string {
	switch e.sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return e.sig.String()
}

// signalContext is canceled, with an *interruptError as its cause, by the
// first SIGINT or SIGTERM. stop releases the signals.
func signalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			cancel(&interruptError{sig: sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// interrupted says what an error of a run canceled by a signal means for
// the history, and carries the signal for the exit code; other errors are
// returned as they are.
func interrupted(ctx context.Context, err error, dry bool) error {
	var ie *interruptError
	if !errors.Is(err, context.Canceled) || !errors.As(context.Cause(ctx), &ie) {
		return err
	}
	if dry {
		return fmt.Errorf("dry run interrupted by %w; nothing was written: %w", ie, err)
	}
	return fmt.Errorf("run interrupted by %w; the history is unchanged where not yet written, and the next run recomputes this night: %w", ie, err)
}

// reasonUnknownQOS names, in the summary line, the rows of a QOS missing
// from the QOS dump.
const reasonUnknownQOS = "QOS not in the QOS dump: UsageFactor 1"

// warnUnknownQOS says which QOS the dump lacks, with their rows: those jobs
// were charged with UsageFactor 1, as Slurm charges a job without a QOS
// (_apply_new_usage, priority_multifactor.c), which may not be what the
// site meant.
func warnUnknownQOS(log zerolog.Logger, s *pipeline.Summary) {
	names := s.Billing.UnknownQOSNames()
	if len(names) == 0 {
		return
	}
	list := make([]string, len(names))
	for i, q := range names {
		n, rows := s.Billing.UnknownQOS[q], "rows"
		if n == 1 {
			rows = "row"
		}
		list[i] = fmt.Sprintf("%s (%d %s)", q, n, rows)
	}
	log.Warn().Interface("unknown_qos", s.Billing.UnknownQOS).
		Msgf("QOS not in the QOS dump, their jobs charged with UsageFactor 1: %s", strings.Join(list, ", "))
}

// summaryLine is the one line a cron mail shows.
func summaryLine(s *pipeline.Summary) string {
	var b strings.Builder
	id := s.RunID
	if s.DryRun {
		id = "(dry run, nothing written)"
	}
	fmt.Fprintf(&b, "fairledger run %s: cluster %s, %s → %s", id, s.Cluster,
		s.From.Format(time.RFC3339), s.To.Format(time.RFC3339))
	if s.Resumed {
		b.WriteString(" (resumed)")
	}
	fmt.Fprintf(&b, "; rows read %d, ingested %d, rejected %d, skipped %d", s.Ingest.Read, s.Ingest.Ingested,
		s.Ingest.Rejected, s.Ingest.SkippedTotal())
	for _, k := range s.Ingest.SkipReasons() {
		fmt.Fprintf(&b, " [%s %d]", k, s.Ingest.Skipped[k])
	}
	fmt.Fprintf(&b, "; sacct lines %d", s.Ingest.Lines)
	if s.Ingest.Continued > 0 {
		fmt.Fprintf(&b, " (%d continuing a multi-line record)", s.Ingest.Continued)
	}
	if s.Duplicates > 0 {
		fmt.Fprintf(&b, "; duplicates dropped %d (the later record of a job run given twice kept)", s.Duplicates)
	}
	if s.CarriedUnseen > 0 {
		fmt.Fprintf(&b, "; charged as running without a record %d (jobs running at the checkpoint the input lacks: widen sacct -S to %s)",
			s.CarriedUnseen, s.From.Format(time.RFC3339))
	}
	if s.Unrecharged > 0 {
		fmt.Fprintf(&b, "; history jobs missing from the input %d (kept, not charged: rerun with every file of the window)", s.Unrecharged)
	}
	fmt.Fprintf(&b, "; jobs charged %d of %d", s.Decay.JobsCharged, s.Resolve.Rows)
	for _, n := range []struct {
		what string
		n    int
	}{{"outside the window", s.Decay.JobsOutside}, {"between two ticks", s.Decay.JobsBetweenTicks}, {"zero length", s.Decay.JobsEmpty}} {
		if n.n > 0 {
			fmt.Fprintf(&b, " [%s %d]", n.what, n.n)
		}
	}
	fmt.Fprintf(&b, ", not charged %d", s.Resolve.NotCharged())
	for _, k := range s.Resolve.Reasons() {
		if k != decay.ReasonUserToAccount { // charged: below
			fmt.Fprintf(&b, " [%s %d]", k, s.Resolve.ByReason[k])
		}
	}
	if n := s.Resolve.ByReason[decay.ReasonUserToAccount]; n > 0 {
		fmt.Fprintf(&b, "; charged with a fallback [%s %d]", decay.ReasonUserToAccount, n)
	}
	if n := s.Billing.UnknownQOSRows(); n > 0 || len(s.Billing.Fallback) > 0 {
		b.WriteString("; billed with a fallback")
		for _, k := range s.Billing.Reasons() {
			fmt.Fprintf(&b, " [%s %d]", k, s.Billing.Fallback[k])
		}
		if n > 0 {
			fmt.Fprintf(&b, " [%s %d]", reasonUnknownQOS, n)
		}
	}
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	if s.DryRun {
		fmt.Fprintf(&b, "; snapshots %d; elapsed %s (read %s, then decay %s); peak RSS %d MiB",
			s.Snapshots, ms(s.Finished.Sub(s.Started)), ms(s.Phases.Read), ms(s.Phases.Decay), peakRSSMiB())
		return b.String()
	}
	fmt.Fprintf(&b, "; snapshots %d; files %d; elapsed %s (read %s, then decay %s and jobs %s side by side); peak RSS %d MiB",
		s.Snapshots, s.Partitions, ms(s.Finished.Sub(s.Started)), ms(s.Phases.Read), ms(s.Phases.Decay), ms(s.Phases.Jobs),
		peakRSSMiB())
	return b.String()
}

// logSummary logs the run's summary as one record ("run finished"). Its
// durations are zerolog Dur fields: milliseconds (zerolog.DurationFieldUnit),
// as floats.
func logSummary(log zerolog.Logger, s *pipeline.Summary) {
	notCharged, fallback := resolveReasons(s.Resolve)
	ev := log.Info().Str("run_id", s.RunID).Bool("dry_run", s.DryRun).Str("cluster", s.Cluster).Time("from", s.From).Time("to", s.To).
		Bool("resumed", s.Resumed).Int64("lines", s.Ingest.Lines).Int64("continued_lines", s.Ingest.Continued).Int64("read", s.Ingest.Read).Int64("ingested", s.Ingest.Ingested).
		Int64("rejected", s.Ingest.Rejected).Interface("skipped", s.Ingest.Skipped).Interface("remarks", s.Ingest.Remarks).
		Int64("billed", s.Billing.Rows).Interface("billing_fallback", s.Billing.Fallback).Interface("unknown_qos", s.Billing.UnknownQOS).
		Int64("resolved", s.Resolve.Rows).Int64("charged_rows", s.Resolve.Charged).Interface("not_charged", notCharged).Interface("charged_with_fallback", fallback).
		Strs("unknown_accounts", s.Resolve.UnknownAccounts).
		Int("jobs_charged", s.Decay.JobsCharged).Int("jobs_between_ticks", s.Decay.JobsBetweenTicks).
		Int("jobs_empty", s.Decay.JobsEmpty).Int("jobs_outside", s.Decay.JobsOutside).Int64("ticks", s.Decay.Ticks).
		Int("resets", s.Decay.Resets).Int64("jobs_written", s.JobsWritten).Int64("other_cluster", s.OtherCluster).
		Int64("after_to", s.AfterTo).Int64("duplicates", s.Duplicates).Int64("unrecharged", s.Unrecharged).Int("carried_unseen", s.CarriedUnseen).Int("late", s.Late).
		Int("snapshots", s.Snapshots).Int("files", s.Partitions).Int("compacted", s.Compacted).Int64("generation", s.Generation).
		Dur("elapsed", s.Finished.Sub(s.Started)).Dur("read_elapsed", s.Phases.Read).
		Dur("decay_elapsed", s.Phases.Decay).Dur("jobs_elapsed", s.Phases.Jobs).Int64("peak_rss_mib", peakRSSMiB())
	ev.Msg("run finished")
}

// resolveReasons splits the rows the resolver did not charge as they were,
// per reason: those not charged at all, and those charged with a fallback
// (ReasonUserToAccount: to the account), as the summary line does. Both
// maps are non-nil, so the JSON summary always has both objects.
func resolveReasons(r decay.ResolveStats) (notCharged, fallback map[string]int64) {
	notCharged, fallback = map[string]int64{}, map[string]int64{}
	for k, n := range r.ByReason {
		if k == decay.ReasonUserToAccount {
			fallback[k] = n
		} else {
			notCharged[k] = n
		}
	}
	return notCharged, fallback
}

// peakRSSMiB is the process's peak resident set size.
func peakRSSMiB() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss / 1024 // Linux reports KiB
}

func showProgress(mode string, stderr io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	f, ok := stderr.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// progressLine redraws one status line on a terminal: rows, rate, ETA.
type progressLine struct {
	w     io.Writer
	start time.Time
	last  time.Time
	drawn bool
}

func (p *progressLine) update(pr pipeline.Progress) {
	now := time.Now()
	if now.Sub(p.last) < 200*time.Millisecond && pr.BytesDone < pr.BytesTotal {
		return
	}
	p.last = now
	pct, rate, etaSec, etaOK := progressRates(pr, now.Sub(p.start))
	eta := "?"
	if etaOK {
		eta = (time.Duration(etaSec) * time.Second).String()
	}
	fmt.Fprintf(p.w, "\r\033[Kreading %s: %5.1f%%  %d rows  %.0f rows/s  ETA %s", filepath.Base(pr.File), pct, pr.Rows, rate, eta)
	p.drawn = true
}

// progressRates is what a progress report says after elapsed: the percent
// of the bytes read, rows per second, and the seconds left at the byte rate
// so far (etaOK false while nothing has been read).
func progressRates(pr pipeline.Progress, elapsed time.Duration) (pct, rowsPerSec float64, etaSec int64, etaOK bool) {
	el := elapsed.Seconds()
	rowsPerSec = float64(pr.Rows) / max(el, 1e-9)
	if pr.BytesDone > 0 && pr.BytesTotal > 0 {
		etaSec, etaOK = int64(math.Round(el*float64(pr.BytesTotal-pr.BytesDone)/float64(pr.BytesDone))), true
	}
	if pr.BytesTotal > 0 {
		pct = 100 * float64(pr.BytesDone) / float64(pr.BytesTotal)
	}
	return pct, rowsPerSec, etaSec, etaOK
}

// progressLogEvery is how often a JSON log gets a progress record.
const progressLogEvery = 5 * time.Second

// progressLog reports progress as info records ("progress") in a JSON log,
// where a redrawn line would break the lines apart: at most one per every,
// the first after every has passed (a short run logs none).
type progressLog struct {
	log   zerolog.Logger
	every time.Duration
	now   func() time.Time
	start time.Time
	last  time.Time
}

func (p *progressLog) update(pr pipeline.Progress) {
	now := p.now()
	if p.last.IsZero() {
		p.last = p.start
	}
	if now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	pct, rate, etaSec, etaOK := progressRates(pr, now.Sub(p.start))
	ev := p.log.Info().Str("file", pr.File).Float64("percent", math.Round(pct*10)/10).Int64("rows", pr.Rows).
		Int64("bytes", pr.BytesDone).Int64("bytes_total", pr.BytesTotal).Int64("rows_per_s", int64(math.Round(rate)))
	if etaOK {
		ev = ev.Int64("eta_s", etaSec)
	}
	ev.Msg("progress")
}

func (p *progressLine) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// parseTickPhase reads --tick-phase: "" (nil: the history's), a number of
// seconds past each multiple of the calc period (below it), or "@UNIX",
// the time of one tick. It returns a Unix second on the tick grid.
func parseTickPhase(s string, calcPeriodSec int64) (*int64, error) {
	if s == "" {
		return nil, nil
	}
	if calcPeriodSec <= 0 {
		calcPeriodSec = decay.DefaultCalcPeriodSec
	}
	if u, ok := strings.CutPrefix(s, "@"); ok {
		t, err := strconv.ParseInt(u, 10, 64)
		if err != nil {
			return nil, usagef("--tick-phase %q: want @ followed by a Unix time in seconds", s)
		}
		return &t, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n >= calcPeriodSec {
		return nil, usagef("--tick-phase %q: want seconds from 0 to %d (PriorityCalcPeriod is %d s), or @UNIX", s, calcPeriodSec-1, calcPeriodSec)
	}
	return &n, nil
}
