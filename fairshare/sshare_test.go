package fairshare

import (
	"bytes"
	"cmp"
	"errors"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/internal/release"
)

// TestSshareIndentation: one space per depth below root, user rows one more
// than their account (§8; the classic `sshare -a` output posted in SchedMD/slurm PR #114
// shows " root|root" for the root user).
func TestSshareIndentation(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, test24_4(t))
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
	t.Parallel()
	b := buildSpec(t, partitionTree)
	var ft, cl Result
	FairTree(b.tree, b.usage, &ft)
	Classic(b.tree, b.usage, 1, &cl)
	limited := *b.tree // the same tree, with a GrpTRESMins limit on A
	limited.GrpTRESMins = make([]string, b.tree.Len())
	limited.GrpTRESMins[b.pos["A"]] = "cpu=1000"
	run := make([]string, b.tree.Len())
	run[b.pos["A|bob"]] = "cpu=12,mem=0"
	tests := []struct {
		name string
		tree *Tree // nil: b.tree
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
			// from the tree and TRESRunMins from the options. Classic S: A 1, alice
			// 1/4, bob 1/2; UN alice .25, gpu .75, bob 0; UE = UN + (1 −
			// UN)·shares/4: alice .25+.75/4 = .4375 → F 2^(−1.75) =
			// 0.297302; gpu .75+.25/4 = .8125 → 2^(−3.25) = 0.105112;
			// bob 0+1·2/4 = .5 → 2^(−1) = .5. Root S 1.
			name: "classic -l -P",
			tree: &limited,
			r:    &cl,
			opt:  SshareOptions{Long: true, TRESRunMins: run},
			want: "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|GrpTRESMins|TRESRunMins\n" +
				"root|||1.000000|40||1.000000|||cpu=0\n" +
				" A||1|1.000000|40|1.000000|1.000000||cpu=1000|cpu=0\n" +
				"  A|alice|1|0.250000|10|0.250000|0.437500|0.297302||cpu=0\n" +
				"  A|alice|1|0.250000|30|0.750000|0.812500|0.105112||cpu=0\n" +
				"  A|bob|2|0.500000|0|0.000000|0.500000|0.500000||cpu=12,mem=0\n",
		},
		{
			// sshare -n -P -o account,fairshare (the layout of the
			// output posted in vpenso/prometheus-slurm-exporter issue #93):
			// the cells of "fair tree -P" above.
			name: "fair tree -n -P -o account,fairshare",
			r:    &ft,
			opt:  SshareOptions{NoHeader: true, Fields: []string{"account", "fairshare"}},
			want: "root|\n A|\n  A|0.666667\n  A|0.333333\n  A|1.000000\n",
		},
		{
			// -o matches case-insensitive prefixes in process.c's fields[]
			// order: "C" is Cluster, "rawu" RawUsage, "N" NormShares
			// (before NormUsage). The cells of "fair tree -P" above.
			name: "fair tree -P -o C,rawu,N",
			r:    &ft,
			opt:  SshareOptions{Fields: []string{"C", "rawu", "N"}, Cluster: "c1"},
			want: "Cluster|RawUsage|NormShares\n" +
				"c1|40|0.000000\nc1|40|1.000000\nc1|10|0.250000\nc1|30|0.250000\nc1|0|0.500000\n",
		},
		{
			// Fixed width with -o lengths: Account%-8 left-justified in 8,
			// FairShare%9 right-justified in 9, each cell followed by a
			// space; a blank cell is 9 spaces.
			name: "fair tree fixed -o Account%-8,FairShare%9",
			r:    &ft,
			opt:  SshareOptions{FixedWidth: true, Fields: []string{"Account%-8", "FairShare%9"}},
			want: "Account  FairShare \n" +
				"-------- --------- \n" +
				"root    " + " " + "         " + " \n" + // 8 + 1 + 9 + 1 columns
				" A      " + " " + "         " + " \n" +
				"  A       0.666667 \n" +
				"  A       0.333333 \n" +
				"  A       1.000000 \n",
		},
		{
			// Fair Tree long header (§8).
			name: "fair tree -l header",
			r:    &ft,
			opt:  SshareOptions{Long: true},
			want: "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			tree := cmp.Or(tc.tree, b.tree)
			if err := WriteSshare(&buf, tree, tc.r, tc.opt); err != nil {
				t.Fatalf("%s: WriteSshare: %v", tc.name, err)
			}
			if tc.name == "fair tree -l header" {
				if g, _, _ := strings.Cut(buf.String(), "\n"); g+"\n" != tc.want {
					t.Errorf("%s: header = %q, want %q", tc.name, g, tc.want)
				}
				return
			}
			if g := buf.String(); g != tc.want {
				t.Errorf("%s: WriteSshare =\n%s\nwant\n%s", tc.name, g, tc.want)
			}
		})
	}
}

// TestSshareFieldErrors: an -o item that names no column, the association
// id (not in the history) and a bad length are refused before any output.
func TestSshareFieldErrors(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, partitionTree)
	var ft Result
	FairTree(b.tree, b.usage, &ft)
	for fields, want := range map[string]string{
		"Account,Bogus": `sshare: invalid field requested: "Bogus"`,
		"ID":            `sshare field "ID": association ids are not kept in the history`,
		"User%x":        `sshare field "User%x": the length after % must be a non-zero integer`,
		"User%0":        `sshare field "User%0": the length after % must be a non-zero integer`,
		// Slurm's sshare overflows its stack or allocates a gigabyte a
		// cell; fairledger died with "out of memory" (issue 23).
		"account%999999999":         `sshare field "account%999999999": the length after % must be between -1024 and 1024`,
		"User,RawU%-1025":           `sshare field "RawU%-1025": the length after % must be between -1024 and 1024`,
		"User%99999999999999999":    `sshare field "User%99999999999999999": the length after % must be between -1024 and 1024`,
		"User%99999999999999999999": `sshare field "User%99999999999999999999": the length after % must be a non-zero integer`,
	} {
		t.Run(fields, func(t *testing.T) {
			var buf bytes.Buffer
			err := WriteSshare(&buf, b.tree, &ft, SshareOptions{Fields: strings.Split(fields, ",")})
			if err == nil || err.Error() != want {
				t.Errorf("-o %s: err %v, want %s", fields, err, want)
			}
			if buf.Len() > 0 {
				t.Errorf("-o %s: wrote %q before failing", fields, buf.String())
			}
			if err := CheckSshareFields(strings.Split(fields, ",")); err == nil || err.Error() != want {
				t.Errorf("CheckSshareFields(%s) = %v, want %s", fields, err, want)
			}
		})
	}
	if err := CheckSshareFields([]string{"Account%-1024", "Fair%1024"}); err != nil {
		t.Errorf("CheckSshareFields at the bound: %v", err)
	}
}

// TestSshareWideFields: the widest columns allowed print as print_fields
// does (the name right-justified in 1024 columns, 1024 dashes) and reach
// the writer in pieces: WriteSshare hands it no more than about 64 KiB at
// a time however wide a line is (60 columns of 1025 bytes here, 61,500
// bytes a line).
func TestSshareWideFields(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, partitionTree)
	var ft Result
	FairTree(b.tree, b.usage, &ft)
	fields := []string{"User%1024"}
	for range 59 {
		fields = append(fields, "Account%-1024")
	}
	var w maxWriter
	if err := WriteSshare(&w, b.tree, &ft, SshareOptions{FixedWidth: true, Fields: fields}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(w.buf.String(), "\n")
	if want := strings.Repeat(" ", 1020) + "User "; !strings.HasPrefix(lines[0], want) {
		t.Errorf("header starts %q, want 1020 spaces and \"User \"", lines[0][:40])
	}
	if want := strings.Repeat("-", 1024) + " "; !strings.HasPrefix(lines[1], want) || len(lines[1]) != 60*1025 {
		t.Errorf("dashed line of %d bytes, want 60 × (1024 dashes and a space)", len(lines[1]))
	}
	if w.max > 64<<10+1025 {
		t.Errorf("largest write %d bytes, want at most 64 KiB and a cell", w.max)
	}
}

// maxWriter keeps what it is written and the size of the largest write.
type maxWriter struct {
	buf bytes.Buffer
	max int
}

func (w *maxWriter) Write(p []byte) (int, error) {
	w.max = max(w.max, len(p))
	return w.buf.Write(p)
}

// TestSshareRawUsage: RawUsage is C's (uint64) truncation (§2.1, §8).
func TestSshareRawUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   float64
		want uint64
	}{
		{"zero", 0, 0},
		{"fraction truncated", 10.9999, 10},
		{"§11.4 decayed chunk", 582.921119, 582},
		// Negative usage (negative TRESBillingWeights): x86-64's cast of
		// the long double, worked in rawUsage's comment: −3 → 2^64 − 3,
		// −3.5 truncated to −3 first; (−1, 0) → 0; −2^63 or below → 2^63.
		{"negative: the x86-64 bits of −3", -3, 18446744073709551613},
		{"negative fraction truncated first", -3.5, 18446744073709551613},
		{"above −1 is 0", -0.75, 0},
		{"−1", -1, 18446744073709551615},
		{"below −2^63 is 2^63", -1e19, 1 << 63},
		{"beyond uint64 saturates", 1e300, 1<<64 - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if g := rawUsage(tc.in); g != tc.want {
				t.Errorf("rawUsage(%v) = %v, want %v", tc.in, g, tc.want)
			}
		})
	}
}

// TestAppendF: C %f rounds the exact binary value (expected strings checked
// against C-double printf semantics: Python's '%f'); "inf"; blank for NaN. At
// 6 decimals no finite double below 2^53/1e6 is an exact decimal tie
// (5·10^-7 is not dyadic), so round-half-even never has to break a tie here.
func TestAppendF(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"binary value just below the half", 0.0000005, "0.000000"},
		{"binary value just above the half", 1.0000005, "1.000001"},
		{"0.12345649999… in binary: below", 0.1234565, "0.123456"},
		{"0.12345749999…: truncates to …57", 0.1234575, "0.123457"},
		{"two thirds", 2.0 / 3, "0.666667"},
		{"§11.2 uD2 and uD3", 22.0 / 17, "1.294118"},
		{"blank cell", blank, ""},
		{"+Inf", 1 / zeroF(), "inf"},
		{"NO_VAL", 4294967294, "4294967294.000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if g := string(appendF(nil, tc.in)); g != tc.want {
				t.Errorf("appendF(%v) = %q, want %q", tc.in, g, tc.want)
			}
		})
	}
}

func zeroF() float64 { return 0 }

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestSshareErrors(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, test24_1(t))
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

// TestSshareFixedWidthClassic is `sshare -a` without -p/-P on the classic
// tree of docs/slurm-semantics.md §11.1. Field widths from the fields[] table of
// src/sshare/process.c: Account -20 (left-justified), User 10, RawShares
// 10, NormShares 11, RawUsage 11, EffectvUsage 13, FairShare 10 (all
// right-justified); every field, the last included, is followed by one
// space (print_fields.c). The values are test24.1's table's: root RawShares
// blank (10 spaces), NormShares 1.000000, RawUsage 100 (= 45 + 25 + 30),
// EffectvUsage 1.000000; account FairShare blank (sshare ≥ 25.11); user
// FairShare 0.408479, 0.022097, 0.125000, 0.500000, 0.749154, 0.000000.
func TestSshareFixedWidthClassic(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, test24_1(t))
	var r Result
	Classic(b.tree, b.usage, 1, &r)
	want := "" +
		//       Account (20)        User (10)  RawShares  NormShares    RawUsage  EffectvUsage  FairShare
		"Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n" +
		"-------------------- ---------- ---------- ----------- ----------- ------------- ---------- \n" +
		"root                                          1.000000         100      1.000000            \n" +
		" AccountA                               40    0.400000          45      0.450000            \n" +
		"  AccountB                              30    0.300000          20      0.387500            \n" +
		"   AccountB               User1          1    0.300000          20      0.387500   0.408479 \n" +
		"  AccountC                              10    0.100000          25      0.300000            \n" +
		"   AccountC               User2          1    0.050000          25      0.275000   0.022097 \n" +
		"   AccountC               User3          1    0.050000           0      0.150000   0.125000 \n" +
		" AccountD                               60    0.600000          25      0.250000            \n" +
		"  AccountE                              25    0.250000          25      0.250000            \n" +
		"   AccountE               User4          1    0.250000          25      0.250000   0.500000 \n" +
		"  AccountF                              35    0.350000           0      0.145833            \n" +
		"   AccountF               User5          1    0.350000           0      0.145833   0.749154 \n" +
		" AccountG                                0    0.000000          30      0.300000            \n" +
		"  AccountG                User6          0    0.000000          30      0.300000   0.000000 \n"
	var buf bytes.Buffer
	if err := WriteSshare(&buf, b.tree, &r, SshareOptions{FixedWidth: true}); err != nil {
		t.Fatal(err)
	}
	if g := buf.String(); g != want {
		t.Errorf("WriteSshare(FixedWidth) =\n%s\nwant\n%s", g, want)
	}
	// TrailingSep has no meaning in the fixed-width layout.
	buf.Reset()
	if err := WriteSshare(&buf, b.tree, &r, SshareOptions{FixedWidth: true, TrailingSep: true}); err != nil {
		t.Fatal(err)
	}
	if g := buf.String(); g != want {
		t.Errorf("WriteSshare(FixedWidth, TrailingSep) =\n%s\nwant\n%s", g, want)
	}
}

// TestSshareFixedWidthFairTreeLong is `sshare -a -l` on the Fair Tree tree of
// §11.2: the header and five rows worked out from test24.4's table. Widths
// as in TestSshareFixedWidthClassic plus NormUsage 11, LevelFS 10,
// GrpTRESMins 30 and TRESRunMins 30 ("cpu=0" right-justified).
//   - root: RawShares blank, NormShares 0/NO_VAL = 0.000000, RawUsage 240,
//     NormUsage blank, EffectvUsage 1.000000, FairShare and LevelFS blank.
//   - root|u1: 10, 0.048077 (10/208), 0, 0.000000, 0.000000, F 21/21 =
//     1.000000, LevelFS inf (no usage).
//   - aD|uD1: "parent" right-justified, 0.240385, 20, 0.083333 (20/240),
//     0.181818 (20/110), F 10/21 = 0.476190, LevelFS blank (§8).
//   - aDA: "parent", 0.240385, 45, 0.187500, 0.409091 (45/110), blanks.
//   - aGA|uGA2: 20, 0.500000, 6, 0.025000, 0.600000 (6/10), F 2/21 =
//     0.095238, LevelFS 0.5/0.6 = 0.833333.
func TestSshareFixedWidthFairTreeLong(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, test24_4(t))
	var r Result
	FairTree(b.tree, b.usage, &r)
	var buf bytes.Buffer
	if err := WriteSshare(&buf, b.tree, &r, SshareOptions{FixedWidth: true, Long: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2+35 {
		t.Fatalf("%d lines, want 37 (header, dashes, 35 rows)", len(lines))
	}
	want := map[int]string{
		0:      "Account                    User  RawShares  NormShares    RawUsage   NormUsage  EffectvUsage  FairShare    LevelFS                    GrpTRESMins                    TRESRunMins ",
		1:      "-------------------- ---------- ---------- ----------- ----------- ----------- ------------- ---------- ---------- ------------------------------ ------------------------------ ",
		2:      "root                                          0.000000         240                  1.000000                                                                               cpu=0 ",
		3:      " root                        u1         10    0.048077           0    0.000000      0.000000   1.000000        inf                                                         cpu=0 ",
		2 + 17: "  aD                        uD1     parent    0.240385          20    0.083333      0.181818   0.476190                                                                    cpu=0 ",
		2 + 20: "  aDA                               parent    0.240385          45    0.187500      0.409091                                                                               cpu=0 ",
		2 + 34: "   aGA                     uGA2         20    0.500000           6    0.025000      0.600000   0.095238   0.833333                                                         cpu=0 ",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d =\n%q\nwant\n%q", i+1, lines[i], w)
		}
	}
	// -n drops both the header and the dashes.
	buf.Reset()
	if err := WriteSshare(&buf, b.tree, &r, SshareOptions{FixedWidth: true, Long: true, NoHeader: true}); err != nil {
		t.Fatal(err)
	}
	if g, _, _ := strings.Cut(buf.String(), "\n"); g != want[2] {
		t.Errorf("-n first line = %q, want %q", g, want[2])
	}
}

// TestSshareFixedWidthCut: print_fields_str cuts a string longer than its
// column to abs(len)-1 bytes and a '+', indentation included; integers are
// never cut; a double whose %f is wider than the column switches to %e.
func TestSshareFixedWidthCut(t *testing.T) {
	t.Parallel()
	specs := []spec{
		{Name: "root", Kind: "root", Shares: "1"},
		// 20 characters: with the one-space indent, 21 > 20.
		{Name: "verylongaccountname1", Kind: "account", Parent: "root", Shares: "1"},
		{Name: "abcdefghijk", Kind: "user", Parent: "verylongaccountname1", Shares: "1", Usage: 1, Partition: "partitionname"},
		{Name: "abcdefghij", Kind: "user", Parent: "verylongaccountname1", Shares: "1", Usage: 12345678901234},
		// B's usage makes the long account's share of usage tiny.
		{Name: "B", Kind: "account", Parent: "root", Shares: "1"},
		{Name: "b", Kind: "user", Parent: "B", Shares: "1", Usage: 999999},
	}
	b := buildSpec(t, specs)
	var r Result
	FairTree(b.tree, b.usage, &r)
	var buf bytes.Buffer
	if err := WriteSshare(&buf, b.tree, &r, SshareOptions{FixedWidth: true, Partitions: true, NoHeader: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	// Row order by lineage: root, /B/, /B/0-b/, /verylong.../,
	// /verylong.../0-abcdefghij/, /verylong.../0-abcdefghijk/partitionname/.
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6:\n%s", len(lines), buf.String())
	}
	for _, c := range []struct {
		line   int
		prefix string
	}{
		// " verylongaccountname1" (21) → 19 bytes + '+'.
		{3, " verylongaccountnam+ "},
		// User "abcdefghij" (10) fits; RawUsage 12345678901246 is 14
		// digits in an 11 column: not cut.
		{4, "  verylongaccountna+ abcdefghij                     "},
		// User "abcdefghijk" (11) → "abcdefghi+"; Partition
		// "partitionname" (13) → "partitionna+".
		{5, "  verylongaccountna+ abcdefghi+ partitionna+ "},
	} {
		if !strings.HasPrefix(lines[c.line], c.prefix) {
			t.Errorf("line %d = %q, want prefix %q", c.line+1, lines[c.line], c.prefix)
		}
	}
	// abcdefghij's RawUsage: 12345678901234, printed whole (%11llu).
	if !strings.Contains(lines[4], " 12345678901234 ") {
		t.Errorf("line 5 = %q, want RawUsage 12345678901234 uncut", lines[4])
	}

	// Fair Tree LevelFS of B's sibling in the -l layout: S = 1/2, UE =
	// U/U(root). Use a tree where that is 1e-6: LF = 0.5/1e-6 = 500000,
	// "%10f" = "500000.000000" (13 > 10) → "%4.4e" = "5.0000e+05".
	specs = []spec{
		{Name: "root", Kind: "root", Shares: "1"},
		{Name: "A", Kind: "account", Parent: "root", Shares: "1"},
		{Name: "a", Kind: "user", Parent: "A", Shares: "1", Usage: 1},
		{Name: "B", Kind: "account", Parent: "root", Shares: "1"},
		{Name: "b", Kind: "user", Parent: "B", Shares: "1", Usage: 999999},
	}
	b = buildSpec(t, specs)
	FairTree(b.tree, b.usage, &r)
	buf.Reset()
	if err := WriteSshare(&buf, b.tree, &r, SshareOptions{FixedWidth: true, Long: true, NoHeader: true}); err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	// A: RawShares 1, NormShares 0.5, RawUsage 1, NormUsage 1e-6 →
	// 0.000001, EffectvUsage 0.000001, FairShare blank, LevelFS 5.0000e+05.
	wantA := " A                                       1    0.500000           1    0.000001      0.000001            5.0000e+05 "
	if !strings.HasPrefix(lines[1], wantA) {
		t.Errorf("line 2 = %q, want prefix %q", lines[1], wantA)
	}
}

// TestAppendFixedE checks print_fields_double's %e fallback: "%*.*e" with
// width and precision abs(len), lowered by the excess length. Expected
// strings from C's printf semantics (checked with Python's %-formatting).
func TestAppendFixedE(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		v     float64
		width int
		want  string
	}{
		// "%10.10e" = "1.2345000000e+03" (16): width 10-6 = 4.
		{"precision lowered to 4", 1234.5, 10, "1.2345e+03"},
		// "-1.2345000000e+03" (17): width 3; 1234.5 is exact, so the
		// tie rounds to even.
		{"negative tie rounds to even", -1234.5, 10, "-1.234e+03"},
		// "1.0000000000e+100" (17): width 3.
		{"three-digit exponent", 1e100, 10, "1.000e+100"},
		// "%13.13e" = "1.2345678900000e+07" (19): width 7.
		{"width 13", 12345678.9, 13, "1.2345679e+07"},
		{"LevelFS of a tiny usage", 500000, 10, "5.0000e+05"},
		// A left-justified column pads on the right: "%-*.*e".
		{"left-justified column", 1234.5, -10, "1.2345e+03"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if g := string(appendFixedE(nil, c.v, c.width)); g != c.want {
				t.Errorf("appendFixedE(%v, %d) = %q, want %q", c.v, c.width, g, c.want)
			}
		})
	}
}

// TestSshareRowSelection follows slurmctld's assoc_mgr_get_shares: a user
// list keeps all account rows and the listed users' rows; an account list
// keeps the rows whose account matches (not sub-accounts); both compare
// case-insensitively; the indentation counts printed ancestors only
// (slurmdb_tree_name_get). Values from test24.4's table.
func TestSshareRowSelection(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, test24_4(t))
	var r Result
	FairTree(b.tree, b.usage, &r)
	for _, c := range []struct {
		name string
		opt  SshareOptions
		want string
	}{
		{
			name: "accounts aD",
			opt:  SshareOptions{Accounts: []string{"AD"}, NoHeader: true},
			// aD's parent root is not printed: no indent; its users one
			// space; aDA and its users have account aDA: not shown.
			want: "aD||50|0.240385|110|0.458333|\n" +
				" aD|uD1|parent|0.240385|20|0.181818|0.476190\n" +
				" aD|uD2|40|0.235294|20|0.181818|0.238095\n" +
				" aD|uD3|50|0.294118|25|0.227273|0.333333\n",
		},
		{
			name: "account aDA, user uDA2",
			opt:  SshareOptions{Accounts: []string{"aDA"}, Users: []string{"uDA2"}, NoHeader: true},
			want: "aDA||parent|0.240385|45|0.409091|\n" +
				" aDA|uDA2|30|0.176471|10|0.090909|0.380952\n",
		},
		{
			// The caller is unknown: account rows only, aD's users dropped
			// (the rows are those of "accounts aD" above).
			name: "no user rows, account aD",
			opt:  SshareOptions{Accounts: []string{"aD"}, NoUserRows: true, NoHeader: true},
			want: "aD||50|0.240385|110|0.458333|\n",
		},
		{
			name: "account and user that do not meet",
			opt:  SshareOptions{Accounts: []string{"aG"}, Users: []string{"uD1"}, NoHeader: true},
			want: "aG||8|0.038462|20|0.083333|\n",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteSshare(&buf, b.tree, &r, c.opt); err != nil {
				t.Fatal(err)
			}
			if g := buf.String(); g != c.want {
				t.Errorf("%s: WriteSshare =\n%s\nwant\n%s", c.name, g, c.want)
			}
		})
	}

	// Users only (sshare without -a, run by uD1): the 14 account rows
	// (root and 13 accounts) with full indentation, plus aD|uD1.
	var buf bytes.Buffer
	if err := WriteSshare(&buf, b.tree, &r, SshareOptions{Users: []string{"UD1"}, NoHeader: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 15 {
		t.Fatalf("%d lines, want 15:\n%s", len(lines), buf.String())
	}
	for i, w := range map[int]string{
		0:  "root|||0.000000|240|1.000000|",
		1:  " aA||40|",
		2:  "  aAA||30|",
		8:  " aD||50|",
		9:  "  aD|uD1|parent|0.240385|20|0.181818|0.476190",
		10: "  aDA||parent|",
		14: "  aGA||10|",
	} {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want prefix %q", i+1, lines[i], w)
		}
	}
}

// TestSshareTRESRunMins: with the cluster's TRES list, TRESRunMins lists
// every TRES at 0 in the order given (docs/slurm-semantics.md §8: "all TRES
// listed (cpu=0,mem=0,...)"); test24.1's root line otherwise as in §11.1.
func TestSshareTRESRunMins(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, test24_1(t))
	var r Result
	Classic(b.tree, b.usage, 1, &r)
	var buf bytes.Buffer
	tres := []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages", "gres/gpu"}
	if err := WriteSshare(&buf, b.tree, &r, SshareOptions{Long: true, NoHeader: true, TRES: tres, Fields: []string{"Account", "TRESRunMins"}}); err != nil {
		t.Fatal(err)
	}
	want := "root|cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0\n"
	if got, _, _ := strings.Cut(buf.String(), "\n"); got+"\n" != want {
		t.Errorf("first line = %q, want %q", got, want)
	}
}

// Row order by release (docs/slurm-versions.md §3's case): root → chem
// (users bob, bob.smith), chem-lab (user carol). 23.11 and later sort the
// lineages bytewise, and '-' (0x2D) sorts before '/' (0x2F): /chem-lab/
// before /chem/, /chem/0-bob.smith/ before /chem/0-bob/. 22.05–23.02 sort
// each parent's children by name, users first: chem before chem-lab, bob
// before bob.smith.
func TestSshareNameOrder(t *testing.T) {
	t.Parallel()
	b := buildSpec(t, []spec{
		{Name: "root", Kind: "root", Shares: "1"},
		{Name: "chem", Kind: "account", Parent: "root", Shares: "1"},
		{Name: "chem-lab", Kind: "account", Parent: "root", Shares: "1"},
		{Name: "bob", Kind: "user", Parent: "chem", Shares: "1"},
		{Name: "bob.smith", Kind: "user", Parent: "chem", Shares: "1"},
		{Name: "carol", Kind: "user", Parent: "chem-lab", Shares: "1"},
		{Name: "root", Kind: "user", Parent: "root", Shares: "1"},
	})
	var r Result
	FairTree(b.tree, b.usage, &r)
	first2 := func(lines []string) string {
		var out []string
		for _, l := range lines {
			f := strings.Split(l, "|")
			out = append(out, f[0]+"|"+f[1])
		}
		return strings.Join(out, "\n")
	}
	lineage := first2(sshareLines(t, b, &r, SshareOptions{}))
	want := "root|\n root|root\n chem-lab|\n  chem-lab|carol\n chem|\n  chem|bob.smith\n  chem|bob"
	if lineage != want {
		t.Errorf("23.11 order:\n%s\nwant\n%s", lineage, want)
	}
	named := first2(sshareLines(t, b, &r, SshareOptions{NameOrder: true}))
	want = "root|\n root|root\n chem|\n  chem|bob\n  chem|bob.smith\n chem-lab|\n  chem-lab|carol"
	if named != want {
		t.Errorf("22.05 order:\n%s\nwant\n%s", named, want)
	}
}

// TestSshareRelease: sshare prints classic and depth-oblivious account
// FairShare cells up to 25.05 (docs/slurm-versions.md §1), never for Fair
// Tree, and lists rows in name order up to 23.02 (§3 there); the zero
// Series is the newest, 26.05.
func TestSshareRelease(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rel                 release.Series
		algo                Algorithm
		accountFS, nameOrdr bool
	}{
		{release.Series{Major: 22, Minor: 5}, ClassicAlgo, true, true},
		{release.Series{Major: 22, Minor: 5}, FairTreeAlgo, false, true},
		{release.Series{Major: 23, Minor: 2}, DepthObliviousAlgo, true, true},
		{release.Series{Major: 23, Minor: 11}, DepthObliviousAlgo, true, false},
		{release.Series{Major: 23, Minor: 11}, FairTreeAlgo, false, false},
		{release.Series{Major: 25, Minor: 5}, ClassicAlgo, true, false},
		{release.Series{Major: 25, Minor: 11}, ClassicAlgo, false, false},
		{release.Series{Major: 26, Minor: 5}, DepthObliviousAlgo, false, false},
		{release.Series{}, ClassicAlgo, false, false},
	} {
		accountFS, nameOrder := SshareRelease(tc.rel, tc.algo)
		if accountFS != tc.accountFS || nameOrder != tc.nameOrdr {
			t.Errorf("SshareRelease(%s, %s) = %v, %v, want %v, %v", tc.rel, tc.algo, accountFS, nameOrder, tc.accountFS, tc.nameOrdr)
		}
	}
}

// One user's per-partition associations compare equal in 22.05–23.02's
// order and keep slurmdbd's lft order, the dump's (Node.Line): gpu's line
// 3 before cpu's line 4, where the tree (lineage) has cpu first; without
// lines, the tree's order.
func TestNameOrderDumpLines(t *testing.T) {
	t.Parallel()
	nodes := []Node{
		{Account: "root", Parent: -1, Shares: 1, Line: 1},
		{Account: "chem", Parent: 0, Shares: 1, Line: 2},
		{Account: "chem", User: "dan", Partition: "gpu", Parent: 1, Shares: 4, Line: 3},
		{Account: "chem", User: "dan", Partition: "cpu", Parent: 1, Shares: 1, Line: 4},
		{Account: "chem", User: "amy", Parent: 1, Shares: 1, Line: 5},
	}
	parts := func(nodes []Node) string {
		tree, err := NewTree(nodes)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range nameOrder(tree) {
			out = append(out, tree.User[p]+"/"+tree.Partition[p])
		}
		return strings.Join(out, " ")
	}
	if got, want := parts(nodes), "/ / amy/ dan/gpu dan/cpu"; got != want {
		t.Errorf("with the dump's lines: %s, want %s", got, want)
	}
	for i := range nodes {
		nodes[i].Line = 0
	}
	if got, want := parts(nodes), "/ / amy/ dan/cpu dan/gpu"; got != want {
		t.Errorf("without lines: %s, want %s", got, want)
	}
}
