package history

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
)

// listTree lists every path under dir, relative to it, sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	return got
}

var lockNow = func() time.Time { return time.Date(2025, 4, 1, 2, 0, 0, 0, time.UTC) }

// failedFirstRun does what a run that fails before its commit does: Open,
// Lock, Begin, then Abort, RemoveUnused and unlock.
func failedFirstRun(t *testing.T, dir string) {
	t.Helper()
	h, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := h.Lock(0, lockNow)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	tx.Abort()
	if err := h.RemoveUnused(); err != nil {
		t.Errorf("RemoveUnused: %v", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
}

// TestRemoveUnused checks that a run that commits nothing on a new path
// leaves the path as it found it: a missing directory (and the missing
// directories above it) missing, an empty one empty, another one's files
// kept; and that a history with a commit is never touched.
func TestRemoveUnused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()

	// A missing path, two levels of it missing.
	failedFirstRun(t, filepath.Join(root, "a", "b", "hist"))
	if got := listTree(t, root); len(got) != 0 {
		t.Errorf("new path: left %q, want nothing", got)
	}

	// An existing empty directory stays, empty.
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	failedFirstRun(t, empty)
	if got := listTree(t, empty); len(got) != 0 {
		t.Errorf("empty directory: left %q, want nothing", got)
	}
	if _, err := os.Stat(empty); err != nil {
		t.Errorf("empty directory removed: %v", err)
	}

	// A directory holding someone else's file keeps it.
	other := filepath.Join(root, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	failedFirstRun(t, other)
	if got := listTree(t, other); len(got) != 1 || got[0] != "notes.txt" {
		t.Errorf("directory with a file: left %q, want [notes.txt]", got)
	}

	// A history with a commit: a failed run after it removes nothing.
	kept := filepath.Join(root, "kept")
	h, err := Open(kept)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.AppendRun("c1", record.RunRow{RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	before := listTree(t, kept)
	failedFirstRun(t, kept)
	after := map[string]bool{}
	for _, p := range listTree(t, kept) {
		after[p] = true
	}
	for _, p := range before {
		if !after[p] {
			t.Errorf("history: %s removed by a failed run", p)
		}
	}
	if !hasPrefix(before, "gen") {
		t.Errorf("history: %q holds no generation", before)
	}
	// So does a second store of an existing history (its lock file was
	// there before).
	if _, err := os.Stat(filepath.Join(kept, ".lock")); errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the history's lock file removed")
	}
}

func hasPrefix(list []string, p string) bool {
	for _, s := range list {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

// TestLockAfterRemoval checks that a run waiting for the lock while its
// holder removes the lock file (RemoveUnused) does not end up holding the
// removed file's lock, which would let a third run in beside it.
func TestLockAfterRemoval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := first.Lock(0, lockNow)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	var unlock2 func() error
	go func() {
		second := &Store{Dir: dir}
		var err error
		unlock2, err = second.Lock(5*time.Second, lockNow)
		got <- err
	}()
	time.Sleep(300 * time.Millisecond) // the second waits on the old file
	if err := os.Remove(filepath.Join(dir, ".lock")); err != nil {
		t.Fatal(err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("second lock: %v", err)
	}
	defer unlock2()
	if _, err := (&Store{Dir: dir}).Lock(0, lockNow); !errors.Is(err, ErrLocked) {
		t.Errorf("third lock beside the second: %v, want ErrLocked", err)
	}
}
