package export

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
	// Repair is what to do about it, in words an administrator can act on.
	Repair string
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
// at all (ErrOldLayout, an unreadable manifest, an unknown cluster).
func (h *History) Verify(cluster string) (VerifyReport, error) {
	if cluster != "" {
		if err := validCluster(cluster); err != nil {
			return VerifyReport{}, fmt.Errorf("verify: %w", err)
		}
	}
	v, err := h.View()
	if err != nil {
		return VerifyReport{}, err
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
		return rep, fmt.Errorf("verify: history %s has no files of cluster %q (its clusters: %s)", h.Dir, cluster, strings.Join(names, ", "))
	}
	rep.Files = len(files)

	// Check the files, GOMAXPROCS at a time; problems[i] is file i's.
	problems := make([]*Problem, len(files))
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
				if what != "" {
					intact := ""
					if kind != asWritten {
						intact = h.intactCopy(v.Generation(), p, buf)
					}
					problems[i] = &Problem{Path: v.Path(p), What: what, Repair: repair(v.Path(p), p, kind, intact)}
				}
			}
		})
	}
	wg.Wait()
	rep.Bytes = bytes.Load()
	for _, p := range problems {
		if p != nil {
			rep.Problems = append(rep.Problems, *p)
		}
	}
	if v.Dir != "" {
		strays, err := strayFiles(v, cluster)
		if err != nil {
			return rep, err
		}
		rep.Problems = append(rep.Problems, strays...)
	}
	rep.Problems = append(rep.Problems, h.oldLeftovers()...)
	slices.SortStableFunc(rep.Problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return rep, nil
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
	if p.Table == TableState {
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
		if !json.Valid(blob) {
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
	return "", asWritten, n
}

// intactCopy returns the path of a copy of file p with the manifest's
// size and SHA-256 in another generation of the history (its hard link
// there survives when the file was removed or replaced in this one), or
// "".
func (h *History) intactCopy(gen int64, p Partition, buf []byte) string {
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
	listed := make(map[string]bool, len(v.Manifest.Partitions)+1)
	for _, p := range v.Manifest.Partitions {
		listed[p.Path] = true
	}
	listed[manifestFile] = true
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
		return notOurs + "; `fairledger sql` reads every *.parquet file of the table's directories, so its rows would be counted " +
			"in queries: move it out of the history"
	}
	return notOurs + "; no fairledger command reads it: move it out of the history"
}

func isTable(name string) bool {
	_, err := schemas.TableByName(name)
	return err == nil
}

// oldLeftovers reports files of the old layout at the root of a history
// that has a committed generation.
func (h *History) oldLeftovers() []Problem {
	if _, err := os.Lstat(filepath.Join(h.Dir, currentLink)); err != nil || !h.hasOldFiles() {
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

// repair says what to do about file p (at full) damaged so; intact is
// an intact copy of it in another generation, or "".
func repair(full string, p Partition, kind damage, intact string) string {
	var impact string
	switch {
	case kind == gone:
		impact = "until it is back `fairledger run`, `sql` and `report` refuse this history"
	case kind == asWritten:
		return "the file is as the run wrote it (its SHA-256 is the manifest's), so every copy is the same: please report this as a bug; " +
			"to get a history without it, rebuild one in a new directory from the cluster's first sacct file on " +
			"(fairledger run --history NEWDIR --sacct <every sacct file> ...)"
	case p.Table == TableState:
		impact = "until it is back every run of cluster " + p.Cluster + " stops on it (a run reads every checkpoint of its cluster)"
	default:
		impact = "until it is back a run that reads it (to rewrite or compact month " + p.Month + ") stops on it, and queries read damaged rows or fail"
	}
	if p.Table == schemas.TableRuns {
		impact = "the runs table only records which runs were made (their inputs and settings), no usage or fair-share figure depends on it; but " + impact
	}
	if intact != "" {
		return impact + ": copy it back from an older generation, where it is intact (SHA-256 checked), before the next run " +
			"commits (a commit removes the generations before the one it replaces): cp " + intact + " " + full
	}
	return impact + ": restore it from a backup of the history taken since it was written (files never change once written: any copy of " +
		p.Path + ", under gen/<any number>/, whose SHA-256 is " + p.SHA256 + " is the right one); without a backup, rebuild the history " +
		"in a new directory from the first sacct file on (fairledger run --history NEWDIR --sacct <every sacct file> ..., for each cluster)"
}
