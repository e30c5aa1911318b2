package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/schemas"
)

// inputFlags are the flags every command that reads a site's files shares.
func inputFlags(sacctRequired bool) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "slurm-conf", Usage: "the cluster's slurm.conf", Required: true},
		&cli.StringFlag{Name: "assoc", Usage: "sacctmgr -P show assoc dump (a file, or a directory of dated dump files assoc-YYYY-MM-DD.psv)", Required: true},
		&cli.StringFlag{Name: "qos", Usage: "sacctmgr -P show qos format=Name,UsageFactor,Flags dump"},
		&cli.StringSliceFlag{Name: "sacct", Usage: "sacct -P job log: a file, or a named pipe sacct writes into (repeatable)", Required: sacctRequired},
		&cli.StringFlag{Name: "sacct-fields", Usage: "field list of headerless sacct files: comma-separated titles, or a preset (" + presetNames() + ")"},
		&cli.DurationFlag{Name: "input-timeout", Value: ingest.DefaultPipeTimeout, Usage: "fail when a sacct file that is a named pipe gives no data for this long: no writer opens it, or its writer stalls (0: wait for ever; regular files are never timed out)"},
		&cli.StringFlag{Name: "tz", Usage: "time zone of sacct's local timestamps and of usage resets (default: $TZ, else UTC; for run on an existing history, the history's zone, and another one is refused)"},
		&cli.StringFlag{Name: "cluster", Usage: "cluster name when sacct has no Cluster column (default: ClusterName from slurm.conf)"},
		&cli.StringFlag{Name: "slurm-version", Value: release.Newest().String(), Usage: "release series of the site's slurmctld, " +
			slurmVersionList() + " (the rules that differ between releases follow it: docs/slurm-versions.md)"},
		&cli.StringFlag{Name: "rejects", Usage: "write rejected rows here (tab-separated: file, line, field, value, reason, record; - for stdout, before the summary); the file is replaced when the command ends, a symlink written through, a device or FIFO written as it is"},
	}
}

func presetNames() string {
	return strings.Join(slices.Sorted(maps.Keys(ingest.SacctPresets)), ", ")
}

func checkCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "validate a site's inputs and count every row: ingested, skipped (per reason) or rejected",
		ArgsUsage: " ",
		Flags: append(inputFlags(true), &cli.BoolFlag{Name: "priority", Usage: "read the sacct files as run --priority does: " +
			"with the request columns (a file without them is refused), and the jobs that never started ingested (counted apart: charged nothing)"},
			priorityPartialFlag()),
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			log := newLogger(c, stderr)
			return runCheck(c, log, stdout)
		},
	}
}

// slurmVersionList is the release series --slurm-version takes.
func slurmVersionList() string {
	var names []string
	for _, v := range release.Supported() {
		names = append(names, v.String())
	}
	return strings.Join(names, ", ")
}

// inputs is what the shared input flags resolve to.
type inputs struct {
	version release.Series
	site    *ingest.Site // never nil once read, whatever errs holds
	errs    []error
	reject  *rejectSink
}

// rejectSink writes rejected rows to --rejects (if given) and logs the
// first few, so nothing is dropped silently.
type rejectSink struct {
	log    zerolog.Logger
	w      *bufio.Writer
	out    *outFile
	logged int
	total  int64
}

const maxLoggedRejects = 20

func (r *rejectSink) add(err *ingest.ParseError, record string) {
	r.total++
	if r.w != nil {
		fmt.Fprintln(r.w, ingest.FormatReject(err, record))
	}
	if r.logged < maxLoggedRejects {
		r.logged++
		r.log.Warn().Str("file", err.File).Int("line", err.Line).Str("field", err.Field).Str("value", err.Value).Msg(err.Error())
	} else if r.logged == maxLoggedRejects && r.w == nil {
		r.logged++
		r.log.Warn().Msg("more rejected rows not logged; pass --rejects FILE to keep them all")
	}
}

func (r *rejectSink) close() error {
	if r.w == nil {
		return nil
	}
	w, out := r.w, r.out
	r.w, r.out = nil, nil
	if err := w.Flush(); err != nil {
		out.Discard()
		return fmt.Errorf("write --rejects: %w", err)
	}
	if err := out.Commit(); err != nil {
		return fmt.Errorf("write --rejects: %w", err)
	}
	return nil
}

// readInputs reads slurm.conf, the association tree(s) and QOS
// (ingest.ReadSite) and logs their warnings, and opens --rejects ("-" is
// stdout); loc is the zone of local times (--tz, or for run the history's).
// Input errors are collected so that check can report them all at once.
func readInputs(c *cli.Context, log zerolog.Logger, stdout io.Writer, loc *time.Location) (*inputs, error) {
	in := &inputs{}
	var err error
	if in.version, err = release.Parse(c.String("slurm-version")); err != nil {
		return nil, usagef("--slurm-version: %v", err)
	}
	in.reject = &rejectSink{log: log}
	if p := c.String("rejects"); p != "" {
		// check has no --history: "" then.
		if err := outsideHistory("rejects", p, c.String("history")); err != nil {
			return nil, err
		}
		out, err := createOutput(p, stdout)
		if err != nil {
			return nil, fmt.Errorf("--rejects: %w", err)
		}
		in.reject.out, in.reject.w = out, bufio.NewWriter(out)
	}
	in.site, err = ingest.ReadSite(siteOptions(c, loc, in.version, in.reject.add))
	if err != nil {
		in.errs = append(in.errs, err)
	}
	for _, w := range in.site.Warnings {
		log.Warn().Str("file", w.File).Msg(w.Msg)
	}
	return in, nil
}

// siteOptions are the shared input flags as ingest.ReadSite takes them.
func siteOptions(c *cli.Context, loc *time.Location, v release.Series, onReject func(*ingest.ParseError, string)) ingest.SiteOptions {
	var fields []string
	if s := c.String("sacct-fields"); s != "" {
		fields = strings.Split(s, ",")
	}
	return ingest.SiteOptions{SlurmConf: c.String("slurm-conf"), Assoc: c.String("assoc"), QOS: c.String("qos"),
		Sacct: c.StringSlice("sacct"), SacctFields: fields, PipeTimeout: c.Duration("input-timeout"), Location: loc,
		Cluster: c.String("cluster"), SlurmVersion: v, Now: time.Now(), OnReject: onReject}
}

// priorityPartialFlag is run's and check's --priority-partial.
func priorityPartialFlag() cli.Flag {
	return &cli.BoolFlag{Name: "priority-partial", Usage: "with --priority: read sacct files that lack some of the columns job priority needs (" +
		strings.Join(ingest.PriorityRequired, ",") + ") with a warning instead of refusing them; their values are then unknown " +
		"(a job's size its allocation, nice 0, no hold, the partition it ran in) and the priorities computed without them"}
}

// forPriority sets the sacct options of a command given --priority (cmd
// names it in errors): a file without the columns job priority needs
// (ingest.PriorityRequired) is refused, or with --priority-partial read
// with a warning.
func (in *inputs) forPriority(c *cli.Context, cmd string) error {
	if !c.Bool("priority") {
		if c.Bool("priority-partial") {
			return usagef("--priority-partial needs --priority")
		}
		return nil
	}
	o := &in.site.SacctOptions
	o.Require, o.RequireFor, o.RequireWarn = ingest.PriorityRequired, cmd, c.Bool("priority-partial")
	return nil
}

// countClusters adds the rows of rec to counts, per value of the Cluster
// column ("" for null).
func countClusters(rec arrow.RecordBatch, counts map[string]int64) error {
	d, codes, names, err := schemas.DictStringColumn(rec, schemas.ColCluster)
	if err != nil {
		return err
	}
	n := make([]int64, names.Len())
	for i, c := range codes {
		if d.IsNull(i) {
			counts[""]++
			continue
		}
		n[c]++
	}
	for k, c := range n {
		if c > 0 {
			counts[strings.Clone(names.Value(k))] += c
		}
	}
	return nil
}

// clusterLine is check's line on the sacct rows' clusters when some are not
// the expected cluster (slurm.conf's ClusterName, or --cluster): the rows
// per cluster, sorted. none reports that no row is of the expected one.
func clusterLine(counts map[string]int64, want string) (line string, none bool) {
	names := slices.Sorted(maps.Keys(counts))
	if len(names) == 0 || len(names) == 1 && names[0] == want {
		return "", false
	}
	parts := make([]string, len(names))
	for i, c := range names {
		parts[i] = fmt.Sprintf("%q=%d", c, counts[c])
	}
	return fmt.Sprintf("sacct clusters: %s; expected %q (slurm.conf ClusterName, or --cluster): rows of other clusters are not charged",
		strings.Join(parts, " "), want), counts[want] == 0
}

func runCheck(c *cli.Context, log zerolog.Logger, stdout io.Writer) error {
	loc, err := location(c.String("tz"))
	if err != nil {
		return err
	}
	in, err := readInputs(c, log, stdout, loc)
	if err != nil {
		return err
	}
	if err := in.forPriority(c, "check --priority"); err != nil {
		return err
	}
	site := in.site
	if len(in.errs) == 0 {
		// What run derives from the configuration, checked as run does.
		if err := pipeline.Validate(pipeline.Inputs{Conf: site.Conf, Assoc: site.Assoc, QOS: site.QOS},
			pipeline.Options{Cluster: c.String("cluster"), Location: site.SacctOptions.Location, SlurmVersion: in.version}); err != nil {
			in.errs = append(in.errs, err)
		}
	}
	var rows []ingest.Stats
	rows = append(rows, site.Stats...)
	clusters := map[string]int64{} // ingested sacct rows per cluster
	// Read as run reads them, with --priority as run --priority does.
	jo := ingest.JobOptions{Priority: c.Bool("priority")}
	for _, src := range site.Jobs() {
		p := src.Name()
		st, err := ingest.ReadJobs(src, jo, func(rec arrow.RecordBatch) error { return countClusters(rec, clusters) })
		if err != nil {
			in.errs = append(in.errs, err)
		}
		for _, w := range st.Warnings {
			log.Warn().Str("file", p).Msg(w)
		}
		log.Info().Str("file", p).Int64("lines", st.Lines).Int64("continued_lines", st.Continued).Int64("read", st.Read).Int64("ingested", st.Ingested).
			Int64("rejected", st.Rejected).Interface("skipped", st.Skipped).Bool("balanced", st.Balanced()).Msg("sacct counted")
		rows = append(rows, st)
	}
	if err := in.reject.close(); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	if conf := site.Conf; conf != nil {
		fmt.Fprintf(tw, "slurm.conf\t%s\tcluster=%s algorithm=%s half-life=%ds calc-period=%ds reset=%s limits=%v partitions=%d\n",
			conf.File, conf.ClusterName, conf.Algorithm(), conf.DecayHalfLifeSec, conf.CalcPeriodSec,
			conf.UsageResetPeriod, conf.LimitsEnforced(), len(conf.Partitions))
	}
	fmt.Fprintln(tw, "FILE\tLINES\tREAD\tINGESTED\tREJECTED\tSKIPPED")
	var rejected int64
	for _, st := range rows {
		var sk []string
		for _, k := range st.SkipReasons() {
			sk = append(sk, fmt.Sprintf("%s=%d", k, st.Skipped[k]))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", st.File, st.Lines, st.Read, st.Ingested, st.Rejected, strings.Join(sk, " "))
		rejected += st.Rejected
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, st := range rows {
		if st.NeverStarted > 0 {
			fmt.Fprintf(stdout, "%s: %d of the ingested rows never started: read for job priority, charged nothing\n", st.File, st.NeverStarted)
		}
	}
	if line, none := clusterLine(clusters, site.SacctOptions.Cluster); line != "" {
		fmt.Fprintln(stdout, line)
		if none {
			in.errs = append(in.errs, fmt.Errorf("none of the sacct rows is of cluster %q: run would charge nothing; check the sacct files and ClusterName (or pass --cluster)", site.SacctOptions.Cluster))
		} else {
			log.Warn().Str("cluster", site.SacctOptions.Cluster).Interface("sacct_clusters", clusters).Msg("sacct rows of other clusters are not charged")
		}
	}
	if len(in.errs) > 0 {
		return errors.Join(in.errs...)
	}
	if rejected > 0 {
		log.Warn().Int64("rejected", rejected).Msg("finished with rejected rows")
		return errRejected
	}
	return nil
}
