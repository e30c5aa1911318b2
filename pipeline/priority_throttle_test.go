package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/priority/queue"
)

// TestPriorityArrayThrottleFromSacct: the throttle of an array reaches the
// queue from SubmitLine's --array=0-5%2 (docs/slurm-semantics.md §13.6.2).
// Array 30's tasks 0 and 1 start in the pass of the submission (T+0) and
// end at T+100; task 2 becomes eligible and starts at T+102; the remainder
// 30_[3-5%2] waits, eligible T+102. By hand: at T+6 two tasks run, the
// limit: the array is not listed; at T+150 one runs: it is, accruing from
// T+102 (at T+0 the limit was reached in the same pass, so no accrue time
// was set then).
func TestPriorityArrayThrottleFromSacct(t *testing.T) {
	t.Parallel()
	const T = 1700000000
	line := func(id, raw string, eligible, start, end, state string) string {
		return fmt.Sprintf("%s|%s|c|cpu|normal|lab|alice|%d|%s|%s|%s|%s|cpu=1|1|1|cpu=1|00:05:00|100|sbatch --array=0-5%%2 --wrap sleep 30\n",
			id, raw, T, eligible, start, end, state)
	}
	at := func(d int) string { return fmt.Sprint(T + d) }
	text := "JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Eligible|Start|End|State|AllocTRES|ReqCPUS|ReqNodes|ReqTRES|Timelimit|Priority|SubmitLine\n" +
		line("30_0", "31", at(0), at(0), at(100), "COMPLETED") +
		line("30_1", "32", at(0), at(0), at(100), "COMPLETED") +
		line("30_2", "33", at(102), at(102), "Unknown", "RUNNING") +
		line("30_[3-5%2]", "30", at(102), "Unknown", "Unknown", "PENDING")
	path := filepath.Join(t.TempDir(), "sacct.psv")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := &ingest.Config{PriorityWeightAge: 1000, PriorityMaxAgeSec: 600, Partitions: []ingest.Partition{{Name: "cpu", PriorityJobFactor: 1}}}
	m, err := newPrioModel(conf, nil, nil, release.Series{Major: 26, Minor: 5})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []queue.Job
	if _, err := ingest.ReadSacct(path, ingest.SacctOptions{KeepPending: true, RequestColumns: true},
		func(rec arrow.RecordBatch) (err error) {
			jobs, err = appendPrioJobs(m, jobs, rec)
			return err
		}); err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 4 {
		t.Fatalf("%d jobs read, want 4", len(jobs))
	}
	q := queue.New(jobs)
	q.Model = m
	for _, c := range []struct {
		d    int64
		want []string // "id/eligible-T"
	}{{6, nil}, {150, []string{"30/102"}}} {
		var got []string
		for _, p := range q.At(nil, T+c.d, T+c.d) {
			got = append(got, fmt.Sprintf("%d/%d", p.Job.ID, p.Job.EligibleSec-T))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("at T+%d: listed %v, want %v", c.d, got, c.want)
		}
	}
}
