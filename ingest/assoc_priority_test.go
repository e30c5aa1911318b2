package ingest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// priorityOf renders each row as "lineage=effective(own)", own being "-"
// when unset, for comparison with hand-worked tables.
func priorityOf(a *Associations) []string {
	eff := a.EffectivePriorities()
	var out []string
	for i, r := range a.Rows {
		own := "-"
		if r.HasPriority {
			own = fmt.Sprint(r.Priority)
		}
		out = append(out, fmt.Sprintf("%s=%d(%s)", r.Lineage, eff[i], own))
	}
	return out
}

// TestEffectivePrioritiesDump reads a dump's Priority column (blank:
// unset) and inherits down the tree: own value, else the nearest
// ancestor's, else 0. D's explicit 0 stops u4 inheriting root's 7, which an
// unset priority would not.
func TestEffectivePrioritiesDump(t *testing.T) {
	t.Parallel()
	dump := "Cluster|Account|User|Partition|ParentName|Share|Priority\n" +
		"c|root|||||7\n" +
		"c|root|root|||1|\n" +
		"c|A|||root|1|10\n" +
		"c|B|||A|1|\n" +
		"c|B|u1|||1|\n" +
		"c|B|u1|p||1|\n" +
		"c|B|u2|||1|5\n" +
		"c|C|||root|1|\n" +
		"c|C|u3|||1|\n" +
		"c|D|||root|1|0\n" +
		"c|D|u4|||1|\n"
	a, st, err := ParseAssoc("prio.psv", strings.NewReader(dump))
	if err != nil || st.Ingested != 11 {
		t.Fatalf("ParseAssoc: %v, stats %s", err, st.String())
	}
	want := []string{
		"/=7(7)",
		"/0-root/=7(-)",
		"/A/=10(10)",
		"/A/B/=10(-)",
		"/A/B/0-u1/=10(-)",
		"/A/B/0-u1/p/=10(-)",
		"/A/B/0-u2/=5(5)",
		"/C/=7(-)",
		"/C/0-u3/=7(-)",
		"/D/=0(0)",
		"/D/0-u4/=0(-)",
	}
	if got := priorityOf(a); !reflect.DeepEqual(got, want) {
		t.Errorf("priorities:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEffectivePrioritiesUnset: with no priority anywhere every
// association's is 0, as slurmctld reads an unset one.
func TestEffectivePrioritiesUnset(t *testing.T) {
	t.Parallel()
	dump := "Account|User|ParentName|Share\nroot|||\nA||root|1\nA|u||1\n"
	a, _, err := ParseAssoc("none.psv", strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.EffectivePriorities(), []int64{0, 0, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("EffectivePriorities() = %v, want %v", got, want)
	}
}

func TestParseAssocPriorityErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ value, want string }{
		{"-1", `ingest bad.psv:3: Priority="-1": not a non-negative integer`},
		{"high", `ingest bad.psv:3: Priority="high": not a non-negative integer`},
		{"4294967294", `ingest bad.psv:3: Priority="4294967294": out of range (max 4294967293)`},
	} {
		t.Run(tt.value, func(t *testing.T) {
			dump := "Account|User|ParentName|Share|Priority\nroot||||\nA||root|1|" + tt.value + "\n"
			_, st, err := ParseAssoc("bad.psv", strings.NewReader(dump))
			if err == nil || err.Error() != tt.want || st.Rejected != 1 || !st.Balanced() {
				t.Errorf("ParseAssoc error = %v, stats %s; want %s", err, st.String(), tt.want)
			}
		})
	}
}

// TestEffectivePrioritiesScript replays Priority in a sacctmgr script: an
// add cluster's goes to the root account (not to the root user), a
// negative value clears, a modify sets or clears.
func TestEffectivePrioritiesScript(t *testing.T) {
	t.Parallel()
	script := `add cluster Name=c Priority=7
add account A Priority=10
add account B Parent=A Priority=3
add user u1 Account=B
add user u2 Account=B Priority=5
add account C Priority=-1
add user u3 Account=C
modify account name=B set Priority=-1
modify user name=u3 set Priority=2
`
	a, st, err := ParseAssocScript("prio.sacctmgr", strings.NewReader(script))
	if err != nil || st.Ingested != 9 || !st.Balanced() {
		t.Fatalf("ParseAssocScript: %v, stats %s", err, st.String())
	}
	want := []string{
		"/=7(7)",
		"/0-root/=7(-)",
		"/A/=10(10)",
		"/A/B/=10(-)", // cleared by the modify: A's again
		"/A/B/0-u1/=10(-)",
		"/A/B/0-u2/=5(5)",
		"/C/=7(-)",
		"/C/0-u3/=2(2)",
	}
	if got := priorityOf(a); !reflect.DeepEqual(got, want) {
		t.Errorf("priorities:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A modify that sets only Priority is applied, not skipped.
	if st.Skipped[AssocSkipNoTreeChange] != 0 {
		t.Errorf("skipped %v, want no modify skipped", st.Skipped)
	}
}

func TestAssocScriptPriorityErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ stmt, want string }{
		{"add account A Priority=", `ingest bad.sacctmgr:2: Priority="": not a non-negative integer`},
		{"add account A Priority=x", `ingest bad.sacctmgr:2: Priority="x": not a non-negative integer`},
		{"add account A Priority=1,2", `ingest bad.sacctmgr:2: Priority="1,2": more than one value`},
		{"modify account name=root set Priority=99999999999", `ingest bad.sacctmgr:2: Priority="99999999999": out of range (max 4294967293)`},
	} {
		t.Run(tt.stmt, func(t *testing.T) {
			_, _, err := ParseAssocScript("bad.sacctmgr", strings.NewReader("add cluster Name=c\n"+tt.stmt+"\n"))
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v, want %s", err, tt.want)
			}
		})
	}
}

// TestAssocDumpInheritedValues reads a dump as 24.11 and 26.05 sacctmgr
// print it (`sacctmgr -P show assoc format=Cluster,Account,User,Partition,
// ParentName,Share,Lineage,GrpTRESMins,Priority`), whose Priority cells of
// child rows repeat an ancestor's value and whose GrpTRESMins has a unit on
// mem. Both are the same in 22.05 (docs/slurm-versions.md §12.3):
//
//   - Priority: slurmdbd fills an association's unset priority with its
//     parent's when it hands the list out (as_mysql_assoc.c
//     _cluster_get_assocs, `assoc->priority = parent_prio`, at
//     slurm-22-05-8-1 and slurm-26-05-3-1 alike), to sacctmgr and to
//     slurmctld, and sacctmgr prints that (association_functions.c, case
//     PRINT_PRIO). So the printed value is the one the ASSOC factor uses:
//     bio's 80 is its own, bio/gus's and bio/gus/batch's 80 inherited, and
//     EffectivePriorities must give 80 for all three (the value read as
//     the row's own gives the same number: inheriting from an ancestor that
//     prints the same value changes nothing).
//   - GrpTRESMins: sacctmgr_print_tres (src/sacctmgr/common.c) prints
//     through slurmdb_make_tres_string_from_simple with
//     CONVERT_NUM_UNIT_EXACT, and mem goes through convert_num_unit from
//     MiB, which divides by 1024 while the value is at least 1024 and a
//     multiple of 512 (convert_num_unit2, src/common/slurm_protocol_api.c):
//     2000000 = 2^7 · 15625 is not a multiple of 512, so it prints
//     "2000000M", i.e. 2000000 MiB-minutes; 1024000 = 2^13 · 125 is one,
//     so it is divided once and prints "1000G" (1000 < 1024), i.e.
//     1024000 MiB-minutes.
func TestAssocDumpInheritedValues(t *testing.T) {
	t.Parallel()
	dump := "Cluster|Account|User|Partition|ParentName|Share|Lineage|GrpTRESMins|Priority\n" +
		"tc|root||||1|/||\n" +
		"tc|root|root|||1|/0-root/||\n" +
		"tc|bio|||root|1|/bio/|cpu=100000,mem=2000000M|80\n" +
		"tc|bio|gus|||1|/bio/0-gus/||80\n" +
		"tc|bio|gus|batch||1|/bio/0-gus/batch/||80\n" +
		"tc|bio|gus|fast||1|/bio/0-gus/fast/||40\n" +
		"tc|chem|||root|1|/chem/|mem=1000G|\n" +
		"tc|chem|ann|||1|/chem/0-ann/||\n"
	a, st, err := ParseAssoc("assoc-26.05.psv", strings.NewReader(dump))
	if err != nil || st.Ingested != 8 {
		t.Fatalf("ParseAssoc: %v, stats %s", err, st.String())
	}
	want := []string{
		"/=0(-)",
		"/0-root/=0(-)",
		"/bio/=80(80)",
		"/bio/0-gus/=80(80)",
		"/bio/0-gus/batch/=80(80)",
		"/bio/0-gus/fast/=40(40)",
		"/chem/=0(-)",
		"/chem/0-ann/=0(-)",
	}
	if got := priorityOf(a); !reflect.DeepEqual(got, want) {
		t.Errorf("priorities\n got %q\nwant %q", got, want)
	}
	limits := map[string]string{}
	for _, r := range a.Rows {
		if r.GrpTRESMins == "" {
			continue
		}
		counts, err := ParseTRESLimit(r.GrpTRESMins)
		if err != nil {
			t.Fatalf("%s: ParseTRESLimit(%q): %v", r.Lineage, r.GrpTRESMins, err)
		}
		limits[r.Lineage] = SshareTRES(counts)
	}
	// sshare -l prints the raw counts (MiB for mem), no unit.
	if want := map[string]string{"/bio/": "cpu=100000,mem=2000000", "/chem/": "mem=1024000"}; !reflect.DeepEqual(limits, want) {
		t.Errorf("GrpTRESMins as sshare prints them = %q, want %q", limits, want)
	}
}
