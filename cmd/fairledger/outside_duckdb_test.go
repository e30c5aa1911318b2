package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairledger/fairledger/schemas"
)

// outsideNights is how many nights TestOutsideDuckDB commits: generations
// 1 to outsideNights, one per `fairledger run`.
const outsideNights = 24

// outsideSummary is readers.mjs's last line.
type outsideSummary struct {
	Iterations, Queries, Failed int
	Failures                    []string
	Generations                 []int
	GlobQueries, GlobFailures   int
	GlobFailureSample           string
	// FlockGeneration is the generation pinned by flock(1) at the start,
	// read again at the end, when current was FlockFinalGeneration.
	FlockGeneration, FlockFinalGeneration int
}

// TestOutsideDuckDB: an independent DuckDB (the npm package
// @duckdb/node-api, running testdata/outside-duckdb/readers.mjs) reads a
// history through views.sql, loaded the documented way, while 24 nights of
// `fairledger run` commit: no query fails and every answer is the one of
// the generation views.sql pinned, also when a night commits between two
// queries, and a generation held with flock(1) is whole at the end
// (readers.mjs says what it checks). The history has no priority file, so
// views.sql loads there too.
//
// It needs node and the package: set FAIRLEDGER_NODE_DUCKDB to the npm
// prefix holding it (testdata/outside-duckdb/README.md); without them the
// test skips, or fails when FAIRLEDGER_REQUIRE_NODE_DUCKDB=1 (CI).
func TestOutsideDuckDB(t *testing.T) {
	prefix := os.Getenv("FAIRLEDGER_NODE_DUCKDB")
	node, err := exec.LookPath("node")
	var missing string
	switch {
	case prefix == "":
		missing = "FAIRLEDGER_NODE_DUCKDB is not set"
	case err != nil:
		missing = "no node on PATH"
	default:
		if _, err := os.Stat(filepath.Join(prefix, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
			missing = "no @duckdb/node-api under FAIRLEDGER_NODE_DUCKDB=" + prefix
		}
	}
	if missing != "" {
		msg := missing + ": see testdata/outside-duckdb/README.md to install node's DuckDB"
		if os.Getenv("FAIRLEDGER_REQUIRE_NODE_DUCKDB") == "1" {
			t.Fatal(msg + " (FAIRLEDGER_REQUIRE_NODE_DUCKDB=1)")
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	site, hist := filepath.Join(dir, "site"), filepath.Join(dir, "hist")
	fl := func(args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"fairledger"}, args...), &stdout, &stderr); code != 0 {
			t.Fatalf("fairledger %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
	}
	fl("gen", "--dir", site, "--jobs", "400", "--labs", "4")
	night := func(k int) {
		t.Helper()
		fl("run", "--slurm-conf", filepath.Join(site, "slurm.conf"), "--assoc", filepath.Join(site, "assoc.psv"),
			"--qos", filepath.Join(site, "qos.psv"), "--sacct", filepath.Join(site, "sacct.psv"), "--history", hist,
			"--to", time.Date(2025, 1, 1+k, 0, 0, 0, 0, time.UTC).Format("2006-01-02"), "--tz", "UTC")
	}
	night(1)

	prio, err := schemas.TableByName(schemas.TablePriority)
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../testdata/outside-duckdb/readers.mjs")
	if err != nil {
		t.Fatal(err)
	}
	views, err := filepath.Abs("../../schemas/views.sql")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script, hist, views, strconv.Itoa(len(prio.Columns)+len(prio.Partition)))
	cmd.Env = append(os.Environ(), "FAIRLEDGER_NODE_DUCKDB="+prefix)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		iters   int
		summary string
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			mu.Lock()
			if line := sc.Text(); strings.HasPrefix(line, "iter ") {
				iters++
			} else if s, ok := strings.CutPrefix(line, "summary "); ok {
				summary = s
			}
			mu.Unlock()
		}
	}()
	loops := func() int {
		mu.Lock()
		defer mu.Unlock()
		return iters
	}
	// After each night, wait (a little) for the reader to load views.sql
	// and query twice, so that it sees most generations and its reads
	// overlap the commits.
	for k := 2; k <= outsideNights; k++ {
		night(k)
		for n, end := loops(), time.Now().Add(20*time.Second); loops() < n+2 && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	stdin.Close()
	<-done
	if err := cmd.Wait(); err != nil {
		t.Fatalf("readers.mjs: %v\n%s", err, stderr.String())
	}
	var s outsideSummary
	if err := json.Unmarshal([]byte(summary), &s); err != nil {
		t.Fatalf("readers.mjs summary %q: %v\n%s", summary, err, stderr.String())
	}
	t.Logf("readers.mjs: %d loads of views.sql, %d queries, %d failed, generations seen %v; generation %d under flock read at generation %d; "+
		"a glob under current/ (not asserted): %d of %d queries failed (%s)",
		s.Iterations, s.Queries, s.Failed, s.Generations, s.FlockGeneration, s.FlockFinalGeneration, s.GlobFailures, s.GlobQueries, s.GlobFailureSample)
	if s.Failed != 0 {
		t.Errorf("%d of %d queries through views.sql failed or saw no single generation, the first:\n%s",
			s.Failed, s.Queries, strings.Join(s.Failures, "\n"))
	}
	if s.FlockGeneration < 1 || s.FlockFinalGeneration != outsideNights {
		t.Errorf("generation %d pinned with flock, read again at generation %d: want one read at the end, at generation %d",
			s.FlockGeneration, s.FlockFinalGeneration, outsideNights)
	}
	// The reader saw the history grow: most of the generations, up to the last.
	if len(s.Generations) < outsideNights/2 || s.Generations[len(s.Generations)-1] != outsideNights {
		t.Errorf("generations seen %v: want at least %d of 1..%d, the last %d", s.Generations, outsideNights/2, outsideNights, outsideNights)
	}
}
