// Package historytest helps the tests of the history store's users
// (export/query, export/record's external tests) and the store's own
// external tests build histories through its exported API: open one,
// find its files, commit files another writer made, and leave beside the
// committed generation what crashed commits leave, which needs the
// layout on disk (docs/history-store.md) that TestLayout checks against
// what the store writes. Only tests import it; it touches files only in
// a test's temporary directory.
package historytest

import (
	"testing"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/schemas"
)

// ForeignFile is a Parquet file another writer made (DuckDB, an older
// fairledger), to commit as a segment of its (table, cluster, month)
// partition.
type ForeignFile struct {
	Table, Cluster, Month string
	Data                  []byte
}

// CommitForeign commits files in one commit, as the store names and lists
// its own: each replaces the committed segments of its partition (files
// of one partition in one call are all kept). It returns their entries.
func CommitForeign(t testing.TB, h *history.Store, files ...ForeignFile) []history.Partition {
	t.Helper()
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort()
	var out []history.Partition
	for _, f := range files {
		for _, p := range tx.Base().Files(f.Table, f.Cluster) {
			if p.Month == f.Month {
				tx.Remove(p)
			}
		}
		month, err := schemas.ParseMonth(f.Month)
		if err != nil {
			t.Fatal(err)
		}
		p, err := tx.Import(f.Table, f.Cluster, month, f.Data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return out
}
