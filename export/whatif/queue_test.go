package whatif

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
)

// TestAddQueue: three jobs wait in partition p. Recorded, job 1 has
// priority 100 and jobs 2 and 3 90 each: ranks 1, 2, 2 (equal
// priorities share a rank). The replay lowers job 1's fair-share term to
// 80 and raises job 3's to 95: ranks 3, 2, 1. So job 1 moves down two
// places with 2 jobs ahead, moved by fairshare; job 3 up one with none
// ahead; job 2 stays; a job of partition q is ranked in its own queue.
func TestAddQueue(t *testing.T) {
	at := time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)
	row := func(id int64, part string, prio int64, fs float64) record.PriorityRow {
		return record.PriorityRow{Event: record.EventPending, JobID: id, Partition: part, Account: "A", User: "u",
			Priority: prio, AgeW: 10, FairShareW: fs}
	}
	rec := []record.PriorityRow{row(1, "p", 100, 90), row(2, "p", 90, 80), row(3, "p", 90, 80), row(4, "q", 5, 0)}
	alt := []record.PriorityRow{row(3, "p", 95, 85), row(1, "p", 80, 70), row(2, "p", 90, 80), row(4, "q", 7, 0)}
	var jobs bytes.Buffer
	c, err := New(Options{Cluster: "c", JobsCSV: &jobs})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddQueue(at, rec, alt); err != nil {
		t.Fatal(err)
	}
	res, err := c.Result()
	if err != nil {
		t.Fatal(err)
	}
	q := res.Queue
	if q == nil || q.Snapshots != 1 || q.Jobs != 4 || q.Moved != 2 || len(q.Top) != 2 {
		t.Fatalf("queue %+v", q)
	}
	if m := q.Top[0]; m.JobID != 1 || m.Rank != [2]int{1, 3} || m.Ahead != 2 || m.Factor != "fairshare" || m.Priority != [2]int64{100, 80} {
		t.Errorf("top move %+v", m)
	}
	if m := q.Top[1]; m.JobID != 3 || m.Rank != [2]int{2, 1} || m.Ahead != 0 || m.Shift() != 1 {
		t.Errorf("second move %+v", m)
	}
	lines := strings.Split(strings.TrimSpace(jobs.String()), "\n")
	want := []string{strings.Join(JobsCSVHeader, ","),
		"2025-03-02T00:00:00Z,1,p,A,u,100,80,1,3,2,fairshare",
		"2025-03-02T00:00:00Z,2,p,A,u,90,90,2,2,1,",
		"2025-03-02T00:00:00Z,3,p,A,u,90,95,2,1,0,fairshare",
		"2025-03-02T00:00:00Z,4,q,A,u,5,7,1,1,0,"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("jobs csv:\n%s\nwant\n%s", jobs.String(), strings.Join(want, "\n"))
	}
	var md bytes.Buffer
	if err := res.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Waiting jobs", "4 waiting jobs compared at 1 snapshots", "2 of them have another rank",
		"| 2025-03-02 00:00 UTC | 1 | p | A | u | 1 | 3 | 2 | 100 | 80 | fairshare |"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("markdown lacks %q:\n%s", w, md.String())
		}
	}
	// A job the replay has and the history not is an error.
	if err := c.AddQueue(at, rec[:1], alt[:2]); err == nil {
		t.Error("a job waiting only in the replay was taken")
	}
}
