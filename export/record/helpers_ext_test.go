package record_test

import (
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

// openHistory, commitForeign and foreignFile are historytest's.
var (
	openHistory   = historytest.Open
	commitForeign = historytest.CommitForeign
)

type foreignFile = historytest.ForeignFile
