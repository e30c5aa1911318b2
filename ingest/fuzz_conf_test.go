package ingest

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseSlurmConf checks that any slurm.conf text parses without
// panicking, yields a Config (or, for input that is no slurm.conf at all,
// one whole-file *ParseError), reports only *ParseError values (joined;
// past confKeptErrors a last *MoreErrors), and never lists the DEFAULT
// pseudo-partition or an unnamed one.
// Includes are served from a small in-memory tree that includes itself.
// Run: go test -run '^$' -fuzz FuzzParseSlurmConf -fuzztime 30s -fuzzminimizetime 2s ./ingest/
// (the seeds are whole slurm.conf files, so the default 60 s minimization
// of each new input dominates short runs).
func FuzzParseSlurmConf(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join(confDir, "*.conf*"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed files in %s: %v", confDir, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	for _, s := range []string{
		"PartitionName=a \\\n Nodes=b \\",
		"Include inc.conf\nInclude %c.conf\nClusterName=fuzz\nInclude %c.conf",
		`ClusterName="a # b" X=\`,
		"PriorityDecayHalfLife=0\nPriorityFlags=\"\"",
		"PartitionName=DEFAULT Priority=70000\nPartitionName=x",
		"{{\n{%\n=\n\"\"=\"\"",
		"PriorityWeightAge*=3 PriorityCalcPeriod=99999999999",
	} {
		f.Add(s)
	}
	files := map[string]string{
		"inc.conf":  "PriorityWeightAge=1\nInclude inc.conf\nPartitionName=inc",
		"fuzz.conf": "Include inc.conf",
	}
	open := func(p string) (io.ReadCloser, error) {
		s, ok := files[filepath.ToSlash(p)]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return io.NopCloser(strings.NewReader(s)), nil
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ParseSlurmConf("fuzz.conf", strings.NewReader(in), open)
		if c == nil {
			// Not a slurm.conf at all: one whole-file error.
			if pe, ok := err.(*ParseError); !ok || pe.Line != 0 {
				t.Fatalf("nil Config with error %v (%T), want one whole-file *ParseError", err, err)
			}
			return
		}
		var leaves []error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			leaves = j.Unwrap()
		} else if err != nil {
			leaves = []error{err}
		}
		for i, e := range leaves {
			var pe *ParseError
			if me, ok := e.(*MoreErrors); ok && i == len(leaves)-1 && i == confKeptErrors && me.N > 0 {
				continue
			}
			if !errors.As(e, &pe) || pe != e {
				t.Errorf("error %v (%T) is not a *ParseError", e, e)
			}
		}
		for _, p := range c.Partitions {
			if p.Name == "" || strings.EqualFold(p.Name, "DEFAULT") || p.PriorityJobFactor < 0 || p.PriorityJobFactor > 0xffff {
				t.Errorf("bad partition %+v", p)
			}
		}
		if c.CalcPeriodSec < 60 || c.DecayHalfLifeSec < 0 || c.FairShareDampeningFactor < 1 {
			t.Errorf("out-of-range config %+v", c)
		}
		c.Algorithm()
		c.LimitsEnforced()
		c.HasFlag("MAX_TRES")
	})
}

// FuzzTimeStrToMins checks TimeStrToMins against its own contract: no
// panics, results within Slurm's int range, and success only for strings
// made of digits, '-' and ':'.
// Run: go test -run '^$' -fuzz FuzzTimeStrToMins -fuzztime 30s ./ingest/
func FuzzTimeStrToMins(f *testing.F) {
	for _, s := range []string{"7-0", "90:30", "1:30:00", "2-12", "1-", "-1", "UNLIMITED", "24855-3:14:07", "1-2:3:4", "::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := TimeStrToMins(s)
		if err != nil {
			if m != 0 {
				t.Errorf("TimeStrToMins(%q) = %d with error %v, want 0", s, m, err)
			}
			return
		}
		if m < 0 || m > (tsMaxSecs+59)/60 {
			t.Errorf("TimeStrToMins(%q) = %d, out of range", s, m)
		}
		if strings.Trim(s, "0123456789-:") != "" {
			t.Errorf("TimeStrToMins(%q) accepted a character outside digits, '-' and ':'", s)
		}
	})
}
