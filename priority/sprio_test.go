package priority

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/internal/release"
)

// sprio returns what WriteSprio prints for rows with opt.
func sprio(t *testing.T, rows []Row, opt SprioOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSprio(&b, rows, opt); err != nil {
		t.Fatalf("WriteSprio: %v", err)
	}
	return b.String()
}

// sprioOpt returns the options of the test cluster for release r.
func sprioOpt(r release.Series) SprioOptions {
	p := testParams(r)
	return SprioOptions{Release: r, Weights: p.Weights, TRES: testTRES()}
}

// checkLines compares output line by line.
func checkLines(t *testing.T, got string, want ...string) {
	t.Helper()
	w := strings.Join(want, "\n") + "\n"
	if got != w {
		t.Errorf("got\n%s\nwant\n%s", strings.ReplaceAll(got, " ", "·"), strings.ReplaceAll(w, " ", "·"))
	}
}

// TestSprioLong22_05: `sprio -l` of 22.05 for the worked job (TestWorkedJob):
// "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N
// %.20T", 155 columns. The header is the one Slurm's own test25.1 expects;
// AGE 562.5 prints 562 (%.0f rounds half to even); TRES
// "cpu=250,mem=50,gres/gpu=750" (27 bytes) is cut to its first 20.
func TestSprioLong22_05(t *testing.T) {
	t.Parallel()
	r := release.Series{Major: 22, Minor: 5}
	opt := sprioOpt(r)
	opt.Long = true
	got := sprio(t, rowsOf(t, testParams(r), testCluster(), workedJob()), opt)
	checkLines(t, got,
		"          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES",
		"           1001 long         alice       6012          0        562        250       2500        250       1000        400           0 cpu=250,mem=50,gres/")
	for i, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if len(l) != 155 {
			t.Errorf("line %d is %d columns, want 155", i+1, len(l))
		}
	}
}

// TestSprioLong23_02: from 23.02 -l adds ACCOUNT (%.8o) after USER and
// QOSNAME (%.10n) before QOS: 155 + 9 + 11 = 175 columns.
func TestSprioLong23_02(t *testing.T) {
	t.Parallel()
	for _, r := range []release.Series{{Major: 23, Minor: 2}, {Major: 24, Minor: 11}, {}} {
		t.Run(relName(r), func(t *testing.T) {
			opt := sprioOpt(r)
			opt.Long = true
			got := sprio(t, rowsOf(t, testParams(r), testCluster(), workedJob()), opt)
			checkLines(t, got,
				"          JOBID PARTITION     USER  ACCOUNT   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION    QOSNAME        QOS        NICE                 TRES",
				"           1001 long         alice     chem       6012          0        562        250       2500        250       1000       high        400           0 cpu=250,mem=50,gres/")
			for i, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if len(l) != 175 {
					t.Errorf("line %d is %d columns, want 175", i+1, len(l))
				}
			}
		})
	}
}

// relName names a release in test names.
func relName(r release.Series) string {
	if r == (release.Series{}) {
		return "newest"
	}
	return fmt.Sprintf("%d.%02d", r.Major, r.Minor)
}

// TestSprioNormLong: -n -l prints the factors (weighted ÷ weight) as %.7f
// in left-justified columns of 10, and PRIORITY ÷ (2³²−1) as %16.14f:
// 6012.5/4294967295 = 0.00000139989425…, cut to "0.00000139". TRES:
// cpu 250/500 = 0.50, mem 50/200 = 0.25, gres/gpu 750/3000 = 0.25.
func TestSprioNormLong(t *testing.T) {
	t.Parallel()
	t.Run("22.05", func(t *testing.T) {
		r := release.Series{Major: 22, Minor: 5}
		opt := sprioOpt(r)
		opt.Long, opt.Norm = true, true
		got := sprio(t, rowsOf(t, testParams(r), testCluster(), workedJob()), opt)
		// "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t"
		checkLines(t, got,
			"          JOBID PARTITION     USER PRIORITY   AGE        ASSOC      FAIRSHARE  JOBSIZE    PARTITION  QOS        TRES                ",
			"           1001 long         alice 0.00000139 0.5625000  0.5000000  0.2500000  0.2500000  1.0000000  0.2000000  cpu=0.50,mem=0.25,gr")
	})
	t.Run("23.02", func(t *testing.T) {
		r := release.Series{Major: 23, Minor: 2}
		opt := sprioOpt(r)
		opt.Long, opt.Norm = true, true
		got := sprio(t, rowsOf(t, testParams(r), testCluster(), workedJob()), opt)
		// "%.15i %9r %.8u %.8o %10y %10a %10b %10f %10j %10p %10n %10q %20t"
		checkLines(t, got,
			"          JOBID PARTITION     USER  ACCOUNT PRIORITY   AGE        ASSOC      FAIRSHARE  JOBSIZE    PARTITION  QOSNAME    QOS        TRES                ",
			"           1001 long         alice     chem 0.00000139 0.5625000  0.5000000  0.2500000  0.2500000  1.0000000  high       0.2000000  cpu=0.50,mem=0.25,gr")
	})
}

// TestSprioShort: without -l the columns are JOBID, PARTITION, (USER with
// -u), PRIORITY, SITE and one per non-zero weight (sprio.c).
func TestSprioShort(t *testing.T) {
	t.Parallel()
	p, c := testParams(release.Series{}), testCluster()
	rows := rowsOf(t, p, c, workedJob())
	t.Run("every weight", func(t *testing.T) {
		got := sprio(t, rows, sprioOpt(release.Series{}))
		checkLines(t, got,
			"          JOBID PARTITION   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS                 TRES",
			"           1001 long            6012          0        562        250       2500        250       1000        400 cpu=250,mem=50,gres/")
	})
	t.Run("age and fair share only", func(t *testing.T) {
		p := Params{Weights: Weights{Age: 1000, FairShare: 10000}, MaxAgeSec: 1200}
		rows := rowsOf(t, p, c, workedJob())
		opt := SprioOptions{Weights: p.Weights, Users: []string{"alice"}}
		// -u adds USER; 562.5 + 2500 = 3062.5 → 3062.
		checkLines(t, sprio(t, rows, opt),
			"          JOBID PARTITION     USER   PRIORITY       SITE        AGE  FAIRSHARE",
			"           1001 long         alice       3062          0        562       2500")
		opt.Norm = true
		// "%.15i %9r %.8u %10y %10a %10f": 3062.5/4294967295 =
		// 0.000000713…
		checkLines(t, sprio(t, rows, opt),
			"          JOBID PARTITION     USER PRIORITY   AGE        FAIRSHARE ",
			"           1001 long         alice 0.00000071 0.5625000  0.2500000 ")
	})
}

// sp is n spaces.
func sp(n int) string { return strings.Repeat(" ", n) }

// TestSprioWeights: -w prints the header and a line of weights: JOBID
// "Weights", SITE 1, each weight, TRES the PriorityWeightTRES string (cut to
// 20), nothing in the other columns.
func TestSprioWeights(t *testing.T) {
	t.Parallel()
	t.Run("long", func(t *testing.T) {
		opt := sprioOpt(release.Series{Major: 22, Minor: 5})
		opt.Long, opt.ShowWeights = true, true
		got := sprio(t, rowsOf(t, testParams(release.Series{Major: 22, Minor: 5}), testCluster(), workedJob()), opt)
		// "        Weights", then " " + PARTITION 9 + " " + USER 8 + " " +
		// PRIORITY 10 + " " + 9 of SITE's "         1" = 40 spaces;
		// after QOS's 2000, " " + NICE 11 + " " = 13 spaces.
		checkLines(t, got,
			"          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES",
			"        Weights"+sp(40)+"1       1000        500      10000       1000       1000       2000"+sp(13)+"CPU=500,Mem=200,GRES")
	})
	t.Run("long without PriorityWeightTRES", func(t *testing.T) {
		// The unset string is a NULL, which glibc prints "(null)": 13
		// spaces, then "(null)" right-justified in 20 (14 more).
		opt := sprioOpt(release.Series{Major: 22, Minor: 5})
		opt.Long, opt.ShowWeights, opt.NoHeader = true, true, true
		opt.Weights.TRES, opt.Weights.TRESConfig = nil, ""
		checkLines(t, sprio(t, nil, opt),
			"        Weights"+sp(40)+"1       1000        500      10000       1000       1000       2000"+sp(27)+"(null)")
	})
	t.Run("short", func(t *testing.T) {
		// " " + 9 + " " + 10 + " " + 9 = 31 spaces before SITE's 1.
		opt := SprioOptions{Weights: Weights{Age: 1000, FairShare: 10000}, ShowWeights: true}
		checkLines(t, sprio(t, nil, opt),
			"          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE",
			"        Weights"+sp(31)+"1       1000      10000")
	})
	t.Run("norm short", func(t *testing.T) {
		// -n prints the weights left-justified in %10a's columns: " " + 9
		// + " " + PRIORITY 10 + " " = 22 spaces before 1000; each weight
		// padded to 10 and a space; the TRES column of -n prints nothing
		// (6 + 1 + 20 = 27 spaces after 2000).
		opt := sprioOpt(release.Series{})
		opt.Norm, opt.ShowWeights, opt.NoHeader = true, true, true
		checkLines(t, sprio(t, nil, opt),
			"        Weights"+sp(22)+"1000"+sp(7)+"500"+sp(8)+"10000"+sp(6)+"1000"+sp(7)+"1000"+sp(7)+"2000"+sp(27))
	})
}

// TestSprioFormat: -o with literal text around the fields: the text before
// the first '%' starts every line, the text after a field follows it; no
// width prints the value whole; "%.3r" right-justifies "long" in 3 columns,
// which keeps its first 3 bytes.
func TestSprioFormat(t *testing.T) {
	t.Parallel()
	rows := rowsOf(t, testParams(release.Series{}), testCluster(), workedJob())
	opt := sprioOpt(release.Series{})
	opt.Format = "JOB:%i|%5u|%.3r end %T"
	checkLines(t, sprio(t, rows, opt),
		"JOB:JOBID|USER |PAR end TRES",
		"JOB:1001|alice|lon end cpu=250,mem=50,gres/gpu=750")

	// -n does not change an explicit format.
	opt.Norm = true
	checkLines(t, sprio(t, rows, opt),
		"JOB:JOBID|USER |PAR end TRES",
		"JOB:1001|alice|lon end cpu=250,mem=50,gres/gpu=750")

	t.Run("every letter of 22.05", func(t *testing.T) {
		// Slurm's test25.1 format: the header it expects, and the
		// worked job's values.
		opt := sprioOpt(release.Series{Major: 22, Minor: 5})
		opt.Format = "%.15i %.8u %.10y %.10Y %.10S %.10a %.10A %.10b %.10B %.10f %.10F %.10j %.10J %.10p %.10P %.10q %.10Q %.6N"
		got := sprio(t, rowsOf(t, testParams(release.Series{Major: 22, Minor: 5}), testCluster(), workedJob()), opt)
		if !strings.Contains(got, "JOBID     USER   PRIORITY   PRIORITY       SITE        AGE        AGE      ASSOC      ASSOC") ||
			!strings.Contains(got, "FAIRSHARE  FAIRSHARE    JOBSIZE    JOBSIZE  PARTITION  PARTITION        QOS        QOS   NICE") {
			t.Errorf("header is not test25.1's:\n%s", got)
		}
		checkLines(t, got,
			"          JOBID     USER   PRIORITY   PRIORITY       SITE        AGE        AGE      ASSOC      ASSOC  FAIRSHARE  FAIRSHARE    JOBSIZE    JOBSIZE  PARTITION  PARTITION        QOS        QOS   NICE",
			"           1001    alice 0.00000139       6012          0  0.5625000        562  0.5000000        250  0.2500000       2500  0.2500000        250  1.0000000       1000  0.2000000        400      0")
	})
}

// TestSprioFormatErrors: what sprio refuses, and what fairledger refuses
// where sprio would go on without the field.
func TestSprioFormatErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opt  SprioOptions
		want string
	}{
		{"long and format", SprioOptions{Long: true, Format: "%i"}, "mutually exclusive"},
		{"unknown letter", SprioOptions{Format: "%i %Z"}, "invalid job format specification: %Z"},
		{"account before 23.02", SprioOptions{Release: release.Series{Major: 22, Minor: 5}, Format: "%i %o"}, "invalid job format specification: %o"},
		{"QOS name before 23.02", SprioOptions{Release: release.Series{Major: 22, Minor: 5}, Format: "%i %n"}, "invalid job format specification: %n"},
		{"SLUID before 26.05", SprioOptions{Release: release.Series{Major: 25, Minor: 11}, Format: "%s"}, "invalid job format specification: %s"},
		{"SLUID", SprioOptions{Release: release.Series{Major: 26, Minor: 5}, Format: "%s"}, "SLUID"},
		{"no letter", SprioOptions{Format: "%i %10"}, "letter is missing"},
		{"too wide", SprioOptions{Format: "%99999i"}, "width over 1024"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSprioOptions(tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckSprioOptions = %v, want an error with %q", err, tc.want)
			}
			if werr := WriteSprio(&bytes.Buffer{}, nil, tc.opt); werr == nil || werr.Error() != err.Error() {
				t.Errorf("WriteSprio = %v, want %v", werr, err)
			}
		})
	}
	for _, ok := range []SprioOptions{{Release: release.Series{Major: 23, Minor: 2}, Format: "%o %n"}, {Format: "%.1024i"}, {Long: true}} {
		if err := CheckSprioOptions(ok); err != nil {
			t.Errorf("CheckSprioOptions(%+v) = %v", ok, err)
		}
	}
}

// TestSprioParsable: -P prints every column whole, '|'-separated, with the
// header: the TRES list is not cut.
func TestSprioParsable(t *testing.T) {
	t.Parallel()
	r := release.Series{Major: 22, Minor: 5}
	opt := sprioOpt(r)
	opt.Long, opt.Parsable = true, true
	j2 := workedJob()
	j2.ID, j2.Nice = 1002, -300
	checkLines(t, sprio(t, rowsOf(t, testParams(r), testCluster(), workedJob(), j2), opt),
		"JOBID|PARTITION|USER|PRIORITY|SITE|AGE|ASSOC|FAIRSHARE|JOBSIZE|PARTITION|QOS|NICE|TRES",
		"1001|long|alice|6012|0|562|250|2500|250|1000|400|0|cpu=250,mem=50,gres/gpu=750",
		// nice −300: 6012.5 + 300 = 6312.5.
		"1002|long|alice|6312|0|562|250|2500|250|1000|400|-300|cpu=250,mem=50,gres/gpu=750")
	opt.ShowWeights = true
	checkLines(t, sprio(t, nil, opt),
		"JOBID|PARTITION|USER|PRIORITY|SITE|AGE|ASSOC|FAIRSHARE|JOBSIZE|PARTITION|QOS|NICE|TRES",
		"Weights||||1|1000|500|10000|1000|1000|2000||CPU=500,Mem=200,GRES/gpu=3000")
}

// TestSprioFiltersAndOrder: rows by job id (a job's partitions in their
// order), -j, -u, -p and -A, and sprio's message for -j without a job.
func TestSprioFiltersAndOrder(t *testing.T) {
	t.Parallel()
	p, c := testParams(release.Series{}), testCluster()
	a := workedJob()
	a.ID = 30
	b := workedJob()
	b.ID, b.User, b.Account, b.Partitions = 7, "bob", "phys", []int{pShort, pLong}
	rows := rowsOf(t, p, c, a, b)
	opt := SprioOptions{Format: "%i %r %u %o"}
	checkLines(t, sprio(t, rows, opt), "JOBID PARTITION USER ACCOUNT", "7 short bob phys", "7 long bob phys", "30 long alice chem")

	opt.NoHeader = true
	for _, tc := range []struct {
		name string
		edit func(o *SprioOptions)
		want []string
	}{
		{"-j", func(o *SprioOptions) { o.Jobs = []uint32{30} }, []string{"30 long alice chem"}},
		{"-u", func(o *SprioOptions) { o.Users = []string{"bob"} }, []string{"7 short bob phys", "7 long bob phys"}},
		{"-p", func(o *SprioOptions) { o.Partitions = []string{"long"} }, []string{"7 long bob phys", "30 long alice chem"}},
		{"-A", func(o *SprioOptions) { o.Accounts = []string{"chem"} }, []string{"30 long alice chem"}},
		{"-u and -p", func(o *SprioOptions) { o.Users, o.Partitions = []string{"bob"}, []string{"short"} }, []string{"7 short bob phys"}},
		// 23.02 on: -j without a match prints the header only (here
		// none) since other jobs are pending.
		{"-j without match", func(o *SprioOptions) { o.Jobs = []uint32{99} }, nil},
		// 22.05 filters in slurmctld, and says so.
		{"-j without match 22.05", func(o *SprioOptions) {
			o.Jobs, o.Release, o.Format = []uint32{99}, release.Series{Major: 22, Minor: 5}, "%i %r %u"
		},
			[]string{"Unable to find jobs matching user/id(s) specified"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opt
			tc.edit(&o)
			got := sprio(t, rows, o)
			if want := strings.Join(tc.want, "\n"); len(tc.want) > 0 {
				want += "\n"
				if got != want {
					t.Errorf("got %q, want %q", got, want)
				}
			} else if got != "" {
				t.Errorf("got %q, want nothing", got)
			}
		})
	}
	t.Run("-j with nothing pending", func(t *testing.T) {
		o := opt
		o.NoHeader, o.Jobs = false, []uint32{30}
		checkLines(t, sprio(t, nil, o), "Unable to find jobs matching user/id(s) specified")
	})
}

// TestSprioDirect: Slurm's test24.7 "test4" (testsuite/expect/test24.7 at
// slurm-22-05-8-1): a job whose priority was set to 999 prints PRIORITY
// 999 and 0 in every other column, TRES empty. From 23.02 -n factor
// columns print 0 too; in 22.05 the cleared factors print %.7f.
func TestSprioDirect(t *testing.T) {
	t.Parallel()
	j := workedJob()
	j.DirectPriority = 999
	for _, r := range []release.Series{{Major: 22, Minor: 5}, {Major: 23, Minor: 2}} {
		t.Run(relName(r), func(t *testing.T) {
			opt := sprioOpt(r)
			opt.NoHeader = true
			opt.Format = "%.15i %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"
			rows := rowsOf(t, testParams(r), testCluster(), j)
			checkLines(t, sprio(t, rows, opt),
				"           1001        999          0          0          0          0          0          0          0           0"+sp(21))
			opt.Format = "%.15i %10y %10a %10t|"
			norm := "0.0000000 "
			if r.AtLeast(adminSetZeroFactors) {
				norm = "0         "
			}
			// %16.14f of the priority itself, not divided.
			checkLines(t, sprio(t, rows, opt), "           1001 999.000000 "+norm+sp(11)+"|")
		})
	}
	t.Run("22.05 several partitions", func(t *testing.T) {
		j := j
		j.Partitions = []int{pShort, pLong}
		opt := sprioOpt(release.Series{Major: 22, Minor: 5})
		opt.NoHeader = true
		opt.Format = "%i %r %Y %S %P %N"
		checkLines(t, sprio(t, rowsOf(t, testParams(release.Series{Major: 22, Minor: 5}), testCluster(), j), opt),
			"1001 short 100 -2147483648 100 -2147483648",
			"1001 long 1000 -2147483648 1000 -2147483648")
	})
}

// TestSprioTest24_7: Slurm's test24.7 (slurm-22-05-8-1): weights 4000000
// for assoc, QOS and TRES cpu, 60000 for the partition; a job at the
// highest association, QOS and partition priority on all CPUs gets the full
// weights and factors 1.0; one at half of each gets half.
func TestSprioTest24_7(t *testing.T) {
	t.Parallel()
	const weight, partWeight = 4000000, 60000
	p := Params{
		Weights: Weights{Assoc: weight, JobSize: 1, Partition: partWeight, QOS: weight, TRES: []float64{weight}, TRESConfig: "cpu=4000000"},
		Release: release.Series{Major: 22, Minor: 5},
	}
	c := Cluster{
		TRES: []string{"cpu", "mem", "energy", "node", "billing"}, Nodes: 2, CPUs: 8,
		MaxAssocPriority: weight, MaxQOSPriority: weight,
		Partitions: []Partition{
			{Name: "p1", PriorityJobFactor: partWeight, TRES: []uint64{4}},
			{Name: "p2", PriorityJobFactor: partWeight / 2, TRES: []uint64{4}},
		},
	}
	full := Job{ID: 2, AssocPriority: weight, QOS: []QOS{{"tq1", weight}}, Partitions: []int{0}, Nodes: 1, CPUs: 4, TRES: []uint64{4}}
	half := Job{ID: 3, AssocPriority: weight / 2, QOS: []QOS{{"tq2", weight / 2}}, Partitions: []int{1}, Nodes: 1, CPUs: 2, TRES: []uint64{2}}
	rows := p.AppendRows(nil, &c, []Job{full, half}, tick)
	opt := SprioOptions{Release: p.Release, Weights: p.Weights, TRES: c.TRES, NoHeader: true, Format: "%.15i %10B %10P %10Q %12T"}
	checkLines(t, sprio(t, rows, opt),
		"              2 4000000    60000      4000000    cpu=4000000 ",
		"              3 2000000    30000      2000000    cpu=2000000 ")
	opt.Format = "%.15i %10b %10p %10q %12t"
	checkLines(t, sprio(t, rows, opt),
		"              2 1.0000000  1.0000000  1.0000000  cpu=1.00    ",
		"              3 0.5000000  0.5000000  0.5000000  cpu=0.50    ")
}

// TestSprioCluster: %c prints the cluster of a federation, glibc's "(null)"
// for a standalone cluster (cut by a precision below 6 to nothing), and
// nothing on the weights line (where sprio crashes).
func TestSprioCluster(t *testing.T) {
	t.Parallel()
	rows := rowsOf(t, testParams(release.Series{}), testCluster(), workedJob())
	opt := SprioOptions{Format: "%i|%c|%.8c|%4c|%8c|", NoHeader: true}
	checkLines(t, sprio(t, rows, opt), "1001|(null)|  (null)|    |(null)  |")
	opt.Cluster = "lab"
	checkLines(t, sprio(t, rows, opt), "1001|lab|     lab|lab |lab     |")
	opt.ShowWeights = true
	checkLines(t, sprio(t, rows, opt), "Weights||        |    |        |")
}

// TestCFloatHalfEven: C's %.0f and Go's 'f' format both round the exact
// binary value half to even: 562.5 → 562, 563.5 → 564, 0.5 → 0, 2.5 → 2.
func TestCFloatHalfEven(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    float64
		prec int
		want string
	}{
		{562.5, 0, "562"}, {563.5, 0, "564"}, {0.5, 0, "0"}, {1.5, 0, "2"}, {2.5, 0, "2"},
		{-0.5, 0, "-0"}, {0.4, 0, "0"}, {1e15 + 0.5, 0, "1000000000000000"},
		{0.125, 2, "0.12"}, {0.375, 2, "0.38"}, {0.5625, 7, "0.5625000"},
		// 0.15 is 0.1499999999999999944… in binary: below the half.
		{0.15, 1, "0.1"},
		{math.NaN(), 0, "nan"}, {math.Inf(1), 0, "inf"}, {math.Inf(-1), 2, "-inf"},
	} {
		if got := cFloat(tc.v, tc.prec); got != tc.want {
			t.Errorf("cFloat(%v, %d) = %q, want %q", tc.v, tc.prec, got, tc.want)
		}
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestSprioWriteError(t *testing.T) {
	t.Parallel()
	err := WriteSprio(errWriter{}, nil, SprioOptions{})
	if err == nil || !strings.Contains(err.Error(), "write sprio: disk full") {
		t.Errorf("WriteSprio = %v, want the write error", err)
	}
}
