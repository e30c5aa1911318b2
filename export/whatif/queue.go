package whatif

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairledger/fairledger/export/record"
)

// JobMove is one job waiting at one snapshot: its rank in its partition's
// queue (1 is first; jobs of equal priority share a rank) and its
// priority, recorded and replayed.
type JobMove struct {
	Snapshot                 time.Time
	JobID                    int64
	Partition, Account, User string
	Priority                 [2]int64
	Rank                     [2]int
	// Ahead is how many jobs of its partition the replay puts before it
	// (a higher priority).
	Ahead int
	// Factor is the priority term the change moved most (age, assoc,
	// fairshare, jobsize, partition, qos, tres), "" when none moved.
	Factor string
}

// Shift is how many places the job moved up in its queue (negative:
// down).
func (m *JobMove) Shift() int { return m.Rank[0] - m.Rank[1] }

// QueueResult sums up the waiting jobs of a comparison.
type QueueResult struct {
	// Snapshots is the number of snapshots with a queue compared, Jobs
	// that of waiting jobs at them (a job waiting at several counts at
	// each), Moved those of them ranked otherwise.
	Snapshots, Jobs, Moved int
	// Top are up to TopMoves jobs that moved most, by places.
	Top []JobMove
}

// TopMoves is how many moved jobs a result lists.
const TopMoves = 10

// JobsCSVHeader is the header of the waiting jobs' CSV (Options.JobsCSV).
var JobsCSVHeader = []string{"snapshot", "job_id", "partition", "account", "user", "recorded_priority", "replayed_priority",
	"recorded_rank", "replayed_rank", "replayed_ahead", "moved_by"}

type jobKey struct {
	id        int64
	partition string
}

// queueRanks ranks a snapshot's waiting jobs within their partitions by
// priority, highest first.
func queueRanks(rows []record.PriorityRow) map[jobKey]int {
	byPart := map[string][]int64{}
	for i := range rows {
		byPart[rows[i].Partition] = append(byPart[rows[i].Partition], rows[i].Priority)
	}
	for _, p := range byPart {
		slices.SortFunc(p, func(a, b int64) int { return cmp.Compare(b, a) })
	}
	out := make(map[jobKey]int, len(rows))
	for i := range rows {
		r := &rows[i]
		p := byPart[r.Partition]
		// The first index with a priority not above r's: the jobs before
		// it are ahead.
		n, _ := slices.BinarySearchFunc(p, r.Priority, func(e, t int64) int { return cmp.Compare(t, e) })
		out[jobKey{r.JobID, r.Partition}] = n + 1
	}
	return out
}

// terms are a row's weighted priority terms, in the order of
// docs/slurm-semantics.md §13.1.
func terms(r *record.PriorityRow) [7]float64 {
	tres := 0.0
	for _, v := range r.TRESW {
		tres += v
	}
	return [7]float64{r.AgeW, r.AssocW, r.FairShareW, r.JobSizeW, r.PartitionW, r.QOSW, tres}
}

var termNames = [7]string{"age", "assoc", "fairshare", "jobsize", "partition", "qos", "tres"}

// AddQueue takes one snapshot's waiting jobs, as recorded and as
// replayed (the same jobs: a replay changes priorities, not who waits).
func (c *Comparison) AddQueue(at time.Time, recorded, replayed []record.PriorityRow) error {
	if c.queue == nil {
		c.queue = &QueueResult{}
	}
	q := c.queue
	q.Snapshots++
	rr, ar := queueRanks(recorded), queueRanks(replayed)
	rec := make(map[jobKey]*record.PriorityRow, len(recorded))
	for i := range recorded {
		rec[jobKey{recorded[i].JobID, recorded[i].Partition}] = &recorded[i]
	}
	moves := make([]JobMove, 0, len(replayed))
	for i := range replayed {
		a := &replayed[i]
		k := jobKey{a.JobID, a.Partition}
		r := rec[k]
		if r == nil {
			return fmt.Errorf("what-if queue at %s: job %d in partition %s waits in the replay and not in the history", at.UTC().Format(time.RFC3339), a.JobID, a.Partition)
		}
		m := JobMove{Snapshot: at.UTC(), JobID: a.JobID, Partition: a.Partition, Account: a.Account, User: a.User,
			Priority: [2]int64{r.Priority, a.Priority}, Rank: [2]int{rr[k], ar[k]}, Ahead: ar[k] - 1}
		tr, ta := terms(r), terms(a)
		most := 0.0
		for t := range tr {
			if d := math.Abs(ta[t] - tr[t]); d > most {
				most, m.Factor = d, termNames[t]
			}
		}
		q.Jobs++
		if m.Rank[0] != m.Rank[1] {
			q.Moved++
		}
		moves = append(moves, m)
	}
	if len(moves) != len(recorded) {
		return fmt.Errorf("what-if queue at %s: %d jobs wait in the replay, %d in the history", at.UTC().Format(time.RFC3339), len(moves), len(recorded))
	}
	slices.SortFunc(moves, func(a, b JobMove) int {
		return cmp.Or(cmp.Compare(a.JobID, b.JobID), strings.Compare(a.Partition, b.Partition))
	})
	for _, m := range moves {
		if m.Shift() != 0 {
			q.Top = append(q.Top, m)
		}
	}
	slices.SortStableFunc(q.Top, func(a, b JobMove) int {
		return cmp.Or(cmp.Compare(abs(b.Shift()), abs(a.Shift())), a.Snapshot.Compare(b.Snapshot), cmp.Compare(a.JobID, b.JobID))
	})
	if len(q.Top) > TopMoves {
		q.Top = q.Top[:TopMoves]
	}
	if c.jobs != nil {
		for _, m := range moves {
			if err := c.jobs.Write([]string{m.Snapshot.Format(time.RFC3339), strconv.FormatInt(m.JobID, 10), cell(m.Partition),
				cell(m.Account), cell(m.User), strconv.FormatInt(m.Priority[0], 10), strconv.FormatInt(m.Priority[1], 10),
				strconv.Itoa(m.Rank[0]), strconv.Itoa(m.Rank[1]), strconv.Itoa(m.Ahead), m.Factor}); err != nil {
				return fmt.Errorf("what-if jobs csv: %w", err)
			}
		}
		c.jobs.Flush()
		if err := c.jobs.Error(); err != nil {
			return fmt.Errorf("what-if jobs csv: %w", err)
		}
	}
	return nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// QueueText is what the waiting jobs' section says of ranks.
const QueueText = "A job's rank is its place in its partition's queue at the snapshot, by priority (1 is first; jobs of equal priority share a rank); " +
	"jobs ahead are those the replay gives a higher priority. Moved by names the priority term the change moved most."

// QueueTable is the table of the jobs that moved most: its head and rows.
func (q *QueueResult) QueueTable() ([]string, [][]string) {
	head := []string{"snapshot", "job", "partition", "lab", "user", "rank rec.", "repl.", "jobs ahead (repl.)", "priority rec.", "repl.", "moved by"}
	var rows [][]string
	for _, m := range q.Top {
		rows = append(rows, []string{fmtTime(m.Snapshot), strconv.FormatInt(m.JobID, 10), m.Partition, m.Account, m.User,
			strconv.Itoa(m.Rank[0]), strconv.Itoa(m.Rank[1]), strconv.Itoa(m.Ahead),
			strconv.FormatInt(m.Priority[0], 10), strconv.FormatInt(m.Priority[1], 10), m.Factor})
	}
	return head, rows
}

// Summary is the section's first sentence.
func (q *QueueResult) Summary() string {
	return fmt.Sprintf("%d waiting jobs compared at %d snapshots (a job waiting at several counts at each); %d of them have another rank in their partition's queue under the change.",
		q.Jobs, q.Snapshots, q.Moved)
}

// writeJobsHeader starts the waiting jobs' CSV.
func writeJobsHeader(w io.Writer) (*csv.Writer, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(JobsCSVHeader); err != nil {
		return nil, fmt.Errorf("what-if jobs csv: %w", err)
	}
	return cw, nil
}
