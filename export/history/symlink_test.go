package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// The case: .lock as a symlink had its target truncated to 0
// bytes on lock and unlock. The lock is opened without following links:
// it is refused, and the target keeps its bytes.
func TestLockSymlinkRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, ".lock")); err != nil {
		t.Fatal(err)
	}
	h := &Store{Dir: dir}
	_, err := h.Lock(0, time.Now)
	if err == nil || !strings.Contains(err.Error(), ".lock is a symlink") {
		t.Fatalf("lock through a symlink: err = %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me\n" {
		t.Errorf("symlink target now holds %q", b)
	}
}

// A history whose gen directory (or a generation's) is a symlink out of
// it is refused by readers and writers alike, before anything is written
// through the link.
func TestHistoryDirSymlinkRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := &Store{Dir: dir}
	month := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := []record.UsageRow{{Account: "a", User: "u", PeriodStart: month, BillingSec: 1}}
	if err := h.WritePartition(schemas.TableUsage, "c1", month, rows); err != nil {
		t.Fatal(err)
	}
	// Move gen elsewhere and leave a symlink to it.
	elsewhere := filepath.Join(t.TempDir(), "gen")
	if err := os.Rename(filepath.Join(dir, genDir), elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, genDir)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(elsewhere)
	if _, err := h.View(); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("view: err = %v", err)
	}
	if _, err := h.Begin(); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("begin: err = %v", err)
	}
	if after, _ := os.ReadDir(elsewhere); len(after) != len(before) {
		t.Errorf("%d entries in the link's target after, %d before", len(after), len(before))
	}
	// Before the first commit too.
	fresh := t.TempDir()
	if err := os.Symlink(t.TempDir(), filepath.Join(fresh, genDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Store{Dir: fresh}).Begin(); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("begin on a fresh history: err = %v", err)
	}
}
