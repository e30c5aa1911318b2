package history

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
	"github.com/parquet-go/parquet-go"
)

const (
	dataFile     = "data.parquet"
	manifestFile = "manifest.json"
	tmpMarker    = ".tmp-"
	runLayout    = "20060102T150405Z"
)

// Store is a fairledger history directory. Its methods may be called from
// several goroutines; only one process should write a history at a time
// (the caller holds a lock, e.g. flock on the directory, across a run).
type Store struct {
	// Dir is the history's root directory.
	Dir string
	// Now is the clock Verify and Repair take checkpoints after it as
	// written from times in the future by (nil: time.Now).
	Now func() time.Time

	mu sync.Mutex // serialises the one-shot commits (WritePartition, AppendRun, ...)

	// What Open found, for RemoveUnused: the directories it created,
	// outermost first, and whether the lock file and gen/ were there.
	made          []string
	hadLock       bool
	hadGen, found bool
}

// now is h.Now(), or the time.
func (h *Store) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Partition is one file of the history, as its generation's manifest lists
// it: a segment of a (table, cluster, month) partition, or a checkpoint
// (Table TableState).
type Partition struct {
	// Table is the table name (schemas.TableJobs, ...) or TableState.
	Table string `json:"table"`
	// Cluster and Month (YYYY-MM) are the hive partition values (no month
	// for a checkpoint).
	Cluster string `json:"cluster"`
	Month   string `json:"month,omitempty"`
	// Path is the file's slash-separated path relative to the generation.
	Path string `json:"path"`
	// Rows is the number of rows in the file (0 for a checkpoint).
	Rows int64 `json:"rows"`
	// Bytes is the file size.
	Bytes int64 `json:"bytes"`
	// SHA256 is the hex SHA-256 of the file.
	SHA256 string `json:"sha256"`
	// Hot marks a segment that later runs are expected to rewrite: jobs
	// charged up to less than HotWindow before the run's --to (running
	// ones among them), usage of the days from the UTC day of --to on.
	Hot bool `json:"hot,omitempty"`
	// MinTime and MaxTime bound the rows' times in Unix seconds: a jobs
	// segment's starts, a usage segment's days, a fairshare or
	// associations segment's snapshots, a runs segment's starts.
	MinTime int64 `json:"min_time,omitempty"`
	MaxTime int64 `json:"max_time,omitempty"`
	// MinID and MaxID bound a jobs segment's job_id_raw; MaxEnd is the
	// latest time any of its jobs is charged to (start + charged_sec).
	MinID  int64 `json:"min_id,omitempty"`
	MaxID  int64 `json:"max_id,omitempty"`
	MaxEnd int64 `json:"max_end,omitempty"`
}

// Manifest lists every file of one generation of a history, sorted by
// path. It holds no timestamps: the same rows give the same manifest, but
// for the generation number.
type Manifest struct {
	// Format is StoreFormat.
	Format int `json:"format"`
	// Generation is the generation's number, from 1.
	Generation int64 `json:"generation"`
	// Checksum is "sha256:" and the hex SHA-256 of the manifest's
	// canonical encoding (see manifestChecksum), set by the commit that
	// writes it and checked by every reader and writer: a manifest changed
	// after its commit is refused (*ManifestError). "" in a manifest
	// written before checksums (read as it is; the next commit writes one).
	Checksum string `json:"checksum,omitempty"`
	// Partitions are the files, sorted by path.
	Partitions []Partition `json:"files"`
}

// Open opens (creating it if needed) the history directory dir. It fails
// if the row types and schemas.Tables disagree (a programmer error caught
// before any file is written).
func Open(dir string) (*Store, error) {
	if err := checkSchemas(); err != nil {
		return nil, fmt.Errorf("open history: %w", err)
	}
	h := &Store{Dir: dir, found: true}
	// The missing directories, outermost first, before MkdirAll makes them.
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		h.made = append([]string{d}, h.made...)
		if filepath.Dir(d) == d {
			break
		}
	}
	_, err := os.Lstat(filepath.Join(dir, ".lock"))
	h.hadLock = err == nil
	_, err = os.Lstat(filepath.Join(dir, genDir))
	h.hadGen = err == nil
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open history: %w", err)
	}
	return h, nil
}

// RemoveUnused removes what a writer that committed nothing left on a
// path that held no history: gen/ (empty once Abort has removed the
// commit's stage) if Open did not find it, then the lock file if Open
// did not find it, then the directories Open created, innermost first.
// Each is removed only while empty (os.Remove, never RemoveAll), and the
// lock file only once gen/ is gone: a history, or anything in the
// directory that the writer did not create, is never removed. The caller
// holds the lock (Lock), has aborted its commit and unlocks after;
// RemoveUnused stops at the first thing that stays, and reports only
// unexpected errors. A Store not made by Open removes nothing.
func (h *Store) RemoveUnused() error {
	if !h.found {
		return nil
	}
	gen := filepath.Join(h.Dir, genDir)
	if !h.hadGen {
		if err := os.Remove(gen); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil // it holds something: a commit, or another writer's stage
		}
	}
	if _, err := os.Lstat(gen); err == nil {
		return nil
	}
	if !h.hadLock {
		if err := os.Remove(filepath.Join(h.Dir, ".lock")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove the unused history's lock file: %w", err)
		}
	}
	for i := len(h.made) - 1; i >= 0; i-- {
		if err := os.Remove(h.made[i]); err != nil {
			return nil // not empty: something else was put there
		}
	}
	return nil
}

// IsHistory reports whether dir is a fairledger history of the generation
// store: its current symlink names gen/<N>, or its gen directory holds a
// generation's manifest (a history whose current link is missing). It
// only looks: commands use it to keep their outputs out of histories.
func IsHistory(dir string) bool {
	if t, err := os.Readlink(filepath.Join(dir, CurrentLink)); err == nil &&
		path.Dir(filepath.ToSlash(filepath.Clean(t))) == genDir {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(dir, genDir, "*", manifestFile))
	return len(m) > 0
}

// CheckExists checks that dir is an existing directory, for the commands
// that read a history (Open creates a missing one): it tells a path that
// does not exist from one that is not a directory.
func CheckExists(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("history directory %s does not exist (fairledger run creates it)", dir)
	case err != nil:
		return fmt.Errorf("history directory: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("history directory %s: not a directory", dir)
	}
	return nil
}

// DamageHint adds to err, when it is (or wraps) a *CorruptError, where
// the damaged file lies (in generation gen of the history in dir, dir as
// the user named it) and how to check the whole history; any other error
// is returned as it is. The commands that read a history word a damaged
// file with it.
func DamageHint(err error, dir string, gen int64) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w (in %s); run fairledger verify --history %s to check every file",
			err, filepath.Join(dir, genDir, genName(gen)), dir)
	}
	return err
}

// validCluster accepts hive-safe cluster names: letters, digits, '-', '_'
// and '.', not starting with '.'.
func validCluster(c string) error {
	if c == "" || c[0] == '.' {
		return fmt.Errorf("cluster name %q: empty or starts with '.'", c)
	}
	for _, r := range c {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("cluster name %q: character %q not allowed in a partition path", c, r)
		}
	}
	return nil
}

// partitionDir is the slash-separated directory of a partition.
func partitionDir(table, cluster, month string) string {
	return path.Join(table, "cluster="+cluster, "month="+month)
}

// WritePartition replaces the (table, cluster, month) partition with rows
// in a commit of its own (see Txn.Write for the rows): the partition's
// segments are removed and rows written as one. It is for tests and tools;
// a run writes through one Txn. The caller holds the history's lock or is
// the only writer.
func (h *Store) WritePartition(table, cluster string, month time.Time, rows any) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.Begin()
	if err != nil {
		return err
	}
	m := schemas.MonthKey(month)
	for _, p := range t.Base().Files(table, cluster) {
		if p.Month == m {
			t.Remove(p)
		}
	}
	if _, err := t.Write(table, cluster, month, rows, false); err != nil {
		t.Abort()
		return err
	}
	return t.Commit()
}

// AppendRun writes run as a new file of the runs table in a commit of its
// own (a run appends through its Txn) and returns the file's entry.
func (h *Store) AppendRun(cluster string, run record.RunRow) (Partition, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.Begin()
	if err != nil {
		return Partition{}, err
	}
	p, err := t.AppendRun(cluster, run)
	if err != nil {
		t.Abort()
		return Partition{}, err
	}
	return p, t.Commit()
}

// writeFileIn writes dir/name with encode (creating dir), fsynced when
// sync is set, and returns its size and hex SHA-256. On error the file is
// removed.
func writeFileIn(dir, name string, encode func(io.Writer) error, sync bool) (size int64, sum string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, "", err
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	h := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(f, h)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	if err = encode(bw); err != nil {
		return 0, "", err
	}
	if err = bw.Flush(); err != nil {
		return 0, "", err
	}
	if sync {
		if err = f.Sync(); err != nil {
			return 0, "", err
		}
	}
	if err = f.Close(); err != nil {
		return 0, "", err
	}
	return cw.n, hex.EncodeToString(h.Sum(nil)), nil
}

// syncDir fsyncs a directory (or a file): what it lists, or holds, is
// durable once it returns.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadPartition reads the committed (table, cluster, month) partition
// into dst (see View.ReadPartition). A missing partition is an error
// wrapping fs.ErrNotExist.
func (h *Store) ReadPartition(table, cluster string, month time.Time, dst any) error {
	if err := validCluster(cluster); err != nil {
		return fmt.Errorf("read partition %s: %w", table, err)
	}
	v, err := h.View()
	if err != nil {
		return err
	}
	defer v.Close()
	return v.ReadPartition(table, cluster, month, dst)
}

// decodeRows decodes a Parquet file's bytes into dst and returns the
// number of rows. A panic of the decoder on malformed bytes is returned
// as an error.
func decodeRows[T any](b []byte, dst *[]T) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("malformed Parquet: %v", r)
		}
	}()
	rows, err := parquet.Read[T](bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return 0, err
	}
	*dst = rows
	return len(rows), nil
}

// ReadRuns reads the committed runs of a (cluster, month) partition in
// start order. A missing partition reads as no runs.
func (h *Store) ReadRuns(cluster string, month time.Time) ([]record.RunRow, error) {
	if err := validCluster(cluster); err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	var out []record.RunRow
	err := h.ReadPartition(schemas.TableRuns, cluster, month, &out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

// isTemp reports a temp file left by an interrupted write.
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tmpMarker)
}

// Partitions lists the committed files of table, sorted by path.
func (h *Store) Partitions(table string) ([]Partition, error) {
	if _, err := schemas.TableByName(table); err != nil {
		return nil, fmt.Errorf("list partitions: %w", err)
	}
	m, err := h.ReadManifest()
	if err != nil {
		return nil, err
	}
	return m.Files(table, ""), nil
}

// ReadManifest reads the committed generation's manifest; an empty history
// has an empty one (generation 0).
func (h *Store) ReadManifest() (Manifest, error) {
	v, err := h.View()
	if err != nil {
		return Manifest{}, err
	}
	defer v.Close()
	return v.Manifest, nil
}
