package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treeHash hashes every file's path and bytes and every symlink's target
// under dir (the lock file aside: a run rewrites its holder line).
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".lock" {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel + "\x00"))
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			h.Write([]byte("-> " + target + "\x00"))
			return err
		}
		b, err := os.ReadFile(p)
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Issue 33: a run whose --rejects file cannot be written (a full disk:
// /dev/full fails every write with ENOSPC, so the rejected rows fail when
// the file is flushed and closed) used to commit its generation and exit
// 1. The file is finished before the commit now: exit 1, and the history
// is byte for byte as before. A dry run fails the same way.
func TestRunRejectsUnwritableCommitsNothing(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	site, inputs := genSite(t)
	hist := filepath.Join(t.TempDir(), "hist")
	if code, _, errs := runCLI(t, append([]string{"run", "--history", hist, "--to", "2025-02-01"}, inputs...)...); code != exitOK {
		t.Fatalf("first night: exit %d\n%s", code, errs)
	}
	before := treeHash(t, hist)
	// Some rows rejected, not all: the night still has jobs to charge
	// (a night without a single job while jobs ran is refused on its own).
	rejectSacctRows(t, site, 7)
	for _, dry := range []bool{false, true} {
		args := append([]string{"run", "--history", hist, "--to", "2025-02-03", "--rejects", "/dev/full"}, inputs...)
		if dry {
			args = append(args, "--dry-run")
		}
		code, _, errs := runCLI(t, args...)
		if code != exitError {
			t.Errorf("dry %v: exit %d, want %d\n%s", dry, code, exitError, errs)
		}
		for _, want := range []string{"nothing was committed", "write --rejects", "no space left on device"} {
			if !strings.Contains(errs, want) {
				t.Errorf("dry %v: stderr lacks %q:\n%s", dry, want, errs)
			}
		}
		if got := treeHash(t, hist); got != before {
			t.Errorf("dry %v: the history changed (tree hash %s, was %s)", dry, got, before)
		}
	}
}
