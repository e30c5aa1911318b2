package export

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The history also holds, per cluster, the checkpoints a run resumes from
// (<history>/state/cluster=<c>/<name>) and one lock file
// (<history>/.lock). They are not tables: DuckDB's views never see them.

const stateDir = "state"

// WriteState stores a checkpoint blob of cluster under name, atomically
// (temp file, fsync, rename): a crash leaves the previous blob or the new
// one, never a torn one.
func (h *History) WriteState(cluster, name string, data []byte) error {
	if err := validStateName(cluster, name); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	dir := filepath.Join(stateDir, "cluster="+cluster)
	_, _, err := writeAtomic(h.Dir, dir, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("write state %s/%s: %w", dir, name, err)
	}
	return nil
}

// ReadState returns the checkpoint blob of cluster stored under name.
func (h *History) ReadState(cluster, name string) ([]byte, error) {
	if err := validStateName(cluster, name); err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(h.Dir, stateDir, "cluster="+cluster, name))
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	return b, nil
}

// States lists the checkpoint names of cluster, sorted; none is not an
// error.
func (h *History) States(cluster string) ([]string, error) {
	if err := validCluster(cluster); err != nil {
		return nil, fmt.Errorf("list states: %w", err)
	}
	entries, err := os.ReadDir(filepath.Join(h.Dir, stateDir, "cluster="+cluster))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list states: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && !isTemp(e.Name()) {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// RemoveState deletes a checkpoint of cluster.
func (h *History) RemoveState(cluster, name string) error {
	if err := validStateName(cluster, name); err != nil {
		return fmt.Errorf("remove state: %w", err)
	}
	if err := os.Remove(filepath.Join(h.Dir, stateDir, "cluster="+cluster, name)); err != nil {
		return fmt.Errorf("remove state: %w", err)
	}
	return nil
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
func (h *History) Lock(wait time.Duration, now func() time.Time) (unlock func() error, err error) {
	name := filepath.Join(h.Dir, ".lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock history: %w", err)
	}
	deadline := time.Now().Add(wait)
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

// HasPartition reports whether the (table, cluster, month) partition file
// exists.
func (h *History) HasPartition(table, cluster string, month time.Time) bool {
	if validCluster(cluster) != nil {
		return false
	}
	rel := path.Join(partitionDir(table, cluster, month.UTC().Format(monthLayout)), dataFile)
	fi, err := os.Stat(filepath.Join(h.Dir, filepath.FromSlash(rel)))
	return err == nil && fi.Mode().IsRegular()
}
