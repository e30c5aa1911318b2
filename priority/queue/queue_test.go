package queue

import (
	"fmt"
	"slices"
	"testing"
)

// TestQueue checks which jobs sprio lists at a series of times and when
// their factors were computed, on jobs worked by hand: a job that starts,
// one with a begin time cancelled while pending, an array whose second
// task became eligible when a slot freed, and a job submitted held.
func TestQueue(t *testing.T) {
	job := func(id uint32, submit, eligible, start, end int64) Job {
		return Job{ID: id, Submit: submit, Eligible: eligible, Start: start, End: end}
	}
	jobs := []Job{
		job(1, 100, 100, 300, 0),  // waits from 100 to 300
		job(2, 200, 260, 0, 400),  // --begin: eligible at 260, cancelled pending at 400
		job(11, 100, 100, 200, 0), // array 9, task 0: starts at 200
		job(12, 100, 210, 500, 0), // array 9, task 1: eligible when task 0's slot freed
		job(5, 100, 150, 0, 0),    // submitted held, released at 150, never started
	}
	jobs[2].ArrayJob, jobs[3].ArrayJob = 9, 9
	jobs[4].Held = true
	q := New(jobs)
	// Each case: the time, its last tick, and each listed job as
	// "id@computed/eligible" (the array as one job, id 9, with the
	// array's eligible time 100).
	cases := []struct {
		at, tick int64
		want     []string
	}{
		{150, 120, []string{"1@120/100", "9@120/100", "5@150/150"}}, // 5 released after the tick
		{250, 240, []string{"1@240/100", "9@240/100", "5@240/150"}}, // 2 not eligible yet
		{300, 300, []string{"2@300/260", "9@300/100", "5@300/150"}}, // 1 started at 300
		{400, 360, []string{"9@360/100", "5@360/150"}},              // 2 cancelled at 400
		{600, 600, []string{"5@600/150"}},                           // the array's last task started at 500
		{150, 120, []string{"1@120/100", "9@120/100", "5@150/150"}}, // back in time: the same as first
	}
	for i, c := range cases {
		name := fmt.Sprintf("at %d", c.at)
		if i == len(cases)-1 {
			name = "back in time to 150"
		}
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, p := range q.At(nil, c.at, c.tick) {
				got = append(got, fmt.Sprintf("%d@%d/%d", p.Job.ID, p.At, p.Job.EligibleSec))
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(c.want))
			if !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

// TestLatestRecords: of a run given twice (a pending record, then the
// running one from a later file), the last read is kept; a requeued job's
// runs (each submitted anew) and an array's pending remainder, which
// shares its last task's id, are records of their own.
func TestLatestRecords(t *testing.T) {
	jobs := []Job{
		{ID: 9, Submit: 50},                     // 0: another job, out of id order
		{ID: 5, Submit: 100},                    // 1: pending in the first file
		{ID: 7, Submit: 10, ArrayPending: true}, // 2: array 7's pending remainder
		{ID: 5, Submit: 100, Start: 150},        // 3: the same run, started, in the next file
		{ID: 5, Submit: 300, Start: 350},        // 4: its run after a requeue
		{ID: 7, Submit: 10, Start: 40},          // 5: the task that keeps the array's id
	}
	var got []string
	for _, j := range LatestRecords(slices.Clone(jobs)) {
		got = append(got, fmt.Sprintf("%d@%d/%d", j.ID, j.Submit, j.Start))
	}
	want := []string{"9@50/0", "7@10/0", "5@100/150", "5@300/350", "7@10/40"}
	if !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
}

// TestQueueArrayThrottle: a job array submitted with --array=0-5%2
// (docs/slurm-semantics.md §13.6.2). While two of its tasks run, slurmctld's
// job_array_start_test clears the pending record's begin time and sprio
// does not list it; the record accrues age from the first pass at which
// its begin time was set and the limit not reached by the end of it.
// A moment is the instant T.000: tasks sacct gives as starting or ending
// in second T do so after it. Worked by hand:
//
//   - array 30: tasks 0 and 1 (ids 31, 32) start in the pass of the
//     submission (1000) and end at 1100; task 2 (33) becomes eligible at
//     1102, when the pass after the freed slots sets the begin time again,
//     and starts then; the remainder 30_[3-5%2] still waits, eligible 1102.
//     At 1000 two tasks ran at once: no accrue time was set then; at 1102
//     one task runs (33): the accrue time is 1102.
//   - array 40: tasks 0 and 1 (41, 42) wait from 1000 (the cluster full)
//     and run from 1050 to 1100; the remainder waits, eligible 1000. Its
//     accrue time was set at 1000, before the limit was reached, and the
//     throttle does not clear it: 1000.
func TestQueueArrayThrottle(t *testing.T) {
	t.Parallel()
	task := func(id, array uint32, eligible, start, end int64) Job {
		return Job{ID: id, ArrayJob: array, Submit: 1000, Eligible: eligible, Start: start, End: end}
	}
	jobs := []Job{
		task(31, 30, 1000, 1000, 1100),
		task(32, 30, 1000, 1000, 1100),
		task(33, 30, 1102, 1102, 1300),
		task(30, 30, 1102, 0, 0), // the pending remainder
		task(41, 40, 1000, 1050, 1100),
		task(42, 40, 1000, 1050, 1100),
		task(40, 40, 1000, 0, 0),
	}
	jobs[3].ArrayPending, jobs[6].ArrayPending = true, true
	throttle := map[uint32]uint32{30: 2, 40: 2}
	cases := []struct {
		name         string
		accrueAlways bool
		at           int64
		want         []string // "id/eligible"
	}{
		// 30's two tasks run; 40's none yet (it waits since 1000).
		{"at 1006", false, 1006, []string{"40/1000"}},
		// the instant 1050.000: 40's tasks start later in that second.
		{"at 1050", false, 1050, []string{"40/1000"}},
		// both arrays at the limit: neither listed.
		{"at 1060", false, 1060, nil},
		// the instant 1100.000: the four tasks end later in that second.
		{"at 1100", false, 1100, nil},
		// 30: one task runs (33), accrues from 1102; 40: none runs.
		{"at 1150", false, 1150, []string{"30/1102", "40/1000"}},
		// ACCRUE_ALWAYS: sprio looks at the submit time, and the accrue
		// time is the caller's (the first eligible, as without a throttle).
		{"ACCRUE_ALWAYS at 1060", true, 1060, []string{"30/1000", "40/1000"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			q := New(slices.Clone(jobs))
			q.throttle, q.accrueAlways = throttle, c.accrueAlways
			var got []string
			for _, p := range q.At(nil, c.at, c.at) {
				got = append(got, fmt.Sprintf("%d/%d", p.Job.ID, p.Job.EligibleSec))
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("listed %v, want %v", got, c.want)
			}
		})
	}
}

// TestQueueHolds: holds that only slurmctld's log shows
// (docs/slurm-semantics.md §13.6.3). Job 50 waits from 100, is held at 200
// and released at 300; job 51 is held at 200 and never released. Held, a
// job has priority 0 and sprio leaves it out; at its release
// _release_job_rec computes its priority anew (set_job_prio), so until the
// next tick its factors are of the release. Worked by hand:
//
//	at 150 (tick 120): 50 and 51, computed at the tick 120
//	at 250 (tick 240): neither (both held)
//	at 320 (tick 290): 50, computed at its release 300 (after the tick)
//	at 400 (tick 360): 50, computed at the tick 360
func TestQueueHolds(t *testing.T) {
	t.Parallel()
	jobs := []Job{{ID: 50, Submit: 100, Eligible: 100}, {ID: 51, Submit: 100, Eligible: 100}}
	q := New(jobs)
	q.holds = map[uint32][]Hold{50: {{From: 200, Until: 300}}, 51: {{From: 200}}}
	cases := []struct {
		at, tick int64
		want     []string // "id@computed"
	}{
		{150, 120, []string{"50@120", "51@120"}},
		{250, 240, nil},
		{320, 290, []string{"50@300"}},
		{400, 360, []string{"50@360"}},
	}
	for _, c := range cases {
		var got []string
		for _, p := range q.At(nil, c.at, c.tick) {
			got = append(got, fmt.Sprintf("%d@%d", p.Job.ID, p.At))
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("at %d: listed %v, want %v", c.at, got, c.want)
		}
	}
}

// TestQueueHeldAfterPending: job 70 was submitted at 100 without --hold,
// held at 200 and released at 300, so slurmdbd keeps Eligible 300 (the
// release's begin time, as the live 22.05 capture's p-hold-later shows).
// Before the hold it waited from its submission: listed at 150 with
// eligible 100 and the factors of its submission (no tick since); held at
// 250; from the release on as sacct says. Job 71, submitted with --hold
// (Held) and released at 300, waited at no time before its release.
func TestQueueHeldAfterPending(t *testing.T) {
	t.Parallel()
	jobs := []Job{{ID: 70, Submit: 100, Eligible: 300}, {ID: 71, Submit: 100, Eligible: 300, Held: true}}
	q := New(jobs)
	q.holds = map[uint32][]Hold{70: {{From: 200, Until: 300}}, 71: {{From: 300, Until: 300}}}
	cases := []struct {
		at, tick int64
		want     []string // "id@computed/eligible"
	}{
		{150, 90, []string{"70@100/100"}},
		{190, 180, []string{"70@180/100"}},
		{250, 240, nil},
		{320, 300, []string{"70@300/300", "71@300/300"}},
	}
	for _, c := range cases {
		var got []string
		for _, p := range q.At(nil, c.at, c.tick) {
			got = append(got, fmt.Sprintf("%d@%d/%d", p.Job.ID, p.At, p.Job.EligibleSec))
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("at %d: listed %v, want %v", c.at, got, c.want)
		}
	}
}

// TestQueueRestartTick: slurmctld stopped after its tick at 450 and
// started again; its decay thread ran its first tick, 560, as it started,
// before any scheduling pass (docs/slurm-semantics.md §13.6.4). Job 60's
// --begin (500) passed while it was down: no pass has set its accrue
// time, so at the tick 560 its age is 0 (eligible 0), and from the next
// tick (620) it accrues from 500, as acct_policy_handle_accrue_time sets
// it to the begin time. Job 61, eligible at 100, kept its accrue time in
// slurmctld's state. Job 62 was submitted at 565, after the tick: its
// factors are of its submission.
func TestQueueRestartTick(t *testing.T) {
	t.Parallel()
	jobs := []Job{{ID: 60, Submit: 100, Eligible: 500}, {ID: 61, Submit: 100, Eligible: 100}, {ID: 62, Submit: 565, Eligible: 565}}
	q := New(jobs)
	q.restarts = []Restart{{LastRan: 450, Tick: 560}}
	cases := []struct {
		at, tick int64
		want     []string // "id@computed/eligible"
	}{
		{570, 560, []string{"60@560/0", "61@560/100", "62@565/565"}},
		{630, 620, []string{"60@620/500", "61@620/100", "62@620/565"}},
	}
	for _, c := range cases {
		var got []string
		for _, p := range q.At(nil, c.at, c.tick) {
			got = append(got, fmt.Sprintf("%d@%d/%d", p.Job.ID, p.At, p.Job.EligibleSec))
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("at %d: listed %v, want %v", c.at, got, c.want)
		}
	}
}
