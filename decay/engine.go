package decay

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
)

// Running is the Jobs.End value of a job that is still running: it is
// charged for every tick of the window after its start.
const Running int64 = math.MaxInt64

// maxTime bounds job and origin times (Unix seconds, ~36,000 years) so that
// tick arithmetic cannot overflow.
const maxTime = 1 << 40

// maxRate bounds a job's rate in magnitude; far above any real billable
// TRES × UsageFactor. A rate may be negative: a partition's
// TRESBillingWeights may hold negative weights, and Slurm charges the
// negative billing as it comes (_apply_new_usage adds run_decay ×
// billable_tres to usage_raw, whatever its sign).
const maxRate = 1 << 40

// Jobs are the charged job records as parallel columns, one row per job
// allocation run (each array task, het-job component and requeued run is its
// own row).
type Jobs struct {
	// Start is the job's start time (Unix seconds).
	Start []int64
	// End is the job's end time (Unix seconds), or Running.
	End []int64
	// Rate is the billable TRES B times the QOS UsageFactor q: the usage
	// the job accrues per second before decay. It is negative when B is
	// (negative TRESBillingWeights), and takes usage away as Slurm does.
	Rate []float64
	// Assoc is the job's association index (0..N−1).
	Assoc []int32
}

// Len returns the number of jobs.
func (j Jobs) Len() int { return len(j.Start) }

// Reserve makes room for n jobs in all, so that appending up to n does not
// reallocate. Appending grows a large slice by a quarter at a time, which
// copies it several times over; a caller that can estimate its number of
// jobs reserves them instead.
func (j *Jobs) Reserve(n int) {
	j.Start = reserve(j.Start, n)
	j.End = reserve(j.End, n)
	j.Rate = reserve(j.Rate, n)
	j.Assoc = reserve(j.Assoc, n)
}

func reserve[T any](s []T, n int) []T {
	if n > cap(s) {
		s = slices.Grow(s, n-len(s))
	}
	return s
}

// Window is one run of the engine: the association tree, the jobs that may
// contribute to ticks after the state's tick, the end of the window and the
// times at which usage is wanted.
type Window struct {
	// Parent is the direct parent of every association (−1 for a root),
	// ordered parents-before-children: Parent[i] < i. It may be longer
	// than the state's usage vector: associations created since the state
	// was saved are appended at the end with zero usage.
	Parent []int32
	// Jobs are charged only for ticks in (State.Tick, To]. Passing jobs
	// that ended long before, or start later, is harmless.
	Jobs Jobs
	// To is the end of the window (Unix seconds): every tick at or before
	// To is processed, and jobs marked Running are charged up to that tick.
	To int64
	// Ticks, when not empty, are the times (Unix seconds, strictly
	// increasing) at which slurmctld's decay thread really ticked over a
	// span, as its log shows them. Before the first of them the ticks fall
	// every PriorityCalcPeriod from State.Tick; after the last of them they
	// go on every PriorityCalcPeriod from it, as slurmctld's do. Each tick
	// decays over its real distance from the one before: f = d^(T−L), and
	// a job running through (L, T] is charged rate·(T−L)·d^(T−L). Ticks at
	// or before State.Tick are ignored. Without Ticks the grid is
	// Params.OriginUnix + k·PriorityCalcPeriod.
	Ticks []int64
	// EndsAfterTick are the jobs (indexes into Jobs) whose end falls in the
	// very second of a tick but came after it (slurmctld's log orders
	// them): such a job is charged by that tick as running, and its end
	// adds nothing. Every other job whose end equals a tick time ended
	// before that tick: its last chunk is charged at its end and decayed by
	// the tick.
	EndsAfterTick map[int32]bool
	// EndCharge holds, with limits, the jobs (indexes into Jobs) whose end
	// slurmctld charged over another span than the seconds since the tick
	// before it, as its log shows: the run_delta of the end's charge. A
	// job end processed after a tick's pass had charged the job but before
	// the tick moved g_last_ran charges the job's run since the tick
	// before again (docs/slurm-versions.md §10): such a job is charged by
	// its tick as running (EndsAfterTick, or an end in a later second)
	// and its end adds rate·δ·d^δ with this δ, decayed by the next tick as
	// any end's charge.
	EndCharge map[int32]int64
	// EndChargeInPass are the jobs of EndCharge whose end's charge came
	// before the fair-share step of its tick's pass (Fair Tree's
	// _apply_priority_fs, docs/slurm-versions.md §10): the charge,
	// rate·δ·d^δ with EndCharge's δ, belongs to that tick (the last one
	// before the end, the one that charged the job as running), added
	// after its decay as a first chunk is, and the end adds nothing. A
	// window starting at or after that tick has it in its state already.
	EndChargeInPass map[int32]bool
	// Reloads are the times (Unix seconds, sorted) slurmctld started and
	// read its usage back from its state file, as its log shows them:
	// the first tick after each decays usage as the file held it, every
	// association's own usage rounded to six decimals (Reload).
	Reloads []int64
	// Snapshots are times (Unix seconds, sorted, within [State.Tick, To]) at
	// which OnSnapshot receives usage as of the last tick at or before each.
	Snapshots []int64
	// OnSnapshot receives the snapshot time, the tick it reflects and the
	// usage vector (every association's usage_raw). usage is only valid
	// during the call and must not be modified; copy it to keep it. An
	// error stops the run and is returned wrapped.
	OnSnapshot func(at, tick int64, usage []float64) error
}

// Stats account for every job of a run and the work done.
// Jobs == JobsCharged + JobsBetweenTicks + JobsEmpty + JobsOutside.
type Stats struct {
	// Jobs is the number of job rows given.
	Jobs int
	// JobsCharged had at least one chunk or tail in the window.
	JobsCharged int
	// JobsBetweenTicks started and ended between two consecutive ticks of
	// the window without limits enforced, so Slurm never charges them.
	JobsBetweenTicks int
	// JobsEmpty had zero length (end == start).
	JobsEmpty int
	// JobsOutside contribute nothing to the window's ticks (they ended
	// before it, or start after its last tick).
	JobsOutside int
	// Ticks is the number of ticks processed.
	Ticks int64
	// Resets is the number of usage resets applied.
	Resets int
}

// Event encoding: a job's start or end event is a side bit, two flags and
// the job index in 32 bits; its tick is where tickEvents files it.
const (
	evEnd   = 1 << 31 // end event (else start event)
	evFlagA = 1 << 30 // start: partial first chunk; end: rate off
	evFlagB = 1 << 29 // start: rate on (deferred one tick after a chunk); end: tail
	evJob   = 1<<29 - 1
	maxJobs = evJob + 1
)

// denseTicks is how many ticks beyond four per job a window may have and
// still get its events placed by counting (tickEvents' dense form): its
// count array, 4 bytes a tick, then stays within 16 bytes a job plus 4 MiB,
// the order of the sparse form's sort buffers (20 bytes an event). A longer
// window takes per tick far more time than the count costs, but its memory
// must not grow with the ticks.
const denseTicks = 1 << 20

// Advance moves st forward through every tick T with st.Tick < T ≤ w.To,
// charging w.Jobs according to p (docs/slurm-semantics.md §2.8), and reports
// w.Snapshots on the way. Invalid input is reported before st is touched;
// if OnSnapshot fails, st is left at the tick of that snapshot. Errors do
// not start with "decay:": the caller names the stage it was in.
func Advance(p Params, st *State, w Window) (Stats, error) {
	var stats Stats
	if err := p.Validate(); err != nil {
		return stats, err
	}
	P := p.calcPeriod()
	if st.CalcPeriodSec != P || st.OriginUnix != p.OriginUnix {
		return stats, fmt.Errorf("state grid (period %d s, origin %d) differs from params (period %d s, origin %d)",
			st.CalcPeriodSec, st.OriginUnix, P, p.OriginUnix)
	}
	if p.OriginUnix <= -maxTime || p.OriginUnix >= maxTime {
		return stats, fmt.Errorf("origin %d out of range", p.OriginUnix)
	}
	if st.Tick <= -maxTime || st.Tick >= maxTime || len(w.Ticks) == 0 && (st.Tick-p.OriginUnix)%P != 0 {
		return stats, fmt.Errorf("state tick %d is not on the grid", st.Tick)
	}
	if w.To < st.Tick || w.To >= maxTime {
		return stats, fmt.Errorf("window end %d is before the state tick %d or out of range", w.To, st.Tick)
	}
	if err := checkParent(w.Parent, len(st.Usage)); err != nil {
		return stats, err
	}
	if err := checkSnapshots(w, st.Tick); err != nil {
		return stats, err
	}
	g, err := newGrid(st.Tick, P, w.Ticks)
	if err != nil {
		return stats, err
	}
	g.k0, g.kEnd, g.limits, g.after = 0, g.floor(w.To), p.LimitsEnforced, w.EndsAfterTick
	nTicks := g.kEnd - g.k0
	if nTicks >= 1<<32-1 {
		return stats, fmt.Errorf("window of %d ticks is too long", nTicks)
	}
	dense := nTicks <= 4*int64(w.Jobs.Len())+denseTicks
	ev, err := g.events(w.Jobs, len(w.Parent), &stats, dense)
	if err != nil {
		return stats, err
	}

	// Input is valid: from here on st changes.
	period, _ := ParseResetPeriod(p.ResetPeriod)
	if period != st.Reset {
		// Like slurmctld after a reconfigure: recompute the boundary from
		// the last reset. (NOW does not reset here; see ResetNow.)
		st.Reset = period
		st.NextReset = nextResetUnix(period, st.LastReset, st.Tick, p.location())
	}
	for len(st.Usage) < len(w.Parent) {
		st.Usage = append(st.Usage, 0)
	}
	e := newEngine(p, st, w, period)
	if err := e.run(&ev, g, &stats); err != nil {
		return stats, err
	}
	if len(g.times) > 0 {
		// The grid goes on from the last tick, whatever its phase was.
		st.OriginUnix = TickPhase(st.Tick, P)
	}
	return stats, nil
}

// TickPhase returns the phase of Unix second t on a tick grid of period
// seconds: t mod period in [0, period), for period > 0. A grid is known by
// its phase (State.OriginUnix); two instants with the same phase lie on
// the same grid.
func TickPhase(t, period int64) int64 {
	r := t % period
	if r < 0 {
		r += period
	}
	return r
}

// checkParent verifies that parent is a forest ordered parents-before-children
// covering at least n associations.
func checkParent(parent []int32, n int) error {
	if len(parent) < n {
		return fmt.Errorf("tree has %d associations, the state %d (associations must not disappear)", len(parent), n)
	}
	if len(parent) > math.MaxInt32 {
		return fmt.Errorf("tree has %d associations", len(parent))
	}
	for i, q := range parent {
		if q < -1 || int(q) >= i {
			return fmt.Errorf("association %d has parent %d, want −1 or an earlier index", i, q)
		}
	}
	return nil
}

// checkSnapshots verifies that the snapshot times are sorted and inside the
// window.
func checkSnapshots(w Window, from int64) error {
	if len(w.Snapshots) > 0 && w.OnSnapshot == nil {
		return errors.New("snapshots requested without OnSnapshot")
	}
	for i, t := range w.Snapshots {
		if t < from || t > w.To {
			return fmt.Errorf("snapshot %d at %d is outside the window [%d, %d]", i, t, from, w.To)
		}
		if i > 0 && t < w.Snapshots[i-1] {
			return fmt.Errorf("snapshot %d at %d is before snapshot %d at %d", i, t, i-1, w.Snapshots[i-1])
		}
	}
	return nil
}

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// ceilDiv returns ⌈a/b⌉ for b > 0.
func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// tickIndexFloor returns ⌊x/P⌋ and whether x is in the supported time range.
func tickIndexFloor(x, P int64) (int64, bool) {
	if x <= -2*maxTime || x >= 2*maxTime {
		return 0, false
	}
	return floorDiv(x, P), true
}

// grid is the tick schedule of one window: ticks k0+1 … kEnd are
// processed. Tick k is at origin + k·P, except that the ticks after kA are
// the explicit times (times[k−kA−1]) and, after the last of them, that
// time plus a multiple of P.
type grid struct {
	origin, P, k0, kEnd int64
	limits              bool
	times               []int64
	kA                  int64
	after               map[int32]bool
}

// newGrid returns the schedule of ticks every P from origin, with the
// explicit times after origin (strictly increasing) in the middle: the
// grid's ticks up to the last one at least P before the first time (a
// tick comes at least a period after the one before, but for a restart),
// then the times, then every P from the last time.
func newGrid(origin, P int64, times []int64) (grid, error) {
	g := grid{origin: origin, P: P}
	i := 0
	for i < len(times) && times[i] <= origin {
		i++
	}
	times = times[i:]
	for i, t := range times {
		if t >= maxTime || i > 0 && t <= times[i-1] {
			return g, fmt.Errorf("tick %d at %d is out of range or not after the tick before it", i, t)
		}
	}
	if len(times) > 0 {
		g.times = times
		g.kA = max(floorDiv(times[0]-P-origin, P), 0) // the anchor itself is tick 0
	}
	return g, nil
}

// at returns the time of tick k.
func (g *grid) at(k int64) int64 {
	if len(g.times) == 0 || k <= g.kA {
		return g.origin + k*g.P
	}
	i := k - g.kA - 1
	if n := int64(len(g.times)); i >= n {
		return g.times[n-1] + (i-n+1)*g.P
	}
	return g.times[i]
}

// floor returns the index of the last tick at or before t.
func (g *grid) floor(t int64) int64 {
	if len(g.times) == 0 {
		return floorDiv(t-g.origin, g.P)
	}
	if t < g.times[0] {
		return min(floorDiv(t-g.origin, g.P), g.kA)
	}
	n := len(g.times)
	if last := g.times[n-1]; t >= last {
		return g.kA + int64(n) + floorDiv(t-last, g.P)
	}
	i, _ := slices.BinarySearch(g.times, t+1) // the first time after t
	return g.kA + int64(i)
}

// jobTicks describes where a job's usage falls on the grid, before clipping
// to the window: chunks at ticks kFirst … kLast (the first of length first
// seconds), and its end tail at kLast+1.
type jobTicks struct {
	kFirst, kLast int64
	first         int64 // length of the chunk at kFirst (P when the job started on a tick)
	tail          int64 // length of the end tail; 0 for a running job
}

// ticksOf places job j with start s and end e (or Running) on the grid.
// A job ending exactly at a tick ended before it, unless g.after says it
// ended after it.
func (g *grid) ticksOf(j int32, s, e int64) jobTicks {
	var t jobTicks
	if len(g.times) == 0 {
		t.kFirst = floorDiv(s-g.origin, g.P) + 1 // first tick strictly after s
		t.first = g.at(t.kFirst) - s
		if e == Running {
			t.kLast = g.kEnd
			return t
		}
		t.kLast = ceilDiv(e-g.origin, g.P) - 1 // last tick strictly before e
		if g.after != nil && g.after[j] && (e-g.origin)%g.P == 0 {
			t.kLast++
		}
		t.tail = e - max(g.at(t.kLast), s)
		return t
	}
	t.kFirst = g.floor(s) + 1
	t.first = g.at(t.kFirst) - s
	if e == Running {
		t.kLast = g.kEnd
		return t
	}
	t.kLast = g.floor(e - 1)
	if g.after != nil && g.after[j] && g.at(t.kLast+1) == e {
		t.kLast++
	}
	t.tail = e - max(g.at(t.kLast), s)
	return t
}

// jobEvents are the events of one job in the window: the flags of its start
// and end events (0: no such event; end includes evEnd) and their ticks
// relative to k0.
type jobEvents struct {
	start, end       uint32
	startRel, endRel uint32
}

// eventsOf places a job with start s and end e ≠ s (or Running) on the
// window. between reports a job without events that started and ended
// between two consecutive ticks of the window.
func (g *grid) eventsOf(j int32, s, e int64) (je jobEvents, between bool) {
	t := g.ticksOf(j, s, e)
	running := t.kFirst <= t.kLast
	partial := t.first < g.P
	if len(g.times) > 0 {
		partial = g.at(t.kFirst-1) != s // the first chunk is not a whole interval
	}
	// Start side: the partial first chunk, and when the rate joins.
	hi := min(t.kLast, g.kEnd)
	chunk := partial && running && t.kFirst > g.k0 && t.kFirst <= g.kEnd
	kOn := t.kFirst
	if partial {
		kOn++
	}
	kOn = max(kOn, g.k0+1)
	on := kOn <= hi
	startTick := kOn
	if chunk {
		je.start |= evFlagA
		startTick = t.kFirst
	}
	if on {
		je.start |= evFlagB
	}
	if je.start != 0 {
		je.startRel = uint32(startTick - g.k0)
	}
	// End side at kLast+1: the rate leaves, and with limits the tail.
	kE := t.kLast + 1
	if on && kE <= g.kEnd {
		je.end |= evFlagA
	}
	if g.limits && e != Running && kE > g.k0 && kE <= g.kEnd {
		je.end |= evFlagB
	}
	if je.end != 0 {
		je.end |= evEnd
		je.endRel = uint32(kE - g.k0)
	}
	between = je.start == 0 && je.end == 0 && !running && e != Running && kE > g.k0 && kE <= g.kEnd
	return je, between
}

// tickEvents are the events of a window grouped by relative tick, in
// increasing tick order.
type tickEvents struct {
	ev []uint32
	// end[i] is the end in ev of the i-th group. In the dense form group i
	// holds the events of tick i (tick 0 has none); in the sparse form it
	// holds those of tick[i], and ticks without events have no group.
	end    []uint32
	tick   []uint32
	sparse bool
	next   int // sparse form: the groups taken so far
}

// at returns the events of tick rel ≥ 1. In the sparse form rel must
// increase from call to call.
func (q *tickEvents) at(rel uint32) []uint32 {
	if !q.sparse {
		return q.ev[q.end[rel-1]:q.end[rel]]
	}
	i := q.next
	if i == len(q.tick) || q.tick[i] != rel {
		return nil
	}
	q.next++
	var lo uint32
	if i > 0 {
		lo = q.end[i-1]
	}
	return q.ev[lo:q.end[i]]
}

// events validates the jobs, fills the job counts of stats and returns
// their start and end events inside the window grouped by tick. dense
// places them by counting, with a count for every tick of the window;
// otherwise they are radix-sorted and only the ticks with events get a
// group.
func (g *grid) events(j Jobs, nAssoc int, stats *Stats, dense bool) (tickEvents, error) {
	var count []uint32
	if dense {
		count = make([]uint32, g.kEnd-g.k0+1)
	}
	m, err := g.countEvents(j, nAssoc, stats, count)
	if err != nil {
		return tickEvents{}, err
	}
	if dense {
		return g.placeEvents(j, count, m), nil
	}
	return g.sortEvents(j, m), nil
}

// countEvents validates the jobs, fills the job counts of stats and returns
// the number of events in the window; when count is not nil it adds the
// number of events at each relative tick.
func (g *grid) countEvents(j Jobs, nAssoc int, stats *Stats, count []uint32) (int, error) {
	n := j.Len()
	stats.Jobs = n
	if len(j.End) != n || len(j.Rate) != n || len(j.Assoc) != n {
		return 0, fmt.Errorf("job columns have different lengths: start %d, end %d, rate %d, assoc %d",
			n, len(j.End), len(j.Rate), len(j.Assoc))
	}
	if n > maxJobs {
		return 0, fmt.Errorf("%d jobs is more than %d", n, maxJobs)
	}
	var sumRate float64
	m := 0
	for i := range n {
		s, e, r, a := j.Start[i], j.End[i], j.Rate[i], j.Assoc[i]
		switch {
		case a < 0 || int(a) >= nAssoc:
			return 0, fmt.Errorf("job %d: association %d out of range [0, %d)", i, a, nAssoc)
		case !(r > -maxRate && r < maxRate):
			return 0, fmt.Errorf("job %d: rate %v outside (-2^40, 2^40)", i, r)
		case s < 0 || s >= maxTime:
			return 0, fmt.Errorf("job %d: start %d out of range", i, s)
		case e != Running && (e < s || e >= maxTime):
			return 0, fmt.Errorf("job %d: end %d before start %d or out of range", i, e, s)
		}
		sumRate += math.Abs(r)
		if e == s {
			stats.JobsEmpty++
			continue
		}
		je, between := g.eventsOf(int32(i), s, e)
		if je.start != 0 {
			m++
			if count != nil {
				count[je.startRel]++
			}
		}
		if je.end != 0 {
			m++
			if count != nil {
				count[je.endRel]++
			}
		}
		switch {
		case je.start != 0 || je.end != 0:
			stats.JobsCharged++
		case between:
			stats.JobsBetweenTicks++
		default:
			stats.JobsOutside++
		}
	}
	if sumRate*float64(g.P) >= 0x1p62 {
		return 0, fmt.Errorf("total rate %g × period %d s would overflow the exact sums", sumRate, g.P)
	}
	return m, nil
}

// placeEvents writes the m events of the validated jobs straight into their
// groups, given the number of events at each relative tick (a counting
// sort: one buffer, written once). Each group keeps the jobs' order, the
// order the radix sort of the sparse form gives too.
func (g *grid) placeEvents(j Jobs, count []uint32, m int) tickEvents {
	pos := count
	var sum uint32
	for k, c := range count {
		pos[k] = sum
		sum += c
	}
	ev := make([]uint32, m)
	for i, s := range j.Start {
		e := j.End[i]
		if e == s {
			continue
		}
		je, _ := g.eventsOf(int32(i), s, e)
		if je.start != 0 {
			ev[pos[je.startRel]] = je.start | uint32(i)
			pos[je.startRel]++
		}
		if je.end != 0 {
			ev[pos[je.endRel]] = je.end | uint32(i)
			pos[je.endRel]++
		}
	}
	// pos[k] has moved to the end of tick k's events.
	return tickEvents{ev: ev, end: pos}
}

// sortEvents returns the m events of the validated jobs grouped by tick,
// radix-sorted with their relative tick in the high 32 bits, for windows
// with too many ticks to count events at each.
func (g *grid) sortEvents(j Jobs, m int) tickEvents {
	wide := make([]uint64, 0, m)
	for i, s := range j.Start {
		e := j.End[i]
		if e == s {
			continue
		}
		je, _ := g.eventsOf(int32(i), s, e)
		if je.start != 0 {
			wide = append(wide, uint64(je.startRel)<<32|uint64(je.start|uint32(i)))
		}
		if je.end != 0 {
			wide = append(wide, uint64(je.endRel)<<32|uint64(je.end|uint32(i)))
		}
	}
	sortByTick(wide, uint32(g.kEnd-g.k0))
	q := tickEvents{ev: make([]uint32, len(wide)), sparse: true}
	for i, x := range wide {
		q.ev[i] = uint32(x)
		if i+1 == len(wide) || wide[i+1]>>32 != x>>32 {
			q.tick = append(q.tick, uint32(x>>32))
			q.end = append(q.end, uint32(i+1))
		}
	}
	return q
}

// sortByTick sorts events by their relative tick (the high 32 bits, at most
// maxTick) with an LSD radix sort; the order within a tick is irrelevant
// because everything summed within a tick is summed exactly.
func sortByTick(ev []uint64, maxTick uint32) {
	if len(ev) < 2 {
		return
	}
	const digit = 11
	buf := make([]uint64, len(ev))
	src, dst := ev, buf
	var count [1 << digit]int
	for shift := 32; shift < 32+bits.Len32(maxTick); shift += digit {
		clear(count[:])
		for _, x := range src {
			count[(x>>shift)&(1<<digit-1)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, x := range src {
			b := (x >> shift) & (1<<digit - 1)
			dst[count[b]] = x
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &ev[0] {
		copy(ev, src)
	}
}

// fixed is a signed 128-bit fixed-point number with 64 fractional bits:
// value = hi + lo·2^-64. Sums of fixed values are exact and so independent
// of order.
type fixed struct {
	hi int64
	lo uint64
}

// toFixed truncates v (|v| < 2^62) toward zero to a multiple of 2^-64. A
// negative v is the negation of −v's: its fraction taken as v − ⌊v⌋ would
// round to 1 for a tiny negative v (−1e−30 + 1 is 1 in float64).
func toFixed(v float64) fixed {
	if v < 0 {
		return toFixed(-v).neg()
	}
	ip := math.Floor(v)
	return fixed{hi: int64(ip), lo: uint64((v - ip) * 0x1p64)}
}

// neg returns −a (two's complement over the 128 bits).
func (a fixed) neg() fixed {
	lo, c := bits.Sub64(0, a.lo, 0)
	return fixed{hi: -a.hi - int64(c), lo: lo}
}

func (a *fixed) add(b fixed) {
	var c uint64
	a.lo, c = bits.Add64(a.lo, b.lo, 0)
	a.hi += b.hi + int64(c)
}

func (a *fixed) sub(b fixed) {
	var c uint64
	a.lo, c = bits.Sub64(a.lo, b.lo, 0)
	a.hi -= b.hi + int64(c)
}

// float converts a to float64 deterministically (not necessarily correctly
// rounded). A negative a converts as the negation of −a: hi + lo·2^-64
// with hi = −1 would cancel, losing the bits of a small negative sum.
func (a fixed) float() float64 {
	if a.hi < 0 {
		return -a.neg().float()
	}
	return float64(a.hi) + float64(float64(a.lo)*0x1p-64)
}

// engine holds the per-association working arrays of one run.
type engine struct {
	st       *State
	w        Window
	period   ResetPeriod
	p        Params
	f, cP, d float64 // f and cP are d^δ (at least DBL_MIN) and δ·d^δ
	delta    int64   // the δ of f and cP: the ticks' distance

	run1 []float64 // run1[δ] = δ·d^δ for δ ≤ P, when P is small enough

	rate   []fixed   // exact sum of the rates of running jobs
	rateF  []float64 // rate as float64
	chunks []fixed   // exact sum of this tick's partial first chunks
	tails  []fixed   // exact sum of this tick's job-end tails (limits)
	acc    []float64 // this tick's new usage: own points, then children's
	up     []int32   // parent, with each root mapped to itself
	flat   bool      // every association is a root: nothing propagates
	// On a flat forest, the associations whose usage, rate or new usage
	// has been other than +0, in index order but for the latest ones in
	// activated, and which they are: the others stay at +0 tick after
	// tick, so a tick may skip them.
	active     []int32
	activated  []int32
	isActive   []bool
	rateStamp  []uint32
	pointStamp []uint32
	rateDirty  []int32
	pointDirty []int32
	deferred   []int32 // jobs whose rate joins at the next tick
	deferNext  []int32
	reloadBuf  []float64 // own usage at a reload (Window.Reloads), tree windows only
}

func newEngine(p Params, st *State, w Window, period ResetPeriod) *engine {
	n := len(st.Usage)
	P := p.calcPeriod()
	e := &engine{
		st: st, w: w, period: period, p: p,
		d:          Factor(p.HalfLifeSec),
		rate:       make([]fixed, n),
		rateF:      make([]float64, n),
		chunks:     make([]fixed, n),
		tails:      make([]fixed, n),
		rateStamp:  make([]uint32, n),
		pointStamp: make([]uint32, n),
	}
	e.initTree(n)
	e.setDelta(P)
	if P <= 1<<16 {
		e.run1 = make([]float64, P+1)
		for s := range e.run1 {
			e.run1[s] = chunk(e.d, int64(s))
		}
	}
	return e
}

// initTree allocates acc and up for n associations. A root's up is the
// root itself, not one shared spare slot: adding every root's new usage to
// one slot would chain all their iterations of advanceTick through that
// slot, which on a flat tree (as `fairledger run` has) made the kernel
// three to four times slower.
func (e *engine) initTree(n int) {
	e.acc = make([]float64, n)
	e.up = make([]int32, n)
	e.flat = true
	for a, q := range e.w.Parent[:n] {
		if q < 0 {
			q = int32(a)
		} else {
			e.flat = false
		}
		e.up[a] = q
	}
	if e.flat {
		e.isActive = make([]bool, n)
	}
}

// activate adds association a to the active ones of a flat forest (to
// activated, until mergeActive).
func (e *engine) activate(a int32) {
	if e.flat && !e.isActive[a] {
		e.isActive[a] = true
		e.activated = append(e.activated, a)
	}
}

// mergeActive merges the associations activated since the last merge
// into active, which stays in index order: the kernel then walks u, rateF
// and acc forwards (in the order of activation, it took twice as long).
// A merge moves active, so it waits until activated holds a sixteenth as
// many: until then the kernel takes activated as it is.
func (e *engine) mergeActive() {
	if len(e.activated) == 0 || 16*len(e.activated) < len(e.active) {
		return
	}
	slices.Sort(e.activated)
	i, j := len(e.active)-1, len(e.activated)-1
	e.active = slices.Grow(e.active, len(e.activated))[:len(e.active)+len(e.activated)]
	for k := len(e.active) - 1; j >= 0; k-- {
		if i >= 0 && e.active[i] > e.activated[j] {
			e.active[k] = e.active[i]
			i--
		} else {
			e.active[k] = e.activated[j]
			j--
		}
	}
	e.activated = e.activated[:0]
}

// setDelta sets the tick's decay f and full chunk cP for ticks delta
// seconds apart.
func (e *engine) setDelta(delta int64) {
	e.delta, e.f, e.cP = delta, DecayOver(e.p.HalfLifeSec, delta), chunk(e.d, delta)
}

// runDecay returns δ·d^δ.
func (e *engine) runDecay(sec int64) float64 {
	if sec < int64(len(e.run1)) {
		return e.run1[sec]
	}
	return chunk(e.d, sec)
}

func (e *engine) markRate(a int32, rel uint32) {
	if e.rateStamp[a] != rel {
		e.rateStamp[a] = rel
		e.rateDirty = append(e.rateDirty, a)
	}
}

func (e *engine) markPoint(a int32, rel uint32) {
	if e.pointStamp[a] != rel {
		e.pointStamp[a] = rel
		e.pointDirty = append(e.pointDirty, a)
	}
}

// run processes ticks k0+1 … kEnd with the events grouped by tick.
func (e *engine) run(ev *tickEvents, g grid, stats *Stats) error {
	st, jobs := e.st, e.w.Jobs
	u := st.Usage
	si := 0
	emit := func(before, tick int64) error {
		for ; si < len(e.w.Snapshots) && e.w.Snapshots[si] < before; si++ {
			if err := e.w.OnSnapshot(e.w.Snapshots[si], tick, u); err != nil {
				return fmt.Errorf("snapshot at %d: %w", e.w.Snapshots[si], err)
			}
		}
		return nil
	}
	if err := emit(g.at(g.k0+1), st.Tick); err != nil {
		return err
	}
	loc := e.p.location()
	if e.flat {
		// -0 counts as used: the kernel would turn it into +0.
		for a, x := range u {
			if x != 0 || math.Signbit(x) {
				e.activate(int32(a))
			}
		}
	}
	inPass := e.passCharges(g)
	L := st.Tick
	for rel := uint32(1); int64(rel) <= g.kEnd-g.k0; rel++ {
		k := g.k0 + int64(rel)
		T := g.at(k)
		reset := T >= st.NextReset
		if delta := T - L; delta != e.delta {
			// An irregular tick of slurmctld's log: its own decay and chunk.
			e.setDelta(delta)
		}

		for _, j := range e.deferred {
			a := jobs.Assoc[j]
			e.rate[a].add(toFixed(jobs.Rate[j]))
			e.markRate(a, rel)
		}
		e.deferred, e.deferNext = e.deferNext[:0], e.deferred
		for _, x := range ev.at(rel) {
			j := int32(x & evJob)
			a := jobs.Assoc[j]
			r := jobs.Rate[j]
			if x&evEnd == 0 {
				if x&evFlagA != 0 {
					first := T - jobs.Start[j]
					e.chunks[a].add(toFixed(r * e.runDecay(first)))
					e.markPoint(a, rel)
					if x&evFlagB != 0 {
						e.deferred = append(e.deferred, j)
					}
				} else if x&evFlagB != 0 {
					e.rate[a].add(toFixed(r))
					e.markRate(a, rel)
				}
				continue
			}
			if x&evFlagA != 0 {
				e.rate[a].sub(toFixed(r))
				e.markRate(a, rel)
			}
			if x&evFlagB != 0 && !e.w.EndChargeInPass[j] {
				tail := jobs.End[j] - max(L, jobs.Start[j])
				if sec, ok := e.w.EndCharge[j]; ok {
					tail = sec
				}
				e.tails[a].add(toFixed(r * e.runDecay(tail)))
				e.markPoint(a, rel)
			}
		}
		for _, j := range inPass[rel] {
			// An end charged twice before the tick's fair-share step: in
			// the tick's own usage, as a chunk.
			a := jobs.Assoc[j]
			e.chunks[a].add(toFixed(jobs.Rate[j] * e.runDecay(e.w.EndCharge[j])))
			e.markPoint(a, rel)
		}
		for _, a := range e.rateDirty {
			e.rateF[a] = e.rate[a].float()
			e.activate(a)
		}
		e.rateDirty = e.rateDirty[:0]
		if k, _ := slices.BinarySearch(e.w.Reloads, L+1); k < len(e.w.Reloads) && e.w.Reloads[k] <= T {
			// slurmctld started in (L, T]: the usage it stopped with (the
			// tick's, and the ends charged since) as its file held it.
			e.reload()
		}
		for _, a := range e.pointDirty {
			v := e.chunks[a].float()
			if !reset {
				// A tail is added at the job's end, before this tick's
				// decay; a reset at this tick wipes it.
				v += float64(e.tails[a].float() * e.f)
			}
			e.acc[a] = v
			e.chunks[a], e.tails[a] = fixed{}, fixed{}
			e.activate(a)
		}
		e.pointDirty = e.pointDirty[:0]

		if reset {
			clear(u)
			st.LastReset = st.NextReset
			st.NextReset = nextResetUnix(e.period, st.LastReset, T, loc)
			stats.Resets++
		}
		if e.flat {
			e.mergeActive()
		}
		switch {
		case e.flat && 5*(len(e.active)+len(e.activated)) < 2*len(u):
			advanceTickActive(u, e.rateF, e.acc, e.active, e.f, e.cP)
			advanceTickActive(u, e.rateF, e.acc, e.activated, e.f, e.cP)
		case e.flat:
			advanceTickFlat(u, e.rateF, e.acc, e.f, e.cP)
		default:
			advanceTick(u, e.rateF, e.acc, e.up, e.f, e.cP)
		}
		st.Tick, L = T, T
		stats.Ticks++
		if err := emit(g.at(k+1), T); err != nil {
			return err
		}
	}
	return nil
}

// passCharges returns, by tick relative to k0, the jobs of
// Window.EndChargeInPass whose tick is in the window: the last tick before
// the job's end, which charged it as running (ticksOf's kLast).
func (e *engine) passCharges(g grid) map[uint32][]int32 {
	if len(e.w.EndChargeInPass) == 0 || !g.limits {
		return nil
	}
	jobs := e.w.Jobs
	out := map[uint32][]int32{}
	for j, ok := range e.w.EndChargeInPass {
		sec, charged := e.w.EndCharge[j]
		if !ok || !charged || sec < 0 || j < 0 || int(j) >= jobs.Len() || jobs.End[j] == Running || jobs.End[j] <= jobs.Start[j] {
			continue
		}
		k := g.ticksOf(j, jobs.Start[j], jobs.End[j]).kLast
		if k > g.k0 && k <= g.kEnd {
			out[uint32(k-g.k0)] = append(out[uint32(k-g.k0)], j)
		}
	}
	for _, js := range out {
		slices.Sort(js) // a map's order is random; sums are exact anyway
	}
	return out
}

// reload is slurmctld's start between the last tick and this one: every
// association's own usage (usage_raw less its children's, which for a
// flat forest is usage_raw) with the job-end tails charged since the last
// tick, rounded as the state file holds it (Reload), then summed up the
// tree again. The tails are folded in, so the tick adds none.
func (e *engine) reload() {
	u := e.st.Usage
	for _, a := range e.pointDirty {
		if t := e.tails[a]; t != (fixed{}) {
			e.tails[a] = fixed{}
			e.markOwn(a, t.float())
		}
	}
	if e.flat {
		for a, x := range u {
			u[a] = Reload(x)
		}
		return
	}
	own := e.reloadBuf[:0]
	own = append(own, u...)
	for a := len(u) - 1; a >= 0; a-- {
		if p := e.up[a]; p != int32(a) {
			own[p] -= u[a]
		}
	}
	for a, x := range own {
		u[a] = Reload(x)
	}
	for a := len(u) - 1; a >= 0; a-- {
		if p := e.up[a]; p != int32(a) {
			u[p] += u[a]
		}
	}
	e.reloadBuf = own
}

// markOwn adds x to association a's usage and every ancestor's: a job-end
// charge made before a reload.
func (e *engine) markOwn(a int32, x float64) {
	u := e.st.Usage
	for {
		u[a] += x
		p := e.up[a]
		if p == a {
			return
		}
		a = p
	}
}

// Reload returns usage as slurmctld reads it back at a start: its state
// file (StateSaveLocation/assoc_usage, written by dump_assoc_mgr_state in
// src/common/assoc_mgr.c) holds each association's own usage_raw packed
// by packlongdouble (src/common/pack.c) as the string "%Lf" prints, six
// decimals rounded to nearest, and load_assoc_usage scans it back and adds
// it to the association and each ancestor. The same in every release
// 22.05–26.05 (slurm-22-05-8-1, slurm-24-11-5-1, slurm-26-05-3-1). The
// decimal rounding of the float64 is that of the long double but within
// a long double's precision of a tie.
func Reload(x float64) float64 {
	var buf [40]byte
	b := strconv.AppendFloat(buf[:0], x, 'f', 6, 64)
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil { // cannot happen for a formatted float
		return x
	}
	return v
}

// The explicit float64 conversions in the kernels forbid the compiler from
// fusing a multiply and an add into an FMA (the Go spec allows it, e.g. with
// GOAMD64=v3 or on arm64), so results are bit-identical on every platform.

// advanceTick applies one tick to every association, children before
// parents: U = U·f + rate·cP + acc, and adds each association's new usage x
// to its parent's acc. up is the parent index with each root mapped to
// itself, so the loop has no branches: a root adds x to its own acc, which
// is then cleared (up[a] < a for every other association, so clearing acc[a]
// after the add touches no parent). acc is left zeroed.
func advanceTick(u, rateF, acc []float64, up []int32, f, cP float64) {
	n := len(u)
	rateF, acc, up = rateF[:n], acc[:n], up[:n]
	for a := n - 1; a >= 0; a-- {
		x := float64(rateF[a]*cP) + acc[a]
		acc[up[a]] += x
		acc[a] = 0
		u[a] = float64(u[a]*f) + x
	}
}

// advanceTickFlat is advanceTick for a forest of roots only, as `fairledger
// run` passes (it keeps every association's own usage and projects it onto
// the fair-share tree at each snapshot): each association's U·f + rate·cP +
// acc is computed by the same operations in the same order, without the
// parent index and the add to the parent's acc, which for a root only
// feeds its own acc before it is cleared. That was two fifths of the
// kernel's time (BenchmarkAdvanceTickFlat).
func advanceTickFlat(u, rateF, acc []float64, f, cP float64) {
	n := len(u)
	rateF, acc = rateF[:n], acc[:n]
	for a := range u {
		x := float64(rateF[a]*cP) + acc[a]
		acc[a] = 0
		u[a] = float64(u[a]*f) + x
	}
}

// advanceTickActive is advanceTickFlat on the associations active lists
// only: the others, at +0 usage with a +0 rate and no new usage, would
// stay at +0 (+0·f + +0·cP + +0 is +0). A large tree where most
// associations run no job spends most of advanceTickFlat's time on them.
// An active association costs about 1.8 ns here against 0.75 in
// advanceTickFlat's contiguous loop, so the run takes this kernel while
// fewer than two fifths are active: on 102,619 associations of which
// 38,903 ran jobs over two months (BenchmarkPipelineAssoc100k), 0.9 s
// instead of 1.3.
func advanceTickActive(u, rateF, acc []float64, active []int32, f, cP float64) {
	for _, a := range active {
		x := float64(rateF[a]*cP) + acc[a]
		acc[a] = 0
		u[a] = float64(u[a]*f) + x
	}
}

// Schedule is where decay ticks fall, as Advance places them for a window
// with explicit Ticks: every period from an anchor (a tick), the explicit
// times, then every period from the last of them. Its zero value is not
// usable; see NewSchedule.
type Schedule struct{ g grid }

// NewSchedule returns the schedule of ticks every periodSec from anchor
// (itself a tick), with ticks (strictly increasing; those at or before
// anchor are ignored) in the middle, as Advance ticks a window that starts
// at a state's tick anchor and is given Window.Ticks.
func NewSchedule(anchor, periodSec int64, ticks []int64) (*Schedule, error) {
	if periodSec <= 0 || periodSec > maxCalcPeriodSec {
		return nil, fmt.Errorf("calc period %d s is outside 1..%d", periodSec, maxCalcPeriodSec)
	}
	if anchor <= -maxTime || anchor >= maxTime {
		return nil, fmt.Errorf("anchor %d out of range", anchor)
	}
	g, err := newGrid(anchor, periodSec, ticks)
	if err != nil {
		return nil, err
	}
	return &Schedule{g}, nil
}

// Last returns the last tick at or before t.
func (s *Schedule) Last(t int64) int64 { return s.g.at(s.g.floor(t)) }

// Next returns the first tick after t.
func (s *Schedule) Next(t int64) int64 { return s.g.at(s.g.floor(t) + 1) }

// Period returns the schedule's period in seconds: the spacing of its
// ticks before and after the explicit ones.
func (s *Schedule) Period() int64 { return s.g.P }

// Explicit reports the explicit ticks of the schedule (those after the
// anchor), in order; they are not to be modified.
func (s *Schedule) Explicit() []int64 { return s.g.times }
