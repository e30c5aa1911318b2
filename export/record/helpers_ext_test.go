package record_test

import (
	"testing"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record/recordtest"
	"github.com/fairledger/fairledger/schemas"
)

// The sample rows and helpers the export packages' tests share
// (recordtest), for the tests of package record_test: those that write
// and read rows through a history, which imports record.
var (
	ts     = recordtest.TS
	jan    = recordtest.Jan
	fmtRow = recordtest.FormatFairshareRow
)

func ptr[T any](v T) *T { return &v }

func normalize[T any](rows []T) []T { return recordtest.Normalize(rows) }

func openHistory(t *testing.T) *history.Store {
	t.Helper()
	h, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// foreignFile is a Parquet file another writer made (DuckDB, an older
// fairledger), to commit as a segment of its (table, cluster, month)
// partition.
type foreignFile struct {
	table, cluster, month string
	data                  []byte
}

// commitForeign commits files in one commit, as the store names and lists
// its own: each replaces the committed segments of its partition (files
// of one partition in one call are all kept). It returns their entries.
func commitForeign(t *testing.T, h *history.Store, files ...foreignFile) []history.Partition {
	t.Helper()
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort()
	var out []history.Partition
	for _, f := range files {
		for _, p := range tx.Base().Files(f.table, f.cluster) {
			if p.Month == f.month {
				tx.Remove(p)
			}
		}
		month, err := schemas.ParseMonth(f.month)
		if err != nil {
			t.Fatal(err)
		}
		p, err := tx.Import(f.table, f.cluster, month, f.data)
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
