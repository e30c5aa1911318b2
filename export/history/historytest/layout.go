package historytest

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/export/history"
)

// The layout of a history on disk, as docs/history-store.md documents it,
// for the tests that build by hand what a crashed commit leaves or look at
// the generations a commit keeps. TestLayout checks each name against what
// the store writes.
const (
	// GenDir is the directory under the history's root that holds the
	// generations and the stages.
	GenDir = "gen"
	// StagePrefix begins the name of a commit's stage directory under
	// GenDir: StagePrefix + GenName(n) + "-" + random hex.
	StagePrefix = ".stage-"
	// TmpMarker is in the name of a file being written (which begins with
	// a dot), until it is renamed to its own name.
	TmpMarker = ".tmp-"
	// ManifestFile is the name of a generation's manifest.
	ManifestFile = "manifest.json"
	// KeepGenerations is how many committed generations a commit keeps
	// when no reader holds an older one.
	KeepGenerations = 2
)

// GenName is the directory name of generation n under GenDir.
func GenName(n int64) string { return fmt.Sprintf("%08d", n) }

// Open opens a new, empty history in a temporary directory of t.
func Open(t testing.TB) *history.Store {
	t.Helper()
	h, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Path is the path of file p of the committed generation, through the
// current symlink.
func Path(h *history.Store, p history.Partition) string {
	return filepath.Join(h.Dir, history.CurrentLink, filepath.FromSlash(p.Path))
}

// Files returns the committed files of the (table, cluster, month)
// partition.
func Files(t testing.TB, h *history.Store, table, cluster, month string) []history.Partition {
	t.Helper()
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	var out []history.Partition
	for _, p := range m.Files(table, cluster) {
		if p.Month == month {
			out = append(out, p)
		}
	}
	return out
}

// OnlyFile returns the one committed file of a partition, and fails t
// when it has none or more.
func OnlyFile(t testing.TB, h *history.Store, table, cluster, month string) history.Partition {
	t.Helper()
	ps := Files(t, h, table, cluster, month)
	if len(ps) != 1 {
		t.Fatalf("partition %s has files %+v, want one", path.Join(table, "cluster="+cluster, "month="+month), ps)
	}
	return ps[0]
}

// Generations lists the numbered directories under <history>/gen (not the
// stages).
func Generations(t testing.TB, h *history.Store) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(h.Dir, GenDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}
