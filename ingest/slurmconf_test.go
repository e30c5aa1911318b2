package ingest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const confDir = "../testdata/slurmconf"

// confParse parses text as "test.conf" with includes served from files.
func confParse(t testing.TB, text string, files map[string]string) (*Config, error) {
	t.Helper()
	open := func(p string) (io.ReadCloser, error) {
		s, ok := files[filepath.ToSlash(p)]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return io.NopCloser(strings.NewReader(s)), nil
	}
	if files == nil {
		open = nil
	}
	c, err := ParseSlurmConf("test.conf", strings.NewReader(text), open)
	if c == nil {
		t.Fatalf("ParseSlurmConf(%q) returned a nil Config", text)
	}
	return c, err
}

// confParseErrors flattens an errors.Join of ParseErrors; it fails the test
// on any other kind of error.
func confParseErrors(t testing.TB, err error) []*ParseError {
	t.Helper()
	if err == nil {
		return nil
	}
	var leaves []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		leaves = j.Unwrap()
	} else {
		leaves = []error{err}
	}
	out := make([]*ParseError, 0, len(leaves))
	for _, e := range leaves {
		pe, ok := e.(*ParseError)
		if !ok {
			t.Fatalf("error %v (%T) is not a *ParseError", e, e)
		}
		out = append(out, pe)
	}
	return out
}

func TestParseSlurmConfDefaults(t *testing.T) {
	t.Parallel()
	// Defaults from docs/slurm-semantics.md §2.2 (half-life 7-0), §2.7 (NONE),
	// §5 (damping 1), Slurm's read_config.c (weights 0, PriorityMaxAge 7-0) and the
	// PriorityCalcPeriod default of 5 minutes (read_config.h).
	c, err := confParse(t, "", nil)
	if err != nil {
		t.Fatalf("ParseSlurmConf(empty) error = %v", err)
	}
	want := &Config{
		File:                     "test.conf",
		DecayHalfLifeSec:         604800,
		CalcPeriodSec:            300,
		UsageResetPeriod:         "NONE",
		FairShareDampeningFactor: 1,
		PriorityMaxAgeSec:        604800,
		Set:                      map[string]bool{},
		// Slurm's default PriorityType is priority/basic before 23.11
		// (docs/slurm-versions.md §7).
		Warnings: []string{"test.conf: PriorityType is not set, and Slurm's default priority/basic keeps no fair share; fairledger computes what priority/multifactor would"},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("ParseSlurmConf(empty) = %+v, want %+v", c, want)
	}
	if got := c.Algorithm().String(); got != "fair_tree" {
		t.Errorf("Algorithm() = %q, want fair_tree", got)
	}
	if c.LimitsEnforced() {
		t.Errorf("LimitsEnforced() = true, want false")
	}
}

func TestParseSlurmConfSyntax(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		text  string
		check func(t *testing.T, c *Config)
	}{
		{"keys are case-insensitive", "prioritydecayhalflife=1-0\nPRIORITYWEIGHTAGE=3", func(t *testing.T, c *Config) {
			confWant(t, "DecayHalfLifeSec", c.DecayHalfLifeSec, int64(86400))
			confWant(t, "PriorityWeightAge", c.PriorityWeightAge, int64(3))
			confWant(t, "Set[prioritydecayhalflife]", c.Set["prioritydecayhalflife"], true)
		}},
		{"spaces around =", "PriorityDecayHalfLife = 2-0\nPriorityWeightAge= 1000 \n\tPriorityWeightQOS =7", func(t *testing.T, c *Config) {
			confWant(t, "DecayHalfLifeSec", c.DecayHalfLifeSec, int64(2*86400))
			confWant(t, "PriorityWeightAge", c.PriorityWeightAge, int64(1000))
			confWant(t, "PriorityWeightQOS", c.PriorityWeightQOS, int64(7))
		}},
		{"trailing and full-line comments", "#PriorityDecayHalfLife=0\nPriorityWeightQOS=0 # don't use the qos factor\n   # indented comment", func(t *testing.T, c *Config) {
			confWant(t, "DecayHalfLifeSec", c.DecayHalfLifeSec, int64(604800))
			confWant(t, "Set[prioritydecayhalflife]", c.Set["prioritydecayhalflife"], false)
			confWant(t, "PriorityWeightQOS", c.PriorityWeightQOS, int64(0))
			confWant(t, "Set[priorityweightqos]", c.Set["priorityweightqos"], true)
		}},
		{"escaped # and backslash", `ClusterName=a\#b\\c # comment`, func(t *testing.T, c *Config) {
			confWant(t, "ClusterName", c.ClusterName, `a#b\c`)
		}},
		{"quoted value with spaces", `PriorityWeightTRES="CPU=1000, Mem=2000"`, func(t *testing.T, c *Config) {
			confWant(t, "PriorityWeightTRES", c.PriorityWeightTRES, "CPU=1000, Mem=2000")
		}},
		{"value may contain =", "PriorityWeightTRES=CPU=0,Mem=.03,GRES/gpu=30000", func(t *testing.T, c *Config) {
			confWant(t, "PriorityWeightTRES", c.PriorityWeightTRES, "CPU=0,Mem=.03,GRES/gpu=30000")
		}},
		{"line continuation joins physical lines", "PriorityFlags=MAX_TRES,\\\nNO_FAIR_TREE\nPriorityWeightAge=2", func(t *testing.T, c *Config) {
			confWant(t, "PriorityFlags", c.PriorityFlags, []string{"MAX_TRES", "NO_FAIR_TREE"})
			confWant(t, "PriorityWeightAge", c.PriorityWeightAge, int64(2))
		}},
		{"continued partition line keeps its first line number", "\nPartitionName=gpu \\  \n  Nodes=g[01-04] \\\n  TRESBillingWeights=\"CPU=1.0,Mem=0.25G,GRES/gpu=2.0\" Default=NO\nPartitionName=cpu", func(t *testing.T, c *Config) {
			confWant(t, "Partitions", c.Partitions, []Partition{
				{Name: "gpu", TRESBillingWeights: "CPU=1.0,Mem=0.25G,GRES/gpu=2.0", PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1, Nodes: "g[01-04]", File: "test.conf", Line: 2,
					WeightsFile: "test.conf", WeightsLine: 2},
				{Name: "cpu", PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1, File: "test.conf", Line: 5},
			})
		}},
		{"duplicate keys: last wins", "ClusterName=first\nClusterName=Second", func(t *testing.T, c *Config) {
			confWant(t, "ClusterName", c.ClusterName, "second")
		}},
		{"CRLF line ends", "PriorityWeightAge=4\r\nPriorityUsageResetPeriod=weekly\r\n", func(t *testing.T, c *Config) {
			confWant(t, "PriorityWeightAge", c.PriorityWeightAge, int64(4))
			confWant(t, "UsageResetPeriod", c.UsageResetPeriod, "WEEKLY")
		}},
		{"lists are trimmed and case-normalized", "PriorityFlags=\"fair_tree, max_tres ,,calculate_running\"\nAccountingStorageEnforce=Associations,Limits,QOS\nAccountingStorageTRES=gres/gpu,CPU,Energy,Mem", func(t *testing.T, c *Config) {
			confWant(t, "PriorityFlags", c.PriorityFlags, []string{"FAIR_TREE", "MAX_TRES", "CALCULATE_RUNNING"})
			confWant(t, "AccountingStorageEnforce", c.AccountingStorageEnforce, []string{"associations", "limits", "qos"})
			confWant(t, "AccountingStorageTRES", c.AccountingStorageTRES, []string{"gres/gpu", "CPU", "Energy", "Mem"})
		}},
		{"time strings", "PriorityCalcPeriod=0:30\nPriorityMaxAge=1:30:00\nPriorityDecayHalfLife=90:30", func(t *testing.T, c *Config) {
			confWant(t, "CalcPeriodSec", c.CalcPeriodSec, int64(60))           // 30 s rounds up to 1 min
			confWant(t, "PriorityMaxAgeSec", c.PriorityMaxAgeSec, int64(5400)) // 90 min
			confWant(t, "DecayHalfLifeSec", c.DecayHalfLifeSec, int64(5460))   // 91 min (§2.2)
		}},
		{"booleans, damping and the rest", "PriorityFavorSmall=YES\nFairShareDampeningFactor=5\nPriorityType=priority/multifactor\nPriorityWeightAssoc=1\nPriorityWeightFairshare=4294967295\nPriorityWeightJobSize=2\nPriorityWeightPartition=60000", func(t *testing.T, c *Config) {
			confWant(t, "PriorityFavorSmall", c.PriorityFavorSmall, true)
			confWant(t, "FairShareDampeningFactor", c.FairShareDampeningFactor, int64(5))
			confWant(t, "PriorityType", c.PriorityType, "priority/multifactor")
			confWant(t, "PriorityWeightAssoc", c.PriorityWeightAssoc, int64(1))
			confWant(t, "PriorityWeightFairshare", c.PriorityWeightFairshare, int64(4294967295))
			confWant(t, "PriorityWeightJobSize", c.PriorityWeightJobSize, int64(2))
			confWant(t, "PriorityWeightPartition", c.PriorityWeightPartition, int64(60000))
		}},
		{"keys this reader does not use are ignored", "SlurmctldHost=linux0(10.0.0.1)\nSchedulerParameters=bf_max_job_test=300,defer\nNodeName=n[1-4] CPUs=4 State=UNKNOWN\nFrontendName=localhost", func(t *testing.T, c *Config) {
			confWant(t, "Set[schedulerparameters]", c.Set["schedulerparameters"], true)
			confWant(t, "Set[nodename]", c.Set["nodename"], true)
		}},
		{"zero half-life with an explicit reset period NONE", "PriorityDecayHalfLife=0\nPriorityUsageResetPeriod=NONE", func(t *testing.T, c *Config) {
			confWant(t, "DecayHalfLifeSec", c.DecayHalfLifeSec, int64(0))
		}},
		{"zero half-life accepted with a monthly reset", "PriorityDecayHalfLife=0\nPriorityUsageResetPeriod=MONTHLY", func(t *testing.T, c *Config) {
			confWant(t, "UsageResetPeriod", c.UsageResetPeriod, "MONTHLY")
		}},
		{"DEFAULT partitions apply to later lines and accumulate",
			"PartitionName=early Nodes=a\n" +
				"PartitionName=DEFAULT TRESBillingWeights=\"CPU=1.0\" PriorityJobFactor=5\n" +
				"PartitionName=default Priority=9\n" +
				"PartitionName=mid\n" +
				"PartitionName=own TRESBillingWeights=\"CPU=2.0\" PriorityJobFactor=3\n" +
				"PartitionName=DEFAULT TRESBillingWeights=CPU=0.5\n" +
				"PartitionName=late",
			func(t *testing.T, c *Config) {
				// early precedes every DEFAULT line; Priority= (on DEFAULT
				// here) overrides PriorityJobFactor and PriorityTier, line or
				// default, as in read_config.c; the third DEFAULT line
				// replaces the weights and keeps Priority=9.
				confWant(t, "Partitions", c.Partitions, []Partition{
					{Name: "early", PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1, Nodes: "a", File: "test.conf", Line: 1},
					{Name: "mid", TRESBillingWeights: "CPU=1.0", PriorityJobFactor: 9, PriorityTier: 9, MaxTimeMin: -1, File: "test.conf", Line: 4, WeightsFile: "test.conf", WeightsLine: 2},
					{Name: "own", TRESBillingWeights: "CPU=2.0", PriorityJobFactor: 9, PriorityTier: 9, MaxTimeMin: -1, File: "test.conf", Line: 5, WeightsFile: "test.conf", WeightsLine: 5},
					{Name: "late", TRESBillingWeights: "CPU=0.5", PriorityJobFactor: 9, PriorityTier: 9, MaxTimeMin: -1, File: "test.conf", Line: 7, WeightsFile: "test.conf", WeightsLine: 6},
				})
			}},
		{"PriorityJobFactor on the line", "PartitionName=p PriorityJobFactor=20\nPartitionName=DEFAULT PriorityJobFactor=10\nPartitionName=q", func(t *testing.T, c *Config) {
			confWant(t, "Partitions", c.Partitions, []Partition{
				{Name: "p", PriorityJobFactor: 20, PriorityTier: 1, MaxTimeMin: -1, File: "test.conf", Line: 1},
				{Name: "q", PriorityJobFactor: 10, PriorityTier: 1, MaxTimeMin: -1, File: "test.conf", Line: 3},
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := confParse(t, tt.text, nil)
			if err != nil {
				t.Fatalf("ParseSlurmConf(%q) error = %v", tt.text, err)
			}
			tt.check(t, c)
		})
	}
}

// confWant compares one Config field.
func confWant(t *testing.T, field string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", field, got, want)
	}
}

// confErrWant is one expected ParseError: line, field, value and a
// substring of the message.
type confErrWant struct {
	line  int
	field string
	value string
	msg   string
}

func TestParseSlurmConfErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []confErrWant
	}{
		{"PriorityDecayHalfLife=7days", []confErrWant{{1, "PriorityDecayHalfLife", "7days", "not a Slurm time string"}}},
		{"PriorityMaxAge=-3", []confErrWant{{1, "PriorityMaxAge", "-3", "negative"}}},
		{"PriorityDecayHalfLife=UNLIMITED", []confErrWant{{1, "PriorityDecayHalfLife", "UNLIMITED", "unlimited"}}},
		{"PriorityCalcPeriod=0", []confErrWant{{1, "PriorityCalcPeriod", "0", "at least 1 minute"}}},
		{"PriorityWeightAge=-5", []confErrWant{{1, "PriorityWeightAge", "-5", "negative"}}},
		{"PriorityWeightFairshare=1e6", []confErrWant{{1, "PriorityWeightFairshare", "1e6", "not an integer"}}},
		{"PriorityWeightQOS=4294967296", []confErrWant{{1, "PriorityWeightQOS", "4294967296", "out of range"}}},
		{"FairShareDampeningFactor=0", []confErrWant{{1, "FairShareDampeningFactor", "0", "at least 1"}}},
		{"FairShareDampeningFactor=65536", []confErrWant{{1, "FairShareDampeningFactor", "65536", "out of range"}}},
		{"PriorityFavorSmall=maybe", []confErrWant{{1, "PriorityFavorSmall", "maybe", "not a boolean"}}},
		{"AccountingStorageEnforce=associations,limit", []confErrWant{{1, "AccountingStorageEnforce", "associations,limit", `unknown item "limit"`}}},
		// §2.2: refused when PriorityUsageResetPeriod is absent.
		{"\nPriorityDecayHalfLife=0", []confErrWant{{2, "PriorityDecayHalfLife", "0", "needs PriorityUsageResetPeriod"}}},
		{"PriorityDecayHalfLife=0:0", []confErrWant{{1, "PriorityDecayHalfLife", "0:0", "needs PriorityUsageResetPeriod"}}},
		{"PriorityUsageResetPeriod=HOURLY", []confErrWant{{1, "PriorityUsageResetPeriod", "HOURLY", "unknown reset period"}}},
		{"ClusterName={{ cluster_name }}", []confErrWant{{1, "ClusterName", "{{ cluster_name }}", "unrendered template placeholder"}}},
		{"{% if x %}\nPriorityWeightAge=1\n{% endif %}", []confErrWant{
			{1, "", "{% if x %}", "unrendered template directive"},
			{3, "", "{% endif %}", "unrendered template directive"},
		}},
		{`PartitionName="" Nodes=x`, []confErrWant{{1, "PartitionName", "", "partition line without a name"}}},
		{"PartitionName= Nodes=x", []confErrWant{{1, "PartitionName", "Nodes=x", "partition line without a name"}}},
		{"PartitionName=a\nPartitionName=a", []confErrWant{{2, "PartitionName", "a", "duplicate partition name"}}},
		{"PartitionName=a PriorityJobFactor=70000", []confErrWant{{1, "PriorityJobFactor", "70000", "out of range"}}},
		{"PriorityFlags=", []confErrWant{{1, "PriorityFlags", "", "missing value"}}},
		{"garbage line", []confErrWant{{1, "", "garbage line", "expected Key=Value"}}},
		{"PriorityType=priority/multifactor extra", []confErrWant{{1, "PriorityType", "priority/multifactor", `unexpected text "extra"`}}},
		{`PriorityWeightTRES="CPU=1`, []confErrWant{{1, "PriorityWeightTRES", `"CPU=1`, "unbalanced double quote"}}},
		{"PriorityWeightAge+=5", []confErrWant{{1, "PriorityWeightAge", "5", "operator += is not supported"}}},
		{"Include other.conf", []confErrWant{{1, "Include", "other.conf", "no way to open"}}},
		{"Include", []confErrWant{{1, "Include", "", "missing path"}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.text), func(t *testing.T) {
			_, err := confParse(t, tt.text, nil)
			got := confParseErrors(t, err)
			if len(got) != len(tt.want) {
				t.Errorf("ParseSlurmConf(%q) errors = %v, want %d errors", tt.text, err, len(tt.want))
				return
			}
			for i, w := range tt.want {
				g := got[i]
				if g.File != "test.conf" || g.Line != w.line || g.Field != w.field || g.Value != w.value || !strings.Contains(g.Error(), w.msg) {
					t.Errorf("ParseSlurmConf(%q) error %d = {%s %d %q %q %q}, want {test.conf %d %q %q ...%q...}",
						tt.text, i, g.File, g.Line, g.Field, g.Value, g.Error(), w.line, w.field, w.value, w.msg)
				}
			}
		})
	}
}

func TestParseSlurmConfReportsAllErrorsWithBestEffortConfig(t *testing.T) {
	t.Parallel()
	text := "ClusterName=multi\n" +
		"PriorityDecayHalfLife=bogus\n" +
		"PriorityWeightAge=12\n" +
		"PriorityWeightJobSize=x\n" +
		"PartitionName= Nodes=n1\n" +
		"PartitionName=ok\n"
	c, err := confParse(t, text, nil)
	errs := confParseErrors(t, err)
	var lines []int
	for _, e := range errs {
		lines = append(lines, e.Line)
	}
	confWant(t, "error lines", lines, []int{2, 4, 5})
	want := `ingest test.conf:2: PriorityDecayHalfLife="bogus": not a Slurm time string (want min, min:sec, hr:min:sec, days-hr, days-hr:min or days-hr:min:sec)`
	if len(errs) > 0 && errs[0].Error() != want {
		t.Errorf("first error = %q, want %q", errs[0].Error(), want)
	}
	confWant(t, "ClusterName", c.ClusterName, "multi")
	confWant(t, "PriorityWeightAge", c.PriorityWeightAge, int64(12))
	confWant(t, "DecayHalfLifeSec", c.DecayHalfLifeSec, int64(604800)) // bad value keeps the default
	confWant(t, "Set[prioritydecayhalflife]", c.Set["prioritydecayhalflife"], false)
	confWant(t, "Partitions", c.Partitions, []Partition{{Name: "ok", PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1, File: "test.conf", Line: 6}})
}

func TestConfigAlgorithmAndFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flags string
		alg   string
		set   []string
		unset []string
	}{
		{"", "fair_tree", []string{"FAIR_TREE"}, []string{"NO_FAIR_TREE", "MAX_TRES", "DEPTH_OBLIVIOUS"}},
		{"FAIR_TREE,SMALL_RELATIVE_TO_TIME,MAX_TRES", "fair_tree", []string{"fair_tree", "max_tres", "SMALL_RELATIVE_TO_TIME"}, []string{"NO_FAIR_TREE", "MAX_TRES_GRES", "INCR_ONLY"}},
		{"NO_FAIR_TREE", "classic", []string{"NO_FAIR_TREE"}, []string{"FAIR_TREE"}},
		{"no_fair_tree", "classic", []string{"NO_FAIR_TREE"}, []string{"FAIR_TREE"}},
		{"DEPTH_OBLIVIOUS", "depth_oblivious", []string{"DEPTH_OBLIVIOUS", "NO_FAIR_TREE"}, []string{"FAIR_TREE"}},
		{"NO_FAIR_TREE,DEPTH_OBLIVIOUS", "depth_oblivious", []string{"DEPTH_OBLIVIOUS"}, nil},
		// §3.3: MAX_TRES_GRES wins over MAX_TRES.
		{"MAX_TRES_GRES", "fair_tree", []string{"MAX_TRES_GRES"}, []string{"MAX_TRES"}},
		// read_config.c: NO_NORMAL_ALL sets all four NO_NORMAL_* flags.
		{"NO_NORMAL_ALL", "fair_tree", []string{"NO_NORMAL_ASSOC", "NO_NORMAL_PART", "NO_NORMAL_QOS", "NO_NORMAL_TRES"}, nil},
		{"NO_NORMAL_TRES", "fair_tree", []string{"NO_NORMAL_TRES"}, []string{"NO_NORMAL_QOS", "NO_NORMAL_ALL", ""}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.flags), func(t *testing.T) {
			c, err := confParse(t, `PriorityFlags="`+tt.flags+`"`, nil)
			if err != nil {
				t.Fatalf("ParseSlurmConf(PriorityFlags=%s) error = %v", tt.flags, err)
			}
			if got := c.Algorithm().String(); got != tt.alg {
				t.Errorf("Algorithm(%q) = %q, want %q", tt.flags, got, tt.alg)
			}
			for _, f := range tt.set {
				if !c.HasFlag(f) {
					t.Errorf("HasFlag(%q) with PriorityFlags=%q = false, want true", f, tt.flags)
				}
			}
			for _, f := range tt.unset {
				if c.HasFlag(f) {
					t.Errorf("HasFlag(%q) with PriorityFlags=%q = true, want false", f, tt.flags)
				}
			}
		})
	}
}

func TestConfigLimitsEnforced(t *testing.T) {
	t.Parallel()
	// §2.5: limits, safe and all enforce limits; "2" is read_config.c's
	// numeric alias for limits, "1" for associations.
	tests := []struct {
		enforce string
		want    bool
	}{
		{"associations", false},
		{"associations,qos", false},
		{"1", false},
		{"nojobs,nosteps", false},
		{"limits", true},
		{"associations,limits,qos", true},
		{"safe,qos", true},
		{"ALL", true},
		{"2", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.enforce), func(t *testing.T) {
			c, err := confParse(t, "AccountingStorageEnforce="+tt.enforce, nil)
			if err != nil {
				t.Fatalf("ParseSlurmConf(AccountingStorageEnforce=%s) error = %v", tt.enforce, err)
			}
			if got := c.LimitsEnforced(); got != tt.want {
				t.Errorf("LimitsEnforced(%q) = %v, want %v", tt.enforce, got, tt.want)
			}
		})
	}
}

func TestConfigPartitionLookup(t *testing.T) {
	t.Parallel()
	c, err := confParse(t, "PartitionName=gpu TRESBillingWeights=CPU=1\nPartitionName=cpu", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		wantOK bool
		tbw    string
	}{
		{"gpu", true, "CPU=1"},
		{"cpu", true, ""},
		{"GPU", false, ""}, // partition names are case-sensitive
		{"DEFAULT", false, ""},
		{"", false, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("partition %q", tt.name), func(t *testing.T) {
			p, ok := c.Partition(tt.name)
			if ok != tt.wantOK || p.TRESBillingWeights != tt.tbw || (ok && p.Name != tt.name) {
				t.Errorf("Partition(%q) = %+v, %v, want TRESBillingWeights %q, %v", tt.name, p, ok, tt.tbw, tt.wantOK)
			}
		})
	}
}

// TestSlurmConfRealFiles reads the third-party samples in testdata/slurmconf
// (origins in its README.md). Expected
// values are read off the files by eye, converted by §2.2.
func TestSlurmConfRealFiles(t *testing.T) {
	t.Parallel()
	t.Run("schedmd example: upstream defaults", func(t *testing.T) {
		c, err := ReadSlurmConf(filepath.Join(confDir, "slurm.conf_schedmd_example.conf"))
		if err != nil {
			t.Fatalf("ReadSlurmConf error = %v", err)
		}
		confWant(t, "ClusterName", c.ClusterName, "cluster")
		confWant(t, "PriorityType", c.PriorityType, "") // commented out
		confWant(t, "DecayHalfLifeSec", c.DecayHalfLifeSec, int64(604800))
		confWant(t, "CalcPeriodSec", c.CalcPeriodSec, int64(300))
		confWant(t, "UsageResetPeriod", c.UsageResetPeriod, "NONE")
		confWant(t, "PriorityMaxAgeSec", c.PriorityMaxAgeSec, int64(604800))
		confWant(t, "FairShareDampeningFactor", c.FairShareDampeningFactor, int64(1))
		confWant(t, "weights", []int64{c.PriorityWeightAge, c.PriorityWeightAssoc, c.PriorityWeightFairshare,
			c.PriorityWeightJobSize, c.PriorityWeightPartition, c.PriorityWeightQOS}, []int64{0, 0, 0, 0, 0, 0})
		confWant(t, "Set[prioritydecayhalflife]", c.Set["prioritydecayhalflife"], false)
		confWant(t, "Algorithm", c.Algorithm().String(), "fair_tree")
		confWant(t, "LimitsEnforced", c.LimitsEnforced(), false)
		// NodeName=linux[1-32] CPUs=1, RealMemory 1 (the default); Nodes=ALL.
		all := Totals{Nodes: 32, CPUs: 32, MemMB: 32}
		confWant(t, "Totals", c.Totals, all)
		confWant(t, "Partitions", c.Partitions, []Partition{{Name: "debug", PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1,
			Nodes: "ALL", Totals: all, File: filepath.Join(confDir, "slurm.conf_schedmd_example.conf"), Line: 154}})
	})
	t.Run("nstda: spaces after =, calc period in minutes", func(t *testing.T) {
		c, err := ReadSlurmConf(filepath.Join(confDir, "slurm.conf_nstda_tara_testsuite.conf"))
		if err != nil {
			t.Fatalf("ReadSlurmConf error = %v", err)
		}
		confWant(t, "ClusterName", c.ClusterName, "tara") // given twice, same value
		confWant(t, "PriorityType", c.PriorityType, "priority/multifactor")
		confWant(t, "DecayHalfLifeSec", c.DecayHalfLifeSec, int64(604800)) // "PriorityDecayHalfLife= 7-0"
		confWant(t, "CalcPeriodSec", c.CalcPeriodSec, int64(300))          // 5 min
		confWant(t, "Set[prioritycalcperiod]", c.Set["prioritycalcperiod"], true)
		confWant(t, "UsageResetPeriod", c.UsageResetPeriod, "NONE")
		confWant(t, "Set[priorityusageresetperiod]", c.Set["priorityusageresetperiod"], true)
		confWant(t, "weights age,fs,js,part,qos", []int64{c.PriorityWeightAge, c.PriorityWeightFairshare,
			c.PriorityWeightJobSize, c.PriorityWeightPartition, c.PriorityWeightQOS}, []int64{1000, 10000, 1000, 1000, 1000})
		var names []string
		for _, p := range c.Partitions {
			names = append(names, p.Name)
		}
		confWant(t, "partition names", names, []string{"debug", "standby", "memory", "dgx", "biobank"})
	})
	t.Run("ubccr: 30-day half-life, NO_NORMAL_TRES, gres/gpu", func(t *testing.T) {
		c, err := ReadSlurmConf(filepath.Join(confDir, "slurm.conf_ubccr_medium_cluster_ubhpc.conf"))
		if err != nil {
			t.Fatalf("ReadSlurmConf error = %v", err)
		}
		confWant(t, "ClusterName", c.ClusterName, "ubhpc")
		confWant(t, "DecayHalfLifeSec", c.DecayHalfLifeSec, int64(30*86400))
		confWant(t, "PriorityFlags", c.PriorityFlags, []string{"NO_NORMAL_TRES"})
		confWant(t, "HasFlag(NO_NORMAL_TRES)", c.HasFlag("NO_NORMAL_TRES"), true)
		confWant(t, "AccountingStorageTRES", c.AccountingStorageTRES, []string{"gres/gpu"})
		confWant(t, "AccountingStorageEnforce", c.AccountingStorageEnforce, []string{"associations", "limits", "qos"})
		confWant(t, "LimitsEnforced", c.LimitsEnforced(), true)
		confWant(t, "FairShareDampeningFactor", c.FairShareDampeningFactor, int64(5))
		confWant(t, "PriorityWeightTRES", c.PriorityWeightTRES, "CPU=0,Mem=.03,GRES/gpu=30000")
		confWant(t, "weights age,fs,js,part,qos", []int64{c.PriorityWeightAge, c.PriorityWeightFairshare,
			c.PriorityWeightJobSize, c.PriorityWeightPartition, c.PriorityWeightQOS}, []int64{70000, 120000, 200000, 1000000, 50000})
		// No TRESBillingWeights anywhere; Priority=100/700 is the old
		// spelling of PriorityJobFactor and PriorityTier. The NodeName lines
		// under three DEFAULT lines: n[001-087] and gn[001-002] 2 sockets ×
		// 16 cores = 32 CPUs, 187000 MB; g[001-008] and m[001-096] CPUs=40,
		// 187000 MB; b[001-024] CPUs=40 (kept from the second DEFAULT),
		// 754000 MB; gn 2 P100 each, g 2 V100 each. MaxTime 72:00:00 from
		// DEFAULT, 01:00:00 on debug.
		file := filepath.Join(confDir, "slurm.conf_ubccr_medium_cluster_ubhpc.conf")
		const p100, v100 = "gres/gpu:tesla_p100-pcie-16gb", "gres/gpu:tesla_v100-pcie-32gb"
		confWant(t, "Totals", c.Totals, Totals{Nodes: 87 + 2 + 8 + 96 + 24, CPUs: 87*32 + 2*32 + 8*40 + 96*40 + 24*40,
			MemMB: (87+2+8+96)*187000 + 24*754000, GRES: []TRESCount{{"gres/gpu", 2*2 + 8*2}, {p100, 2 * 2}, {v100, 8 * 2}}})
		confWant(t, "Partitions", c.Partitions, []Partition{
			{Name: "general-compute", PriorityJobFactor: 100, PriorityTier: 100, MaxTimeMin: 72 * 60,
				Nodes: "n[001-087],m[001-096],b[001-024],g[001-008]",
				Totals: Totals{Nodes: 87 + 96 + 24 + 8, CPUs: 87*32 + 96*40 + 24*40 + 8*40, MemMB: (87+96+8)*187000 + 24*754000,
					GRES: []TRESCount{{"gres/gpu", 8 * 2}, {v100, 8 * 2}}},
				File: file, Line: 169},
			{Name: "debug", PriorityJobFactor: 700, PriorityTier: 700, MaxTimeMin: 60, Nodes: "gn[001-002]",
				Totals: Totals{Nodes: 2, CPUs: 2 * 32, MemMB: 2 * 187000, GRES: []TRESCount{{"gres/gpu", 2 * 2}, {p100, 2 * 2}}},
				File:   file, Line: 170},
		})
	})
	t.Run("aalto Jinja template: placeholders reported, the rest parsed", func(t *testing.T) {
		c, err := ReadSlurmConf(filepath.Join(confDir, "slurm.conf_aalto_ansible_role_template_FAIR_TREE_MAX_TRES.conf.j2"))
		errs := confParseErrors(t, err)
		type at struct {
			line  int
			field string
		}
		var got []at
		for _, e := range errs {
			got = append(got, at{e.Line, e.Field})
			if !strings.Contains(e.Error(), "unrendered template") {
				t.Errorf("error %v is not about a template", e)
			}
		}
		// Every {{ }} and {% %} line of the file, by grep -n; line 1 is a
		// comment and not reported.
		confWant(t, "reported lines", got, []at{
			{3, "ClusterName"}, {4, "SlurmctldHost"}, {10, ""}, {13, ""}, {14, "StateSaveLocation"},
			{31, ""}, {32, "PrologFlags"}, {33, ""}, {80, "SlurmctldLogFile"}, {81, "SlurmdLogFile"},
			{82, "JobCompLoc"}, {91, "AccountingStorageHost"},
		})
		confWant(t, "ClusterName", c.ClusterName, "")
		confWant(t, "Set[clustername]", c.Set["clustername"], false)
		confWant(t, "PriorityFlags", c.PriorityFlags, []string{"FAIR_TREE", "SMALL_RELATIVE_TO_TIME", "MAX_TRES"})
		confWant(t, "HasFlag(MAX_TRES)", c.HasFlag("MAX_TRES"), true)
		confWant(t, "Algorithm", c.Algorithm().String(), "fair_tree")
		confWant(t, "DecayHalfLifeSec", c.DecayHalfLifeSec, int64(14*86400))
		confWant(t, "PriorityMaxAgeSec", c.PriorityMaxAgeSec, int64(7*86400))
		confWant(t, "AccountingStorageTRES", c.AccountingStorageTRES, []string{"gres/gpu", "CPU", "Energy", "Mem"})
		confWant(t, "LimitsEnforced (safe,qos)", c.LimitsEnforced(), true)
		confWant(t, "weights age,fs,js,part,qos", []int64{c.PriorityWeightAge, c.PriorityWeightFairshare,
			c.PriorityWeightJobSize, c.PriorityWeightPartition, c.PriorityWeightQOS}, []int64{10000, 10000000, 10000, 10000000, 10000})
		if p, ok := c.Partition("compute"); !ok || p.Line != 104 {
			t.Errorf("Partition(compute) = %+v, %v, want line 104", p, ok)
		}
	})
}

func TestSlurmConfHieraDefaultWeights(t *testing.T) {
	t.Parallel()
	// The DEFAULT partition's lower-case "TRESbillingweights" key from the
	// ULHPC hiera data is inherited by every partition after it.
	path := filepath.Join(confDir, "hiera_ulhpc_default_tresbillingweights.conf")
	c, err := ReadSlurmConf(path)
	if err != nil {
		t.Fatalf("ReadSlurmConf error = %v", err)
	}
	const w = "CPU=1.0,Mem=0.25G,GRES/gpu=15.0"
	confWant(t, "Partitions", c.Partitions, []Partition{
		{Name: "admin", TRESBillingWeights: w, PriorityJobFactor: 100, PriorityTier: 100, MaxTimeMin: 5 * 1440, Nodes: "node-[1-2]", File: path, Line: 10, WeightsFile: path, WeightsLine: 9},
		{Name: "interactive", TRESBillingWeights: w, PriorityJobFactor: 20, PriorityTier: 20, MaxTimeMin: 4 * 60, Nodes: "node-1", File: path, Line: 11, WeightsFile: path, WeightsLine: 9},
		{Name: "batch", TRESBillingWeights: w, PriorityJobFactor: 20, PriorityTier: 20, MaxTimeMin: 5 * 1440, Nodes: "node-[2-2]", File: path, Line: 12, WeightsFile: path, WeightsLine: 9},
	})
	confWant(t, "AccountingStorageTRES", c.AccountingStorageTRES, []string{"gres/gpu", "gres/gpu:volta"})
	confWant(t, "PriorityWeightTRES", c.PriorityWeightTRES, "CPU=1000,Mem=2000,GRES/gpu=300")
}

func TestSlurmConfInclude(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(confDir, "include")
	c, err := ReadSlurmConf(filepath.Join(dir, "slurm.conf"))
	if err != nil {
		t.Fatalf("ReadSlurmConf error = %v", err)
	}
	confWant(t, "ClusterName", c.ClusterName, "incltest")
	confWant(t, "DecayHalfLifeSec", c.DecayHalfLifeSec, int64(14*86400)) // from priority.conf
	confWant(t, "Algorithm", c.Algorithm().String(), "classic")
	confWant(t, "LimitsEnforced", c.LimitsEnforced(), true) // from extra.conf, two levels down
	confWant(t, "Partitions", c.Partitions, []Partition{
		{Name: "cpu", TRESBillingWeights: "CPU=1.0,Mem=0.25G", PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1, Nodes: "c[01-10]", File: filepath.Join(dir, "parts", "incltest.conf"), Line: 2,
			WeightsFile: filepath.Join(dir, "parts", "incltest.conf"), WeightsLine: 1},
		// The DEFAULT line in parts/incltest.conf still applies after the
		// nested include returns to extra.conf, which was read later.
		{Name: "gpu", TRESBillingWeights: "CPU=1.0,Mem=0.25G,GRES/gpu=2.0", PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1, Nodes: "g[01-04]", File: filepath.Join(dir, "extra.conf"), Line: 2,
			WeightsFile: filepath.Join(dir, "extra.conf"), WeightsLine: 2},
	})
}

func TestSlurmConfIncludeCycle(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(confDir, "cycle")
	c, err := ReadSlurmConf(filepath.Join(dir, "a.conf"))
	errs := confParseErrors(t, err)
	if len(errs) != 1 {
		t.Fatalf("ReadSlurmConf(cycle/a.conf) errors = %v, want 1", err)
	}
	e := errs[0]
	if e.File != filepath.Join(dir, "b.conf") || e.Line != 2 || e.Field != "Include" || e.Value != "a.conf" || !strings.Contains(e.Error(), "include cycle") {
		t.Errorf("cycle error = %+v (%v), want b.conf:2 Include=a.conf include cycle", e, e)
	}
	// Everything around the cycle is still read.
	confWant(t, "PriorityWeightAge", c.PriorityWeightAge, int64(5))
	confWant(t, "PriorityWeightQOS", c.PriorityWeightQOS, int64(7))
}

func TestSlurmConfIncludeInMemory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		text  string
		files map[string]string
		want  []confErrWant
	}{
		{"missing file", "Include missing.conf", map[string]string{}, []confErrWant{{1, "Include", "missing.conf", "file does not exist"}}},
		{"self include", "Include test.conf", map[string]string{"test.conf": "x=1"}, []confErrWant{{1, "Include", "test.conf", "include cycle: test.conf -> test.conf"}}},
		{"absolute path", "Include /etc/slurm/prio.conf", map[string]string{"/etc/slurm/prio.conf": "PriorityWeightAge=9"}, nil},
		{"%c without ClusterName", "Include %c.conf", map[string]string{}, []confErrWant{{1, "Include", "%c.conf", "needs ClusterName"}}},
		{"text after the path", "Include a.conf b.conf", map[string]string{"a.conf": ""}, []confErrWant{{1, "Include", "a.conf b.conf", `unexpected text "b.conf"`}}},
		{"error inside an included file names that file", "Include sub/x.conf", map[string]string{"sub/x.conf": "\nPriorityWeightAge=bad"}, []confErrWant{{2, "PriorityWeightAge", "bad", "not an integer"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := confParse(t, tt.text, tt.files)
			got := confParseErrors(t, err)
			if len(got) != len(tt.want) {
				t.Errorf("%s: errors = %v, want %d", tt.name, err, len(tt.want))
				return
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Line != w.line || g.Field != w.field || g.Value != w.value || !strings.Contains(g.Error(), w.msg) {
					t.Errorf("%s: error = {%d %q %q %q}, want {%d %q %q ...%q...}", tt.name, g.Line, g.Field, g.Value, g.Error(), w.line, w.field, w.value, w.msg)
				}
			}
		})
	}
	_, err := confParse(t, "Include sub/x.conf", map[string]string{"sub/x.conf": "\nPriorityWeightAge=bad"})
	if errs := confParseErrors(t, err); len(errs) == 1 && errs[0].File != filepath.Join("sub", "x.conf") {
		t.Errorf("error File = %q, want sub/x.conf", errs[0].File)
	}
}

func TestReadSlurmConfMissingFile(t *testing.T) {
	t.Parallel()
	_, err := ReadSlurmConf(filepath.Join(confDir, "does-not-exist.conf"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadSlurmConf(missing) error = %v, want os.ErrNotExist", err)
	}
}

// BenchmarkParseSlurmConf parses the 172-line ubccr slurm.conf from memory.
// Reproduce: go test -run '^$' -bench BenchmarkParseSlurmConf ./ingest/
func BenchmarkParseSlurmConf(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(confDir, "slurm.conf_ubccr_medium_cluster_ubhpc.conf"))
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Count(string(data), "\n")
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := ParseSlurmConf("bench.conf", strings.NewReader(string(data)), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// TestSlurmConfNegativeWeights: negative TRESBillingWeights are taken
// (slurmctld's _tres_weight_item takes any number strtod reads) and
// warned of once per line that writes them, naming the file, the line,
// the partitions that take them and each negative weight per base unit
// (mem per MiB: -1G is -1/1024). A line without a negative weight, and an
// item that does not parse (left to the run, which refuses it), give no
// warning of their own.
func TestSlurmConfNegativeWeights(t *testing.T) {
	t.Parallel()
	c, err := confParse(t, "PartitionName=DEFAULT TRESBillingWeights=\"CPU=1,Mem=-1G\"\n"+
		"PartitionName=a Nodes=n1\n"+
		"PartitionName=b Nodes=n2\n"+
		"PartitionName=c TRESBillingWeights=\"CPU=2,GRES/gpu=4\"\n"+
		"PartitionName=d TRESBillingWeights=\"CPU=-0.5,node=-0x10,foo=-1\"\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range c.Warnings {
		if strings.Contains(w, "TRESBillingWeights") {
			got = append(got, w)
		}
	}
	confWant(t, "TRESBillingWeights warnings", got, []string{
		`test.conf:1: TRESBillingWeights="CPU=1,Mem=-1G" of partitions a, b: negative weight Mem=-1G (mem=-0.0009765625 per MiB): ` +
			"Slurm takes it, and a job's billing and the usage charged with it can fall below 0; fairledger computes them as Slurm does",
		`test.conf:5: TRESBillingWeights="CPU=-0.5,node=-0x10,foo=-1" of partition d: negative weight CPU=-0.5 (cpu=-0.5 per unit), node=-0x10 (node=-16 per unit): ` +
			"Slurm takes it, and a job's billing and the usage charged with it can fall below 0; fairledger computes them as Slurm does",
	})
}
