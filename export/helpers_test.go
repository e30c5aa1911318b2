package export

import "github.com/fairledger/fairledger/export/record/recordtest"

// The sample rows and helpers the export packages' tests share
// (recordtest).
var (
	ts                 = recordtest.TS
	jan                = recordtest.Jan
	sampleJobs         = recordtest.Jobs
	wantJobOrder       = recordtest.WantJobOrder
	sampleUsage        = recordtest.Usage
	sampleFairshare    = recordtest.Fairshare
	sampleAssociations = recordtest.Associations
	sampleRun          = recordtest.Run
	variedJobs         = recordtest.VariedJobs
	benchJobs          = recordtest.BenchJobs
	fmtRow             = recordtest.FormatFairshareRow
)

func ptr[T any](v T) *T { return &v }

func normalize[T any](rows []T) []T { return recordtest.Normalize(rows) }

func sortedCopy[T any](rows []T, cmp func(a, b *T) int) []T { return recordtest.SortedCopy(rows, cmp) }

// writeBatch is the number of rows the jobs encoder hands its column
// writers at a time (encode's writeBatch): TestJobsColumnCodecs writes
// three batches.
const writeBatch = 64
