package historytest

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/export/history"
)

// File is a file of a generation or a stage: its slash path inside the
// generation's directory and its bytes.
type File struct {
	Path string
	Data []byte
}

// CrashStage leaves what a commit of generation gen that died while
// writing leaves: a stage directory under gen/ holding files (a written
// segment, a half-written temp file). It returns the stage's path.
func CrashStage(t testing.TB, h *history.Store, gen int64, files ...File) string {
	t.Helper()
	stage := filepath.Join(h.Dir, GenDir, StagePrefix+GenName(gen)+"-0badc0de")
	writeFiles(t, stage, files)
	return stage
}

// CrashUncommitted leaves what a commit that died after renaming its
// stage into place, but before switching the current symlink, leaves: a
// complete generation m.Generation with m as its manifest, holding files
// and, hard-linked from the committed generation as a commit links them,
// every other file m lists. It returns the generation's path.
func CrashUncommitted(t testing.TB, h *history.Store, m history.Manifest, files ...File) string {
	t.Helper()
	dir := filepath.Join(h.Dir, GenDir, GenName(m.Generation))
	writeFiles(t, dir, files)
	for _, p := range m.Partitions {
		if slices.ContainsFunc(files, func(f File) bool { return f.Path == p.Path }) {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(p.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(Path(h, p), dst); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// CrashedSegment is the name of the segment CrashCommits adds to the
// partition of the file it is given.
const CrashedSegment = "part-0123456789abcdef.parquet"

// CrashCommits leaves, beside the committed generation, what two
// crashed commits of the next generation leave that add a second segment
// (CrashedSegment, with the bytes of p) to the partition of committed
// file p: a stage holding the segment and a half-written temp file
// (CrashStage), and the generation complete with its manifest but never
// made current (CrashUncommitted). It returns the stage's path.
func CrashCommits(t testing.TB, h *history.Store, p history.Partition) string {
	t.Helper()
	good, err := os.ReadFile(Path(h, p))
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	dir := path.Dir(p.Path)
	segment := File{Path: path.Join(dir, CrashedSegment), Data: good}
	stage := CrashStage(t, h, m.Generation+1, segment,
		File{Path: path.Join(dir, ".part-new"+TmpMarker), Data: good[:len(good)/2]})
	added := p
	added.Path = segment.Path
	m.Generation++
	m.Partitions = append(slices.Clone(m.Partitions), added)
	CrashUncommitted(t, h, m, File{Path: p.Path, Data: good}, segment)
	return stage
}

// writeFiles writes files under dir, making their directories.
func writeFiles(t testing.TB, dir string, files []File) {
	t.Helper()
	for _, f := range files {
		name := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
