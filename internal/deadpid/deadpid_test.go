package deadpid

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// deadPid returns the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestRemove: the entries of a dead pid go (a directory with its files, a
// file); those of a live pid (this process, its parent), of no pid, and of
// another prefix stay.
func TestRemove(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dead := deadPid(t)
	if Alive(dead) {
		t.Skipf("pid %d was reused already", dead)
	}
	mk := func(name string, isDir bool) string {
		p := filepath.Join(dir, name)
		if isDir {
			if err := os.MkdirAll(filepath.Join(p, "spill"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, "spill", "duckdb_temp_storage-0.tmp"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	goneDir := mk(Name("fl-", dead)+"123", true)
	goneFile := mk(Name("fl-", dead)+"456", false)
	keep := []string{
		mk(Name("fl-", os.Getpid())+"1", true),
		mk(Name("fl-", os.Getppid())+"2", true),
		mk("fl-123", true),  // no pid
		mk("fl-x-1", false), // not a pid
		mk("fl-0-1", false), // not a pid
		mk(Name("other-", dead)+"1", true),
	}
	removed, err := Remove(dir, "fl-")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{goneDir, goneFile}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for _, p := range []string{goneDir, goneFile} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", p, err)
		}
	}
	for _, p := range keep {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

func TestAlive(t *testing.T) {
	t.Parallel()
	if !Alive(os.Getpid()) || !Alive(1) {
		t.Error("this process or init is not alive")
	}
	if Alive(0) || Alive(-1) {
		t.Error("pid 0 or -1 is alive")
	}
}
