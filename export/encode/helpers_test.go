package encode

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/record/recordtest"
	"github.com/parquet-go/parquet-go"
)

// The sample rows the export packages' tests share (recordtest).
var (
	jan                = recordtest.Jan
	sampleJobs         = recordtest.Jobs
	sampleUsage        = recordtest.Usage
	sampleFairshare    = recordtest.Fairshare
	sampleAssociations = recordtest.Associations
	variedJobs         = recordtest.VariedJobs
	benchJobs          = recordtest.BenchJobs
	jobTableOf         = record.JobTableOf
)

func sortedCopy[T any](rows []T, cmp func(a, b *T) int) []T { return recordtest.SortedCopy(rows, cmp) }

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

// benchMonth reads March 2024 of the 5 M-job year history that the
// pipeline benchmarks leave in $FAIRLEDGER_BENCH_DIR/history-year5m into a
// JobTable, in the table's order as the history's reader gives it. encode
// cannot use that reader (package history imports encode): it decodes the
// month's segments of the committed generation with parquet-go.
func benchMonth() (*record.JobTable, error) {
	dir := filepath.Join(benchDir(), "history-year5m", "current", "jobs", "cluster=synth", "month="+benchMonthStart.Format("2006-01"))
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no jobs segment in %s", dir)
	}
	var rows []record.JobRow
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		part, err := parquet.Read[record.JobRow](bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		rows = append(rows, part...)
	}
	if len(files) > 1 {
		slices.SortStableFunc(rows, func(a, b record.JobRow) int { return record.CompareJobs(&a, &b) })
	}
	t := record.NewJobTable(record.NewJobDict(), len(rows))
	for i := range rows {
		t.AppendRow(&rows[i])
	}
	return t, nil
}

// benchMonthStart is the month benchMonth reads.
var benchMonthStart = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
