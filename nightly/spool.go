package nightly

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The spool of a cluster, <spool>/<cluster>/:
//
//	assoc/assoc-YYYY-MM-DD.psv   the association dumps, one per change of the tree, kept
//	qos.psv                      the latest QOS dump
//	nights/<to>/                 a committed night's sacct files and rejected rows, pruned after keep_days
//	.night-<to>-<random>/        a night being fetched (removed when it fails; the next night removes a stale one)
const (
	assocDir     = "assoc"
	nightsDir    = "nights"
	stagePrefix  = ".night-"
	nightLayout  = "20060102T150405Z"
	assocLayout  = "assoc-2006-01-02.psv"
	fetchedAssoc = "assoc-fetched.psv"
)

// Night is a night's staging directory in the spool: what it fetched, and
// the association dumps its run reads.
type Night struct {
	// ClusterDir is the cluster's spool directory.
	ClusterDir string
	// Dir is the night's staging directory.
	Dir string
	// Stamp names the night by its end (nightLayout).
	Stamp string
	// keep is the fetched association dump's name in assoc/ when it is new.
	keep string
	// lock is the cluster spool's flock, held from NewNight to Discard.
	lock *os.File
}

// NewNight creates the staging directory of the night ending at to, after
// removing what a failed or killed earlier night left.
func NewNight(spool, cluster string, to time.Time) (*Night, error) {
	cdir := filepath.Join(spool, cluster)
	if err := os.MkdirAll(filepath.Join(cdir, assocDir), 0o755); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(cdir, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("spool %s: another fairledger nightly of cluster %s is running (it holds %s): %w", spool, cluster, lock.Name(), err)
	}
	ok := false
	defer func() {
		if !ok {
			lock.Close()
		}
	}()
	stale, _ := filepath.Glob(filepath.Join(cdir, stagePrefix+"*"))
	for _, s := range stale {
		if err := os.RemoveAll(s); err != nil {
			return nil, fmt.Errorf("spool: remove a failed night's files: %w", err)
		}
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	n := &Night{ClusterDir: cdir, Stamp: to.UTC().Format(nightLayout), lock: lock}
	n.Dir = filepath.Join(cdir, stagePrefix+n.Stamp+"-"+hex.EncodeToString(rnd[:]))
	for _, d := range []string{n.Dir, n.SacctDir(), n.AssocDir()} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
	}
	ok = true
	return n, nil
}

// SacctDir holds the night's sacct files.
func (n *Night) SacctDir() string { return filepath.Join(n.Dir, "sacct") }

// AssocDir holds links to the association dumps the night's run reads.
func (n *Night) AssocDir() string { return filepath.Join(n.Dir, assocDir) }

// FetchedAssoc is where the night's association dump is fetched to.
func (n *Night) FetchedAssoc() string { return filepath.Join(n.Dir, fetchedAssoc) }

// QOSFile is where the night's QOS dump is fetched to.
func (n *Night) QOSFile() string { return filepath.Join(n.Dir, "qos.psv") }

// RejectsFile receives the run's rejected rows.
func (n *Night) RejectsFile() string { return filepath.Join(n.Dir, "rejects.tsv") }

// keptDump is an association dump of the spool and the day it is in force
// from.
type keptDump struct {
	name string
	day  time.Time
}

// keptDumps lists the spool's association dumps, oldest first.
func (n *Night) keptDumps(loc *time.Location) ([]keptDump, error) {
	entries, err := os.ReadDir(filepath.Join(n.ClusterDir, assocDir))
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var out []keptDump
	for _, e := range entries {
		day, err := time.ParseInLocation(assocLayout, e.Name(), loc)
		if err != nil || !e.Type().IsRegular() {
			continue // not the nightly job's
		}
		out = append(out, keptDump{e.Name(), day})
	}
	return out, nil
}

// PrepareAssoc links into AssocDir the association dumps the night's
// window (lo, to] needs: the newest kept dump in force at lo, those that
// came into force after it, and the fetched dump when it differs from the
// newest kept one (it is then kept as in force from changed, or from
// first, the window's start, when the spool has no dump yet). It returns
// whether the fetched dump is new.
func (n *Night) PrepareAssoc(lo, changed time.Time, loc *time.Location) (bool, error) {
	kept, err := n.keptDumps(loc)
	if err != nil {
		return false, err
	}
	fetched, err := os.ReadFile(n.FetchedAssoc())
	if err != nil {
		return false, fmt.Errorf("spool: %w", err)
	}
	isNew := true
	if len(kept) > 0 {
		last, err := os.ReadFile(filepath.Join(n.ClusterDir, assocDir, kept[len(kept)-1].name))
		if err != nil {
			return false, fmt.Errorf("spool: %w", err)
		}
		isNew = !bytes.Equal(last, fetched)
	}
	var use []string
	for _, d := range SelectDumps(kept, lo) {
		use = append(use, d.name)
	}
	if isNew {
		day := localDay(lo, loc)
		if len(kept) > 0 {
			day = localDay(changed, loc)
		}
		n.keep = day.Format(assocLayout)
		use = slices.DeleteFunc(use, func(s string) bool { return s == n.keep }) // replaced by the fetched one
		if err := os.Link(n.FetchedAssoc(), filepath.Join(n.AssocDir(), n.keep)); err != nil {
			return false, fmt.Errorf("spool: %w", err)
		}
	}
	for _, name := range use {
		if err := os.Link(filepath.Join(n.ClusterDir, assocDir, name), filepath.Join(n.AssocDir(), name)); err != nil {
			return false, fmt.Errorf("spool: %w", err)
		}
	}
	return isNew, nil
}

// SelectDumps are the dumps a window starting at lo needs: the newest in
// force at lo (or the oldest, when none is yet) and every later one.
func SelectDumps(kept []keptDump, lo time.Time) []keptDump {
	first := 0
	for i, d := range kept {
		if !d.day.After(lo) {
			first = i
		}
	}
	if first >= len(kept) {
		return nil
	}
	return kept[first:]
}

func localDay(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc)
}

// Commit keeps what the committed night fetched: its sacct files and
// rejected rows under nights/<to>/, its association dump when new, its QOS
// dump as qos.psv; the staging directory is removed.
func (n *Night) Commit() error {
	dst := filepath.Join(n.ClusterDir, nightsDir, n.Stamp)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if err := os.RemoveAll(dst); err != nil { // the same night run again
		return fmt.Errorf("spool: %w", err)
	}
	if err := os.Rename(n.SacctDir(), dst); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if _, err := os.Stat(n.RejectsFile()); err == nil {
		if err := os.Rename(n.RejectsFile(), filepath.Join(dst, "rejects.tsv")); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
	}
	if n.keep != "" {
		if err := os.Rename(n.FetchedAssoc(), filepath.Join(n.ClusterDir, assocDir, n.keep)); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
	}
	if err := os.Rename(n.QOSFile(), filepath.Join(n.ClusterDir, "qos.psv")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	return n.Discard()
}

// Discard removes the night's staging directory and releases the
// cluster's spool.
func (n *Night) Discard() error {
	err := os.RemoveAll(n.Dir)
	if n.lock != nil {
		n.lock.Close()
		n.lock = nil
	}
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// Prune removes the nights of the cluster's spool fetched more than
// keepDays days of 24 h before now (by their directory's modification
// time), and returns their names.
func Prune(clusterDir string, now time.Time, keepDays int) ([]string, error) {
	dir := filepath.Join(clusterDir, nightsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	fetched := map[string]time.Time{}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && e.IsDir() {
			fetched[e.Name()] = fi.ModTime()
		}
	}
	old := Prunable(fetched, now, keepDays)
	for _, name := range old {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
	}
	return old, nil
}

// Prunable are the nights of fetched (name → when it was fetched) fetched
// more than keepDays days of 24 h before now, sorted by name; with keepDays
// 0, every night.
func Prunable(fetched map[string]time.Time, now time.Time, keepDays int) []string {
	cut := now.Add(-time.Duration(keepDays) * 24 * time.Hour)
	var out []string
	for name, t := range fetched {
		if keepDays == 0 || t.Before(cut) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// String names the night for the log.
func (n *Night) String() string { return strings.TrimPrefix(filepath.Base(n.Dir), stagePrefix) }
