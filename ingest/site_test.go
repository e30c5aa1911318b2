package ingest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/internal/release"
)

func TestCapErrors(t *testing.T) {
	t.Parallel()
	pe := func(file string, line int) error {
		return &ParseError{File: file, Line: line, Err: errors.New("bad")}
	}
	var many []error
	for i := 1; i <= 13; i++ {
		many = append(many, pe("a.conf", i))
	}
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"a few errors are all listed", errors.Join(pe("a.conf", 1), pe("a.conf", 2)),
			[]string{"ingest a.conf:1: bad", "ingest a.conf:2: bad"}},
		{"ten and three more", errors.Join(many...),
			[]string{"ingest a.conf:1: bad", "ingest a.conf:2: bad", "ingest a.conf:3: bad", "ingest a.conf:4: bad",
				"ingest a.conf:5: bad", "ingest a.conf:6: bad", "ingest a.conf:7: bad", "ingest a.conf:8: bad",
				"ingest a.conf:9: bad", "ingest a.conf:10: bad", "ingest a.conf: 3 more error(s) not shown"}},
		{"a reader's own count is added; each file capped alone, nested joins flattened",
			errors.Join(errors.Join(append(many, &MoreErrors{File: "a.conf", N: 500})...),
				errors.Join(pe("b.psv", 4)), fmt.Errorf("read association dir d: %w", errors.New("boom"))),
			[]string{"ingest a.conf:1: bad", "ingest a.conf:2: bad", "ingest a.conf:3: bad", "ingest a.conf:4: bad",
				"ingest a.conf:5: bad", "ingest a.conf:6: bad", "ingest a.conf:7: bad", "ingest a.conf:8: bad",
				"ingest a.conf:9: bad", "ingest a.conf:10: bad", "ingest a.conf: 503 more error(s) not shown",
				"ingest b.psv:4: bad", "read association dir d: boom"}},
		{"a single error", pe("c.psv", 0), []string{"ingest c.psv: bad"}},
	}
	for _, tt := range tests {
		got := strings.Split(capErrors(tt.err).Error(), "\n")
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got\n%s\nwant\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}

// writeFiles writes name → text files into dir and returns their paths.
func writeFiles(t *testing.T, dir string, files map[string]string) map[string]string {
	t.Helper()
	paths := map[string]string{}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}

// TestReadSiteErrors checks that ReadSite reads every file when some are
// bad and reports all their errors at once, in the files' order, each
// file's capped at ten and a count, while keeping what it could read.
func TestReadSiteErrors(t *testing.T) {
	t.Parallel()
	assoc := "Cluster|Account|User|Partition|ParentName|Share\nc1|root||||1\n"
	for i := range 12 {
		assoc += fmt.Sprintf("c1|a%d|||root|abc\n", i)
	}
	p := writeFiles(t, t.TempDir(), map[string]string{
		"slurm.conf": "ClusterName=alpha\n",
		"assoc.psv":  assoc,
		"qos.psv":    "Name|UsageFactor|Flags\nnormal|1.0|\nfast|x|\n",
	})
	s, err := ReadSite(SiteOptions{SlurmConf: p["slurm.conf"], Assoc: p["assoc.psv"], QOS: p["qos.psv"], Location: time.UTC})
	if err == nil {
		t.Fatal("ReadSite of a bad association and QOS dump: no error")
	}
	var want []string
	for line := 3; line <= 12; line++ {
		want = append(want, fmt.Sprintf(`ingest assoc.psv:%d: Share="abc": bad share (want a non-negative integer or parent)`, line))
	}
	// An association file is named by its base name (ReadAssocFile), as
	// the files of a directory of dumps are.
	want = append(want, "ingest assoc.psv: 2 more error(s) not shown",
		"ingest "+p["qos.psv"]+`:3: UsageFactor="x": not a number`)
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("error:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s == nil || s.Conf == nil || s.Conf.ClusterName != "alpha" {
		t.Fatalf("ReadSite kept no slurm.conf: %+v", s)
	}
	if len(s.Stats) != 2 || s.Stats[0].File != "assoc.psv" || s.Stats[1].File != p["qos.psv"] {
		t.Errorf("Stats = %+v, want the association dump's, then the QOS dump's", s.Stats)
	}

	// A missing slurm.conf is one more error; the other files are read.
	_, err = ReadSite(SiteOptions{SlurmConf: p["slurm.conf"] + ".missing", Assoc: p["assoc.psv"], Location: time.UTC})
	if got := strings.Split(err.Error(), "\n"); len(got) != 12 || !strings.Contains(got[0], p["slurm.conf"]+".missing") ||
		got[11] != "ingest assoc.psv: 2 more error(s) not shown" {
		t.Errorf("missing slurm.conf: error\n%s\nwant the slurm.conf's error, then the association dump's ten and their count", err)
	}
}

// TestReadSite checks what ReadSite gives a command: the warnings in the
// order the files are read, the dated trees and the files a run records,
// and the sacct reader's options from the site.
func TestReadSite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := writeFiles(t, dir, map[string]string{
		"slurm.conf":                      "ClusterName=alpha\n",
		"assoc/assoc-2025-02-01.psv":      "Cluster|Account|User|Partition|ParentName|Share\nalpha|root||||1",
		"assoc/assoc-2025-01-01.psv":      "Cluster|Account|User|Partition|ParentName|Share\nalpha|root||||1\n",
		"assoc/.assoc-2025-03-01.psv.swp": "",
		"assoc/old/notes.txt":             "not a dump\n",
		"qos.psv":                         "Name|UsageFactor|Flags\nnormal|1.0|",
	})
	berlin := time.FixedZone("CET", 3600)
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	sacct := []string{filepath.Join(dir, "a.psv"), filepath.Join(dir, "b.psv")}
	opt := SiteOptions{SlurmConf: p["slurm.conf"], Assoc: filepath.Join(dir, "assoc"), QOS: p["qos.psv"], Sacct: sacct,
		SacctFields: []string{"xdmod"}, PipeTimeout: time.Minute, Location: berlin, SlurmVersion: release.Series{Major: 22, Minor: 5}, Now: now}
	s, err := ReadSite(opt)
	if err != nil {
		t.Fatal(err)
	}
	feb := "assoc-2025-02-01.psv" // named by its base name, as its errors are
	want := []Warning{
		{p["slurm.conf"], p["slurm.conf"] + ": PriorityType is not set, and Slurm's default priority/basic keeps no fair share; fairledger computes what priority/multifactor would"},
		{feb, feb + ":2: the file ends without a newline, which sacctmgr always prints: the last line may be cut (a truncated copy?)"},
		{p["qos.psv"], p["qos.psv"] + ":2: the file ends without a newline, which sacctmgr always prints: the last line may be cut (a truncated copy?)"},
	}
	if !reflect.DeepEqual(s.Warnings, want) {
		t.Errorf("Warnings:\n%q\nwant\n%q", s.Warnings, want)
	}
	if len(s.Assoc) != 2 || !s.Assoc[0].Effective.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, berlin)) ||
		!s.Assoc[1].Effective.Equal(time.Date(2025, 2, 1, 0, 0, 0, 0, berlin)) {
		t.Errorf("Assoc = %+v, want the dumps of 2025-01-01 and 2025-02-01 at midnight in the site's zone", s.Assoc)
	}
	if wantFiles := []string{p["slurm.conf"], p["assoc/assoc-2025-01-01.psv"], p["assoc/assoc-2025-02-01.psv"], p["qos.psv"]}; !reflect.DeepEqual(s.Files, wantFiles) {
		t.Errorf("Files = %q, want %q", s.Files, wantFiles)
	}
	so := s.SacctOptions
	if so.Cluster != "alpha" || so.Location != berlin || so.PipeTimeout != time.Minute || !reflect.DeepEqual(so.Fields, []string{"xdmod"}) ||
		so.Bounds != (TimeBounds{Min: EarliestUnix, Max: now.Unix() + int64(ClockSkew/time.Second)}) {
		t.Errorf("SacctOptions = %+v, want cluster alpha (slurm.conf's), the site's zone, timeout and fields, bounds up to now plus ClockSkew", so)
	}
	jobs := s.Jobs()
	if len(jobs) != 2 || jobs[0].Name() != sacct[0] || jobs[1].Name() != sacct[1] {
		t.Errorf("Jobs() = %v, want the sacct files in order", jobs)
	}

	// Another release without the PriorityType warning, --cluster, no
	// moment of the command.
	opt.SlurmVersion, opt.Cluster, opt.Now = release.Series{Major: 23, Minor: 11}, "beta", time.Time{}
	if s, err = ReadSite(opt); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Warnings, want[1:]) || s.SacctOptions.Cluster != "beta" || s.SacctOptions.Bounds != (TimeBounds{}) {
		t.Errorf("23.11, --cluster beta: warnings %q, cluster %q, bounds %+v; want the dumps' warnings only, beta, none",
			s.Warnings, s.SacctOptions.Cluster, s.SacctOptions.Bounds)
	}
}
