package history

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/fairledger/fairledger/export/record/recordtest"
)

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
	samplePriority     = recordtest.Priority
	variedPriority     = recordtest.VariedPriority
	fmtPriority        = recordtest.FormatPriorityRow
)

func ptr[T any](v T) *T { return &v }

func normalize[T any](rows []T) []T { return recordtest.Normalize(rows) }

func sortedCopy[T any](rows []T, cmp func(a, b *T) int) []T { return recordtest.SortedCopy(rows, cmp) }

// writeBatch is the number of rows the jobs encoder hands its column
// writers at a time (encode's writeBatch): TestJobsColumnCodecs writes
// three batches.
const writeBatch = 64

// benchDir is where the benchmarks' generated inputs are kept
// ($FAIRLEDGER_BENCH_DIR, as for the pipeline's benchmarks).
func benchDir() string {
	if d := os.Getenv("FAIRLEDGER_BENCH_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "fairledger-bench")
}

// cpuSeconds is the process's user and system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
