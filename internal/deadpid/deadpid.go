// Package deadpid finds and removes what a killed process left behind: a
// temporary file or directory whose name holds the pid of the process that
// made it (prefix + pid + "-" + anything), removed once no process has that
// pid. It serves the commands that cannot hold a lock while they work (sql's
// DuckDB session directory, report's temporary output files); the run's own
// spill directories (package internal/spill) are removed under the history lock,
// which no other run holds. It touches files: it lists one directory and
// removes entries of it.
package deadpid

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Name returns the name prefix of a temporary entry of the process pid:
// prefix + pid + "-", to which os.MkdirTemp or os.CreateTemp add their
// random part (pattern Name(prefix, pid) + "*").
func Name(prefix string, pid int) string { return prefix + strconv.Itoa(pid) + "-" }

// Alive reports whether a process pid exists: kill(pid, 0) succeeds, or
// fails with EPERM (a process of another user). A pid reused by another
// process counts as alive: its entries stay until that process ends too.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Remove removes the entries of dir named prefix + pid + "-..." whose
// process is dead, files or directories with what they hold, and returns
// the paths it removed. Entries of live processes, entries of another
// user, and names without a pid are left alone.
func Remove(dir, prefix string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("remove what killed processes left in %s: %w", dir, err)
	}
	uid := os.Getuid()
	var removed []string
	var errs []error
	for _, e := range entries {
		pid, ok := pidOf(e.Name(), prefix)
		if !ok || pid == os.Getpid() || Alive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			continue // gone meanwhile
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("remove %s, left by killed process %d: %w", p, pid, err))
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

// pidOf reads the pid of a name prefix + pid + "-...".
func pidOf(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok || digits == "" || digits[0] == '0' {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}
