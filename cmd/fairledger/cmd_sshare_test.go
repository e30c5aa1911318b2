package main

import (
	"bytes"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Paris without depending on the host's zoneinfo

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/record/recordtest"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/internal/golden"
	"github.com/fairledger/fairledger/schemas"
)

// assoc is one association of a tree of Slurm's test24.1 and test24.4
// (testsuite/expect): golden.Spec.
type assoc = golden.Spec

// tree24_4(t) is the Fair Tree tree of Slurm's test24.4 with its usage:
// fairshare/testdata/test24_4.txt.
func tree24_4(t *testing.T) []assoc { return golden.Load(t, test24_4File).Specs() }

// tree24_1(t) is the classic tree of Slurm's test24.1 with its usage:
// fairshare/testdata/test24_1.txt.
func tree24_1(t *testing.T) []assoc { return golden.Load(t, test24_1File).Specs() }

// The golden cases of Slurm's test trees, as internal/golden.Load names them.
const (
	test24_4File = "fairshare/testdata/test24_4.txt"
	test24_1File = "fairshare/testdata/test24_1.txt"
)

// want24_1P(t) is `sshare -a -P` of test24.1: the full output table without
// NormUsage, indented by depth. It is the case's `sshare -a -l -p` lines
// without the -l columns (NormUsage, GrpTRESMins, TRESRunMins; classic has
// no LevelFS) and without the trailing '|' of -p.
func want24_1P(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, l := range golden.Load(t, test24_1File).Lines(t, "sshare -a -l -p") {
		f := strings.Split(l, "|")
		if len(f) != 11 {
			t.Fatalf("test24.1 line %q: %d fields, want the 10 columns of -l and the trailing '|'", l, len(f))
		}
		b.WriteString(strings.Join(append(f[:5:5], f[6], f[7]), "|") + "\n")
	}
	return b.String()
}

// snapshotOf computes a tree's fair share with algo and returns its rows.
func snapshotOf(t *testing.T, specs []assoc, algo fairshare.Algorithm, snap time.Time) []record.FairshareRow {
	t.Helper()
	tree, usage := recordtest.Tree(t, specs)
	var r fairshare.Result
	if algo == fairshare.FairTreeAlgo {
		fairshare.FairTree(tree, usage, &r)
	} else {
		fairshare.Classic(tree, usage, 1, &r)
	}
	return record.FairshareRows(snap, tree, &r)
}

// sshareHistory writes a history with two snapshots of cluster demo in two
// UTC months: the test24.1 classic tree at 2025-02-01T00:00+01:00 (January
// 31st 23:00 UTC) and the test24.4 Fair Tree tree at 2025-03-01T00:00+01:00
// (February 28th 23:00 UTC). It returns the directory.
func sshareHistory(t *testing.T, clusters ...string) string {
	t.Helper()
	dir := t.TempDir()
	h, err := history.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s1 := time.Date(2025, 1, 31, 23, 0, 0, 0, time.UTC)
	s2 := time.Date(2025, 2, 28, 23, 0, 0, 0, time.UTC)
	for _, c := range clusters {
		if err := h.WritePartition(schemas.TableFairshare, c, s1, snapshotOf(t, tree24_1(t), fairshare.ClassicAlgo, s1)); err != nil {
			t.Fatal(err)
		}
		if err := h.WritePartition(schemas.TableFairshare, c, s2, snapshotOf(t, tree24_4(t), fairshare.FairTreeAlgo, s2)); err != nil {
			t.Fatal(err)
		}
		// The test24 vectors come from Slurm's test programs, which set up only
		// the cpu TRES: the runs that wrote the snapshots record just cpu, so
		// TRESRunMins prints cpu=0 as in the spec's lines.
		cfg, err := record.MarshalConfig(record.RunConfig{Cluster: c, TRES: []string{"cpu"}})
		if err != nil {
			t.Fatal(err)
		}
		for i, started := range []time.Time{s1.Add(time.Hour), s2.Add(time.Hour)} {
			run := record.RunRow{RunID: fmt.Sprintf("%s-%d", c, i), Started: started, Finished: started, Config: cfg}
			if _, err := h.AppendRun(c, run); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"fairledger", "--log-format", "console"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// want24_4lP is `sshare -a -l -P` of test24.4: the case's `sshare -a -l -p`
// lines (the spec's 35 lines with sshare's indentation, and the header)
// without -p's trailing '|'.
func want24_4lP(t *testing.T) string {
	t.Helper()
	var ft strings.Builder
	for _, l := range golden.Load(t, test24_4File).Lines(t, "sshare -a -l -p") {
		ft.WriteString(strings.TrimSuffix(l, "|") + "\n")
	}
	return ft.String()
}

// TestSshareCommand runs `fairledger sshare` on a history of two snapshots
// and checks the exact -P output of test24.4 and test24.1 and which snapshot --at
// picks.
func TestSshareCommand(t *testing.T) {
	t.Setenv("USER", "uD1")
	t.Setenv("TZ", "Europe/Paris")
	dir := sshareHistory(t, "demo")

	ft := want24_4lP(t)

	for _, c := range []struct {
		name     string
		args     []string
		want     string
		snapshot string // in the stderr report
	}{
		{"latest", []string{"-a", "-l", "-P"}, ft, "snapshot 2025-03-01T00:00:00+01:00"},
		// Short options combine, as with sshare.
		{"at the snapshot, combined flags", []string{"--at", "2025-03-01", "-alP"}, ft, "snapshot 2025-03-01T00:00:00+01:00"},
		// Paris midnight of February 28th is before the March snapshot
		// (February 28th 23:00 UTC): the February partition has nothing
		// at or before it, so the January one is read.
		{"day before", []string{"--at", "2025-02-28", "-a", "-P"}, want24_1P(t), "snapshot 2025-02-01T00:00:00+01:00"},
		{"RFC 3339", []string{"--at", "2025-02-28T22:59:59Z", "-a", "-P"}, want24_1P(t), "snapshot 2025-02-01T00:00:00+01:00"},
		{"after the last", []string{"--at", "2026-01-01T12:00", "-a", "-l", "-P"}, ft, "snapshot 2025-03-01T00:00:00+01:00"},
	} {
		code, out, errs := runCLI(t, append([]string{"sshare", "--history", dir}, c.args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d, stderr:\n%s", c.name, code, errs)
		}
		if out != c.want {
			t.Errorf("%s: stdout =\n%s\nwant\n%s", c.name, out, c.want)
		}
		if !strings.Contains(errs, c.snapshot) || !strings.Contains(errs, "cluster demo") {
			t.Errorf("%s: stderr = %q, want it to name %q and cluster demo", c.name, errs, c.snapshot)
		}
	}

	// Without -a: all account rows and $USER's (uD1) user rows; -n.
	code, out, errs := runCLI(t, "sshare", "--history", dir, "-P", "-n")
	if code != 0 {
		t.Fatalf("without -a: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 15 || lines[9] != "  aD|uD1|parent|0.240385|20|0.181818|0.476190" {
		t.Errorf("without -a: %d lines, line 10 %q; want 15 (14 accounts and uD1), \"  aD|uD1|parent|0.240385|20|0.181818|0.476190\"", len(lines), lines[min(9, len(lines)-1)])
	}
	// --users and --accounts (sshare -u, -A): aD's own rows only.
	code, out, _ = runCLI(t, "sshare", "--history", dir, "-P", "-n", "-A", "aD", "-u", "uD2,uD3")
	if want := "aD||50|0.240385|110|0.458333|\n" +
		" aD|uD2|40|0.235294|20|0.181818|0.238095\n" +
		" aD|uD3|50|0.294118|25|0.227273|0.333333\n"; code != 0 || out != want {
		t.Errorf("-A aD -u uD2,uD3: exit %d, stdout =\n%s\nwant\n%s", code, out, want)
	}
	// -o (sshare --format): the test24.4 cells of these columns, in this
	// order, with the cluster's name.
	code, out, _ = runCLI(t, "sshare", "--history", dir, "-P", "-A", "aD", "-u", "uD2,uD3", "-o", "Lev,account,user,cl")
	if want := "LevelFS|Account|User|Cluster\n" +
		"0.524476|aD||demo\n" +
		"1.294118| aD|uD2|demo\n" +
		"1.294118| aD|uD3|demo\n"; code != 0 || out != want {
		t.Errorf("-o Lev,account,user,cl: exit %d, stdout =\n%s\nwant\n%s", code, out, want)
	}
	// The default layout is fixed-width: test24.4's root line, columns of
	// 20 (left), 10, 10, 11, 11, 13 and 10, each followed by a space.
	code, out, _ = runCLI(t, "sshare", "--history", dir, "-a")
	wantRoot := "root                                          0.000000         240      1.000000            \n"
	if _, rest, _ := strings.Cut(out, " \n"); code != 0 || !strings.HasPrefix(rest, "--------------------") || !strings.Contains(out, "\n"+wantRoot) {
		t.Errorf("fixed width: exit %d, stdout =\n%s\nwant the dashes line and %q", code, out, wantRoot)
	}
}

// TestSshareCommandErrors checks the exit codes: 2 for usage errors, 1 for
// runtime ones, with a message naming the problem (and 0 with a note for
// an --at before the first snapshot).
func TestSshareCommandErrors(t *testing.T) {
	t.Setenv("TZ", "UTC")
	one := sshareHistory(t, "demo")
	two := sshareHistory(t, "alpha", "beta")
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"before the first snapshot: the tree with zero usage, and a note", []string{"--history", one, "--at", "2025-01-31T22:59:59Z"}, 0,
			"2025-01-31T22:59:59Z is before the history of cluster demo, whose first snapshot is at 2025-01-31T23:00:00Z"},
		{"two clusters", []string{"--history", two}, 2, "holds clusters alpha, beta: choose one with --cluster"},
		{"unknown cluster", []string{"--history", two, "--cluster", "gamma"}, 1, `no fair-share snapshots of cluster "gamma" (clusters: alpha, beta)`},
		{"bad --at", []string{"--history", one, "--at", "March"}, 2, `--at "March": want YYYY-MM-DD`},
		{"-p and -P", []string{"--history", one, "-p", "-P"}, 2, "-p and -P exclude each other"},
		{"empty history", []string{"--history", t.TempDir()}, 1, "has no fair-share snapshots yet"},
	} {
		code, _, errs := runCLI(t, append([]string{"sshare"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", c.name, code, errs, c.code, c.msg)
		}
	}
	// --cluster picks one of two.
	if code, out, errs := runCLI(t, "sshare", "--history", two, "-M", "beta", "-a", "-P", "--at", "2025-02-15"); code != 0 || out != want24_1P(t) {
		t.Errorf("--cluster beta: exit %d, stdout =\n%s\nstderr %s", code, out, errs)
	}
}

// TestCallerName checks whose rows sshare shows without -a or -u: $USER,
// else the process's user (src/sshare/sshare.c: the caller's own
// associations), else an error so that no user rows are shown.
func TestCallerName(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "USER" {
				return v
			}
			return ""
		}
	}
	alice := func() (*user.User, error) { return &user.User{Uid: "1000", Username: "alice"}, nil }
	noName := func() (*user.User, error) { return &user.User{Uid: "1001"}, nil }
	fail := func() (*user.User, error) { return nil, user.UnknownUserIdError(1002) }
	for _, c := range []struct {
		name    string
		env     string
		current func() (*user.User, error)
		want    string
		err     string
	}{
		{"$USER wins", "bob", alice, "bob", ""},
		{"no $USER: the uid's name", "", alice, "alice", ""},
		{"no $USER, no lookup", "", fail, "", "$USER is unset and the current user is unknown: user: unknown userid 1002"},
		{"no $USER, no name", "", noName, "", "$USER is unset and uid 1001 has no user name"},
	} {
		got, err := callerName(env(c.env), c.current)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != c.want || gotErr != c.err {
			t.Errorf("%s: callerName = %q, %q; want %q, %q", c.name, got, gotErr, c.want, c.err)
		}
	}
}

// TestSshareWithoutUSER runs sshare with $USER unset: it must not list
// every user as -a does. The test's own user (from os/user) has no
// association in test24.4's tree, so only its 14 account rows are left.
func TestSshareWithoutUSER(t *testing.T) {
	t.Setenv("USER", "")
	t.Setenv("TZ", "UTC")
	if u, err := user.Current(); err != nil || u.Username == "" {
		t.Skipf("no current user name (%v): the fallback cannot be run here", err)
	} else if strings.HasPrefix(u.Username, "u") {
		t.Skipf("current user %q might be a user of the test tree", u.Username)
	}
	dir := sshareHistory(t, "demo")
	code, out, errs := runCLI(t, "sshare", "--history", dir, "-P", "-n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{"root", " aA", "  aAA", "  aAB", " aB", "  aBA", "  aBB", " aC", " aD", "  aDA", " aE", " aF", " aG", "  aGA"}
	var got []string
	for _, l := range lines {
		acct, rest, _ := strings.Cut(l, "|")
		if user, _, _ := strings.Cut(rest, "|"); user != "" {
			t.Errorf("user row %q shown; want account rows only", l)
		}
		got = append(got, acct)
	}
	if !slices.Equal(got, want) {
		t.Errorf("accounts = %q, want %q", got, want)
	}
}

// TestSshareSegments: a month of snapshots stored as several segment files
// (a run writes the days it recomputes as a new segment) reads as their
// union: the test24.4 snapshot split over two files, and a later snapshot of
// the classic tree in a third, print as one; --at picks within the union.
func TestSshareSegments(t *testing.T) {
	t.Setenv("TZ", "UTC")
	dir := t.TempDir()
	h, err := history.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s1 := time.Date(2025, 2, 10, 0, 0, 0, 0, time.UTC)
	s2 := time.Date(2025, 2, 20, 0, 0, 0, 0, time.UTC)
	ft := snapshotOf(t, tree24_4(t), fairshare.FairTreeAlgo, s1)
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	// Every other row in each half: neither file is in the table's order
	// alone.
	var even, odd []record.FairshareRow
	for i, r := range ft {
		if i%2 == 0 {
			even = append(even, r)
		} else {
			odd = append(odd, r)
		}
	}
	for _, w := range []struct {
		rows []record.FairshareRow
		hot  bool
	}{{even, false}, {odd, false}, {snapshotOf(t, tree24_1(t), fairshare.ClassicAlgo, s2), true}} {
		if _, err := tx.Write(schemas.TableFairshare, "demo", s1, w.rows, w.hot); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := record.MarshalConfig(record.RunConfig{Cluster: "demo", TRES: []string{"cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	for i, started := range []time.Time{s1.Add(time.Hour), s2.Add(time.Hour)} {
		if _, err := tx.AppendRun("demo", record.RunRow{RunID: fmt.Sprintf("r%d", i), Started: started, Finished: started, Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if ps, err := h.Partitions(schemas.TableFairshare); err != nil || len(ps) != 3 {
		t.Fatalf("fairshare files %+v, %v; want 3 segments of one month", ps, err)
	}
	if code, out, errs := runCLI(t, "sshare", "--history", dir, "-a", "-l", "-P", "--at", "2025-02-15"); code != 0 || out != want24_4lP(t) {
		t.Errorf("--at 2025-02-15: exit %d, stdout =\n%s\nstderr %s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "sshare", "--history", dir, "-a", "-P"); code != 0 || out != want24_1P(t) || !strings.Contains(errs, "snapshot 2025-02-20T00:00:00Z") {
		t.Errorf("latest: exit %d, stdout =\n%s\nstderr %s", code, out, errs)
	}
}

// TestDamagedHistory: a history file that does not match its manifest
// makes sshare, sql and report exit 1 naming the file, where it is and how
// to check the history, instead of a panic or a DuckDB error. A file cut
// short fails all three (its size); one with a flipped byte and the right
// size fails sshare, which checks the SHA-256 of the files it reads (a
// flipped byte can decode into wrong numbers, or make the Parquet reader
// panic).
func TestDamagedHistory(t *testing.T) {
	t.Setenv("TZ", "UTC")
	for _, c := range []struct {
		name     string
		damage   func(file string, size int64) error
		problem  func(size int64) string
		commands []string
	}{
		{"cut short", func(f string, size int64) error { return os.Truncate(f, size-10) },
			func(size int64) string { return fmt.Sprintf("%d bytes, the manifest says %d", size-10, size) },
			[]string{"sshare", "sql", "report"}},
		{"flipped byte", func(f string, size int64) error {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			b[size/2] ^= 0x10
			return os.WriteFile(f, b, 0o644)
		}, func(int64) string { return "SHA-256 differs from the manifest's" }, []string{"sshare"}},
	} {
		dir := sshareHistory(t, "demo")
		h, err := history.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		v, err := h.View()
		if err != nil {
			t.Fatal(err)
		}
		// The latest snapshot's month: the one sshare reads.
		var feb history.Partition
		for _, p := range v.Files(schemas.TableFairshare, "demo") {
			if p.Month == "2025-02" {
				feb = p
			}
		}
		file, gen := v.Path(feb), v.Dir
		v.Close()
		if feb.Path == "" {
			t.Fatal("no fairshare file of 2025-02")
		}
		if err := c.damage(file, feb.Bytes); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("fairledger: history file %s is damaged: %s (in %s); run fairledger verify --history %s to check every file\n",
			feb.Path, c.problem(feb.Bytes), gen, dir)
		for _, cmd := range c.commands {
			args := map[string][]string{
				"sshare": {"sshare", "--history", dir, "-a"},
				"sql":    {"sql", "--history", dir, "SELECT count(*) FROM runs"},
				"report": {"report", "--history", dir, "--account", "aA", "--format", "md"},
			}[cmd]
			code, out, errs := runCLI(t, args...)
			if code != 1 || out != "" || errs != want {
				t.Errorf("%s: %s: exit %d, stdout %q, stderr\n%q\nwant exit 1 and\n%q", c.name, cmd, code, out, errs, want)
			}
		}
	}
}

// TestSshareAccountFairShareBefore2511: sshare before Slurm 25.11 printed
// the classic factor on account rows and root too; from 25.11 they are
// blank (docs/slurm-versions.md §1). test24_1 (classic) computed as a
// history of each version: the account lines must be those of Slurm's
// testsuite/expect/test24.1 before 25.11 (removed by SchedMD commit
// ce4741b891), root 2^(−1/damp) = 0.500000 (as PR #114's classic `sshare
// -a` printed it); with the default version they are blank.
func TestSshareAccountFairShareBefore2511(t *testing.T) {
	t.Setenv("USER", "User1")
	c := golden.Load(t, test24_1File)
	src := t.TempDir() + string(os.PathSeparator)
	for name, body := range map[string]string{
		"slurm.conf": c.Text(t, "slurm.conf"),
		"assoc.psv":  c.AssocPSV(t),
		"sacct.psv":  c.SacctPSV(t),
	} {
		if err := os.WriteFile(src+name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sshareOf := func(version string) string {
		t.Helper()
		hist := t.TempDir()
		args := []string{"run", "--history", hist, "--slurm-conf", src + "slurm.conf", "--assoc", src + "assoc.psv",
			"--sacct", src + "sacct.psv", "--to", "2025-01-01T01:00:00Z", "--progress", "never"}
		if version != "" {
			args = append(args, "--slurm-version", version)
		}
		if code, _, errs := runCLI(t, args...); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, errs)
		}
		code, out, errs := runCLI(t, "sshare", "--history", hist, "-a", "-l", "-P")
		if code != 0 {
			t.Fatalf("sshare: exit %d\n%s", code, errs)
		}
		return out
	}
	lines := func(out string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			l = strings.TrimLeft(l, " ")
			if name, _, ok := strings.Cut(l, "|"); ok && strings.HasPrefix(l, name+"||") {
				m[name] = l
			}
		}
		return m
	}
	old := lines(sshareOf("22.05"))
	for _, want := range c.Lines(t, "account rows before 25.11") {
		want = strings.TrimSuffix(want, "|") // the line goes on with the -l columns
		name, _, _ := strings.Cut(want, "|")
		if !strings.HasPrefix(old[name], want) {
			t.Errorf("22.05: %s line %q, want it to start %q", name, old[name], want)
		}
	}
	if f := strings.Split(old["root"], "|"); len(f) < 8 || f[7] != "0.500000" {
		t.Errorf("22.05: root line %q, want FairShare 0.500000", old["root"])
	}
	for name, l := range lines(sshareOf("")) {
		if f := strings.Split(l, "|"); len(f) < 8 || f[7] != "" {
			t.Errorf("26.05: %s line %q, want a blank FairShare", name, l)
		}
	}
}

// TestSshareBeforeHistory: --at before the cluster's first snapshot (here
// test24.1's classic tree, the snapshot of January 31) prints that
// snapshot's tree with zero usage, exit 0, with a note on stderr. By hand,
// classic with every usage 0: NormUsage 0; EffectvUsage of root's children
// UN = 0, below them UN + (UE(parent) − UN)·shares/level_shares = 0; FairShare
// 2^(−(0/S)) = 1, 0 where S = 0 (User6); NormShares as the tree gives them;
// TRESRunMins zeros (the run's TRES, cpu).
func TestSshareBeforeHistory(t *testing.T) {
	t.Setenv("TZ", "UTC")
	dir := sshareHistory(t, "demo")
	code, out, errs := runCLI(t, "sshare", "--history", dir, "--at", "2025-01-01", "-a", "-l", "-P")
	want := "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|GrpTRESMins|TRESRunMins\n" +
		"root|||1.000000|0||1.000000|||cpu=0\n" +
		" AccountA||40|0.400000|0|0.000000|0.000000|||cpu=0\n" +
		"  AccountB||30|0.300000|0|0.000000|0.000000|||cpu=0\n" +
		"   AccountB|User1|1|0.300000|0|0.000000|0.000000|1.000000||cpu=0\n" +
		"  AccountC||10|0.100000|0|0.000000|0.000000|||cpu=0\n" +
		"   AccountC|User2|1|0.050000|0|0.000000|0.000000|1.000000||cpu=0\n" +
		"   AccountC|User3|1|0.050000|0|0.000000|0.000000|1.000000||cpu=0\n" +
		" AccountD||60|0.600000|0|0.000000|0.000000|||cpu=0\n" +
		"  AccountE||25|0.250000|0|0.000000|0.000000|||cpu=0\n" +
		"   AccountE|User4|1|0.250000|0|0.000000|0.000000|1.000000||cpu=0\n" +
		"  AccountF||35|0.350000|0|0.000000|0.000000|||cpu=0\n" +
		"   AccountF|User5|1|0.350000|0|0.000000|0.000000|1.000000||cpu=0\n" +
		" AccountG||0|0.000000|0|0.000000|0.000000|||cpu=0\n" +
		"  AccountG|User6|0|0.000000|0|0.000000|0.000000|0.000000||cpu=0\n"
	if code != 0 || out != want {
		t.Errorf("exit %d, stdout =\n%s\nwant\n%s\nstderr %s", code, out, want, errs)
	}
	if !strings.Contains(errs, "2025-01-01T00:00:00Z is before the history of cluster demo, whose first snapshot is at 2025-01-31T23:00:00Z") {
		t.Errorf("stderr %q: no note that the history starts later", errs)
	}
	// At the first snapshot itself, its usage.
	if code, out, _ := runCLI(t, "sshare", "--history", dir, "--at", "2025-01-31T23:00:00Z", "-a", "-P"); code != 0 || out != want24_1P(t) {
		t.Errorf("at the first snapshot: exit %d, stdout =\n%s", code, out)
	}
}
