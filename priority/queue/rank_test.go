package queue

import (
	"slices"
	"testing"

	"github.com/fairledger/fairledger/export/record"
)

// TestQueueAhead ranks jobs in a hand-made queue: a higher priority is
// ahead, an equal one is not (the start rows' rule), an array's pending
// tasks count once, and other partitions do not count.
func TestQueueAhead(t *testing.T) {
	t.Parallel()
	row := func(id int64, part string, prio int64) record.PriorityRow {
		return record.PriorityRow{Event: record.EventPending, JobID: id, Partition: part, Priority: prio}
	}
	rows := []record.PriorityRow{
		row(1, "cpu", 500),
		row(2, "cpu", 300),
		row(3, "cpu", 300), // ties with 2
		row(4, "cpu", 900),
		row(4, "cpu", 900), // a second row of array 4 (its pending tasks): one job
		row(5, "gpu", 9000),
		row(2, "gpu", 10), // job 2 also waits in gpu
	}
	for _, c := range []struct {
		job     int64
		part    string
		ahead   []int64
		waiting int
		ok      bool
	}{
		// cpu: 4 (900) > 1 (500) > 2 = 3 (300); waiting 1, 2, 3, 4.
		{job: 4, part: "cpu", ahead: nil, waiting: 4, ok: true},
		{job: 1, part: "cpu", ahead: []int64{4}, waiting: 4, ok: true},
		{job: 2, part: "cpu", ahead: []int64{1, 4}, waiting: 4, ok: true},
		{job: 3, part: "cpu", ahead: []int64{1, 4}, waiting: 4, ok: true},
		// gpu: 5 (9000) > 2 (10).
		{job: 2, part: "gpu", ahead: []int64{5}, waiting: 2, ok: true},
		{job: 1, part: "gpu"},
	} {
		ahead, waiting, ok := Ahead(rows, c.job, c.part)
		if !slices.Equal(ahead, c.ahead) || waiting != c.waiting || ok != c.ok {
			t.Errorf("Ahead(job %d, %s) = %v, %d, %v; want %v, %d, %v", c.job, c.part, ahead, waiting, ok, c.ahead, c.waiting, c.ok)
		}
	}
}
