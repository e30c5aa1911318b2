package queue

import (
	"math"
	"testing"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/internal/release"
	"github.com/fairledger/fairledger/priority"
)

// TestPriorityEvents works the submit and start rows of three jobs in one
// partition out by hand. Only age counts (PriorityWeightAge 1000,
// PriorityMaxAge 10,000 s), ticks every 60 s from 0; times are seconds
// after 60,000 (a tick):
//
//	job  submit  eligible  start
//	A    0       100       1000
//	B    100     100       2000
//	C    200     200       1500
//
// At a submission the age is 0: priority 1 (the floor). A starts at 1000;
// its factors and the others' are those of the tick at 960: A and B have
// waited 860 s (age 1000·860/10000 = 86), C 760 s (76). None is above A's
// 86: rank 1 of 3 waiting; wait 1000 − 100 = 900 s. C starts at 1500 (a
// tick): B has waited 1400 s (140), C 1300 s (130): B is above, so C is
// second of the 2 waiting (it started ahead of B); wait 1300 s. B starts
// at 2000 (tick 1980, 1880 s: 188) alone: rank 1 of 1, wait 1900 s.
func TestPriorityEvents(t *testing.T) {
	m := ageModel()
	job := func(id uint32, user string, submit, eligible, start int64) Job {
		return Job{ID: id, Who: m.Who(user, "lab"), Where: m.Where("", "cpu"), Nodes: 1, CPUs: 1,
			Submit: submit, Eligible: eligible, Start: start, End: start + 100, Ran: 0}
	}
	const t0 = 60000
	jobs := []Job{job(1, "a", t0, t0+100, t0+1000), job(2, "b", t0+100, t0+100, t0+2000), job(3, "c", t0+200, t0+200, t0+1500)}
	sched, err := decay.NewSchedule(0, 60, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &Writer{Model: m, Jobs: jobs, Sched: sched, Lo: t0 - 1, To: t0 + 10000}
	p.SetFairShare(0, false, nil, nil)
	p.Emit(math.MaxInt64, 0) // month 1970-01: all of them
	out := m.AppendRecords(nil, &p.Out)

	type want struct {
		event         string
		at, job       int64
		prio          int64
		age           float64
		computed      int64
		wait, rank, n int64 // -1: null
	}
	wants := []want{
		{record.EventSubmit, t0, 1, 1, 0, t0, -1, -1, -1},
		{record.EventSubmit, t0 + 100, 2, 1, 0, t0 + 100, -1, -1, -1},
		{record.EventSubmit, t0 + 200, 3, 1, 0, t0 + 200, -1, -1, -1},
		{record.EventStart, t0 + 1000, 1, 86, 86, t0 + 960, 900, 1, 3},
		{record.EventStart, t0 + 1500, 3, 130, 130, t0 + 1500, 1300, 2, 2},
		{record.EventStart, t0 + 2000, 2, 188, 188, t0 + 1980, 1900, 1, 1},
	}
	if len(out) != len(wants) {
		t.Fatalf("%d rows, want %d: %+v", len(out), len(wants), out)
	}
	opt := func(v *int64) int64 {
		if v == nil {
			return -1
		}
		return *v
	}
	for i, w := range wants {
		r := out[i]
		got := want{r.Event, r.At.Unix(), r.JobID, r.Priority, r.AgeW, r.ComputedAt.Unix(), opt(r.WaitSec), opt(r.Rank), opt(r.Waiting)}
		if math.Abs(got.age-w.age) < 1e-9 {
			got.age = w.age
		}
		if got != w {
			t.Errorf("row %d: %+v, want %+v", i, got, w)
		}
		if r.Snapshot != nil || r.Partition != "cpu" {
			t.Errorf("row %d: snapshot %v, partition %q; want none (no snapshot yet), cpu", i, r.Snapshot, r.Partition)
		}
	}
}

// TestPriorityStartRankArray ranks starts among an array's pending tasks,
// worked by hand with TestPriorityEvents's model (age only, ticks every
// 60 s): array 50's tasks 51, 52 and 53 are submitted and eligible at 0
// and start at 3000, 3100 and 3200; job 1 is submitted and eligible at
// 100 and starts at 1000. At 1000 (the tick at 960) the array has waited
// 960 s (age 96) and job 1 860 s (86): the three tasks are one waiting job
// above job 1, which ranks 2 of 2 waiting (4 of 4 if each task counted).
// Each task's start counts no task of its own array: 1 of 1.
func TestPriorityStartRankArray(t *testing.T) {
	m := ageModel()
	const t0 = 60000
	job := func(id, array uint32, submit, start int64) Job {
		return Job{ID: id, ArrayJob: array, Who: m.Who("u", "lab"), Where: m.Where("", "cpu"), Nodes: 1, CPUs: 1,
			Submit: t0 + submit, Eligible: t0 + submit, Start: t0 + start, End: t0 + start + 100, Ran: 0}
	}
	jobs := []Job{job(51, 50, 0, 3000), job(52, 50, 0, 3100), job(53, 50, 0, 3200), job(1, 0, 100, 1000)}
	sched, err := decay.NewSchedule(0, 60, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &Writer{Model: m, Jobs: jobs, Sched: sched, Lo: t0 - 1, To: t0 + 10000}
	p.SetFairShare(0, false, nil, nil)
	p.Emit(math.MaxInt64, 0)
	want := map[int64][2]int64{1: {2, 2}, 51: {1, 1}, 52: {1, 1}, 53: {1, 1}} // job: rank, waiting
	got := map[int64][2]int64{}
	for _, r := range m.AppendRecords(nil, &p.Out) {
		if r.Event == record.EventStart {
			if r.Rank == nil || r.Waiting == nil {
				t.Fatalf("start row of job %d without rank or waiting", r.JobID)
			}
			got[r.JobID] = [2]int64{*r.Rank, *r.Waiting}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("start rows of jobs %v, want %v", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("job %d starts ranked %d of %d waiting, want %d of %d", id, got[id][0], got[id][1], w[0], w[1])
		}
	}
}

// ageModel is the model of the event tests: one partition, cpu, and only
// age counting (PriorityWeightAge 1000, PriorityMaxAge 10,000 s).
func ageModel() *Model {
	return &Model{
		Params:  priority.Params{Weights: priority.Weights{Age: 1000}, MaxAgeSec: 10000, Release: release.Series{Major: 22, Minor: 5}},
		Cluster: priority.Cluster{Nodes: 1, CPUs: 1, Partitions: []priority.Partition{{Name: "cpu", PriorityJobFactor: 1}}},
		parts:   map[string]int{"cpu": 0}, single: []int{0}, tres: [][]uint64{nil},
		whoIdx: map[AssocKey]uint32{}, whereIdx: map[whereKey]uint32{},
		qosSets: map[string][]priority.QOS{}, partSets: map[string][]int{},
	}
}
