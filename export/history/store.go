package history

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	"sync"
	"syscall"
	"time"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sys/unix"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// The history's files on disk (see docs/history-store.md):
//
//	<history>/current -> gen/<N>          the committed generation (a symlink)
//	<history>/gen/<N>/manifest.json        every file of generation N
//	<history>/gen/<N>/views.sql            schemas/views.sql, for other engines
//	<history>/gen/<N>/<table>/cluster=<c>/month=<YYYY-MM>/<segment>.parquet
//	<history>/gen/<N>/state/cluster=<c>/checkpoint-<time>.json
//	<history>/gen/.stage-<N>-<random>/     a commit being built
//	<history>/.lock                        the writers' lock
//
// A file, once written, never changes: a generation is a directory of hard
// links to the files it keeps from the one before plus the files its run
// wrote. A commit builds the new generation in a stage directory, makes it
// durable (syncfs), renames it to gen/<N> and switches the current symlink
// with one rename. Readers resolve the symlink once and read that
// generation (View), holding a shared flock on its manifest so that the
// generation is not removed under them.

// CurrentLink is the symlink at a history's root that names its committed
// generation: other engines read <history>/current/<table>/... (the views
// of schemas/views.sql).
const CurrentLink = "current"

// ViewsFile is the name, in every generation, of the copy of
// schemas/views.sql a commit writes there: other engines read
// <history>/current/views.sql, which matches the manifest format of the
// fairledger that committed. It is not in the manifest: it holds no rows,
// it is the same in every generation of one release, and verify knows it
// by name.
const ViewsFile = "views.sql"

const (
	genDir      = "gen"
	stagePrefix = ".stage-"
	// StoreFormat is the manifest's format number: 2 is the generation
	// store (1, implicit, was the single-directory layout of
	// data.parquet files rewritten in place).
	StoreFormat = 2
	// keepGenerations is how many committed generations a commit keeps:
	// the new one and the one before, for readers that resolved the
	// symlink just before it switched (older ones are removed unless a
	// reader holds them).
	keepGenerations = 2
)

// TableState is the Table of a checkpoint file's manifest entry.
const TableState = "state"

// genName is the directory name of generation n.
func genName(n int64) string { return fmt.Sprintf("%08d", n) }

// ErrOldLayout is returned when a history was written by a fairledger
// before the generation store; Migrate converts it.
var ErrOldLayout = errors.New("history has the old layout (files rewritten in place); `fairledger run` or `fairledger verify --migrate` converts it")

// committed returns the committed generation's number (0 for an empty
// history) by reading the current symlink.
func (h *Store) committed() (int64, error) {
	target, err := os.Readlink(filepath.Join(h.Dir, CurrentLink))
	if errors.Is(err, fs.ErrNotExist) {
		if h.oldLayout() {
			return 0, fmt.Errorf("%s: %w", h.Dir, ErrOldLayout)
		}
		return 0, h.ownDirs(0)
	}
	if err != nil {
		return 0, fmt.Errorf("history %s: %w", h.Dir, err)
	}
	n, err := strconv.ParseInt(path.Base(filepath.ToSlash(target)), 10, 64)
	if err != nil || path.Dir(filepath.ToSlash(target)) != genDir {
		return 0, fmt.Errorf("history %s: current points to %q, not to gen/<number>", h.Dir, target)
	}
	if err := h.ownDirs(n); err != nil {
		return 0, err
	}
	return n, nil
}

// ownDirs refuses a history whose gen directory, or generation n's
// directory in it, is a symlink (or not a directory): a run writes, and
// removes old generations, only inside the history's own directory, never
// through a link to somewhere else. (The history's root may itself be a
// symlink: that is the path the user gave.)
func (h *Store) ownDirs(n int64) error {
	dirs := []string{filepath.Join(h.Dir, genDir)}
	if n > 0 {
		dirs = append(dirs, h.genPath(n))
	}
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if n == 0 && errors.Is(err, fs.ErrNotExist) {
			continue // a history without a commit yet
		}
		if err != nil {
			return fmt.Errorf("history %s: %w", h.Dir, err)
		}
		if !fi.IsDir() {
			what := "not a directory"
			if fi.Mode()&fs.ModeSymlink != 0 {
				what = "a symlink"
			}
			return fmt.Errorf("history %s: %s is %s: fairledger reads and writes only inside the history's own directories; "+
				"make it a directory (to keep the history elsewhere, give that path as --history)", h.Dir, d, what)
		}
	}
	return nil
}

// oldLayout reports files of the layout before generations: a manifest or
// a table directory at the root.
func (h *Store) oldLayout() bool {
	if _, err := os.Stat(filepath.Join(h.Dir, manifestFile)); err == nil {
		return true
	}
	for _, t := range schemas.Tables() {
		if fi, err := os.Stat(filepath.Join(h.Dir, t.Name)); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// genPath is the directory of generation n.
func (h *Store) genPath(n int64) string { return filepath.Join(h.Dir, genDir, genName(n)) }

// readGenManifest reads generation n's manifest, checked (a damaged one
// is a *ManifestError).
func (h *Store) readGenManifest(n int64) (Manifest, error) {
	if n == 0 {
		return Manifest{Format: StoreFormat, Partitions: []Partition{}}, nil
	}
	file := filepath.Join(h.genPath(n), manifestFile)
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, h.manifestError(n, "missing (the current symlink names generation "+strconv.FormatInt(n, 10)+")")
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("read manifest of generation %d: %w", n, err)
	}
	return h.decodeManifest(b, n)
}

// decodeManifest decodes generation n's manifest and checks it: valid
// JSON of the store's format and generation n, and, when it has one, its
// checksum. A manifest without a checksum (written before them) is read
// as it is. Anything else is a *ManifestError.
func (h *Store) decodeManifest(b []byte, n int64) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, h.manifestError(n, "not a manifest (not valid JSON: "+err.Error()+")")
	}
	if m.Format != StoreFormat || m.Generation != n {
		return Manifest{}, h.manifestError(n, fmt.Sprintf("format %d generation %d, want format %d generation %d", m.Format, m.Generation, StoreFormat, n))
	}
	if m.Checksum != "" {
		sum, err := manifestChecksum(m)
		if err != nil {
			return Manifest{}, fmt.Errorf("manifest of generation %d: %w", n, err)
		}
		if sum != m.Checksum {
			return Manifest{}, h.manifestError(n, "its content does not match its checksum "+m.Checksum+
				" (computed "+sum+"): it was changed after the commit that wrote it")
		}
	}
	if m.Partitions == nil {
		m.Partitions = []Partition{}
	}
	return m, nil
}

// manifestChecksum is m's checksum: "sha256:" and the hex SHA-256 of its
// canonical encoding, encoding/json's compact encoding of m with an empty
// Checksum (the fields in their struct order, no whitespace). It depends
// only on what the manifest says, not on how its file is indented.
func manifestChecksum(m Manifest) (string, error) {
	m.Checksum = ""
	if m.Partitions == nil {
		m.Partitions = []Partition{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// encodeManifest is the bytes of m's file, with its checksum set.
func encodeManifest(m Manifest) ([]byte, error) {
	sum, err := manifestChecksum(m)
	if err != nil {
		return nil, err
	}
	m.Checksum = sum
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ManifestError is a generation's manifest that cannot be trusted: missing,
// not a manifest, or changed after its commit (its checksum differs).
// Nothing of the generation is read or written through it.
type ManifestError struct {
	// History is the history's directory, Generation the generation.
	History    string
	Generation int64
	// Path is the manifest file.
	Path string
	// Problem says what is wrong.
	Problem string
}

func (e *ManifestError) Error() string {
	return fmt.Sprintf("history %s: manifest %s is damaged: %s; nothing was read or written: "+
		"`fairledger verify --history %s` says more, `fairledger verify --repair --history %s` goes back to the newest older generation that verifies",
		e.History, e.Path, strings.Join(strings.Fields(e.Problem), " "), e.History, e.History)
}

func (h *Store) manifestError(n int64, problem string) *ManifestError {
	return &ManifestError{History: h.Dir, Generation: n, Path: filepath.Join(h.genPath(n), manifestFile), Problem: problem}
}

// View is one committed generation of a history, pinned for reading: its
// files stay in place until Close, whatever runs commit meanwhile.
type View struct {
	// Dir is the generation's directory (absolute when the history's is).
	Dir string
	// Manifest lists the generation's files.
	Manifest Manifest
	lock     *os.File
}

// View pins the committed generation for reading. An empty history (no
// commit yet) gives a View with no files and an empty Dir.
func (h *Store) View() (*View, error) {
	for try := 0; ; try++ {
		n, err := h.committed()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return &View{Manifest: Manifest{Format: StoreFormat, Partitions: []Partition{}}}, nil
		}
		dir := h.genPath(n)
		f, b, err := h.pinManifest(n)
		if errors.Is(err, fs.ErrNotExist) && try < 5 {
			continue // removed between the readlink and the open: read the symlink again
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, h.manifestError(n, "missing (the current symlink names generation "+strconv.FormatInt(n, 10)+")")
		}
		if err != nil {
			return nil, fmt.Errorf("history %s: %w", h.Dir, err)
		}
		if len(b) == 0 && try < 5 {
			f.Close() // emptied by a removal that raced the flock
			continue
		}
		m, err := h.decodeManifest(b, n)
		if err != nil {
			f.Close()
			return nil, err
		}
		return &View{Dir: dir, Manifest: m, lock: f}, nil
	}
}

// pinManifest opens generation n's manifest, takes a shared flock on it
// (a commit does not remove a generation while one is held) and reads it;
// the caller closes f, which releases the generation.
func (h *Store) pinManifest(n int64) (f *os.File, b []byte, err error) {
	if f, err = os.Open(filepath.Join(h.genPath(n), manifestFile)); err != nil {
		return nil, nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("pin generation %d: %w", n, err)
	}
	if b, err = io.ReadAll(f); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, b, nil
}

// Close releases the generation.
func (v *View) Close() error {
	if v == nil || v.lock == nil {
		return nil
	}
	err := v.lock.Close()
	v.lock = nil
	return err
}

// Generation is the pinned generation's number (0: an empty history).
func (v *View) Generation() int64 { return v.Manifest.Generation }

// Files returns the view's files of table and cluster ("" for every
// cluster), in path order.
func (v *View) Files(table, cluster string) []Partition {
	return v.Manifest.Files(table, cluster)
}

// Files returns the manifest's files of table and cluster ("" for every
// cluster), in path order.
func (m *Manifest) Files(table, cluster string) []Partition {
	var out []Partition
	for _, p := range m.Partitions {
		if p.Table == table && (cluster == "" || p.Cluster == cluster) {
			out = append(out, p)
		}
	}
	return out
}

// Path is the full path of one of the view's files.
func (v *View) Path(p Partition) string { return filepath.Join(v.Dir, filepath.FromSlash(p.Path)) }

// Read reads file p of the view into dst, a pointer to a slice of the row
// type of p's table (*[]record.JobRow for the jobs ... *[]record.PriorityRow:
// tables.go lists them), after checking its size and row count against the
// manifest.
func (v *View) Read(p Partition, dst any) error {
	return readSegment(v.Path(p), p, dst)
}

// ReadPartition reads every file of the (table, cluster, month) partition
// into dst, in the table's sort order. A partition without files is an
// error wrapping fs.ErrNotExist.
func (v *View) ReadPartition(table, cluster string, month time.Time, dst any) error {
	m := schemas.MonthKey(month)
	var files []Partition
	for _, p := range v.Files(table, cluster) {
		if p.Month == m {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		return fmt.Errorf("read partition %s: %w", partitionDir(table, cluster, m), fs.ErrNotExist)
	}
	return readSegments(func(p Partition) string { return v.Path(p) }, files, dst)
}

// readSegments reads files into dst and sorts the union in the table's
// order.
func readSegments(full func(Partition) string, files []Partition, dst any) error {
	d := tableOfDst(dst)
	if d == nil {
		return fmt.Errorf("read: destination of type %T", dst)
	}
	return d.readSorted(full, files, dst)
}

func readSorted[T any](full func(Partition) string, files []Partition, dst *[]T, cmp func(a, b *T) int) error {
	var all []T
	for _, p := range files {
		var rows []T
		if err := readSegment(full(p), p, &rows); err != nil {
			return err
		}
		all = append(all, rows...)
	}
	if len(files) > 1 {
		slices.SortStableFunc(all, func(a, b T) int { return cmp(&a, &b) })
	}
	*dst = all
	return nil
}

// readSegment reads one file into dst, checking its size, SHA-256 and row
// count against its manifest entry p: what a file's bytes are decoded
// into is never damaged data (hashing costs little next to decoding).
func readSegment(file string, p Partition, dst any) error {
	d := tableOfDst(dst)
	if d == nil {
		return fmt.Errorf("read %s: destination of type %T", p.Path, dst)
	}
	if want := d.tableName(); want != p.Table {
		return fmt.Errorf("read %s: %T rows belong to table %s", p.Path, dst, want)
	}
	b, err := readVerified(file, p)
	if err != nil {
		return err
	}
	n, err := d.decodeFile(b, dst)
	if err != nil {
		return &CorruptError{Path: p.Path, Problem: "not readable Parquet: " + err.Error()}
	}
	if int64(n) != p.Rows {
		return &CorruptError{Path: p.Path, Problem: fmt.Sprintf("%d rows, the manifest says %d", n, p.Rows)}
	}
	return nil
}

// CorruptError is a history file that does not match its manifest entry or
// is not readable Parquet.
type CorruptError struct {
	Path    string // relative to the generation
	Problem string
}

func (e *CorruptError) Error() string {
	// One line whatever the problem's text (a decoder's message may span
	// several).
	return "history file " + e.Path + " is damaged: " + strings.Join(strings.Fields(e.Problem), " ")
}

// Txn is one commit being built: the files a run writes and removes on top
// of the committed generation it started from (its base). Nothing it does
// is visible until Commit; Abort (or a crash) leaves the history as it
// was. Its methods may be called from several goroutines. Only one Txn
// may be open on a history at a time: the caller holds the history's lock
// (Lock), or is a test in one process.
type Txn struct {
	h     *Store
	base  Manifest
	gen   int64 // the generation Commit makes
	stage string
	mu    sync.Mutex
	add   map[string]Partition
	drop  map[string]bool
	done  bool
}

// Begin starts a commit on top of the committed generation. It removes
// what interrupted commits left (stage directories, and generations newer
// than the committed one, which no reader can have pinned).
func (h *Store) Begin() (*Txn, error) {
	base, err := h.committed()
	if err != nil {
		return nil, err
	}
	m, err := h.readGenManifest(base)
	if err != nil {
		return nil, err
	}
	if err := h.removeUncommitted(base); err != nil {
		return nil, err
	}
	return h.newTxn(m, base+1)
}

// newTxn starts the commit of generation gen on top of base: a new stage
// directory.
func (h *Store) newTxn(base Manifest, gen int64) (*Txn, error) {
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("begin commit: %w", err)
	}
	stage := filepath.Join(h.Dir, genDir, stagePrefix+genName(gen)+"-"+hex.EncodeToString(rnd[:]))
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return nil, fmt.Errorf("begin commit: %w", err)
	}
	return &Txn{h: h, base: base, gen: gen, stage: stage, add: map[string]Partition{}, drop: map[string]bool{}}, nil
}

// removeUncommitted removes stage directories and generations after base.
func (h *Store) removeUncommitted(base int64) error {
	entries, err := os.ReadDir(filepath.Join(h.Dir, genDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clean history: %w", err)
	}
	for _, e := range entries {
		n, err := strconv.ParseInt(e.Name(), 10, 64)
		if strings.HasPrefix(e.Name(), stagePrefix) || (err == nil && n > base) {
			if err := os.RemoveAll(filepath.Join(h.Dir, genDir, e.Name())); err != nil {
				return fmt.Errorf("clean history: %w", err)
			}
		}
	}
	return nil
}

// Base returns the manifest of the generation the commit builds on.
func (t *Txn) Base() *Manifest { return &t.base }

// Generation is the number the commit will have.
func (t *Txn) Generation() int64 { return t.gen }

// BaseView returns the generation the commit builds on as a View, to read
// it through the read API (View.Snapshot, View.ReadPartition). It is valid
// while t is open, whatever t removes; its Close does nothing.
func (t *Txn) BaseView() *View {
	return &View{Dir: t.h.genPath(t.base.Generation), Manifest: t.base}
}

// Read reads file p of the base, or one the commit wrote, into dst (see
// View.Read), verifying its SHA-256: a run never builds on a damaged file.
func (t *Txn) Read(p Partition, dst any) error {
	return readSegment(t.filePath(p), p, dst)
}

// ReadJobs appends the rows of jobs file p (of the base, or one the commit
// wrote) to t, verified against the manifest and decoded a few thousand
// rows at a time: the run's way to read jobs, without the transient
// []record.JobRow of a whole file.
func (t *Txn) ReadJobs(p Partition, dst *record.JobTable) error {
	if p.Table != schemas.TableJobs {
		return fmt.Errorf("read %s: not a jobs file", p.Path)
	}
	b, err := readVerified(t.filePath(p), p)
	if err != nil {
		return err
	}
	before := len(dst.Recs)
	if err := appendJobs(b, dst); err != nil {
		dst.Recs = dst.Recs[:before]
		return &CorruptError{Path: p.Path, Problem: "not readable Parquet: " + err.Error()}
	}
	if n := int64(len(dst.Recs) - before); n != p.Rows {
		dst.Recs = dst.Recs[:before]
		return &CorruptError{Path: p.Path, Problem: fmt.Sprintf("%d rows, the manifest says %d", n, p.Rows)}
	}
	return nil
}

// CheckBase checks that every file of the base is there with the size its
// manifest gives, and that a data file's Parquet footer is readable and
// counts the manifest's rows: a run refuses to build on a history with a
// missing, truncated or foreign file, even one it would only carry over
// (Verify checks the contents).
func (t *Txn) CheckBase() error {
	for _, p := range t.base.Partitions {
		if p.Table != TableState {
			if err := checkFooter(t.basePath(p), p); err != nil {
				return err
			}
			continue
		}
		fi, err := os.Stat(t.basePath(p))
		if err != nil {
			return &CorruptError{Path: p.Path, Problem: "missing: " + err.Error()}
		}
		if fi.Size() != p.Bytes {
			return &CorruptError{Path: p.Path, Problem: fmt.Sprintf("%d bytes, the manifest says %d", fi.Size(), p.Bytes)}
		}
	}
	return nil
}

// ReadBytes returns base file p's bytes, verified against the manifest.
func (t *Txn) ReadBytes(p Partition) ([]byte, error) {
	return readVerified(t.basePath(p), p)
}

func (t *Txn) basePath(p Partition) string {
	return filepath.Join(t.h.genPath(t.base.Generation), filepath.FromSlash(p.Path))
}

// filePath is where file p is: in the stage when the commit wrote it.
func (t *Txn) filePath(p Partition) string {
	t.mu.Lock()
	_, added := t.add[p.Path]
	t.mu.Unlock()
	if added {
		return filepath.Join(t.stage, filepath.FromSlash(p.Path))
	}
	return t.basePath(p)
}

// Remove drops file p from the new generation: a base file, or one the
// commit wrote (compaction merges those too).
func (t *Txn) Remove(p Partition) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drop[p.Path] = true
	if _, ok := t.add[p.Path]; ok {
		delete(t.add, p.Path)
		os.Remove(filepath.Join(t.stage, filepath.FromSlash(p.Path)))
	}
}

// Write writes rows (a slice of the row type of table, or the table's
// batch: a []record.JobRow or *record.JobTable, a []record.UsageRow ...
// a []record.PriorityRow; tables.go lists them) as a new file of the
// (table, cluster, month) partition, named by its content, and returns its
// manifest entry. Rows are written in the table's sort order (a *record.JobTable
// is sorted in place). hot marks a file the next runs are expected to
// replace (see Partition.Hot). No rows write no file (an empty entry).
func (t *Txn) Write(table, cluster string, month time.Time, rows any, hot bool) (Partition, error) {
	if err := validCluster(cluster); err != nil {
		return Partition{}, fmt.Errorf("write %s: %w", table, err)
	}
	d, def, err := tableNamed(table)
	if err != nil {
		return Partition{}, fmt.Errorf("write: %w", err)
	}
	if !d.owns(rows) {
		if owner := tableOfRows(rows); owner != nil {
			return Partition{}, fmt.Errorf("write %s: %T rows belong to table %s", table, rows, owner.tableName())
		}
		return Partition{}, fmt.Errorf("write %s: rows of type %T", table, rows)
	}
	p := Partition{Table: table, Cluster: cluster, Month: schemas.MonthKey(month), Hot: hot}
	encode := d.encoder(def, rows, &p)
	if p.Rows == 0 {
		return Partition{}, nil
	}
	dir := partitionDir(table, cluster, p.Month)
	prefix := "part-"
	if hot {
		prefix = "hot-"
	}
	if err := t.writeNamed(&p, dir, prefix, ".parquet", encode); err != nil {
		return Partition{}, fmt.Errorf("write %s: %w", dir, err)
	}
	return p, nil
}

// Import adds data, a whole Parquet file of table written by another
// program (DuckDB, an older fairledger), as a new settled segment of the
// (table, cluster, month) partition, named by its content as the store
// names its own, and returns its manifest entry: its footer gives the row
// count; the entry has no time or id statistics. Readers decode it as rows
// of the table, so its columns must be columns of the table; a column it
// lacks reads as zero or NULL. Tests commit such files to show how the
// history and its views read them.
func (t *Txn) Import(table, cluster string, month time.Time, data []byte) (Partition, error) {
	if err := validCluster(cluster); err != nil {
		return Partition{}, fmt.Errorf("import %s: %w", table, err)
	}
	if _, err := schemas.TableByName(table); err != nil {
		return Partition{}, fmt.Errorf("import: %w", err)
	}
	pf, err := openParquetFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return Partition{}, fmt.Errorf("import %s: not valid Parquet: %w", table, err)
	}
	p := Partition{Table: table, Cluster: cluster, Month: schemas.MonthKey(month), Rows: pf.NumRows()}
	dir := partitionDir(table, cluster, p.Month)
	err = t.writeNamed(&p, dir, "part-", ".parquet", func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return Partition{}, fmt.Errorf("import %s: %w", dir, err)
	}
	return p, nil
}

// writeNamed writes a new file into the stage under dir, named prefix +
// 16 hex digits of its SHA-256 + suffix, and records it.
func (t *Txn) writeNamed(p *Partition, dir, prefix, suffix string, encode func(io.Writer) error) error {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return errors.New("commit already finished")
	}
	t.mu.Unlock()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := "." + prefix + hex.EncodeToString(rnd[:]) + tmpMarker
	size, sum, err := writeFileIn(filepath.Join(t.stage, filepath.FromSlash(dir)), tmp, encode, false)
	if err != nil {
		return err
	}
	name := prefix + sum[:16] + suffix
	full := filepath.Join(t.stage, filepath.FromSlash(dir))
	if err := os.Rename(filepath.Join(full, tmp), filepath.Join(full, name)); err != nil {
		return err
	}
	p.Path, p.Bytes, p.SHA256 = path.Join(dir, name), size, sum
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add[p.Path] = *p
	delete(t.drop, p.Path)
	return nil
}

// WriteState stores a checkpoint blob of cluster under name (replacing a
// base file of that name).
func (t *Txn) WriteState(cluster, name string, data []byte) error {
	if err := validStateName(cluster, name); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	dir := path.Join(stateDir, "cluster="+cluster)
	full := filepath.Join(t.stage, filepath.FromSlash(dir))
	tmp := "." + name + tmpMarker
	size, sum, err := writeFileIn(full, tmp, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, false)
	if err == nil {
		err = os.Rename(filepath.Join(full, tmp), filepath.Join(full, name))
	}
	if err != nil {
		return fmt.Errorf("write state %s/%s: %w", dir, name, err)
	}
	p := Partition{Table: TableState, Cluster: cluster, Path: path.Join(dir, name), Bytes: size, SHA256: sum}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add[p.Path] = p
	delete(t.drop, p.Path)
	return nil
}

// RemoveState drops the checkpoint of cluster named name.
func (t *Txn) RemoveState(cluster, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := path.Join(stateDir, "cluster="+cluster, name)
	t.drop[p] = true
	delete(t.add, p)
}

// AppendRun writes run as a new file of the runs table, in the month of
// run.Started (UTC).
func (t *Txn) AppendRun(cluster string, run record.RunRow) (Partition, error) {
	if run.RunID == "" {
		return Partition{}, errors.New("append run: empty run id")
	}
	return t.Write(schemas.TableRuns, cluster, run.Started, []record.RunRow{run}, false)
}

// Files returns the files of table and cluster the new generation would
// have if committed now, in path order.
func (t *Txn) Files(table, cluster string) []Partition {
	m := t.manifest()
	return m.Files(table, cluster)
}

// manifest is the new generation's manifest: the base's files less those
// removed, plus those written.
func (t *Txn) manifest() Manifest {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := Manifest{Format: StoreFormat, Generation: t.gen}
	for _, p := range t.base.Partitions {
		if _, replaced := t.add[p.Path]; !t.drop[p.Path] && !replaced {
			m.Partitions = append(m.Partitions, p)
		}
	}
	for _, p := range t.add {
		m.Partitions = append(m.Partitions, p)
	}
	slices.SortFunc(m.Partitions, func(a, b Partition) int { return strings.Compare(a.Path, b.Path) })
	if m.Partitions == nil {
		m.Partitions = []Partition{}
	}
	return m
}

// Changed reports whether the commit writes or removes anything.
func (t *Txn) Changed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.add) > 0 || len(t.drop) > 0
}

// Commit makes the new generation the history's: it links the base files
// it keeps into the stage, writes the manifest and ViewsFile, makes the stage durable,
// renames it to gen/<N> and switches the current symlink, the one step
// that publishes it. Then it removes the generations no reader needs.
func (t *Txn) Commit() error {
	m := t.manifest()
	t.mu.Lock()
	t.done = true
	t.mu.Unlock()
	baseDir := t.h.genPath(t.base.Generation)
	made := map[string]bool{}
	for _, p := range m.Partitions {
		if _, ok := t.add[p.Path]; ok {
			continue
		}
		dst := filepath.Join(t.stage, filepath.FromSlash(p.Path))
		if d := filepath.Dir(dst); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return t.fail(err)
			}
			made[d] = true
		}
		if err := os.Link(filepath.Join(baseDir, filepath.FromSlash(p.Path)), dst); err != nil {
			return t.fail(err)
		}
	}
	b, err := encodeManifest(m)
	if err != nil {
		return t.fail(err)
	}
	if err := os.WriteFile(filepath.Join(t.stage, manifestFile), b, 0o644); err != nil {
		return t.fail(err)
	}
	if err := os.WriteFile(filepath.Join(t.stage, ViewsFile), []byte(schemas.ViewsSQL()), 0o644); err != nil {
		return t.fail(err)
	}
	if err := syncFS(t.stage); err != nil {
		return t.fail(err)
	}
	final := t.h.genPath(t.gen)
	if err := os.Rename(t.stage, final); err != nil {
		return t.fail(err)
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return t.fail(err)
	}
	// The commit point: current switches from the base to the new
	// generation in one rename.
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(t.h.Dir, "."+CurrentLink+tmpMarker+hex.EncodeToString(rnd[:]))
	if err := os.Symlink(path.Join(genDir, genName(t.gen)), tmp); err != nil {
		return fmt.Errorf("commit generation %d: %w", t.gen, err)
	}
	if err := os.Rename(tmp, filepath.Join(t.h.Dir, CurrentLink)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("commit generation %d: %w", t.gen, err)
	}
	if err := syncDir(t.h.Dir); err != nil {
		return fmt.Errorf("commit generation %d: %w", t.gen, err)
	}
	t.h.removeOldGenerations(t.gen)
	return nil
}

func (t *Txn) fail(err error) error {
	os.RemoveAll(t.stage)
	return fmt.Errorf("commit generation %d: %w", t.gen, err)
}

// Abort discards the commit: nothing it wrote becomes visible.
func (t *Txn) Abort() {
	t.mu.Lock()
	done := t.done
	t.done = true
	t.mu.Unlock()
	if !done {
		os.RemoveAll(t.stage)
	}
}

// removeOldGenerations removes committed generations older than the
// keepGenerations newest, except those a reader holds (a shared flock on
// their manifest). It is best effort: a generation left now is removed
// by a later commit.
func (h *Store) removeOldGenerations(current int64) {
	entries, err := os.ReadDir(filepath.Join(h.Dir, genDir))
	if err != nil {
		return
	}
	for _, e := range entries {
		n, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil || n > current-keepGenerations {
			continue
		}
		dir := filepath.Join(h.Dir, genDir, e.Name())
		f, err := os.OpenFile(filepath.Join(dir, manifestFile), os.O_RDWR, 0)
		if err == nil {
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
				f.Close()
				continue // a reader holds it
			}
			// Empty it while locked, so that a reader that opened it
			// before the removal reads no manifest and reads the symlink
			// again.
			_ = f.Truncate(0)
			_ = f.Close()
		}
		os.RemoveAll(dir)
	}
}

// syncFS makes every file and directory entry under dir durable: one
// syncfs of its file system, or, where the file system does not have it,
// an fsync of each file and directory.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = unix.Syncfs(int(f.Fd()))
	f.Close()
	if err == nil {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		return syncDir(p)
	})
}

// jobStats sets a jobs file's statistics: the range of starts and raw ids
// and the latest time a job was charged to (start + charged_sec).
func jobStats(p *Partition, t *record.JobTable) {
	var a statsAcc
	for i := range t.Recs {
		r := &t.Recs[i]
		s := floorSec(r.Start)
		a.add(s)
		a.addJob(r.JobIDRaw, s+r.ChargedSec)
	}
	a.setStats(p)
}

// timeStats sets a file's time range from each row's time.
func timeStats[T any](p *Partition, rows []T, at func(*T) time.Time) {
	var a statsAcc
	for i := range rows {
		a.add(at(&rows[i]).Unix())
	}
	a.setStats(p)
}

// floorSec converts Unix microseconds to seconds, rounding down.
func floorSec(us int64) int64 {
	s := us / 1e6
	if us%1e6 < 0 {
		s--
	}
	return s
}

// CheckFooters checks every data file of the view as a query engine would
// open it: its size against the manifest and its Parquet footer. It reads
// a few kilobytes per file; the data pages are checked by Verify.
func (v *View) CheckFooters() error {
	for _, p := range v.Manifest.Partitions {
		if p.Table == TableState {
			continue
		}
		if err := checkFooter(v.Path(p), p); err != nil {
			return err
		}
	}
	return nil
}

// checkFooter checks one file's size and Parquet footer against p.
func checkFooter(file string, p Partition) error {
	f, err := os.Open(file)
	if err != nil {
		return &CorruptError{Path: p.Path, Problem: err.Error()}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return &CorruptError{Path: p.Path, Problem: err.Error()}
	}
	if fi.Size() != p.Bytes {
		return &CorruptError{Path: p.Path, Problem: fmt.Sprintf("%d bytes, the manifest says %d", fi.Size(), p.Bytes)}
	}
	pf, err := parquet.OpenFile(f, fi.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return &CorruptError{Path: p.Path, Problem: "not valid Parquet: " + err.Error()}
	}
	if pf.NumRows() != p.Rows {
		return &CorruptError{Path: p.Path, Problem: fmt.Sprintf("%d rows, the manifest says %d", pf.NumRows(), p.Rows)}
	}
	return nil
}
