package live

import (
	"fmt"
	"slices"

	"github.com/fairledger/fairledger/decay"
)

// Ends makes a snapshot's RawUsage the one slurmctld would print at the
// snapshot's second rather than at its last decay tick. With
// AccountingStorageEnforce including limits, a job's end
// (deallocate_nodes → acct_policy_job_fini → priority_p_job_end in
// src/plugins/priority/multifactor/priority_multifactor.c) calls
// _apply_new_usage(job, g_last_ran, now, true), which adds at once, to the
// job's association and every ancestor, rate·δ·d^δ with
// δ = E − max(L, start) (L the last tick, E the end); the next tick decays
// it with everything else, which is how decay.Advance charges the job's
// last chunk. sshare's RawUsage is usage_raw (sshare's process.c), so it
// includes those charges between ticks, while Fair Tree's NormUsage,
// EffectvUsage, LevelFS and FairShare are set by the tick
// (_apply_priority_fs in fair_tree.c) and stay as the tick left them.
// Without limits nothing is added at a job's end and Ends is not used.
//
// For each snapshot i it lists the jobs whose end E is in (tick_i, at_i)
// and after their start; a job ending exactly at tick_i is in that tick's
// usage already, and one ending in the snapshot's own second is still
// running at it: a snapshot at T is the instant T.000, and sacct's E is
// the second the job ended in (docs/slurm-semantics.md §2.9). The lists
// are built in one pass over the jobs: the first snapshot after E is found
// in a table of the first snapshot at or after each period of the window
// (a binary search when the window has too many periods for one), and E
// belongs to it and to the snapshots after it that share its tick, if that
// tick is before E.
type Ends struct {
	jobs     decay.Jobs // Start, End, Rate and Assoc are read
	halfLife int64      // PriorityDecayHalfLife in seconds; 0: no decay
	snaps    []int64    // the snapshot times
	ticks    []int64    // the tick each snapshot's usage is taken at
	at       [][]int32  // per snapshot: the jobs ending in (ticks[i], snaps[i]]
	own      []float64  // scratch: own usage plus the end charges
	// charge holds the jobs whose end slurmctld charged over another span
	// than the seconds since the tick (decay.Window.EndCharge): such a
	// job's end is charged with its δ, and one ending in its tick's own
	// second (the double charge) counts from that tick's snapshots on.
	charge map[int32]int64
}

// EndCharges are the job ends slurmctld charged over another span than
// the seconds since the tick before them (the double charge,
// docs/slurm-versions.md §10), as decay.Window passes them.
type EndCharges struct {
	// Sec is decay.Window.EndCharge: each such end's δ.
	Sec map[int32]int64
	// InPass is decay.Window.EndChargeInPass: the ends among them charged
	// before their tick's fair-share step, which the tick's usage holds
	// (Ends adds nothing for them).
	InPass map[int32]bool
}

// NewEnds places the ends of jobs in the snapshots snaps (sorted) of a
// run ticking on sched, every periodSec but for the ticks a log gives;
// charge are the ends slurmctld charged twice (zero for none).
func NewEnds(jobs decay.Jobs, snaps []int64, sched *decay.Schedule, periodSec, halfLife int64, charge EndCharges) *Ends {
	l := &Ends{jobs: jobs, halfLife: halfLife, snaps: snaps, charge: charge.Sec,
		ticks: make([]int64, len(snaps)), at: make([][]int32, len(snaps))}
	n := len(snaps)
	if n == 0 {
		return l
	}
	for i, s := range snaps {
		l.ticks[i] = sched.Last(s)
	}
	lo, hi := l.ticks[0], snaps[n-1] // every end placed is in (lo, hi]
	// table[b] is the first snapshot at or after lo + b·periodSec.
	var table []int32
	if (hi-lo)/periodSec < 1<<22 {
		table = make([]int32, (hi-lo)/periodSec+1)
		i := 0
		for b := range table {
			for i < n && snaps[i] < lo+int64(b)*periodSec {
				i++
			}
			table[b] = int32(i)
		}
	}
	for j, e := range jobs.End {
		// An end charged twice in its tick's own second came after the
		// tick: the snapshots of that tick hold it.
		_, twice := charge.Sec[int32(j)]
		if twice && charge.InPass[int32(j)] {
			continue // in the usage of its tick (the last before e) on
		}
		if e == decay.Running || e > hi || e < lo || e == lo && !twice || e <= jobs.Start[j] || !(jobs.Rate[j] > 0) {
			continue
		}
		var i int
		if table != nil {
			for i = int(table[(e-lo)/periodSec]); i < n && snaps[i] <= e; i++ {
			}
		} else {
			i, _ = slices.BinarySearch(snaps, e+1)
		}
		// Snapshots i, i+1, … are after E; those whose tick is
		// before E hold it (their tick is then the last one before E).
		for ; i < n && (l.ticks[i] < e || twice && l.ticks[i] == e); i++ {
			l.at[i] = append(l.at[i], int32(j))
		}
	}
	return l
}

// Usage returns own (every universe association's own usage at snapshot
// i's tick, as decay passed it) plus the end charges of the jobs ending
// between that tick and the snapshot, or nil when there are none. The
// slice is reused by the next call.
func (l *Ends) Usage(i int, at, tick int64, own []float64) ([]float64, error) {
	if i >= len(l.snaps) || l.snaps[i] != at || l.ticks[i] != tick {
		return nil, fmt.Errorf("snapshot %d at %d: decay took it at tick %d, the job ends were placed for another", i, at, tick)
	}
	if len(l.at[i]) == 0 {
		return nil, nil
	}
	l.own = append(l.own[:0], own...)
	for _, j := range l.at[i] {
		sec := l.jobs.End[j] - max(tick, l.jobs.Start[j])
		if c, ok := l.charge[j]; ok {
			sec = c
		}
		l.own[l.jobs.Assoc[j]] += float64(l.jobs.Rate[j] * decay.Chunk(l.halfLife, sec))
	}
	return l.own, nil
}
