package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fairledger/fairledger/schemas"
)

// The history also holds, per cluster, the checkpoints a run resumes from
// (state/cluster=<c>/<name> in every generation, listed in its manifest
// as Table TableState) and one lock file (<history>/.lock). They are not
// tables: DuckDB's views never see them.

const stateDir = "state"

// Beside its checkpoints, a cluster's state holds what `sshare --at` and
// `sprio --at` replay a moment from (pipeline/moment.go, docs/moments.md):
// moment seeds, moment-<time>.bin.zst, one at the start of each run's
// window and at each snapshot it stores, and the configuration they were
// computed with, model-<sha256>.json.zst, one per distinct content. Verify
// checks them against the manifest; a cut back to a time removes the
// seeds after it.
const (
	checkpointPrefix = "checkpoint-"
	momentPrefix     = "moment-"
	momentSuffix     = ".bin.zst"
)

// IsCheckpoint reports whether the state file name is a checkpoint's.
func IsCheckpoint(name string) bool { return strings.HasPrefix(name, checkpointPrefix) }

// MomentSeedName is the file name of a cluster's moment seed at at (Unix
// seconds); names sort by time.
func MomentSeedName(at int64) string {
	return momentPrefix + time.Unix(at, 0).UTC().Format(runLayout) + momentSuffix
}

// MomentSeedTime is the time (Unix seconds) in a moment seed's file name;
// ok is false for any other state file.
func MomentSeedTime(name string) (at int64, ok bool) {
	s, ok := strings.CutPrefix(name, momentPrefix)
	if !ok {
		return 0, false
	}
	if s, ok = strings.CutSuffix(s, momentSuffix); !ok {
		return 0, false
	}
	t, err := time.Parse(runLayout, s)
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
}

// WriteState stores a checkpoint blob of cluster under name in a commit of
// its own (a run writes its checkpoint through its Txn).
func (h *Store) WriteState(cluster, name string, data []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.Begin()
	if err != nil {
		return err
	}
	if err := t.WriteState(cluster, name, data); err != nil {
		t.Abort()
		return err
	}
	return t.Commit()
}

// ReadState returns the committed checkpoint blob of cluster stored under
// name, verified against the manifest.
func (h *Store) ReadState(cluster, name string) ([]byte, error) {
	if err := validStateName(cluster, name); err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	v, err := h.View()
	if err != nil {
		return nil, err
	}
	defer v.Close()
	return v.ReadState(cluster, name)
}

// ReadState returns the view's checkpoint blob of cluster named name,
// verified against the manifest.
func (v *View) ReadState(cluster, name string) ([]byte, error) {
	want := path.Join(stateDir, "cluster="+cluster, name)
	for _, p := range v.Files(TableState, cluster) {
		if p.Path == want {
			return readVerified(v.Path(p), p)
		}
	}
	return nil, fmt.Errorf("read state %s: %w", want, fs.ErrNotExist)
}

// readVerified reads file and checks it against its manifest entry p. A
// file the manifest lists and the disk lacks is damage, not "no data".
func readVerified(file string, p Partition) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, &CorruptError{Path: p.Path, Problem: "cannot be read: " + err.Error()}
	}
	if int64(len(b)) != p.Bytes {
		return nil, &CorruptError{Path: p.Path, Problem: fmt.Sprintf("%d bytes, the manifest says %d", len(b), p.Bytes)}
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != p.SHA256 {
		return nil, &CorruptError{Path: p.Path, Problem: "SHA-256 differs from the manifest's"}
	}
	return b, nil
}

// States lists the names of cluster's committed state files (checkpoints,
// moment seeds and their models), sorted; none is not an error.
func (h *Store) States(cluster string) ([]string, error) {
	if err := validCluster(cluster); err != nil {
		return nil, fmt.Errorf("list states: %w", err)
	}
	m, err := h.ReadManifest()
	if err != nil {
		return nil, err
	}
	return m.States(cluster), nil
}

// States lists the names of the manifest's state files of cluster, sorted.
func (m *Manifest) States(cluster string) []string {
	var out []string
	for _, p := range m.Files(TableState, cluster) {
		out = append(out, path.Base(p.Path))
	}
	slices.Sort(out)
	return out
}

// RemoveState deletes a checkpoint of cluster in a commit of its own.
func (h *Store) RemoveState(cluster, name string) error {
	if err := validStateName(cluster, name); err != nil {
		return fmt.Errorf("remove state: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.Begin()
	if err != nil {
		return err
	}
	t.RemoveState(cluster, name)
	return t.Commit()
}

func validStateName(cluster, name string) error {
	if err := validCluster(cluster); err != nil {
		return err
	}
	if name == "" || name[0] == '.' || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("state name %q: empty, hidden or a path", name)
	}
	return nil
}

// ErrLocked is returned by Lock when another process holds the history's
// lock for longer than the caller is willing to wait.
var ErrLocked = errors.New("history is locked by another run")

// Lock takes the history's exclusive lock (flock on <history>/.lock),
// waiting up to wait for another holder to let go (0: do not wait). The
// lock file records the holder's pid and start time, which the error names.
// The lock is released by the returned function, or by the kernel when the
// process dies, so a killed run never leaves the history locked.
func (h *Store) Lock(wait time.Duration, now func() time.Time) (unlock func() error, err error) {
	name := filepath.Join(h.Dir, ".lock")
	deadline := time.Now().Add(wait)
	var f *os.File
	for {
		if f, err = h.lockOnce(name, wait, deadline); err != nil {
			return nil, err
		}
		// A writer that committed nothing on a new path removes the lock
		// file it created (RemoveUnused) before it unlocks: a lock taken
		// on that removed file locks nothing, so take the new one.
		if fi, err := f.Stat(); err == nil {
			if li, err := os.Lstat(name); err == nil && os.SameFile(fi, li) {
				break
			}
		}
		f.Close()
		if _, err := os.Stat(h.Dir); err != nil {
			return nil, fmt.Errorf("lock history: the history directory went away while waiting for its lock (a failed first run removed it): %w", err)
		}
	}
	var b bytes.Buffer
	b.WriteString("pid " + strconv.Itoa(os.Getpid()) + " since " + now().UTC().Format(time.RFC3339) + "\n")
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(b.Bytes(), 0)
	}
	return func() error {
		_ = f.Truncate(0)
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
			f.Close()
			return fmt.Errorf("unlock history: %w", err)
		}
		return f.Close()
	}, nil
}

// lockOnce opens the lock file name and takes its flock, waiting until
// deadline for another holder (see Lock).
func (h *Store) lockOnce(name string, wait time.Duration, deadline time.Time) (*os.File, error) {
	// No-follow: the lock file is truncated and written; a symlink in its
	// place would have its target emptied.
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("lock history: %s is a symlink: remove it (fairledger creates its lock file itself)", name)
	}
	if err != nil {
		return nil, fmt.Errorf("lock history: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("lock history: %s is not a regular file: remove it (fairledger creates its lock file itself)", name)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock history %s: %w", name, err)
		}
		if !time.Now().Before(deadline) {
			holder, _ := os.ReadFile(name)
			f.Close()
			return nil, fmt.Errorf("%w: %s (holder: %s); waited %s, see --lock-wait",
				ErrLocked, h.Dir, strings.TrimSpace(string(holder)), wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return f, nil
}

// HasPartition reports whether the committed (table, cluster, month)
// partition has a file.
func (h *Store) HasPartition(table, cluster string, month time.Time) bool {
	m, err := h.ReadManifest()
	if err != nil {
		return false
	}
	mk := schemas.MonthKey(month)
	for _, p := range m.Files(table, cluster) {
		if p.Month == mk {
			return true
		}
	}
	return false
}
