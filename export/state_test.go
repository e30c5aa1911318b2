package export

import (
	"errors"
	"os"
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

// TestStates: checkpoints are written atomically, listed in name order and
// removed; names that are paths are refused.
func TestStates(t *testing.T) {
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
	if err := h.RemoveState("c1", "a.json"); err != nil {
		t.Fatal(err)
	}
	if names, _ := h.States("c1"); len(names) != 1 {
		t.Errorf("after remove: %v", names)
	}
	if err := h.WriteState("c1", "../x", nil); err == nil {
		t.Error("a path as state name was accepted")
	}
	if names, err := h.States("other"); err != nil || names != nil {
		t.Errorf("unknown cluster: %v, %v", names, err)
	}
}
