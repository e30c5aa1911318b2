package metrics

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
)

func ptr[T any](v T) *T { return &v }

// tinyRows is a Fair Tree snapshot of root, one account and two users,
// its values written by hand: lab has 3 of root's shares, alice and
// "b\"ob" (a hostile name) one share each; alice used 300, the other 100.
func tinyRows(at time.Time, account, user2 string) []record.FairshareRow {
	row := func(acct, user, parent string, depth int32, shares *int64, ns, raw, nu, eu, fs, lfs *float64) record.FairshareRow {
		return record.FairshareRow{Snapshot: at, Algorithm: "fair_tree", Account: acct, User: user, Parent: parent, Depth: depth,
			IsUser: user != "", RawShares: shares, NormShares: ns, RawUsage: raw, NormUsage: nu, EffectvUsage: eu, FairShare: fs, LevelFS: lfs}
	}
	nan := (*float64)(nil)
	return []record.FairshareRow{
		row("root", "", "", 0, nil, ptr(0.0), ptr(400.0), nan, ptr(1.0), nan, nan),
		row(account, "", "root", 1, ptr(int64(3)), ptr(1.0), ptr(400.0), ptr(1.0), ptr(1.0), nan, ptr(1.0)),
		row(account, "alice", account, 2, ptr(int64(1)), ptr(0.5), ptr(300.0), ptr(0.75), ptr(0.75), ptr(0.5), ptr(0.5/0.75)),
		row(account, user2, account, 2, ptr(int64(1)), ptr(0.5), ptr(100.0), ptr(0.25), ptr(0.25), ptr(1.0), ptr(2.0)),
	}
}

func TestWriteTextEscapesHostileNames(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	acct := "la\\b\n\"x\""
	snap := Snapshot{Cluster: "c\"1", Time: at, Rows: tinyRows(at, acct, "b\"ob\xff")}
	var out bytes.Buffer
	if err := WriteText(&out, []Snapshot{snap}); err != nil {
		t.Fatal(err)
	}
	// Escaped by the text format's rules: \ → \\, " → \", newline → \n;
	// the invalid byte 0xff → U+FFFD.
	for _, want := range []string{
		`slurm_account_fairshare_raw_shares{cluster="c\"1",account="la\\b\n\"x\""} 3`,
		`slurm_user_fairshare{cluster="c\"1",account="la\\b\n\"x\"",user="b\"ob` + "\uFFFD" + `"} 1`,
		`fairledger_association_level_fs{cluster="c\"1",account="la\\b\n\"x\"",user="alice",partition="",parent="la\\b\n\"x\"",depth="2"} 0.6666666666666666`,
		`fairledger_snapshot_timestamp_seconds{cluster="c\"1"} 1.7407872e+09`,
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("output lacks the line\n%s\nin\n%s", want, out.String())
		}
	}
	for i, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if strings.Count(l, `"`)%2 == 1 && !strings.Contains(l, `\"`) {
			t.Errorf("line %d has an unbalanced quote: %q", i+1, l)
		}
	}
}

func TestWriteTextBlanksAsSshare(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	if err := WriteText(&out, []Snapshot{{Cluster: "c", Time: at, Rows: tinyRows(at, "lab", "bob")}}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	// Fair Tree: sshare prints no FairShare for accounts, no NormUsage
	// and no RawShares for root, no LevelFS for root.
	for _, absent := range []string{"slurm_account_fairshare{", `slurm_account_fairshare_norm_usage{cluster="c",account="root"}`,
		`slurm_account_fairshare_raw_shares{cluster="c",account="root"}`, `fairledger_association_level_fs{cluster="c",account="root"`} {
		if strings.Contains(s, absent) {
			t.Errorf("output has %s", absent)
		}
	}
	// Each family once, HELP before TYPE, only gauges.
	seen := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		if name, ok := strings.CutPrefix(l, "# TYPE "); ok {
			n, typ, _ := strings.Cut(name, " ")
			if seen[n] || typ != "gauge" {
				t.Errorf("TYPE line %q: repeated or not a gauge", l)
			}
			seen[n] = true
		}
	}
	if !seen["slurm_user_fairshare"] || !seen["fairledger_association_raw_usage"] {
		t.Errorf("families written: %v", seen)
	}
}

func TestAccountFairShareOlderReleases(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	rows := tinyRows(at, "lab", "bob")
	for i := range rows {
		rows[i].Algorithm = "classic"
	}
	var out bytes.Buffer
	err := WriteText(&out, []Snapshot{{Cluster: "c", Time: at, Rows: rows, AccountFairShare: true, DampeningFactor: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// sshare before 25.11 prints 2^(−EffectvUsage/NormShares/damp) for an
	// account: lab 2^(−1/1) = 0.5; root 2^(−1) too.
	for _, want := range []string{`slurm_account_fairshare{cluster="c",account="lab"} 0.5`, `slurm_account_fairshare{cluster="c",account="root"} 0.5`} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("output lacks %s", want)
		}
	}
}

func TestPendingGroups(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { x := at.Add(-d); return &x }
	rows := []record.PriorityRow{
		{At: at, Event: record.EventPending, Partition: "gpu", Account: "lab", Eligible: ago(time.Hour), Submit: ago(2 * time.Hour)},
		{At: at, Event: record.EventPending, Partition: "gpu", Account: "lab", Submit: ago(3 * time.Hour)},
		{At: at, Event: record.EventPending, Partition: "cpu", Account: "lab", Eligible: ago(-time.Hour)}, // eligible later: 0
		{At: at, Event: record.EventPending, Partition: "cpu", Account: "lab"},                            // no time: counted, no wait
		{At: at, Event: record.EventStart, Partition: "gpu", Account: "lab", Submit: ago(9 * time.Hour)},  // not waiting
		{At: at.Add(time.Second), Event: record.EventPending, Partition: "gpu", Account: "lab"},           // another snapshot
	}
	got := pendingGroups(rows, at)
	want := []pendingGroup{
		{partition: "cpu", account: "lab", jobs: 2, waited: 1},
		{partition: "gpu", account: "lab", jobs: 2, waited: 2, maxSec: 10800, sumSec: 3600 + 10800},
	}
	if len(got) != len(want) {
		t.Fatalf("pendingGroups = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("group %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestAppendSeconds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		us   int64
		want string
	}{{1740787200000000, "1740787200"}, {1740787200500000, "1740787200.5"}, {1740787200000001, "1740787200.000001"}, {-500000, "-0.5"}, {0, "0"}} {
		if got := string(appendSeconds(nil, c.us)); got != c.want {
			t.Errorf("appendSeconds(%d) = %s, want %s", c.us, got, c.want)
		}
	}
}

func TestAppendValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    float64
		want string
	}{{math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"}, {0.25, "0.25"}, {3, "3"}, {1e21, "1e+21"}} {
		if got := string(appendValue(nil, c.v)); got != c.want {
			t.Errorf("appendValue(%v) = %s, want %s", c.v, got, c.want)
		}
	}
}

// TestOpenMetricsOrder: two snapshots of two clusters added snapshot by
// snapshot come out family by family, each series' samples together and
// in time order, the same whatever the chunk size.
func TestOpenMetricsOrder(t *testing.T) {
	t.Parallel()
	t1 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	t2 := t1.Add(24*time.Hour + 500*time.Millisecond)
	var outs []string
	for _, chunk := range []int{0, 1, 3} {
		om, err := NewOpenMetrics(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		om.ChunkSamples = chunk
		for _, at := range []time.Time{t1, t2} {
			for _, cl := range []string{"b", "a"} {
				rows := tinyRows(at, "lab", "bob")
				if at.Equal(t2) {
					*rows[2].RawUsage = 350
				}
				if err := om.Add(&Snapshot{Cluster: cl, Time: at, Rows: rows}); err != nil {
					t.Fatal(err)
				}
			}
		}
		var out bytes.Buffer
		if _, err := om.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		om.Close()
		outs = append(outs, out.String())
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Errorf("the output depends on the chunk size:\n%s\n---\n%s", outs[0], outs[1])
	}
	s := outs[0]
	if !strings.HasSuffix(s, "\n# EOF\n") || strings.Count(s, "# EOF") != 1 {
		t.Errorf("output does not end with one # EOF")
	}
	want := `slurm_user_fairshare_raw_usage_cpu_seconds{cluster="a",account="lab",user="alice"} 300 1740787200
slurm_user_fairshare_raw_usage_cpu_seconds{cluster="a",account="lab",user="alice"} 350 1740873600.5
slurm_user_fairshare_raw_usage_cpu_seconds{cluster="a",account="lab",user="bob"} 100 1740787200
slurm_user_fairshare_raw_usage_cpu_seconds{cluster="a",account="lab",user="bob"} 100 1740873600.5
slurm_user_fairshare_raw_usage_cpu_seconds{cluster="b",account="lab",user="alice"} 300 1740787200
`
	if !strings.Contains(s, want) {
		t.Errorf("output lacks the series in order:\n%s", want)
	}
	// Every family's TYPE once, and its samples right after its header.
	var fam string
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(s, "# EOF\n"), "\n") {
		switch {
		case l == "":
		case strings.HasPrefix(l, "# TYPE "):
			fam, _, _ = strings.Cut(strings.TrimPrefix(l, "# TYPE "), " ")
			if seen[fam] {
				t.Errorf("family %s twice", fam)
			}
			seen[fam] = true
		case strings.HasPrefix(l, "# HELP "):
		case !strings.HasPrefix(l, fam+"{"):
			t.Errorf("sample %q outside its family (current %s)", l, fam)
		}
	}
}

func TestOpenMetricsRefusesTimeGoingBack(t *testing.T) {
	t.Parallel()
	om, err := NewOpenMetrics(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer om.Close()
	t1 := time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)
	if err := om.Add(&Snapshot{Cluster: "c", Time: t1, Rows: tinyRows(t1, "lab", "bob")}); err != nil {
		t.Fatal(err)
	}
	t0 := t1.Add(-time.Hour)
	err = om.Add(&Snapshot{Cluster: "c", Time: t0, Rows: tinyRows(t0, "lab", "bob")})
	if err == nil || !strings.Contains(err.Error(), "is not after the series' previous one") {
		t.Errorf("Add of an earlier snapshot: %v", err)
	}
}

// TestOpenMetricsWaitingZero: a partition and account with a job waiting
// at the first snapshot and none at the second gets 0 at the second.
func TestOpenMetricsWaitingZero(t *testing.T) {
	t.Parallel()
	om, err := NewOpenMetrics(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer om.Close()
	t1 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	t2 := t1.Add(24 * time.Hour)
	elig := t1.Add(-90 * time.Second)
	pend := []record.PriorityRow{{At: t1, Event: record.EventPending, Partition: "gpu", Account: "lab", Eligible: &elig}}
	for _, s := range []Snapshot{{Cluster: "c", Time: t1, Rows: tinyRows(t1, "lab", "bob"), Pending: pend}, {Cluster: "c", Time: t2, Rows: tinyRows(t2, "lab", "bob")}} {
		if err := om.Add(&s); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if _, err := om.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"fairledger_pending_jobs{cluster=\"c\",partition=\"gpu\",account=\"lab\"} 1 1740787200\nfairledger_pending_jobs{cluster=\"c\",partition=\"gpu\",account=\"lab\"} 0 1740873600\n",
		"fairledger_pending_wait_max_seconds{cluster=\"c\",partition=\"gpu\",account=\"lab\"} 90 1740787200\nfairledger_pending_wait_max_seconds{cluster=\"c\",partition=\"gpu\",account=\"lab\"} 0 1740873600\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks\n%s", want)
		}
	}
}

// TestDocsListEveryMetric: docs/metrics.md names every family.
func TestDocsListEveryMetric(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		if !strings.Contains(string(doc), "| `"+n+"` |") {
			t.Errorf("docs/metrics.md has no table row for %s", n)
		}
	}
}
