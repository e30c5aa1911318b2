package history

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/schemas"
)

// Problem is one thing Verify found wrong in a history.
type Problem struct {
	// Path is the file: the history's Dir joined with gen/<N>/ and the
	// file's manifest path (or, for a file of the old layout, the history's
	// Dir joined with its name).
	Path string
	// What is wrong with it.
	What string
	// Repair is what to do about it, in words an administrator can act on
	// (after Repair: what it did, and what is left to run).
	Repair string
	// File is the file's manifest entry; nil for a file the manifest does
	// not list (Repair leaves those alone).
	File *Partition
	// Intact is a copy of the file with the manifest's size and SHA-256 in
	// another generation of the history, or "".
	Intact string
	// Fixed is what Repair did with the file: FixedRemoved, FixedRestored,
	// or "" (Verify; a file the manifest does not list).
	Fixed string
	// Rerun is the run that recomputes the file's rows once Repair has
	// removed it (Verify: would remove it); nil when nothing is to be
	// recomputed (a runs file, most checkpoints, a restored file).
	Rerun *Rerun

	kind   damage     // of a listed file, or badManifest
	actual *Partition // the file's statistics from its rows (kind wrongStats)
}

// What Repair did with a file (Problem.Fixed).
const (
	// FixedRemoved: the file is not in the repaired generation.
	FixedRemoved = "removed"
	// FixedRestored: the file is in the repaired generation again, linked
	// from its intact copy in an older generation (Problem.Intact).
	FixedRestored = "restored"
	// FixedRecorded: the file is in the repaired generation as it was,
	// its manifest entry's statistics recorded from its rows.
	FixedRecorded = "recorded"
	// FixedReplaced: the damaged manifest (Problem.Path) was left behind:
	// the repaired generation is a copy of an older one that verifies
	// (VerifyReport.Fallback).
	FixedReplaced = "replaced"
)

// Rerun is a `fairledger run` that recomputes rows of a cluster that
// Repair removed: from the newest intact checkpoint at or before the
// removed rows (or afresh from where the cluster's history started) to
// the cluster's newest checkpoint, with every sacct file from its start on.
type Rerun struct {
	Cluster string
	// From is where the run starts (Unix seconds, --from): Checkpoint's
	// time, or with Fresh the origin of the cluster's history (0: not
	// recorded by its checkpoints; the start of its first sacct file).
	From int64
	// Checkpoint is the name of the checkpoint the run resumes from; ""
	// with Fresh.
	Checkpoint string
	// Fresh: no intact checkpoint is at or before the rows: the run starts
	// afresh at the origin, reading every sacct file from there on.
	Fresh bool
	// To is the cluster's newest checkpoint time (Unix seconds, --to): the
	// run must end at or after it. 0 when the cluster has no checkpoint.
	To int64
	// Command is the command line: the sacct files and the nightly run's
	// other flags (--slurm-conf, --assoc, --qos, --tz, --cluster) are
	// placeholders; RerunFlags says so in words.
	Command string
}

// RerunFlags says, after a Rerun's Command, which flags its "..." stands
// for.
func RerunFlags(cluster string) string {
	return `"..." = the --slurm-conf, --assoc, --qos, --tz and --cluster flags of cluster ` + cluster + `'s nightly run; one --sacct per file`
}

// VerifyReport is what Verify checked and found.
type VerifyReport struct {
	// Generation is the generation checked (0: a history without a
	// commit).
	Generation int64
	// Problems are sorted by path; none means every file checked matches
	// the manifest.
	Problems []Problem
	// Files is the number of manifest files checked; Bytes the bytes read
	// and hashed.
	Files int
	Bytes int64
	// Repaired is the generation Repair committed (0: none).
	Repaired int64
	// Fallback is, when the checked generation's manifest is damaged (a
	// Problem with that manifest's Path), the newest older generation
	// whose manifest and files verify: Repair commits a copy of it
	// (Verify: would). 0: none, or the manifest is sound.
	Fallback int64
	// Reruns are the runs that recompute what Repair removed (Verify:
	// would remove), one per cluster (the earliest start any of its
	// problems needs), sorted by cluster.
	Reruns []Rerun

	fallback *fallback // Fallback's manifest and the nights it lacks (manifestReport)
}

// Verify checks the committed generation's files of cluster ("" for every
// cluster) against its manifest: that each exists with the manifest's size
// and SHA-256, that a data file's Parquet footer is readable and counts the
// manifest's rows, and that a checkpoint is valid JSON. It also reports
// files in the generation's directory that the manifest does not list, and
// files of the old layout beside the generation store. It reads every byte
// of every file, several files at a time; the generation stays pinned
// (View) meanwhile, so runs may commit while it checks. A damaged file is
// a Problem, not an error: errors are for a history Verify cannot check
// at all (ErrOldLayout, an unreadable manifest, an unknown cluster). Each
// Problem's Repair says what Repair would do and what to run after it.
func (h *Store) Verify(cluster string) (VerifyReport, error) {
	rep, plans, err := h.verify(cluster)
	if err != nil {
		return rep, err
	}
	h.explain(&rep, plans)
	return rep, nil
}

// Repair runs Verify and then, when files the manifest lists are damaged
// or missing, makes one commit without them: a file with an intact copy
// in an older generation (Problem.Intact) is linked back from it, every
// other one is removed from the history (a damaged checkpoint too, the
// newest included: runs then resume from the one before). Files the
// manifest does not list are only reported (they are not part of the
// generation's data, and the commit does not link them). The report's
// Problems say what was done (Fixed) and what is left to run (Rerun; its
// Reruns, one per cluster), Repaired the generation committed. The caller
// holds the history's lock (Lock).
func (h *Store) Repair(cluster string) (VerifyReport, error) {
	rep, plans, err := h.verify(cluster)
	if err != nil {
		return rep, err
	}
	if rep.damagedManifest() != nil {
		return h.fallBack(rep, cluster)
	}
	var listed []int
	for i := range rep.Problems {
		if rep.Problems[i].File != nil {
			listed = append(listed, i)
		}
	}
	if len(listed) == 0 {
		h.explain(&rep, plans)
		return rep, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.Begin()
	if err != nil {
		return rep, fmt.Errorf("repair: %w", err)
	}
	if g := t.Base().Generation; g != rep.Generation {
		t.Abort()
		return rep, fmt.Errorf("repair: generation %d was committed while generation %d was verified: "+
			"does a process write history %s without its lock? nothing was changed", g, rep.Generation, h.Dir)
	}
	cutAt := map[string]int64{} // cluster → where its history is cut
	for _, i := range listed {
		pr := &rep.Problems[i]
		if pr.kind == future {
			c := pr.File.Cluster
			cutAt[c] = 0
			if cp := plans[c].newestIntact(); cp != nil {
				cutAt[c] = cp.at
			}
			pr.Fixed = FixedRemoved
			continue
		}
		if pr.kind == wrongStats {
			if err := t.restore(withStats(*pr.File, *pr.actual), t.basePath(*pr.File)); err != nil {
				t.Abort()
				return rep, fmt.Errorf("repair: %w", err)
			}
			pr.Fixed = FixedRecorded
			continue
		}
		if pr.Intact != "" {
			if err := t.restore(*pr.File, pr.Intact); err != nil {
				t.Abort()
				return rep, fmt.Errorf("repair: %w", err)
			}
			pr.Fixed = FixedRestored
			continue
		}
		t.Remove(*pr.File)
		pr.Fixed = FixedRemoved
	}
	for _, c := range slices.Sorted(maps.Keys(cutAt)) {
		if _, err := t.cutAfter(c, cutAt[c]); err != nil {
			t.Abort()
			for _, i := range listed {
				rep.Problems[i].Fixed = ""
			}
			return rep, fmt.Errorf("repair: %w", err)
		}
	}
	if err := t.Commit(); err != nil {
		if cluster != "" {
			err = fmt.Errorf("%w (the commit links every other file of the generation: is a file of another cluster "+
				"missing? run verify --repair without --cluster)", err)
		}
		for _, i := range listed {
			rep.Problems[i].Fixed = ""
		}
		return rep, fmt.Errorf("repair: %w", err)
	}
	rep.Repaired = t.Generation()
	h.explain(&rep, plans)
	return rep, nil
}

// restore links file p's intact copy (from another generation) into the
// commit, in place of the base's damaged one.
func (t *Txn) restore(p Partition, intact string) error {
	dst := filepath.Join(t.stage, filepath.FromSlash(p.Path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(intact, dst); err != nil {
		return fmt.Errorf("restore %s: %w", p.Path, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add[p.Path] = p
	delete(t.drop, p.Path)
	return nil
}

// verify checks the files (see Verify) and returns the problems, without
// their Repair texts, and the checkpoints of the clusters that have
// problems with listed files, which the texts need.
func (h *Store) verify(cluster string) (VerifyReport, map[string]*clusterPlan, error) {
	if cluster != "" {
		if err := validCluster(cluster); err != nil {
			return VerifyReport{}, nil, fmt.Errorf("verify: %w", err)
		}
	}
	v, err := h.View()
	if me := (*ManifestError)(nil); errors.As(err, &me) {
		return h.manifestReport(me), nil, nil
	}
	if err != nil {
		return VerifyReport{}, nil, err
	}
	defer v.Close()
	rep := VerifyReport{Generation: v.Generation()}
	var files []Partition
	clusters := map[string]bool{}
	for _, p := range v.Manifest.Partitions {
		clusters[p.Cluster] = true
		if cluster == "" || p.Cluster == cluster {
			files = append(files, p)
		}
	}
	if cluster != "" && len(files) == 0 {
		names := make([]string, 0, len(clusters))
		for c := range clusters {
			names = append(names, c)
		}
		slices.Sort(names)
		return rep, nil, fmt.Errorf("verify: history %s has no files of cluster %q (its clusters: %s)", h.Dir, cluster, strings.Join(names, ", "))
	}
	rep.Files = len(files)

	problems, nbytes := h.checkFiles(v, files, true)
	rep.Bytes = nbytes
	damaged := map[string]bool{}
	for _, p := range problems {
		if p != nil {
			rep.Problems = append(rep.Problems, *p)
			damaged[p.File.Path] = true
		}
	}
	now := h.now().Unix()
	for _, p := range futureCheckpoints(&v.Manifest, cluster, now) {
		if damaged[p.Path] {
			continue
		}
		damaged[p.Path] = true
		fp := p
		rep.Problems = append(rep.Problems, Problem{Path: v.Path(p), File: &fp, kind: future,
			What: fmt.Sprintf("a checkpoint after now (%s): a run charged job times that had not happened yet, and every later run of cluster %s is refused",
				fmtUnix(now), p.Cluster)})
	}
	plans := map[string]*clusterPlan{}
	for _, p := range rep.Problems {
		if c := p.File.Cluster; plans[c] == nil {
			plans[c] = newClusterPlan(v, c, damaged, now)
		}
	}
	if v.Dir != "" {
		strays, err := strayFiles(v, cluster)
		if err != nil {
			return rep, nil, err
		}
		rep.Problems = append(rep.Problems, strays...)
	}
	rep.Problems = append(rep.Problems, h.oldLeftovers()...)
	slices.SortStableFunc(rep.Problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return rep, plans, nil
}

// checkFiles checks files of v (checkFile), GOMAXPROCS at a time, and
// returns their problems (problems[i] is files[i]'s, nil when it has
// none) and the bytes hashed. With intact, a damaged file's problem names
// an intact copy in another generation, if any.
func (h *Store) checkFiles(v *View, files []Partition, intact bool) (problems []*Problem, hashed int64) {
	problems = make([]*Problem, len(files))
	var bytes atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(files))) {
		wg.Go(func() {
			buf := make([]byte, 1<<20)
			for {
				i := int(next.Add(1)) - 1
				if i >= len(files) {
					return
				}
				p := files[i]
				what, kind, n := checkFile(v.Path(p), p, buf)
				bytes.Add(n)
				if what == "" {
					continue
				}
				pr := &Problem{Path: v.Path(p), What: what, File: &files[i], kind: kind}
				if intact && kind != asWritten && kind != wrongStats {
					pr.Intact = h.intactCopy(v.Generation(), p, buf)
				}
				if kind == wrongStats {
					if got, err := statsOfFile(v.Path(p), p); err == nil {
						pr.actual = &got
					} else {
						pr.kind, pr.What = changed, "changed while verified: "+err.Error()
					}
				}
				problems[i] = pr
			}
		})
	}
	wg.Wait()
	return problems, bytes.Load()
}

// statsOfFile is the statistics of data file p's rows (contentStats).
func statsOfFile(file string, p Partition) (Partition, error) {
	f, err := os.Open(file)
	if err != nil {
		return Partition{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Partition{}, err
	}
	return contentStats(f, fi.Size(), p.Table)
}

// damage is how a file differs from its manifest entry, which decides
// what runs do with it and whether a copy can help.
type damage int

const (
	// gone: missing or of another size. Runs (Txn.CheckBase), sql and
	// report (View.CheckFooters) refuse the history until it is back.
	gone damage = iota
	// changed: the size is right but not the SHA-256. A run stops when it
	// reads the file (Txn.Read verifies it).
	changed
	// asWritten: the SHA-256 is the manifest's, but the content is not
	// readable (Parquet footer, row count, JSON): the run wrote it so,
	// and every copy is the same.
	asWritten
	// future: a checkpoint after the moment of Verify, written by a run
	// that charged job times that had not happened yet. Runs refuse the
	// history; Repair cuts the cluster back to before it (cutAfter).
	future
	// wrongStats: the file is as the run wrote it (its SHA-256 is the
	// manifest's) but the manifest entry's statistics (rows, min_time,
	// ...) are not its rows': the manifest was edited, and runs plan with
	// the wrong values. Repair records the file's own.
	wrongStats
	// badManifest: the generation's manifest itself is damaged (a Problem
	// with no File): Repair commits a copy of an older generation.
	badManifest
)

// checkFile checks one file against its manifest entry p, using buf to
// read it. It returns what is wrong ("" for nothing) and how, and the
// number of bytes it hashed.
func checkFile(file string, p Partition, buf []byte) (what string, kind damage, hashed int64) {
	if !filepath.IsLocal(filepath.FromSlash(p.Path)) {
		return fmt.Sprintf("the manifest's path %q leaves the generation's directory", p.Path), asWritten, 0
	}
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing (the manifest lists it)", gone, 0
	}
	if err != nil {
		return err.Error(), gone, 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err.Error(), gone, 0
	}
	if !fi.Mode().IsRegular() {
		return "not a regular file", gone, 0
	}
	if fi.Size() != p.Bytes {
		return fmt.Sprintf("%d bytes, the manifest says %d (truncated or overwritten)", fi.Size(), p.Bytes), gone, 0
	}
	sum := sha256.New()
	// A checkpoint is kept whole for json.Valid; data files are streamed.
	var blob []byte
	var w io.Writer = sum
	checkpoint := p.Table == TableState && IsCheckpoint(path.Base(p.Path))
	if checkpoint {
		blob = make([]byte, 0, fi.Size())
		w = io.MultiWriter(sum, &appendWriter{b: &blob})
	}
	n, err := io.CopyBuffer(w, io.LimitReader(f, fi.Size()+1), buf)
	if err != nil {
		return "unreadable: " + err.Error(), changed, n
	}
	if n != p.Bytes {
		return fmt.Sprintf("%d bytes read, the manifest says %d (changed while verified?)", n, p.Bytes), gone, n
	}
	if hex.EncodeToString(sum.Sum(nil)) != p.SHA256 {
		return "SHA-256 differs from the manifest's: the bytes changed after the run wrote them", changed, n
	}
	if p.Table == TableState {
		if checkpoint && !json.Valid(blob) {
			return "not valid JSON, though its SHA-256 is the manifest's", asWritten, n
		}
		return "", asWritten, n
	}
	pf, err := parquet.OpenFile(f, fi.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return "Parquet footer not readable, though its SHA-256 is the manifest's: " + err.Error(), asWritten, n
	}
	if pf.NumRows() != p.Rows {
		return fmt.Sprintf("its Parquet footer counts %d rows, the manifest %d", pf.NumRows(), p.Rows), asWritten, n
	}
	if !hasStats(p) {
		return "", asWritten, n
	}
	got, err := contentStats(f, fi.Size(), p.Table)
	if err != nil {
		return "rows not readable, though its SHA-256 is the manifest's: " + err.Error(), asWritten, n
	}
	if d := statsDiff(p, got); len(d) > 0 {
		return "the manifest's statistics are not the file's (the bytes are as the run wrote them; the manifest was changed): " +
			strings.Join(d, "; "), wrongStats, n
	}
	return "", asWritten, n
}

// intactCopy returns the path of a copy of file p with the manifest's
// size and SHA-256 in another generation of the history (its hard link
// there survives when the file was removed or replaced in this one), or
// "".
func (h *Store) intactCopy(gen int64, p Partition, buf []byte) string {
	entries, err := os.ReadDir(filepath.Join(h.Dir, genDir))
	if err != nil {
		return ""
	}
	for _, e := range slices.Backward(entries) { // the newest first
		n, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil || n == gen || n <= 0 {
			continue
		}
		c := filepath.Join(h.genPath(n), filepath.FromSlash(p.Path))
		if what, _, _ := checkFile(c, p, buf); what == "" {
			return c
		}
	}
	return ""
}

type appendWriter struct{ b *[]byte }

func (a *appendWriter) Write(p []byte) (int, error) {
	*a.b = append(*a.b, p...)
	return len(p), nil
}

// strayFiles reports the files in the view's directory that its manifest
// does not list (of cluster's directories, or anywhere with cluster "").
func strayFiles(v *View, cluster string) ([]Problem, error) {
	listed := make(map[string]bool, len(v.Manifest.Partitions)+2)
	for _, p := range v.Manifest.Partitions {
		listed[p.Path] = true
	}
	listed[manifestFile] = true
	listed[ViewsFile] = true // written by every commit, outside the manifest
	var out []Problem
	err := filepath.WalkDir(v.Dir, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(v.Dir, full)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if listed[rel] {
			return nil
		}
		parts := strings.Split(rel, "/")
		if cluster != "" && (len(parts) < 2 || parts[1] != "cluster="+cluster) {
			return nil
		}
		out = append(out, Problem{Path: full, What: "not listed in the manifest", Repair: strayRepair(parts)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("verify: list %s: %w", v.Dir, err)
	}
	return out, nil
}

// strayRepair says what to do about a file the manifest does not list.
func strayRepair(parts []string) string {
	const notOurs = "fairledger never leaves a file outside the manifest in a committed generation, so it was put there by hand or by another program"
	if len(parts) >= 4 && strings.HasSuffix(parts[len(parts)-1], ".parquet") && isTable(parts[0]) {
		return notOurs + "; fairledger and views.sql read only the manifest's files, but an engine globbing the table's " +
			"directories would count its rows: move it out of the history"
	}
	return notOurs + "; no fairledger command reads it: move it out of the history"
}

func isTable(name string) bool {
	_, err := schemas.TableByName(name)
	return err == nil
}

// oldLeftovers reports files of the old layout at the root of a history
// that has a committed generation.
func (h *Store) oldLeftovers() []Problem {
	if _, err := os.Lstat(filepath.Join(h.Dir, CurrentLink)); err != nil || !h.hasOldFiles() {
		return nil
	}
	repair := "fairledger reads only the generations (current/); files of the old layout at the root were written by a fairledger " +
		"older than the generation store after the history was converted? stop the older binary, then move them out of the history"
	if _, err := os.Stat(filepath.Join(h.Dir, migratingMarker)); err == nil {
		repair = "a migration to the generation store was interrupted after its commit: `fairledger verify --migrate --history " +
			h.Dir + "` removes them"
	}
	var out []Problem
	for _, name := range append([]string{manifestFile, stateDir}, tableNames()...) {
		if _, err := os.Stat(filepath.Join(h.Dir, name)); err == nil {
			out = append(out, Problem{Path: filepath.Join(h.Dir, name), What: "left from the old layout (files rewritten in place)", Repair: repair})
		}
	}
	return out
}

func tableNames() []string {
	var out []string
	for _, t := range schemas.Tables() {
		out = append(out, t.Name)
	}
	return out
}

// clusterPlan is what the Repair texts of a cluster's files need: its
// checkpoints, by time.
type clusterPlan struct {
	cluster string
	cps     []checkpointInfo
	// origin is the smallest non-zero "origin" of the intact checkpoints:
	// where the cluster's history started (0: not recorded).
	origin int64
}

type checkpointInfo struct {
	name    string // the file name, checkpoint-<time>.json
	at      int64  // its time (Unix seconds, the "to" of the run that wrote it; 0 unknown)
	damaged bool   // a Problem: Repair removes (or restores) it
	future  bool   // after now: Repair cuts the history back to before it
}

// newClusterPlan reads the checkpoints of cluster in v; damaged holds the
// manifest paths of the files with problems; checkpoints after now are
// in the future.
func newClusterPlan(v *View, cluster string, damaged map[string]bool, now int64) *clusterPlan {
	c := &clusterPlan{cluster: cluster}
	for _, p := range v.Files(TableState, cluster) {
		if !IsCheckpoint(path.Base(p.Path)) {
			continue
		}
		ci := checkpointInfo{name: path.Base(p.Path), at: checkpointTime(path.Base(p.Path)), damaged: damaged[p.Path]}
		ci.future = ci.at > now
		if !ci.damaged {
			var j struct {
				To     int64 `json:"to"`
				Origin int64 `json:"origin"`
			}
			if b, err := readVerified(v.Path(p), p); err == nil && json.Unmarshal(b, &j) == nil {
				if ci.at == 0 {
					ci.at = j.To
				}
				if j.Origin != 0 && (c.origin == 0 || j.Origin < c.origin) {
					c.origin = j.Origin
				}
			}
		}
		c.cps = append(c.cps, ci)
	}
	slices.SortStableFunc(c.cps, func(a, b checkpointInfo) int { return cmp.Compare(a.at, b.at) })
	return c
}

// checkpointTime is the time in a checkpoint's name
// (checkpoint-20060102T150405Z.json), or 0.
func checkpointTime(name string) int64 {
	s, ok := strings.CutPrefix(name, checkpointPrefix)
	if !ok {
		return 0
	}
	t, err := time.Parse(runLayout, strings.TrimSuffix(s, ".json"))
	if err != nil {
		return 0
	}
	return t.Unix()
}

// newest is the time of the cluster's newest checkpoint, damaged or not
// (0: none): a run must end at or after it, and a recompute reaching it
// recomputes everything the history holds of the cluster.
func (c *clusterPlan) newest() int64 {
	var t int64
	for _, cp := range c.cps {
		if !cp.future {
			t = max(t, cp.at)
		}
	}
	return t
}

// intactAtOrBefore is the newest intact checkpoint at or before t, or nil.
func (c *clusterPlan) intactAtOrBefore(t int64) *checkpointInfo {
	for i := len(c.cps) - 1; i >= 0; i-- {
		if cp := &c.cps[i]; !cp.damaged && cp.at > 0 && cp.at <= t {
			return cp
		}
	}
	return nil
}

// newestIntact is the newest intact checkpoint, or nil.
func (c *clusterPlan) newestIntact() *checkpointInfo { return c.intactAtOrBefore(math.MaxInt64) }

// snapshotTable reports whether table's rows belong to fair-share
// snapshots (its time is the snapshot's).
func snapshotTable(table string) bool {
	d, _, err := tableNamed(table)
	return err == nil && d.snapshotRows()
}

// rerunFor is the run that recomputes data file p once it is removed: from
// the newest intact checkpoint at or before its first row (strictly
// before for snapshots: a run takes its snapshots after its start, not at
// it), and before the newest checkpoint (a window must not be empty), to
// the newest checkpoint; else afresh from the cluster's origin.
func (c *clusterPlan) rerunFor(p Partition) *Rerun {
	r := &Rerun{Cluster: c.cluster, To: c.newest()}
	limit := p.MinTime
	if snapshotTable(p.Table) {
		limit--
	}
	if r.To != 0 {
		limit = min(limit, r.To-1)
	}
	if cp := c.intactAtOrBefore(limit); cp != nil {
		r.From, r.Checkpoint = cp.at, cp.name
	} else {
		r.From, r.Fresh = c.origin, true
	}
	return r
}

// fresh is the run that recomputes the cluster from its origin: what is
// left when it has no intact checkpoint.
func (c *clusterPlan) fresh() *Rerun {
	return &Rerun{Cluster: c.cluster, From: c.origin, Fresh: true, To: c.newest()}
}

// setCommand fills r.Command for history dir.
func (r *Rerun) setCommand(dir string) {
	from := "<the start of cluster " + r.Cluster + "'s first sacct file>"
	sacct := "<every sacct file of cluster " + r.Cluster + ">"
	if r.From != 0 {
		from = fmtUnix(r.From)
		sacct = "<every sacct file of cluster " + r.Cluster + " from " + fmtDate(r.From) + " on>"
	}
	cmd := "fairledger run --history " + dir + " --from " + from
	if r.To != 0 {
		cmd += " --to " + fmtUnix(r.To)
	}
	r.Command = cmd + " --sacct " + sacct + " ..."
}

// why says where a Rerun starts and ends, and why there; p is the file
// it recomputes, nil for a checkpoint.
func (r *Rerun) why(p *Partition) string {
	first := " left" // after a checkpoint's removal
	switch {
	case p == nil:
	case snapshotTable(p.Table):
		// A run takes its snapshots after its start, not at it.
		first = " before the file's first snapshot (" + fmtUnix(p.MinTime) + ")"
	default:
		first = " at or before the file's first row (" + fmtUnix(p.MinTime) + ")"
	}
	var s string
	switch {
	case !r.Fresh:
		s = "from " + r.Checkpoint + ", the newest intact checkpoint" + first
	case r.From != 0:
		s = "no intact checkpoint is" + first + ": a fresh start where the cluster's history started (" + fmtUnix(r.From) +
			", the checkpoints' origin), with every sacct file from then on"
	default:
		s = "no intact checkpoint is" + first + ", and none records where the cluster's history started: a fresh start at its first sacct file, with every sacct file"
	}
	if r.To != 0 {
		s += ", to the newest checkpoint (a run must end there or later)"
	}
	return s + "; " + RerunFlags(r.Cluster)
}

func fmtUnix(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }

func fmtDate(t int64) string { return time.Unix(t, 0).UTC().Format(time.DateOnly) }

// explain sets the Repair text and Rerun of each problem with a listed
// file (what Repair would do, or with rep.Repaired what it did), of the
// strays after a repair commit, and rep.Reruns.
func (h *Store) explain(rep *VerifyReport, plans map[string]*clusterPlan) {
	rep.Reruns = nil
	byCluster := map[string]*Rerun{}
	for i := range rep.Problems {
		pr := &rep.Problems[i]
		if pr.kind == badManifest {
			pr.Repair = h.manifestText(rep, pr)
			continue
		}
		if pr.File == nil {
			if rep.Repaired != 0 && strings.HasPrefix(pr.Path, h.genPath(rep.Generation)+string(filepath.Separator)) {
				pr.Repair = fmt.Sprintf("not in generation %d, which --repair committed (a commit links only the files the manifest lists): "+
					"nothing to do, it goes with generation %d when a later commit removes that generation", rep.Repaired, rep.Generation)
			}
			continue
		}
		plan := plans[pr.File.Cluster]
		pr.Rerun = nil
		pr.Repair = h.repairText(pr, plan, rep.Repaired)
		if pr.Rerun == nil {
			continue
		}
		r := byCluster[pr.File.Cluster]
		if r == nil || earlier(pr.Rerun, r) {
			cp := *pr.Rerun
			byCluster[pr.File.Cluster] = &cp
		}
	}
	for _, r := range byCluster {
		rep.Reruns = append(rep.Reruns, *r)
	}
	if rep.fallback != nil {
		rep.Reruns = append(rep.Reruns, rep.fallback.reruns...)
	}
	slices.SortFunc(rep.Reruns, func(a, b Rerun) int { return strings.Compare(a.Cluster, b.Cluster) })
}

// earlier reports whether run a starts before b (a fresh start at an
// unknown origin before everything).
func earlier(a, b *Rerun) bool {
	if a.Fresh != b.Fresh && a.From == b.From {
		return a.Fresh
	}
	if (a.From == 0) != (b.From == 0) {
		return a.From == 0
	}
	return a.From < b.From
}

// repairText says what to do about listed file pr.File (at pr.Path), or
// with repaired != 0 what Repair did in that generation, and sets
// pr.Rerun.
func (h *Store) repairText(pr *Problem, plan *clusterPlan, repaired int64) string {
	p := pr.File
	fix := "`fairledger verify --repair --history " + h.Dir + "`"
	if pr.Fixed == FixedRestored {
		return fmt.Sprintf("restored in generation %d from its intact copy %s (SHA-256 checked): nothing to recompute", repaired, pr.Intact)
	}
	var done string
	if pr.Fixed == FixedRemoved {
		done = fmt.Sprintf("removed from the history in generation %d", repaired)
	}
	if pr.kind == future {
		return h.futureText(pr, plan, fix, repaired)
	}
	if pr.kind == wrongStats {
		return h.statsText(pr, plan, fix, repaired)
	}
	var impact string
	switch {
	case pr.kind == asWritten:
		impact = "the file is as the run wrote it (its SHA-256 is the manifest's), so every copy is the same: please report this as a bug"
	case pr.kind == gone:
		impact = "until it is back or removed `fairledger run`, `sql` and `report` refuse this history"
	case p.Table == TableState && !IsCheckpoint(path.Base(p.Path)):
		impact = "until it is back or removed `sshare --at` and `sprio --at` fail for the times it covers"
	case p.Table == TableState:
		impact = "until it is back or removed a run of cluster " + p.Cluster + " that resumes from it stops on it, and so does one that reads " +
			"every checkpoint of the cluster (a run without --to, a fresh start)"
	default:
		impact = "until it is back or removed a run that reads it (to rewrite or compact month " + p.Month + ") stops on it, and queries read damaged rows or fail"
	}
	if p.Table == schemas.TableRuns && done == "" {
		impact = "the runs table only records which runs were made (their inputs and settings), no usage or fair-share figure depends on it; but " + impact
	}
	// The first option, while an older generation holds the file intact.
	restore := ""
	if pr.Intact != "" {
		restore = "an intact copy (SHA-256 checked) is in " + pr.Intact + ": " + fix + " links it back, or copy it yourself before the next run commits " +
			"(a commit removes the generations before the one it replaces): cp " + pr.Intact + " " + pr.Path + "; if that copy is gone by then, "
	}

	var what string
	switch {
	case p.Table == schemas.TableRuns:
		if done != "" {
			return done + ": the runs table lacks those run records; nothing else depends on them, nothing to recompute"
		}
		what = "remove it with " + fix + ": the runs table then lacks those run records; nothing else depends on them"
	case p.Table == TableState && !IsCheckpoint(path.Base(p.Path)):
		what = "remove it with " + fix + ": `sshare --at` and `sprio --at` then answer the times it covered from the stored snapshot before " +
			"them, as for a history written before fairledger kept moments (docs/moments.md); nothing else depends on it, nothing to recompute"
		if done != "" {
			what = done + ": `sshare --at` and `sprio --at` answer the times it covered from the stored snapshot before them; nothing to recompute"
		}
	case p.Table == TableState:
		what = h.checkpointText(pr, plan, fix, done)
	default:
		r := plan.rerunFor(*p)
		r.setCommand(h.Dir)
		if pr.Intact == "" {
			pr.Rerun = r // else --repair links the copy back: nothing to recompute
		}
		run := "`" + r.Command + "` (" + r.why(p) + ")"
		if done != "" {
			return done + "; queries lack its " + strconv.FormatInt(p.Rows, 10) + " rows until you recompute them: " + run
		}
		what = "remove it with " + fix + ", then recompute its rows: " + run
	}
	if done != "" {
		return what
	}
	if pr.Intact == "" && pr.kind != asWritten {
		// A backup spares the recompute: files never change once written.
		what += "; or, instead, copy it back from a backup: the right copy of " + p.Path + " has SHA-256 " + p.SHA256
	}
	return impact + ": " + restore + what
}

// checkpointText says what removing checkpoint pr.File does (did, with
// done), and sets pr.Rerun when the cluster has no other intact one.
func (h *Store) checkpointText(pr *Problem, plan *clusterPlan, fix, done string) string {
	p := pr.File
	at := checkpointTime(path.Base(p.Path))
	head := "remove it with " + fix
	if done != "" {
		head = done
	}
	last := plan.newestIntact()
	if last == nil {
		r := plan.fresh()
		r.setCommand(h.Dir)
		if pr.Intact == "" {
			pr.Rerun = r
		}
		return head + ": cluster " + p.Cluster + " then has no intact checkpoint, so a run would start afresh and lose the usage charged before it; " +
			"recompute the cluster from the start of its history instead: `" + r.Command + "` (" + r.why(nil) + ")"
	}
	if at == 0 || at > last.at {
		return head + ": runs of cluster " + p.Cluster + " then resume from the one before, " + last.name + ": it is newer than every intact checkpoint, so the next nightly run " +
			"recomputes from " + fmtUnix(last.at) + " on, nothing else to run. Its sacct input must reach back to then: if the nightly sacct window " +
			"does not, run it once with every sacct file from " + fmtDate(last.at) + " on (`fairledger run --history " + h.Dir + " --from " +
			fmtUnix(last.at) + " --sacct <every sacct file of cluster " + p.Cluster + " from " + fmtDate(last.at) + " on> ...`, " + RerunFlags(p.Cluster) + ")"
	}
	before := "afresh (it is the oldest)"
	if cp := plan.intactAtOrBefore(at - 1); cp != nil {
		before = "from the one before, " + cp.name + ","
	}
	return head + ": runs of cluster " + p.Cluster + " resume from the newest checkpoint, " + last.name + ", as before, and a recompute (--from) " +
		"that would have started at this one starts " + before + " instead: nothing to rerun"
}

// futureText says what cutting the cluster of future checkpoint pr.File
// back does (did, with done), and sets pr.Rerun: the run that charges the
// jobs from the cut on again.
func (h *Store) futureText(pr *Problem, plan *clusterPlan, fix string, repaired int64) string {
	c := pr.File.Cluster
	head := fix + " cuts the history of cluster " + c + " back"
	if pr.Fixed != "" {
		head = fmt.Sprintf("the history of cluster %s was cut back in generation %d", c, repaired)
	}
	last := plan.newestIntact()
	if last == nil {
		r := plan.fresh()
		r.To = 0
		r.setCommand(h.Dir)
		pr.Rerun = r
		return head + " to nothing: it has no checkpoint before now, so its snapshots, usage and jobs are removed (the runs table is kept); " +
			"then recompute it from the start with sacct files whose job times are corrected: `" + r.Command + "` (" + RerunFlags(c) + ")"
	}
	r := &Rerun{Cluster: c, From: last.at, Checkpoint: last.name}
	r.setCommand(h.Dir)
	pr.Rerun = r
	return head + " to " + last.name + ", its newest checkpoint before now: the checkpoints after it, the snapshots after " + fmtUnix(last.at) +
		", the usage from " + fmtDate(last.at) + " on and the jobs that start or end after it are removed (the runs table is kept); " +
		"then run from there with every sacct file from " + fmtDate(last.at) + " on (rows with times after the run are now rejected, with their file and line): `" +
		r.Command + "` (" + RerunFlags(c) + ")"
}
