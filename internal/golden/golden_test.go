package golden

import (
	"slices"
	"strings"
	"testing"
)

// small is a two-user case in the format of the package comment.
const small = `# a comment before any section
[associations]
# sacctmgr's columns, in another order than the case files'
Share|Account|User|ParentName
1|root||
40|A||root
parent|A|alice|

[usage]
Account|User|RawUsage
A|alice|30

[slurm.conf]
ClusterName=small

[sshare -a -l -p]
root|||
 A||40|
  A|alice|parent|
`

func TestParse(t *testing.T) {
	t.Parallel()
	c, err := Parse("dir/small.txt", strings.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "small" {
		t.Errorf("Name = %q, want small", c.Name)
	}
	want := []Assoc{
		{Account: "root", Share: "1"},
		{Account: "A", ParentName: "root", Share: "40"},
		{Account: "A", User: "alice", Share: "parent", RawUsage: 30},
	}
	if !slices.Equal(c.Assocs, want) {
		t.Errorf("Assocs = %+v, want %+v", c.Assocs, want)
	}
	for i, w := range []struct {
		root, user   bool
		name, parent string
	}{{true, false, "root", ""}, {false, false, "A", "root"}, {false, true, "alice", "A"}} {
		a := c.Assocs[i]
		if a.IsRoot() != w.root || a.IsUser() != w.user || a.Name() != w.name || a.Parent() != w.parent {
			t.Errorf("row %d: IsRoot %v IsUser %v Name %q Parent %q, want %v %v %q %q",
				i, a.IsRoot(), a.IsUser(), a.Name(), a.Parent(), w.root, w.user, w.name, w.parent)
		}
	}
	if got, want := c.Text(t, "sshare -a -l -p"), "root|||\n A||40|\n  A|alice|parent|\n"; got != want {
		t.Errorf("sshare section = %q, want %q (indentation kept)", got, want)
	}
	wantJobs := "JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Start|End|Elapsed|State|AllocCPUS|AllocTRES\n" +
		"1001|1001|small|normal|normal|A|alice|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T00:00:30|00:00:30|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n"
	if got := c.SacctPSV(t); got != wantJobs {
		t.Errorf("SacctPSV =\n%s\nwant\n%s", got, wantJobs)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"data before any section", "root|||1\n", "small.txt:1: data before the first section"},
		{"section opened twice", "[usage]\n[usage]\n", "small.txt:2: section [usage] opened twice"},
		{"missing column", "[associations]\nAccount|User|Share\n", "[associations]: header \"Account|User|Share\" lacks column ParentName"},
		{"short row", "[associations]\nAccount|User|ParentName|Share\nroot||\n", "line \"root||\" has 3 cells, the header 4"},
		{"usage of an unknown association", "[associations]\nAccount|User|ParentName|Share\nroot|||1\n[usage]\nAccount|User|RawUsage\nA|bob|3\n", "A|bob is not in [associations]"},
		{"usage not a number", "[associations]\nAccount|User|ParentName|Share\nroot|||1\n[usage]\nAccount|User|RawUsage\nroot||x\n", `RawUsage "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("small.txt", strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestLoadCases reads every case file the repository holds, so a broken
// one fails here, named, as well as in the tests that use it.
func TestLoadCases(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"fairshare/testdata/test24_1.txt", "fairshare/testdata/test24_4.txt"} {
		t.Run(path, func(t *testing.T) {
			c := Load(t, path)
			if len(c.Assocs) == 0 || len(c.Lines(t, "sshare -a -l -p")) != len(c.Assocs)+1 {
				t.Errorf("%d associations, %d sshare lines: want one line per association and the header",
					len(c.Assocs), len(c.Lines(t, "sshare -a -l -p")))
			}
		})
	}
}
