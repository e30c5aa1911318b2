package record_test

import (
	"testing"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/history/historytest"
	"github.com/fairledger/fairledger/export/record/recordtest"
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

// commitForeign and foreignFile are historytest's.
var commitForeign = historytest.CommitForeign

type foreignFile = historytest.ForeignFile
