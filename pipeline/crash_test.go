package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/schemas"
)

// TestCrashChild is the process TestCrashSafety kills: it runs one night
// described by its environment and is not a test on its own.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("FAIRLEDGER_CRASH_DIR")
	if dir == "" {
		t.Skip("run by TestCrashSafety")
	}
	to, err := strconv.ParseInt(os.Getenv("FAIRLEDGER_CRASH_TO"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	in := siteInputs(t, dir, os.Getenv("FAIRLEDGER_CRASH_SACCT"))
	opt := runOpts(os.Getenv("FAIRLEDGER_CRASH_HISTORY"), time.Unix(to, 0))
	if from, err := strconv.ParseInt(os.Getenv("FAIRLEDGER_CRASH_FROM"), 10, 64); err == nil {
		opt.From = time.Unix(from, 0) // a recompute
	}
	if n, err := strconv.ParseUint(os.Getenv("FAIRLEDGER_CRASH_FSIZE"), 10, 64); err == nil {
		// A disk that fills: writes past n bytes fail (EFBIG, the
		// signal ignored), as ENOSPC makes them fail.
		signal.Ignore(syscall.SIGXFSZ)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pipeline.Run(context.Background(), in, opt); err != nil {
		t.Fatal(err)
	}
}

// TestCrashSafety kills `run` with SIGKILL at random moments, in a first
// run and in a run resuming from a checkpoint. After each kill every file of
// the history must read, and running the night again must give the history
// an uninterrupted run gives (byte for byte, apart from runs and the
// manifest).
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir, from, end := nightlyCluster(t, 20000)
	mid := time.Date(2025, 1, 31, 0, 0, 0, 0, time.UTC)
	first, second := nightFile(dir, mid), nightFile(dir, end)
	sacctAsOf(t, filepath.Join(dir, "sacct.psv"), first, from, mid)
	sacctAsOf(t, filepath.Join(dir, "sacct.psv"), second, mid.AddDate(0, 0, -1), end)
	night := func(hist, sacct string, to time.Time) {
		t.Helper()
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, sacct), runOpts(hist, to)); err != nil {
			t.Fatal(err)
		}
	}

	ref := t.TempDir()
	t0 := time.Now()
	night(ref, first, mid)
	d1 := time.Since(t0)
	t0 = time.Now()
	night(ref, second, end)
	d2 := time.Since(t0)
	want := historyState(t, ref)

	r := rand.New(rand.NewPCG(42, 7))
	killed := 0
	for try := 0; try < 8; try++ {
		resume := try%2 == 1
		sacct, to, d := first, mid, d1
		if resume {
			sacct, to, d = second, end, d2
		}
		// A child that finishes before its kill (the machine is faster
		// than the measured run, or the child starts slowly) proves
		// nothing about crashes: try again on a fresh history with half
		// the delay, a few times.
		delay := time.Duration(r.Float64() * 1.3 * float64(d))
		var hist string
		for attempt := 0; ; attempt++ {
			hist = t.TempDir()
			if resume {
				night(hist, first, mid)
			}
			if crashChild(t, dir, hist, sacct, to, delay) {
				killed++
				break
			}
			if attempt == 4 {
				break
			}
			delay /= 2
		}
		checkReadable(t, hist)
		night(hist, sacct, to)
		if !resume {
			night(hist, second, end)
		}
		got := historyState(t, hist)
		sameFiles(t, fmt.Sprintf("try %d (resume %v, killed after %s)", try, resume, delay), got, want)
	}
	if killed < 4 {
		t.Errorf("only %d of 8 runs were killed before they finished", killed)
	}
}

// crashChild runs one night (sacct up to to) into hist in a child process
// and sends it SIGKILL after delay. It reports whether the signal killed
// the child; a child that fails on its own fails the test.
func crashChild(t *testing.T, dir, hist, sacct string, to time.Time, delay time.Duration, env ...string) bool {
	t.Helper()
	cmd := startChild(t, nil, dir, hist, sacct, to, env...)
	time.Sleep(delay)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	return waitChild(t, cmd)
}

// timeChild runs the night of crashChild to its end and returns how long
// the child took, process start included.
func timeChild(t *testing.T, dir, hist, sacct string, to time.Time, env ...string) time.Duration {
	t.Helper()
	t0 := time.Now()
	if waitChild(t, startChild(t, nil, dir, hist, sacct, to, env...)) {
		t.Fatal("the timed child was killed")
	}
	return time.Since(t0)
}

// startChild starts TestCrashChild on the night described; its output
// goes to out (nil: discarded).
func startChild(t *testing.T, out io.Writer, dir, hist, sacct string, to time.Time, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "FAIRLEDGER_CRASH_DIR="+dir, "FAIRLEDGER_CRASH_HISTORY="+hist,
		"FAIRLEDGER_CRASH_SACCT="+sacct, "FAIRLEDGER_CRASH_TO="+strconv.FormatInt(to.Unix(), 10))
	cmd.Env = append(cmd.Env, env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// waitChild waits for cmd and reports whether SIGKILL ended it; a child
// that fails on its own fails the test.
func waitChild(t *testing.T, cmd *exec.Cmd) bool {
	t.Helper()
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return true
	}
	if err != nil {
		t.Fatalf("child failed on its own: %v", err)
	}
	return false
}

// historyState is the history's files but the runs table and the manifest
// (which lists the runs).
func historyState(t *testing.T, hist string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, table := range []string{schemas.TableJobs, schemas.TableUsage, schemas.TableFairshare, schemas.TableAssociations} {
		for k, b := range tableFiles(t, hist, table) {
			m[table+"/"+k] = b
		}
	}
	states, err := filepath.Glob(filepath.Join(hist, "current", "state", "cluster=*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range states {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(hist, p)
		m[filepath.ToSlash(rel)] = b
	}
	return m
}

// checkReadable opens every Parquet file of the history, as a reader
// would: none may be torn.
func checkReadable(t *testing.T, hist string) {
	t.Helper()
	err := filepath.WalkDir(hist, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") || strings.HasPrefix(d.Name(), ".") ||
			strings.Contains(p, "/.spill-") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		pf, err := parquet.OpenFile(f, fi.Size())
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		rows := parquet.NewReader(pf)
		defer rows.Close()
		buf := make([]parquet.Row, 256)
		for {
			n, err := rows.ReadRows(buf)
			if n == 0 || err != nil {
				if err != nil && !errors.Is(err, io.EOF) {
					return fmt.Errorf("%s: %w", p, err)
				}
				return nil
			}
		}
	})
	if err != nil {
		t.Fatalf("history not readable after the kill: %v", err)
	}
}
