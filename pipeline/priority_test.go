package pipeline

import (
	"math"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/priority/queue"
)

// TestPriorityAssocDumps: the association priorities are those of the
// dump in force. alice's association has priority 50 in the first dump
// (the highest: factor 1) and 10 in the second, where bob's 40 is the
// highest (factor 10/40 = 0.25). With PriorityWeightAssoc 1000, her job
// submitted under the first dump has ASSOC 1000, the one submitted under
// the second 250.
func TestPriorityAssocDumps(t *testing.T) {
	t.Parallel()
	parse := func(text string) *ingest.Associations {
		a, _, err := ingest.ParseAssoc("assoc.psv", strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	const head = "Cluster|Account|User|Partition|ParentName|Share|Priority\nc|root||||1|\nc|lab|||root|1|\n"
	first := parse(head + "c|lab|alice|||1|50\nc|lab|bob|||1|20\n")
	second := parse(head + "c|lab|alice|||1|10\nc|lab|bob|||1|40\n")
	conf := &ingest.Config{PriorityWeightAssoc: 1000, Partitions: []ingest.Partition{{Name: "cpu", PriorityJobFactor: 1}}}
	m, err := newPrioModel(conf, []*ingest.Associations{first, second}, nil, release.Series{Major: 22, Minor: 5})
	if err != nil {
		t.Fatal(err)
	}
	const t0, switchAt = 60000, 61000
	job := func(id uint32, submit int64) queue.Job {
		return queue.Job{ID: id, Who: m.Who("alice", "lab"), Where: m.Where("", "cpu"), Nodes: 1, CPUs: 1,
			Submit: submit, Eligible: submit, Ran: -1}
	}
	jobs := []queue.Job{job(1, t0+100), job(2, switchAt+100)}
	sched, err := decay.NewSchedule(0, 60, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &queue.Writer{Model: m, Jobs: jobs, Sched: sched, Lo: t0, To: t0 + 10000, DumpAt: func(t int64) int {
		if t < switchAt {
			return 0
		}
		return 1
	}}
	p.SetFairShare(0, false, nil, nil)
	p.Emit(math.MaxInt64, 0)
	out := m.AppendRecords(nil, &p.Out)
	if len(out) != 2 {
		t.Fatalf("%d rows, want the 2 submissions: %+v", len(out), out)
	}
	for i, want := range []float64{1000, 250} {
		if r := out[i]; r.Event != record.EventSubmit || r.AssocW != want {
			t.Errorf("job %d: %s row, ASSOC %v; want a submit row with %v", r.JobID, r.Event, r.AssocW, want)
		}
	}
}
