package fairshare

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestSshareIndentation: one space per depth below root, user rows one more
// than their account (§7; realdata sshare_a_classic_partition-dup-assocs shows
// " root|root" for the root user).
func TestSshareIndentation(t *testing.T) {
	b := buildSpec(t, test24_4)
	var r Result
	FairTree(b.tree, b.usage, &r)
	got := sshareLines(t, b, &r, SshareOptions{Long: true, TrailingSep: true})
	prefixes := map[int]string{
		0:  "root||",
		1:  " root|u1|",
		3:  " aA||",
		4:  "  aAA||",
		5:  "   aAA|uAA1|",
		16: " aD||",
		17: "  aD|uD1|",
		20: "  aDA||parent|",
		21: "   aDA|uDA1|parent|",
		33: "   aGA|uGA1|",
	}
	for i, w := range prefixes {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("line %d = %q, want prefix %q", i+1, got[i], w)
		}
	}
}

func TestSshareLayouts(t *testing.T) {
	b := buildSpec(t, partitionTree)
	var ft, cl Result
	FairTree(b.tree, b.usage, &ft)
	Classic(b.tree, b.usage, 1, &cl)
	grp := make([]string, b.tree.Len())
	run := make([]string, b.tree.Len())
	grp[b.pos["A"]] = "cpu=1000"
	run[b.pos["A|bob"]] = "cpu=12,mem=0"
	tests := []struct {
		name string
		r    *Result
		opt  SshareOptions
		want string
	}{
		{
			// sshare -a -P (Fair Tree, short): no trailing '|'.
			// Root shares 1 → NormShares 1/NO_VAL prints 0.000000; A is
			// root's only child (S 1, U 1); users as in
			// TestFairTreeHandWorked "per-partition users".
			name: "fair tree -P",
			r:    &ft,
			opt:  SshareOptions{},
			want: "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\n" +
				"root|||0.000000|40|1.000000|\n" +
				" A||1|1.000000|40|1.000000|\n" +
				"  A|alice|1|0.250000|10|0.250000|0.666667\n" +
				"  A|alice|1|0.250000|30|0.750000|0.333333\n" +
				"  A|bob|2|0.500000|0|0.000000|1.000000\n",
		},
		{
			// sshare -a -m -p -n: Partition column, trailing '|', no
			// header.
			name: "fair tree -m -p -n",
			r:    &ft,
			opt:  SshareOptions{Partitions: true, TrailingSep: true, NoHeader: true},
			want: "root||||0.000000|40|1.000000||\n" +
				" A|||1|1.000000|40|1.000000||\n" +
				"  A|alice||1|0.250000|10|0.250000|0.666667|\n" +
				"  A|alice|gpu|1|0.250000|30|0.750000|0.333333|\n" +
				"  A|bob||2|0.500000|0|0.000000|1.000000|\n",
		},
		{
			// sshare -a -l -P, classic: no LevelFS column; GrpTRESMins
			// and TRESRunMins from the options. Classic S: A 1, alice
			// 1/4, bob 1/2; UN alice .25, gpu .75, bob 0; UE = UN + (1 −
			// UN)·shares/4: alice .25+.75/4 = .4375 → F 2^(−1.75) =
			// 0.297302; gpu .75+.25/4 = .8125 → 2^(−3.25) = 0.105112;
			// bob 0+1·2/4 = .5 → 2^(−1) = .5. Root S 1.
			name: "classic -l -P",
			r:    &cl,
			opt:  SshareOptions{Long: true, GrpTRESMins: grp, TRESRunMins: run},
			want: "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|GrpTRESMins|TRESRunMins\n" +
				"root|||1.000000|40||1.000000|||cpu=0\n" +
				" A||1|1.000000|40|1.000000|1.000000||cpu=1000|cpu=0\n" +
				"  A|alice|1|0.250000|10|0.250000|0.437500|0.297302||cpu=0\n" +
				"  A|alice|1|0.250000|30|0.750000|0.812500|0.105112||cpu=0\n" +
				"  A|bob|2|0.500000|0|0.000000|0.500000|0.500000||cpu=12,mem=0\n",
		},
		{
			// Fair Tree long header (§7).
			name: "fair tree -l header",
			r:    &ft,
			opt:  SshareOptions{Long: true},
			want: "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins\n",
		},
	}
	for _, tc := range tests {
		var buf bytes.Buffer
		if err := WriteSshare(&buf, b.tree, tc.r, tc.opt); err != nil {
			t.Fatalf("%s: WriteSshare: %v", tc.name, err)
		}
		if tc.name == "fair tree -l header" {
			if g, _, _ := strings.Cut(buf.String(), "\n"); g+"\n" != tc.want {
				t.Errorf("%s: header = %q, want %q", tc.name, g, tc.want)
			}
			continue
		}
		if g := buf.String(); g != tc.want {
			t.Errorf("%s: WriteSshare =\n%s\nwant\n%s", tc.name, g, tc.want)
		}
	}
}

// TestSshareRawUsage: RawUsage is C's (uint64) truncation (§1.1, §7).
func TestSshareRawUsage(t *testing.T) {
	tests := []struct {
		in   float64
		want uint64
	}{
		{0, 0}, {10.9999, 10}, {582.921119, 582}, {-3, 0}, {1e300, 1<<64 - 1},
	}
	for _, tc := range tests {
		if g := rawUsage(tc.in); g != tc.want {
			t.Errorf("rawUsage(%v) = %v, want %v", tc.in, g, tc.want)
		}
	}
}

// TestAppendF: C %f rounds the exact binary value (expected strings checked
// against C-double printf semantics: Python's '%f'); "inf"; blank for NaN. At
// 6 decimals no finite double below 2^53/1e6 is an exact decimal tie
// (5·10^-7 is not dyadic), so round-half-even never has to break a tie here.
func TestAppendF(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0.0000005, "0.000000"}, // binary value is just below the half
		{1.0000005, "1.000001"}, // binary value is just above the half
		{0.1234565, "0.123456"}, // 0.12345649999… in binary: below
		{0.1234575, "0.123457"}, // 0.12345749999…: truncates to …57
		{2.0 / 3, "0.666667"},   // 0.6666666…
		{22.0 / 17, "1.294118"}, // §10.2 uD2/uD3
		{blank, ""},             // blank cell
		{1 / zeroF(), "inf"},    // +Inf
		{4294967294, "4294967294.000000"},
	}
	for _, tc := range tests {
		if g := string(appendF(nil, tc.in)); g != tc.want {
			t.Errorf("appendF(%v) = %q, want %q", tc.in, g, tc.want)
		}
	}
}

func zeroF() float64 { return 0 }

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestSshareErrors(t *testing.T) {
	b := buildSpec(t, test24_1)
	var r Result
	if err := WriteSshare(&bytes.Buffer{}, b.tree, &r, SshareOptions{}); err == nil {
		t.Errorf("WriteSshare(empty result) = nil, want error")
	}
	Classic(b.tree, b.usage, 1, &r)
	if err := WriteSshare(failWriter{}, b.tree, &r, SshareOptions{}); err == nil || !strings.Contains(err.Error(), "write sshare: disk full") {
		t.Errorf("WriteSshare(failing writer) = %v, want wrapped disk full", err)
	}
	if err := WriteSshare(&bytes.Buffer{}, b.tree, &r, SshareOptions{TRESRunMins: []string{"x"}}); err == nil {
		t.Errorf("WriteSshare(short TRESRunMins) = nil, want error")
	}
}
