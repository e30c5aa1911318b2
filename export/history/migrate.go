package history

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// The layout before the generation store (format 1), which Migrate
// converts:
//
//	<history>/<table>/cluster=<c>/month=<YYYY-MM>/data.parquet   jobs, usage, fairshare, associations
//	<history>/runs/cluster=<c>/month=<YYYY-MM>/run-<started>-<8 hex>.parquet
//	<history>/manifest.json        {"partitions":[{table,cluster,month,path,rows,bytes,sha256}]}
//	<history>/state/cluster=<c>/<checkpoint>
//
// plus temp files (.<name>.tmp-*) of interrupted writes, which hold nothing
// a reader ever saw, and the runs' spill directories (.spill-*), which the
// pipeline cleans.

// migratingMarker is written, durably, before the commit of a migration
// and removed once the old files are: a history with a committed
// generation and this file is one whose migration was interrupted after
// its commit, and Migrate finishes it by removing the old files.
const migratingMarker = ".migrating"

// oldManifest is the manifest of the old layout.
type oldManifest struct {
	Partitions []oldEntry `json:"partitions"`
}

type oldEntry struct {
	Table   string `json:"table"`
	Cluster string `json:"cluster"`
	Month   string `json:"month"`
	Path    string `json:"path"`
	Rows    int64  `json:"rows"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
}

// oldFile is a file of the old layout that Migrate converts.
type oldFile struct {
	table   string // a table's name, or TableState
	cluster string
	month   string // YYYY-MM; empty for a checkpoint
	rel     string // slash-separated, relative to the history
}

// Migrate converts a history of the old layout (ErrOldLayout) into its
// first generation and returns the number of old files it converted
// (data files and checkpoints). Every data file's rows are read and
// written again as one settled segment of the same (table, cluster, month)
// partition (the runs files of a partition, one per run, as one segment),
// so the manifest gets their statistics; checkpoints are copied byte for
// byte. Temp files of interrupted writes are left out.
//
// Nothing is removed before the new generation is committed, and Migrate
// refuses (changing nothing) when the old files disagree with the old
// manifest.json (a file it lists is missing, or has other bytes) or when
// the old directories hold files fairledger did not write: the error names
// them. Once the generation is committed the old directories and manifest
// are removed; if that is interrupted, the next call removes what is left.
// On a history already converted, or empty, it does nothing and returns 0.
//
// The caller holds the history's lock (Lock), as for any commit.
func (h *Store) Migrate() (n int, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err = os.Lstat(filepath.Join(h.Dir, CurrentLink))
	switch {
	case err == nil:
		return 0, h.finishMigration()
	case !errors.Is(err, fs.ErrNotExist):
		return 0, fmt.Errorf("migrate history %s: %w", h.Dir, err)
	}
	if !h.hasOldFiles() {
		return 0, nil // an empty history
	}
	files, err := h.scanOld()
	if err != nil {
		return 0, fmt.Errorf("migrate history %s: %w", h.Dir, err)
	}
	listed, err := h.readOldManifest()
	if err != nil {
		return 0, fmt.Errorf("migrate history %s: %w", h.Dir, err)
	}
	t, err := h.beginFirst()
	if err != nil {
		return 0, fmt.Errorf("migrate history %s: %w", h.Dir, err)
	}
	defer func() {
		if err == nil {
			return
		}
		t.Abort()
		// A commit that failed after switching current (syncing the
		// directory) did commit: the marker stays for the next call.
		if _, lerr := os.Lstat(filepath.Join(h.Dir, CurrentLink)); errors.Is(lerr, fs.ErrNotExist) {
			os.Remove(filepath.Join(h.Dir, migratingMarker))
		}
	}()
	var problems []error
	onDisk := map[string]bool{}
	runs := map[[2]string][]record.RunRow{} // by (cluster, month): one segment each
	for _, f := range files {
		onDisk[f.rel] = true
		if err := t.migrateFile(f, listed[f.rel], runs); err != nil {
			var op *oldProblem
			if !errors.As(err, &op) {
				return 0, fmt.Errorf("migrate history %s: %w", h.Dir, err)
			}
			problems = append(problems, err)
			continue
		}
		n++
	}
	for _, rel := range slices.Sorted(maps.Keys(listed)) {
		if !onDisk[rel] {
			problems = append(problems, &oldProblem{rel: rel, what: "listed in manifest.json but not on disk"})
		}
	}
	if len(problems) > 0 {
		return 0, fmt.Errorf("migrate history %s: nothing changed: %w; restore these files from a backup, "+
			"or, to convert the files on disk as they are (what the old fairledger read), remove %s and run the migration again",
			h.Dir, errors.Join(problems...), filepath.Join(h.Dir, manifestFile))
	}
	for _, k := range slices.SortedFunc(maps.Keys(runs), func(a, b [2]string) int { return cmp.Compare(a[0]+"/"+a[1], b[0]+"/"+b[1]) }) {
		month, _ := schemas.ParseMonth(k[1]) // checked by scanOld
		if _, err := t.Write(schemas.TableRuns, k[0], month, runs[k], false); err != nil {
			return 0, fmt.Errorf("migrate history %s: runs of %s/%s: %w", h.Dir, k[0], k[1], err)
		}
	}
	if err := h.writeMarker(); err != nil {
		return 0, fmt.Errorf("migrate history %s: %w", h.Dir, err)
	}
	if err := t.Commit(); err != nil {
		return 0, fmt.Errorf("migrate history %s: %w", h.Dir, err)
	}
	if err := h.removeOld(); err != nil {
		return n, fmt.Errorf("migrate history %s: generation 1 is committed, but removing the old files failed "+
			"(the next migration removes them): %w", h.Dir, err)
	}
	return n, nil
}

// oldProblem is an old file that disagrees with the old manifest or cannot
// be read: Migrate reports them all and converts nothing.
type oldProblem struct{ rel, what string }

func (e *oldProblem) Error() string { return e.rel + ": " + e.what }

// hasOldFiles reports files of the old layout at the root: oldLayout's, or
// an old state directory.
func (h *Store) hasOldFiles() bool {
	if h.oldLayout() {
		return true
	}
	fi, err := os.Stat(filepath.Join(h.Dir, stateDir))
	return err == nil && fi.IsDir()
}

// finishMigration is Migrate on a history with a committed generation:
// old files left by a migration interrupted after its commit are removed;
// old files without the marker are refused, since a migration did not
// leave them.
func (h *Store) finishMigration() error {
	_, err := os.Stat(filepath.Join(h.Dir, migratingMarker))
	switch {
	case err == nil:
		if err := h.removeOld(); err != nil {
			return fmt.Errorf("migrate history %s: remove the old files: %w", h.Dir, err)
		}
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("migrate history %s: %w", h.Dir, err)
	}
	if h.hasOldFiles() {
		return fmt.Errorf("migrate history %s: it has a committed generation (current) and also files of the old layout "+
			"(manifest.json, state/ or table directories at its root), which no migration left: written by a fairledger "+
			"older than the generation store after the history was converted? fairledger reads only the generations; "+
			"stop the older binary and move those files out of the history", h.Dir)
	}
	return nil
}

// scanOld lists the old layout's data files and checkpoints, in path
// order. Temp files are skipped; anything else fairledger did not write
// is an error naming it, so that removing the old directories loses
// nothing.
func (h *Store) scanOld() ([]oldFile, error) {
	var files []oldFile
	var unknown []string
	dirs := func(rel, prefix string) []string {
		entries, err := os.ReadDir(filepath.Join(h.Dir, filepath.FromSlash(rel)))
		if err != nil {
			unknown = append(unknown, rel+" ("+err.Error()+")")
			return nil
		}
		var out []string
		for _, e := range entries {
			v, ok := strings.CutPrefix(e.Name(), prefix)
			switch {
			case ok && e.IsDir() && v != "":
				out = append(out, v)
			case e.Type().IsRegular() && isTemp(e.Name()):
			default:
				unknown = append(unknown, path.Join(rel, e.Name()))
			}
		}
		return out
	}
	for _, t := range schemas.Tables() {
		fi, err := os.Stat(filepath.Join(h.Dir, t.Name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || !fi.IsDir() {
			unknown = append(unknown, t.Name)
			continue
		}
		for _, c := range dirs(t.Name, "cluster=") {
			if validCluster(c) != nil {
				unknown = append(unknown, path.Join(t.Name, "cluster="+c))
				continue
			}
			for _, m := range dirs(path.Join(t.Name, "cluster="+c), "month=") {
				dir := partitionDir(t.Name, c, m)
				if _, err := schemas.ParseMonth(m); err != nil {
					unknown = append(unknown, dir)
					continue
				}
				entries, err := os.ReadDir(filepath.Join(h.Dir, filepath.FromSlash(dir)))
				if err != nil {
					return nil, err
				}
				for _, e := range entries {
					name := e.Name()
					switch {
					case e.Type().IsRegular() && (t.Name == schemas.TableRuns && isOldRunFile(name) || t.Name != schemas.TableRuns && name == dataFile):
						files = append(files, oldFile{table: t.Name, cluster: c, month: m, rel: path.Join(dir, name)})
					case e.Type().IsRegular() && isTemp(name):
					default:
						unknown = append(unknown, path.Join(dir, name))
					}
				}
			}
		}
	}
	if fi, err := os.Stat(filepath.Join(h.Dir, stateDir)); err == nil && fi.IsDir() {
		for _, c := range dirs(stateDir, "cluster=") {
			dir := path.Join(stateDir, "cluster="+c)
			entries, err := os.ReadDir(filepath.Join(h.Dir, filepath.FromSlash(dir)))
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				name := e.Name()
				switch {
				case e.Type().IsRegular() && isTemp(name):
				case e.Type().IsRegular() && validStateName(c, name) == nil:
					files = append(files, oldFile{table: TableState, cluster: c, rel: path.Join(dir, name)})
				default:
					unknown = append(unknown, path.Join(dir, name))
				}
			}
		}
	}
	if len(unknown) > 0 {
		const show = 10
		more := ""
		if len(unknown) > show {
			more = fmt.Sprintf(" and %d more", len(unknown)-show)
			unknown = unknown[:show]
		}
		return nil, fmt.Errorf("nothing changed: the old directories hold files fairledger did not write, which the migration "+
			"would remove with them: %s%s; move them out of the history and run the migration again", strings.Join(unknown, ", "), more)
	}
	return files, nil
}

// isOldRunFile reports a runs file of the old layout.
func isOldRunFile(name string) bool {
	return strings.HasPrefix(name, "run-") && strings.HasSuffix(name, ".parquet")
}

// readOldManifest reads the old manifest.json into a map from path to
// entries; no manifest is an empty map. A path may have several entries:
// the old code listed the first file it wrote twice (it built the
// manifest from the files on disk, in table order, then inserted the file
// by a binary search that assumed path order) and later updated only one
// of them.
func (h *Store) readOldManifest() (map[string][]oldEntry, error) {
	b, err := os.ReadFile(filepath.Join(h.Dir, manifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]oldEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	var m oldManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("nothing changed: %s is not the old layout's manifest (%v); "+
			"to convert the files on disk as they are, remove it and run the migration again", manifestFile, err)
	}
	out := make(map[string][]oldEntry, len(m.Partitions))
	for _, e := range m.Partitions {
		out[e.Path] = append(out[e.Path], e)
	}
	return out, nil
}

// beginFirst starts the commit of generation 1 on an empty base, as Begin
// does on a history without a commit (Begin itself refuses the old
// layout). It removes what an interrupted migration left in gen/.
func (h *Store) beginFirst() (*Txn, error) {
	if err := h.removeUncommitted(0); err != nil {
		return nil, err
	}
	return h.newTxn(Manifest{Format: StoreFormat, Partitions: []Partition{}}, 1)
}

// migrateFile writes old file f into the commit, or for a runs file adds
// its rows to runs, to be written as one segment per partition. A file
// that matches none of its old manifest entries (if listed) or is not
// readable is an *oldProblem; other errors are I/O errors of the commit.
func (t *Txn) migrateFile(f oldFile, entries []oldEntry, runs map[[2]string][]record.RunRow) error {
	b, err := os.ReadFile(filepath.Join(t.h.Dir, filepath.FromSlash(f.rel)))
	if err != nil {
		return &oldProblem{rel: f.rel, what: err.Error()}
	}
	var e oldEntry // the entry the file matches
	if len(entries) > 0 {
		sum := sha256.Sum256(b)
		hexSum := hex.EncodeToString(sum[:])
		for _, c := range entries {
			if int64(len(b)) == c.Bytes && (c.SHA256 == "" || c.SHA256 == hexSum) {
				e = c
				break
			}
		}
		switch {
		case e.Path != "":
		case int64(len(b)) != entries[0].Bytes:
			return &oldProblem{rel: f.rel, what: fmt.Sprintf("%d bytes, manifest.json says %d (damaged, or written by a run "+
				"that was killed before it updated the manifest)", len(b), entries[0].Bytes)}
		default:
			return &oldProblem{rel: f.rel, what: "SHA-256 differs from manifest.json's (damaged, or written by a run " +
				"that was killed before it updated the manifest)"}
		}
	}
	if f.table == TableState {
		return t.WriteState(f.cluster, path.Base(f.rel), b)
	}
	month, err := schemas.ParseMonth(f.month)
	if err != nil {
		return &oldProblem{rel: f.rel, what: err.Error()}
	}
	d, _, err := tableNamed(f.table)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", f.rel, err)
	}
	rows, n, err := d.decodeBatch(b)
	if err != nil {
		return &oldProblem{rel: f.rel, what: "not readable Parquet: " + err.Error()}
	}
	if e.Path != "" && int64(n) != e.Rows {
		return &oldProblem{rel: f.rel, what: fmt.Sprintf("%d rows, manifest.json says %d", n, e.Rows)}
	}
	if r, ok := rows.([]record.RunRow); ok {
		k := [2]string{f.cluster, f.month}
		runs[k] = append(runs[k], r...)
		return nil
	}
	if _, err := t.Write(f.table, f.cluster, month, rows, false); err != nil {
		return fmt.Errorf("migrate %s: %w", f.rel, err)
	}
	return nil
}

// migrateChunk is how many rows decodeJobTable reads at a time (a
// variable for the tests, which read small files in several chunks).
var migrateChunk = 4096

// decodeJobTable decodes a jobs file into a new record.JobTable (appendJobs).
func decodeJobTable(b []byte) (*record.JobTable, error) {
	t := record.NewJobTable(record.NewJobDict(), 0)
	if err := appendJobs(b, t); err != nil {
		return nil, err
	}
	return t, nil
}

// appendJobs decodes a jobs file's bytes into t, a few thousand rows at a
// time: a month of a large centre's jobs as []record.JobRow (a map and pointers
// per row) would take several times the memory of its records.
func appendJobs(b []byte, t *record.JobTable) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed Parquet: %v", r)
		}
	}()
	r := parquet.NewGenericReader[record.JobRow](bytes.NewReader(b))
	defer r.Close()
	t.Recs = slices.Grow(t.Recs, int(r.NumRows()))
	before := len(t.Recs)
	buf := make([]record.JobRow, min(int64(migrateChunk), max(r.NumRows(), 1)))
	for {
		clear(buf) // Read would reuse the rows' maps and pointers: a null would keep the value before
		n, err := r.Read(buf)
		for i := range buf[:n] {
			t.AppendRow(&buf[i]) // copies the strings and the TRES map
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if got := int64(len(t.Recs) - before); got != r.NumRows() {
		return fmt.Errorf("%d rows read, the footer counts %d", got, r.NumRows())
	}
	return nil
}

// writeMarker writes migratingMarker durably.
func (h *Store) writeMarker() error {
	_, _, err := writeFileIn(h.Dir, migratingMarker, func(w io.Writer) error {
		_, err := io.WriteString(w, "a migration from the old layout to generation 1 is removing the old files; "+
			"`fairledger verify --migrate` finishes it\n")
		return err
	}, true)
	if err != nil {
		return fmt.Errorf("write %s: %w", migratingMarker, err)
	}
	return syncDir(h.Dir)
}

// removeOld removes the old layout's table directories, state directory,
// manifest and its temp files, then the marker.
func (h *Store) removeOld() error {
	for _, t := range schemas.Tables() {
		if err := os.RemoveAll(filepath.Join(h.Dir, t.Name)); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(filepath.Join(h.Dir, stateDir)); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(h.Dir, manifestFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	entries, err := os.ReadDir(h.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "."+manifestFile+tmpMarker) {
			if err := os.Remove(filepath.Join(h.Dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := syncDir(h.Dir); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(h.Dir, migratingMarker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(h.Dir)
}
