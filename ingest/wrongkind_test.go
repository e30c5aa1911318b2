package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Leading bytes of compressed streams, as `printf x | gzip` (xz, zstd,
// bzip2) print them: the magic numbers the readers must recognise.
var compressedHeads = []struct {
	format string
	head   string
}{
	{"gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xab\x00\x00\x83\x16\xdc"},
	{"xz", "\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46\x02\x00\x21\x01"},
	{"zstd", "\x28\xb5\x2f\xfd\x04\x58\x09\x00\x00\x78\x23\x11\x04\x83"},
	{"bzip2", "BZh91AY&SYwK\xb0\x14\x00\x00"},
}

// sacctLines is the start of a sacct -P log: what a slurm.conf reader sees
// when given the wrong file.
func sacctLines(n int) string {
	var b strings.Builder
	b.WriteString("JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Eligible|Start|End|Elapsed\n")
	for i := 1; i < n; i++ {
		b.WriteString("7836877|7836877|synth|gpu|normal|lab|alice|2025-01-01T07:39:01|2025-01-01T07:39:01|2025-01-01T07:39:03|2025-01-01T08:00:00|00:20:57\n")
	}
	return b.String()
}

func TestSlurmConfPriorityType(t *testing.T) {
	t.Parallel()
	// Slurm has two priority plugins; priority/basic, its default before
	// 23.11 (docs/slurm-versions.md §7), schedules first in, first out and
	// computes no fair share.
	const absent = "test.conf: PriorityType is not set, and Slurm's default priority/basic keeps no fair share; fairledger computes what priority/multifactor would"
	tests := []struct {
		name     string
		text     string
		files    map[string]string
		wantType string
		wantErr  string
		warnings []string
	}{
		{name: "multifactor", text: "PriorityType=priority/multifactor", wantType: "priority/multifactor"},
		{name: "absent", text: "ClusterName=c", warnings: []string{absent}},
		{name: "basic", text: "ClusterName=c\nPriorityType=priority/basic", wantType: "priority/basic",
			warnings: []string{"test.conf:2: PriorityType=priority/basic keeps no fair share in Slurm (jobs are ordered first in, first out); fairledger computes what priority/multifactor would"}},
		{name: "last one wins", text: "PriorityType=priority/multifactor\nPriorityType=priority/basic", wantType: "priority/basic",
			warnings: []string{"test.conf:2: PriorityType=priority/basic keeps no fair share in Slurm (jobs are ordered first in, first out); fairledger computes what priority/multifactor would"}},
		{name: "basic from an include", text: "Include other.conf", files: map[string]string{"other.conf": "PriorityType=priority/basic\n"},
			wantType: "priority/basic",
			warnings: []string{"other.conf:1: PriorityType=priority/basic keeps no fair share in Slurm (jobs are ordered first in, first out); fairledger computes what priority/multifactor would"}},
		{name: "unknown plugin", text: "ClusterName=c\n\nPriorityType=priority/fancy",
			wantErr: `ingest test.conf:3: PriorityType="priority/fancy": unknown priority plugin (want priority/multifactor; Slurm's only other one is priority/basic)`},
		// slurmctld loads plugins by their exact name.
		{name: "wrong case", text: "PriorityType=Priority/Multifactor",
			wantErr: `ingest test.conf:1: PriorityType="Priority/Multifactor": unknown priority plugin (want priority/multifactor; Slurm's only other one is priority/basic)`},
		{name: "plugin without its type", text: "PriorityType=multifactor",
			wantErr: `ingest test.conf:1: PriorityType="multifactor": unknown priority plugin (want priority/multifactor; Slurm's only other one is priority/basic)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := confParse(t, tt.text, tt.files)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("error = %q, want %q", got, tt.wantErr)
			}
			if c.PriorityType != tt.wantType {
				t.Errorf("PriorityType = %q, want %q", c.PriorityType, tt.wantType)
			}
			if !reflect.DeepEqual(c.Warnings, tt.warnings) {
				t.Errorf("Warnings = %q, want %q", c.Warnings, tt.warnings)
			}
		})
	}
}

func TestSlurmConfPriorityTypeRealFiles(t *testing.T) {
	t.Parallel()
	// By eye: the SchedMD example has "#PriorityType=priority/multifactor"
	// (line 101, commented out); the other three set priority/multifactor.
	tests := []struct {
		file     string
		warnings []string
	}{
		{"slurm.conf_schedmd_example.conf", []string{filepath.Join(confDir, "slurm.conf_schedmd_example.conf") +
			": PriorityType is not set, and Slurm's default priority/basic keeps no fair share; fairledger computes what priority/multifactor would"}},
		{"slurm.conf_nstda_tara_testsuite.conf", nil},
		{"slurm.conf_ubccr_medium_cluster_ubhpc.conf", nil},
		{"slurm.conf_aalto_ansible_role_template_FAIR_TREE_MAX_TRES.conf.j2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, _ := ReadSlurmConf(filepath.Join(confDir, tt.file)) // the template's placeholders are errors; not tested here
			if c == nil {
				t.Fatalf("%s: nil Config", tt.file)
			}
			if !reflect.DeepEqual(c.Warnings, tt.warnings) {
				t.Errorf("%s: Warnings = %q, want %q", tt.file, c.Warnings, tt.warnings)
			}
		})
	}
}

func TestSlurmConfWrongKind(t *testing.T) {
	t.Parallel()
	bad9 := strings.Repeat("just some words\n", 9)
	tests := []struct {
		name    string
		text    string
		wantErr string // the whole error: one line
		nErrs   int    // else: a Config and this many errors, each one line
	}{
		{name: "a sacct log", text: sacctLines(545),
			wantErr: `ingest test.conf: not a slurm.conf: its first 10 lines are not Key=Value (line 1: "JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Eli"…)`},
		{name: "reading stops at the tenth line", text: sacctLines(10) + "PriorityType=priority/fancy\n",
			wantErr: `ingest test.conf: not a slurm.conf: its first 10 lines are not Key=Value (line 1: "JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Eli"…)`},
		{name: "comments and blank lines do not count", text: "# generated\n\n" + strings.Repeat("a b\n", 10),
			wantErr: `ingest test.conf: not a slurm.conf: its first 10 lines are not Key=Value (line 3: "a b")`},
		{name: "nine bad lines are listed", text: bad9, nErrs: 9},
		{name: "after a good line every bad one is listed", text: "ClusterName=c\n" + sacctLines(12), nErrs: 12},
		{name: "empty: Slurm's defaults", text: "", nErrs: 0},
	}
	for _, c := range compressedHeads {
		tests = append(tests, struct {
			name    string
			text    string
			wantErr string
			nErrs   int
		}{name: c.format, text: c.head, wantErr: "ingest test.conf: " + c.format + "-compressed: decompress it first"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseSlurmConf("test.conf", strings.NewReader(tt.text), nil)
			if tt.wantErr != "" {
				if c != nil {
					t.Errorf("Config = %+v, want nil", c)
				}
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if c == nil {
				t.Fatalf("nil Config, error %v", err)
			}
			if got := len(confParseErrors(t, err)); got != tt.nErrs {
				t.Errorf("%d errors, want %d: %v", got, tt.nErrs, err)
			}
		})
	}
}

func TestSlurmConfKeepsBoundedErrors(t *testing.T) {
	t.Parallel()
	// One good line, then 1500 bad ones: 1000 are kept, 500 counted.
	text := "ClusterName=c\n" + strings.Repeat("junk\n", 1500)
	_, err := ParseSlurmConf("test.conf", strings.NewReader(text), nil)
	leaves := err.(interface{ Unwrap() []error }).Unwrap()
	if len(leaves) != 1001 {
		t.Fatalf("%d errors, want 1000 and a count", len(leaves))
	}
	var me *MoreErrors
	if !errors.As(leaves[1000], &me) || me.N != 500 || me.Error() != "ingest test.conf: 500 more error(s) not shown" {
		t.Errorf("last error = %v, want the 500 left out", leaves[1000])
	}
}

func TestAssocScriptWrongKind(t *testing.T) {
	t.Parallel()
	conf := "# slurm.conf\nClusterName=synth\nPriorityType=priority/multifactor\n" + strings.Repeat("PartitionName=p Nodes=n\n", 20)
	tests := []struct {
		name    string
		text    string
		wantErr string
		nErrs   int
	}{
		{name: "a slurm.conf", text: conf,
			wantErr: `ingest s.txt: not a sacctmgr script, nor a sacctmgr -P dump (whose header has '|'): its first 10 statements are no sacctmgr command (line 2: "ClusterName=synth")`},
		{name: "nine unknown commands are listed", text: strings.Repeat("frobnicate x\n", 9), nErrs: 9},
		{name: "after a good statement every bad one is listed",
			text: "add cluster Name=c\n" + strings.Repeat("frobnicate x\n", 12), nErrs: 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, st, err := ParseAssocScript("s.txt", strings.NewReader(tt.text))
			if tt.wantErr != "" {
				if a != nil || !reflect.DeepEqual(st, Stats{File: "s.txt"}) {
					t.Errorf("got %+v, %+v, want nil and zero Stats", a, st)
				}
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if got := len(assocLeafErrors(err)); got != tt.nErrs {
				t.Errorf("%d errors, want %d: %v", got, tt.nErrs, err)
			}
		})
	}
}

func TestCompressedAssocAndQOS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range compressedHeads {
		t.Run(c.format, func(t *testing.T) {
			p := filepath.Join(dir, "assoc-"+c.format+".psv")
			if err := os.WriteFile(p, []byte(c.head), 0o644); err != nil {
				t.Fatal(err)
			}
			a, _, err := ReadAssocFile(p)
			want := "ingest assoc-" + c.format + ".psv: " + c.format + "-compressed: decompress it first"
			if a != nil || err == nil || err.Error() != want {
				t.Errorf("ReadAssocFile(%s) = %v, %v, want nil, %q", c.format, a, err, want)
			}
			_, _, err = ParseQOS("qos.psv", strings.NewReader(c.head))
			want = "ingest qos.psv: " + c.format + "-compressed: decompress it first"
			if err == nil || err.Error() != want {
				t.Errorf("ParseQOS(%s) error = %v, want %q", c.format, err, want)
			}
		})
	}
}

func TestSacctEmptyOrCompressed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		text   string
		fields []string
		want   string
	}{
		{"empty", "", nil, "ingest x.psv: empty file (did sacct fail?)"},
		{"empty with a field list", "", []string{"xdmod"}, "ingest x.psv: empty file (did sacct fail?)"},
		{"blank", "\n \r\n\t\n", nil, "ingest x.psv: blank file: nothing but white space (did sacct fail?)"},
		{"blank with a field list", "\n", []string{"xdmod"}, "ingest x.psv: blank file: nothing but white space (did sacct fail?)"},
	}
	for _, c := range compressedHeads {
		tests = append(tests, struct {
			name   string
			text   string
			fields []string
			want   string
		}{c.format, c.head, nil, "ingest x.psv: " + c.format + "-compressed: decompress it first"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewSacctReader("x.psv", strings.NewReader(tt.text), SacctOptions{Fields: tt.fields})
			if r != nil {
				r.Close()
			}
			var pe *ParseError
			if err == nil || err.Error() != tt.want || !errors.As(err, &pe) || pe.Line != 0 {
				t.Errorf("error = %v, want %q (a whole-file ParseError)", err, tt.want)
			}
		})
	}
	// A file that starts with a blank line but goes on is no blank file.
	r, err := NewSacctReader("x.psv", strings.NewReader("\n"+sacctLines(2)), SacctOptions{})
	if r != nil {
		r.Close()
	}
	if err != nil && strings.Contains(err.Error(), "did sacct fail") {
		t.Errorf("blank line then a header: error = %v", err)
	}
}
