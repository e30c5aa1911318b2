package history

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLock: a second holder fails at once (or after its wait) naming the
// first one's pid; after unlock the lock is free again.
func TestLock(t *testing.T) {
	h, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2025, 4, 1, 2, 0, 0, 0, time.UTC) }
	unlock, err := h.Lock(0, now)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = h.Lock(300*time.Millisecond, now)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("gave up after %s, want the 300ms wait", waited)
	}
	if want := "pid " + strconv.Itoa(os.Getpid()) + " since 2025-04-01T02:00:00Z"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the holder %q", err, want)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	unlock2, err := h.Lock(0, now)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

// TestStates: checkpoints are committed as files of the generation,
// listed in its manifest (Table TableState, size and SHA-256), listed in
// name order, replaced, removed and checked when read; names that are
// paths are refused; the DuckDB views never see them.
func TestStates(t *testing.T) {
	t.Parallel()
	h, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"b.json", "a.json"} {
		if err := h.WriteState("c1", n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	names, err := h.States("c1")
	if err != nil || strings.Join(names, ",") != "a.json,b.json" {
		t.Fatalf("states %v, %v", names, err)
	}
	if b, err := h.ReadState("c1", "b.json"); err != nil || string(b) != "b.json" {
		t.Fatalf("read %q, %v", b, err)
	}
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("b.json"))
	wantB := Partition{Table: TableState, Cluster: "c1", Path: "state/cluster=c1/b.json", Bytes: 6, SHA256: hex.EncodeToString(sum[:])}
	if len(m.Partitions) != 2 || m.Partitions[1] != wantB || m.Generation != 2 {
		t.Errorf("manifest %+v, want generation 2 with a.json and %+v", m, wantB)
	}
	if b, err := os.ReadFile(filepath.Join(h.Dir, CurrentLink, "state", "cluster=c1", "b.json")); err != nil || string(b) != "b.json" {
		t.Errorf("current/state/cluster=c1/b.json: %q, %v", b, err)
	}
	// Writing a name again replaces it.
	if err := h.WriteState("c1", "b.json", []byte("b2")); err != nil {
		t.Fatal(err)
	}
	if b, err := h.ReadState("c1", "b.json"); err != nil || string(b) != "b2" {
		t.Errorf("read after rewrite %q, %v; want b2", b, err)
	}
	if names, _ := h.States("c1"); strings.Join(names, ",") != "a.json,b.json" {
		t.Errorf("after rewrite: %v", names)
	}
	if err := h.RemoveState("c1", "a.json"); err != nil {
		t.Fatal(err)
	}
	if names, _ := h.States("c1"); len(names) != 1 {
		t.Errorf("after remove: %v", names)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, CurrentLink, "state", "cluster=c1", "a.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a removed checkpoint is still in the generation: %v", err)
	}
	if _, err := h.ReadState("c1", "a.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read a removed checkpoint: %v, want ErrNotExist", err)
	}
	if err := h.WriteState("c1", "../x", nil); err == nil {
		t.Error("a path as state name was accepted")
	}
	if names, err := h.States("other"); err != nil || names != nil {
		t.Errorf("unknown cluster: %v, %v", names, err)
	}
	// A damaged checkpoint is refused, naming it. (A new file: the
	// generations share the old one.)
	f := filepath.Join(h.Dir, CurrentLink, "state", "cluster=c1", "b.json")
	if err := os.Remove(f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte("b3"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if _, err := h.ReadState("c1", "b.json"); !errors.As(err, &ce) || ce.Path != "state/cluster=c1/b.json" {
		t.Errorf("read a damaged checkpoint: %v, want a CorruptError of state/cluster=c1/b.json", err)
	}
}
