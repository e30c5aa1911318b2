package pipeline_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fairledger/fairledger/pipeline"
)

// TestBeforeCommit: Options.BeforeCommit runs once, after the night is
// computed and before its generation is committed (current still names
// the generation before); when it fails, as a --rejects file that cannot
// be closed on a full disk does, the run fails and the history is byte
// for byte as it was. A dry run calls it at its end.
func TestBeforeCommit(t *testing.T) {
	t.Parallel()
	dir, files := siteWith(t, rwA+rwB, rwA+rwB+rwC)
	hist := filepath.Join(t.TempDir(), "history")
	mustRun(t, dir, hist, rwT1, files[0])
	current := func() string {
		target, err := os.Readlink(filepath.Join(hist, "current"))
		if err != nil {
			t.Fatal(err)
		}
		return target
	}
	first := current()
	before := snapshotDir(t, hist)

	enospc := &os.PathError{Op: "close", Path: "rejects.tsv", Err: syscall.ENOSPC}
	for _, dry := range []bool{false, true} {
		calls := 0
		opt := runOpts(hist, rwT2)
		opt.DryRun = dry
		opt.BeforeCommit = func() error {
			calls++
			if c := current(); c != first {
				t.Errorf("dry %v: BeforeCommit called with current -> %s, want %s (not yet committed)", dry, c, first)
			}
			return enospc
		}
		_, err := pipeline.Run(context.Background(), siteInputs(t, dir, files[1]), opt)
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "nothing was committed") {
			t.Errorf("dry %v: error %v, want ENOSPC and that nothing was committed", dry, err)
		}
		if calls != 1 {
			t.Errorf("dry %v: BeforeCommit called %d times, want 1", dry, calls)
		}
		sameFiles(t, "history after a failed BeforeCommit", snapshotDir(t, hist), before)
	}

	// When it succeeds the night is committed after it.
	calls := 0
	opt := runOpts(hist, rwT2)
	opt.BeforeCommit = func() error { calls++; return nil }
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, files[1]), opt); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || current() == first {
		t.Errorf("BeforeCommit called %d times, current -> %s; want 1 and a new generation after %s", calls, current(), first)
	}
}
