package query

import (
	"github.com/fairledger/fairledger/export/history/historytest"
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

// The histories these tests build, and the layout of a history on disk
// (docs/history-store.md) where they look at the generations a commit
// keeps (historytest).
var (
	openHistory     = historytest.Open
	histPath        = historytest.Path
	histOnlyFile    = historytest.OnlyFile
	histGenerations = historytest.Generations
	genName         = historytest.GenName
)

// keepGenerations is how many committed generations a commit keeps when no
// reader holds an older one.
const keepGenerations = historytest.KeepGenerations
