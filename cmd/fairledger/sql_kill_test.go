package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/query"
	"github.com/fairledger/fairledger/internal/deadpid"
)

// spillingQuery sorts about 6 GB of rows: under a 64 MiB memory limit it
// spills for minutes, long past the tests' signal.
const spillingQuery = "SELECT count(*) FROM (SELECT i, md5(i::VARCHAR) AS h FROM range(100000000) t(i) ORDER BY h)"

// startSpilling starts fairledger sql with spillingQuery in a process of
// its own, TMPDIR tmp, and waits for its spill files: it returns the
// process and its session directory.
func startSpilling(t *testing.T, tmp string) (*exec.Cmd, *bytes.Buffer, string) {
	t.Helper()
	hist := filepath.Join(t.TempDir(), "hist")
	if err := os.Mkdir(hist, 0o755); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("fairledger", "--log-format", "console", "sql", "--history", hist, "--memory-limit", "64", spillingQuery)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	session := filepath.Join(tmp, deadpid.Name(query.SessionPrefix, cmd.Process.Pid))
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		spill, _ := filepath.Glob(session + "*/spill/*")
		if len(spill) > 0 {
			return cmd, &stderr, filepath.Dir(filepath.Dir(spill[0]))
		}
	}
	t.Fatalf("no spill files under %s* after 2 minutes; stderr:\n%s", session, stderr.String())
	return nil, nil, ""
}

// TestSQLKilledLeavesNothing: sql killed by SIGKILL while it spills leaves
// its session directory, spill files and all, and the next sql removes it.
func TestSQLKilledLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	cmd, _, session := startSpilling(t, tmp)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if _, err := os.Stat(session); err != nil {
		t.Fatalf("SIGKILL: %s is gone already (%v); the test shows nothing", session, err)
	}
	hist := t.TempDir()
	next := exec.Command("fairledger", "sql", "--history", hist, "SELECT 1")
	next.Env = append(os.Environ(), "TMPDIR="+tmp)
	if out, err := next.CombinedOutput(); err != nil {
		t.Fatalf("next sql: %v\n%s", err, out)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("after the next sql, %s holds %v, want nothing", tmp, left)
	}
}

// TestSQLTerminated: SIGTERM stops sql as SIGINT does: the query is
// interrupted, the session directory removed, and sql exits 143 saying so.
func TestSQLTerminated(t *testing.T) {
	tmp := t.TempDir()
	cmd, stderr, session := startSpilling(t, tmp)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("sql still running a minute after SIGTERM")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("exit %v, want exit status 143; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "sql interrupted by SIGTERM; its temporary files are removed") {
		t.Errorf("stderr %q: want it to say sql was interrupted by SIGTERM", stderr.String())
	}
	if _, err := os.Stat(session); !os.IsNotExist(err) {
		t.Errorf("%s still there after SIGTERM (%v)", session, err)
	}
}
