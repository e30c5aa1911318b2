package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// namesSite writes a one-partition cluster whose labs have the names of
// issue 23 that lost reports (each lab one user, one job) and returns the
// paths of its slurm.conf, assoc.psv and sacct.psv.
func namesSite(t *testing.T, dir string, labs []string) (conf, assoc, sacct string) {
	t.Helper()
	conf, assoc, sacct = filepath.Join(dir, "slurm.conf"), filepath.Join(dir, "assoc.psv"), filepath.Join(dir, "sacct.psv")
	files := map[string]*strings.Builder{conf: {}, assoc: {}, sacct: {}}
	files[conf].WriteString("ClusterName=c1\nPriorityType=priority/multifactor\nPriorityDecayHalfLife=0\n" +
		"PriorityUsageResetPeriod=NONE\nAccountingStorageEnforce=associations,limits\nPartitionName=normal Nodes=ALL Default=YES\n")
	files[assoc].WriteString("Account|Fairshare|User|Par Name|Partition|GrpJobs|\nroot|1|||||\n")
	files[sacct].WriteString("JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Start|End|Elapsed|State|AllocCPUS|AllocTRES\n")
	for i, lab := range labs {
		fmt.Fprintf(files[assoc], "%s|1||root|||\n%s|1|u%d||||\n", lab, lab, i)
		fmt.Fprintf(files[sacct], "%d|%d|c1|normal|normal|%s|u%d|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n",
			1000+i, 1000+i, lab, i)
	}
	for p, b := range files {
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return conf, assoc, sacct
}

// TestReportAllAccountsNames: issue 23's --all-accounts losses. Before,
// "a/b" and "a_b" both wrote a_b.html, "café" and "cafè" both caf_.html,
// a 245-byte account aborted the batch with "file name too long", and
// ".", ".." and ".hidden" gave hidden files. Now every lab has its own
// visible file of at most 105 bytes, and index.html links each by its real
// name; for md as for html.
func TestReportAllAccountsNames(t *testing.T) {
	long := strings.Repeat("l", 245)
	labs := []string{"a/b", "a_b", "caf\u00e9", "caf\u00e8", long, ".", "..", ".hidden", "index", "r&d", "plain"}
	// Expected files: the 8 hex digits start `printf %s NAME | sha256sum`.
	want := map[string]string{
		"a/b": "a_b-c14cddc0", "a_b": "a_b", "caf\u00e9": "caf_-850f7dc4", "caf\u00e8": "caf_-08dcdafd",
		long: strings.Repeat("l", 91) + "-e5569f5c", ".": "_-cdb4ee2a", "..": "__-5ec1f7e7",
		".hidden": "_hidden-16924190", "index": "index-1bc04b52", "r&d": "r_d-dacc7c16", "plain": "plain",
	}
	dir := t.TempDir()
	conf, assoc, sacct := namesSite(t, dir, labs)
	hist := filepath.Join(dir, "hist")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"fairledger", "run", "--slurm-conf", conf, "--assoc", assoc, "--sacct", sacct,
		"--history", hist, "--to", "2025-01-03", "--tz", "UTC"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr.String())
	}
	for _, format := range []string{"html", "md"} {
		out := filepath.Join(dir, "out-"+format)
		stderr.Reset()
		if code := run([]string{"fairledger", "--log-level", "debug", "report", "--history", hist, "--all-accounts",
			"--out-dir", out, "--format", format}, &stdout, &stderr); code != 0 {
			t.Fatalf("report --format %s: exit %d\n%s", format, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), fmt.Sprintf(`"reports":%d`, len(labs))) {
			t.Errorf("%s: the log does not say %d reports:\n%s", format, len(labs), stderr.String())
		}
		es, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		var wantNames []string
		for _, f := range want {
			wantNames = append(wantNames, f+"."+format)
		}
		wantNames = append(wantNames, "index.html")
		slices.Sort(wantNames)
		if !slices.Equal(names, wantNames) {
			t.Errorf("%s: files %q\nwant %q", format, names, wantNames)
		}
		for _, n := range names {
			if strings.HasPrefix(n, ".") || len(n) > 105 {
				t.Errorf("%s: file %q hidden or longer than 105 bytes", format, n)
			}
		}
		index, err := os.ReadFile(filepath.Join(out, "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		for _, lab := range labs {
			real := strings.ReplaceAll(lab, "&", "&amp;")
			link := fmt.Sprintf(`<li><a href="%s.%s">%s</a></li>`, want[lab], format, real)
			if !bytes.Contains(index, []byte(link)) {
				t.Errorf("%s: index.html lacks %s", format, link)
			}
			if !strings.Contains(stderr.String(), fmt.Sprintf(`"file":"%s.%s"`, want[lab], format)) {
				t.Errorf("%s: no debug line maps %q to its file", format, lab)
			}
		}
		// Each file is its own lab's report.
		for _, lab := range []string{"a/b", "caf\u00e8"} {
			b, err := os.ReadFile(filepath.Join(out, want[lab]+"."+format))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte("Fair-share report: "+lab)) {
				t.Errorf("%s: %s.%s is not %q's report", format, want[lab], format, lab)
			}
		}
	}
}

// TestReportOutFIFOAndSymlink: report --out never replaces what it is
// given. Before, --out /dev/null (as root) replaced the device node with a
// regular file; a FIFO stands in for the device here: the reader gets the
// report and the FIFO stays a FIFO. A symlink stays the same link and the
// file it names gets the report. A directory is refused, exit 1.
func TestReportOutFIFOAndSymlink(t *testing.T) {
	dir := t.TempDir()
	conf, assoc, sacct := namesSite(t, dir, []string{"labA"})
	hist := filepath.Join(dir, "hist")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"fairledger", "run", "--slurm-conf", conf, "--assoc", assoc, "--sacct", sacct,
		"--history", hist, "--to", "2025-01-03", "--tz", "UTC"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr.String())
	}
	report := func(out string) (int, string) {
		stdout.Reset()
		stderr.Reset()
		code := run([]string{"fairledger", "--log-format", "console", "report", "--history", hist, "--account", "labA",
			"--format", "md", "--out", out}, &stdout, &stderr)
		return code, stderr.String()
	}

	fifo := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		b, err := os.ReadFile(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(b)
	}()
	if code, errs := report(fifo); code != 0 {
		t.Fatalf("report --out FIFO: exit %d\n%s", code, errs)
	}
	// Checked before waiting for the reader, which waits for ever on a
	// FIFO that was replaced.
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
		t.Fatalf("after report --out, %s is %v (%v): want still a FIFO", fifo, fi.Mode(), err)
	}
	if s := <-got; !strings.HasPrefix(s, "# Fair-share report: labA\n") {
		t.Errorf("the FIFO's reader got %.60q, want the report", s)
	}

	target := filepath.Join(dir, "reports", "labA.md")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("last month's report"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "latest.md")
	if err := os.Symlink("reports/labA.md", link); err != nil {
		t.Fatal(err)
	}
	if code, errs := report(link); code != 0 {
		t.Fatalf("report --out symlink: exit %d\n%s", code, errs)
	}
	if l, err := os.Readlink(link); err != nil || l != "reports/labA.md" {
		t.Errorf("after report --out, %s: Readlink = %q, %v; want the same link", link, l, err)
	}
	if b, _ := os.ReadFile(target); !strings.HasPrefix(string(b), "# Fair-share report: labA\n") {
		t.Errorf("the link's target holds %.60q, want the report", b)
	}

	code, errs := report(filepath.Join(dir, "reports"))
	if want := "fairledger: report --out: " + filepath.Join(dir, "reports") + " is a directory: "; code != 1 || !strings.HasPrefix(errs, want) {
		t.Errorf("report --out DIR: exit %d, %q; want 1 and %q", code, errs, want)
	}
}

// TestRejectsThroughSymlink: check --rejects to a symlink writes the
// rejected rows to the file it names (replacing what it held) and leaves
// the link a link.
func TestRejectsThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	conf, assoc, sacct := namesSite(t, dir, []string{"labA"})
	f, err := os.OpenFile(sacct, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "2|2|c1|normal|normal|labA|u0|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|1-25:00:00|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1")
	f.Close()
	target := filepath.Join(dir, "rejects.tsv")
	if err := os.WriteFile(target, []byte("yesterday's rejects\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "rejects-latest.tsv")
	if err := os.Symlink("rejects.tsv", link); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"fairledger", "check", "--slurm-conf", conf, "--assoc", assoc, "--sacct", sacct,
		"--rejects", link}, &stdout, &stderr); code != exitRejected {
		t.Fatalf("check: exit %d, want %d\n%s", code, exitRejected, stderr.String())
	}
	if l, err := os.Readlink(link); err != nil || l != "rejects.tsv" {
		t.Errorf("Readlink(%s) = %q, %v; want the same link", link, l, err)
	}
	b, err := os.ReadFile(target)
	if want := sacct + "\t3\tElapsed\t\"1-25:00:00\"\thour out of range\t"; err != nil || !strings.HasPrefix(string(b), want) {
		t.Errorf("rejects file: %q, %v; want it to start %q", b, err, want)
	}
}
