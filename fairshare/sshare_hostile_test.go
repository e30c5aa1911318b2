package fairshare

import (
	"io"
	"strings"
	"testing"
)

// TestSshareHostileNames checks that names holding terminal controls and
// the -P separator print visibly (docs/bad-input.md, "Hostile names"):
// ESC, BEL, CR, BS, LF, DEL and a C1 CSI as \xHH or \u00HH, '|' as \x7c
// in -P, a normal name byte for byte.
func TestSshareHostileNames(t *testing.T) {
	t.Parallel()
	const (
		acct = "lab\x1b]0;owned\x07\x1b[2J"
		user = "u|x\r\b\x7f\u009b1m\ny"
	)
	b := buildSpec(t, []spec{
		{Name: "root", Kind: "root", Shares: "1"},
		{Name: acct, Kind: "account", Parent: "root", Shares: "1"},
		{Name: user, Kind: "user", Parent: acct, Shares: "1", Usage: 100},
		{Name: "alice", Kind: "account", Parent: "root", Shares: "1"},
	})
	var r Result
	FairTree(b.tree, b.usage, &r)
	wantAcct := `lab\x1b]0;owned\x07\x1b[2J`
	wantUser := `u\x7cx\x0d\x08\x7f\u009b1m\x0ay`
	lines := sshareLines(t, b, &r, SshareOptions{Fields: []string{"Account", "User"}})
	want := []string{"root|", " alice|", " " + wantAcct + "|", "  " + wantAcct + "|" + wantUser}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("sshare -P lines\n%q\nwant\n%q", lines, want)
	}
	// Fixed width: the escapes are cut like any other text.
	lines = sshareLines(t, b, &r, SshareOptions{FixedWidth: true, NoHeader: true, Fields: []string{"Account%-40", "User%30"}})
	for i, l := range lines {
		if strings.ContainsAny(l, "\x1b\x07\r\b\x7f\n\u009b") {
			t.Errorf("fixed-width line %d holds a raw control: %q", i+1, l)
		}
		if len(l) != 72 {
			t.Errorf("fixed-width line %d is %d bytes, want 40+1+30+1: %q", i+1, len(l), l)
		}
	}
}

// BenchmarkWriteSshare: sshare -a -l of the 100,000-association benchmark
// tree, fixed width and -P, to see what checking every name for controls
// costs (normal names: nothing is copied).
// Reproduce: go test ./fairshare -run x -bench WriteSshare -benchtime 20x
func BenchmarkWriteSshare(b *testing.B) {
	tree, sets := synthTree(b, 8)
	var r Result
	FairTree(tree, sets[0], &r)
	for _, fixed := range []bool{true, false} {
		name := "P"
		if fixed {
			name = "fixed"
		}
		b.Run(name, func(b *testing.B) {
			opt := SshareOptions{FixedWidth: fixed, Long: true}
			b.ReportAllocs()
			for b.Loop() {
				if err := WriteSshare(io.Discard, tree, &r, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tree.Len()), "ns/row")
		})
	}
}
