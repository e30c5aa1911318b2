package query

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record/recordtest"
)

// The sample rows the export packages' tests share (recordtest).
var (
	ts                 = recordtest.TS
	jan                = recordtest.Jan
	sampleJobs         = recordtest.Jobs
	sampleUsage        = recordtest.Usage
	sampleFairshare    = recordtest.Fairshare
	sampleAssociations = recordtest.Associations
	sampleRun          = recordtest.Run
)

// The layout of a history on disk (docs/history-store.md), which these
// tests build by hand where they show what a DuckDB session does not
// read: what crashed commits leave, and the generations it keeps.
const (
	currentLink  = history.CurrentLink
	genDir       = "gen"
	stagePrefix  = ".stage-"
	tmpMarker    = ".tmp-"
	manifestFile = "manifest.json"
	// keepGenerations is how many committed generations a commit keeps
	// when no reader holds an older one.
	keepGenerations = 2
)

// genName is the directory name of generation n under gen/.
func genName(n int64) string { return fmt.Sprintf("%08d", n) }

func openHistory(t *testing.T) *history.Store {
	t.Helper()
	h, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// histPath is the path of file p of the committed generation,
// through the current symlink.
func histPath(h *history.Store, p history.Partition) string {
	return filepath.Join(h.Dir, currentLink, filepath.FromSlash(p.Path))
}

// histFiles returns the committed files of the (table, cluster, month)
// partition.
func histFiles(t *testing.T, h *history.Store, table, cluster, month string) []history.Partition {
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

// histOnlyFile returns the one committed file of a partition.
func histOnlyFile(t *testing.T, h *history.Store, table, cluster, month string) history.Partition {
	t.Helper()
	ps := histFiles(t, h, table, cluster, month)
	if len(ps) != 1 {
		t.Fatalf("partition %s has files %+v, want one", path.Join(table, "cluster="+cluster, "month="+month), ps)
	}
	return ps[0]
}

// histGenerations lists the numbered directories under <history>/gen.
func histGenerations(t *testing.T, h *history.Store) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(h.Dir, genDir))
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
