package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fairledger/fairledger/internal/release"
)

// SiteOptions name a site's files and say how to read them: what the
// commands that read a site (check, run) turn their flags into.
type SiteOptions struct {
	// SlurmConf is the cluster's slurm.conf.
	SlurmConf string
	// Assoc is the association tree: a sacctmgr dump (or script), or a
	// directory of dated dumps assoc-YYYY-MM-DD.psv (ReadAssocDir).
	Assoc string
	// QOS is the sacctmgr QOS dump; "" reads none.
	QOS string
	// Sacct are the sacct -P files (or named pipes), read in order.
	Sacct []string
	// SacctFields declares the columns of headerless sacct files
	// (SacctOptions.Fields).
	SacctFields []string
	// PipeTimeout bounds how long a sacct named pipe may give no data
	// (SacctOptions.PipeTimeout).
	PipeTimeout time.Duration
	// Location is the zone of sacct's local times and of the dated
	// association dumps' dates.
	Location *time.Location
	// Cluster is the cluster of sacct rows that name none; "" takes
	// slurm.conf's ClusterName.
	Cluster string
	// SlurmVersion is the release series of the site's slurmctld, whose
	// rules slurm.conf is warned against (Config.WarningsFor).
	SlurmVersion release.Series
	// Now is the moment of the command: a sacct record with a time after
	// it (beyond ClockSkew) is rejected (RunBounds). Zero leaves the
	// bounds to the caller of the sacct reader.
	Now time.Time
	// OnReject, if set, receives every rejected sacct record
	// (SacctOptions.OnReject).
	OnReject func(err *ParseError, record string)
}

// Site is a site's files, read: the parsed configuration, the jobs' inputs
// ready to be read (Jobs), and every file's counts and warnings.
type Site struct {
	// Conf is slurm.conf; nil when it could not be read.
	Conf *Config
	// Assoc are the association trees, oldest first (one undated dump has
	// a zero Effective).
	Assoc []DatedAssociations
	// QOS is the QOS table; nil without SiteOptions.QOS.
	QOS *QOSTable
	// Stats are the counts of the association and QOS files, in the order
	// read.
	Stats []Stats
	// Warnings are the files' warnings, in the order they were found:
	// slurm.conf's for the Slurm release, then those of each association
	// and QOS file.
	Warnings []Warning
	// Sacct are the sacct files, read by Jobs with SacctOptions.
	Sacct []string
	// SacctOptions are the sacct reader's options derived from
	// SiteOptions; a command may add to them (Require) before Jobs.
	SacctOptions SacctOptions
	// Files are the small input files (slurm.conf, every file of an
	// association directory, the QOS dump), which a run records with their
	// size and SHA-256.
	Files []string
}

// Warning is a warning about an input file.
type Warning struct {
	// File is the file's path.
	File string
	// Msg is the warning.
	Msg string
}

// ReadSite reads slurm.conf, the association tree(s) and the QOS dump,
// and prepares the sacct files' options. It reads every file even when an
// earlier one fails: the returned Site holds what could be read, and the
// error joins the errors of all files (each file's capped at maxShownErrors
// and a count of the rest), so that they are reported at once. Only the
// sacct files are left unread: Site.Jobs hands them to their reader.
func ReadSite(opt SiteOptions) (*Site, error) {
	s := &Site{Sacct: opt.Sacct}
	var errs []error
	conf, err := ReadSlurmConf(opt.SlurmConf)
	if err != nil {
		errs = append(errs, capErrors(err))
	}
	if conf != nil {
		for _, w := range conf.WarningsFor(opt.SlurmVersion) {
			s.Warnings = append(s.Warnings, Warning{File: conf.File, Msg: w})
		}
	}
	s.Conf = conf
	if fi, err := os.Stat(opt.Assoc); err == nil && fi.IsDir() {
		d, st, err := ReadAssocDir(opt.Assoc, opt.Location)
		s.Assoc = d
		s.Stats = append(s.Stats, st...)
		if err != nil {
			errs = append(errs, capErrors(err))
		}
	} else {
		a, st, err := ReadAssocFile(opt.Assoc)
		s.Stats = append(s.Stats, st)
		if err != nil {
			errs = append(errs, capErrors(err))
		}
		if a != nil {
			s.Assoc = []DatedAssociations{{Assoc: a}}
		}
	}
	if opt.QOS != "" {
		q, st, err := ReadQOS(opt.QOS)
		s.QOS = q
		s.Stats = append(s.Stats, st)
		if err != nil {
			errs = append(errs, capErrors(err))
		}
	}
	for _, st := range s.Stats {
		for _, w := range st.Warnings {
			s.Warnings = append(s.Warnings, Warning{File: st.File, Msg: w})
		}
	}
	cluster := opt.Cluster
	if cluster == "" && conf != nil {
		cluster = conf.ClusterName
	}
	s.SacctOptions = SacctOptions{Fields: opt.SacctFields, Location: opt.Location, Cluster: cluster, OnReject: opt.OnReject,
		PipeTimeout: opt.PipeTimeout}
	if !opt.Now.IsZero() {
		s.SacctOptions.Bounds = RunBounds(opt.Now)
	}
	s.Files = siteFiles(opt)
	return s, errors.Join(errs...)
}

// Jobs are the site's sacct files as job sources, read with SacctOptions.
func (s *Site) Jobs() []JobSource {
	return SacctFiles(s.Sacct, s.SacctOptions)
}

// siteFiles are the small input files of opt (Site.Files): slurm.conf, the
// association dump or every regular, not hidden file of its directory, and
// the QOS dump.
func siteFiles(opt SiteOptions) []string {
	files := []string{opt.SlurmConf}
	a := opt.Assoc
	if fi, err := os.Stat(a); err == nil && fi.IsDir() {
		entries, _ := os.ReadDir(a)
		for _, e := range entries {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				files = append(files, filepath.Join(a, e.Name()))
			}
		}
	} else {
		files = append(files, a)
	}
	if opt.QOS != "" {
		files = append(files, opt.QOS)
	}
	return files
}

// maxShownErrors is how many errors of one input file ReadSite reports;
// the rest are counted. A few bad lines are all listed, so they can be
// fixed in one go, while a file with an error on every line does not
// bury the first ones.
const maxShownErrors = 10

// capErrors flattens err's errors.Join tree and keeps the first
// maxShownErrors errors of each input file (a ParseError's File),
// followed by one MoreErrors counting that file's others (those it
// dropped and those a reader already counted in a MoreErrors). Files keep
// the order of their first error; errors that name no file are all kept.
func capErrors(err error) error {
	var leaves []error
	var flatten func(error)
	flatten = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				flatten(x)
			}
			return
		}
		leaves = append(leaves, e)
	}
	flatten(err)
	type group struct {
		errs []error
		more int
	}
	var order []string
	groups := map[string]*group{}
	var other []error
	for _, e := range leaves {
		var file string
		var pe *ParseError
		var me *MoreErrors
		switch {
		case errors.As(e, &me):
			file = me.File
		case errors.As(e, &pe):
			file = pe.File
		default:
			other = append(other, e)
			continue
		}
		g := groups[file]
		if g == nil {
			g = &group{}
			groups[file] = g
			order = append(order, file)
		}
		switch {
		case me != nil:
			g.more += me.N
		case len(g.errs) < maxShownErrors:
			g.errs = append(g.errs, e)
		default:
			g.more++
		}
	}
	var out []error
	for _, f := range order {
		g := groups[f]
		out = append(out, g.errs...)
		if g.more > 0 {
			out = append(out, &MoreErrors{File: f, N: g.more})
		}
	}
	return errors.Join(append(out, other...)...)
}
