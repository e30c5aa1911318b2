package pipeline

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export"
	"github.com/fairledger/fairledger/fairshare"
)

// jobExtra holds, beside decay's columns (same index), what sshare's
// TRESRunMins needs of a job: its AllocTRES set and QOS as JobDict
// indexes and its time limit in minutes (fairshare.InfiniteTimeLimitMin
// when sacct gave none). It is kept only when AccountingStorageEnforce
// includes limits (12 bytes a job); otherwise it stays empty.
type jobExtra struct {
	tres, qos, limitMin []uint32
	// after, with a slurmctld log only, says of every job whether it ended
	// after the tick of its end's second (decay.Window.EndsAfterTick).
	after []bool
}

// add appends the extra columns of one job record.
func (x *jobExtra) add(r *export.JobRec) {
	x.tres = append(x.tres, r.TRES)
	x.qos = append(x.qos, r.QOS)
	x.limitMin = append(x.limitMin, timeLimitMin(r))
}

// timeLimitMin is a record's time limit in minutes,
// fairshare.InfiniteTimeLimitMin when sacct gave none.
func timeLimitMin(r *export.JobRec) uint32 {
	if r.Valid&export.ValidTimelimitMin == 0 {
		return fairshare.InfiniteTimeLimitMin
	}
	return uint32(min(max(r.TimelimitMin, 0), math.MaxUint32))
}

// addCarried appends a job carried from a checkpoint that the input lacks,
// with the TRES, QOS and time limit the checkpoint kept (adding them to
// dict); one kept without them (an older checkpoint) holds nothing.
func (x *jobExtra) addCarried(dict *export.JobDict, j carriedJob) {
	var tres, qos, limit uint32
	if len(j.TRES) > 0 {
		tres, qos, limit = dict.TRESSet(j.TRES), dict.Name(j.QOS), j.TimelimitMin
	}
	x.tres = append(x.tres, tres)
	x.qos = append(x.qos, qos)
	x.limitMin = append(x.limitMin, limit)
}

// reserve makes room for n jobs in all.
func (x *jobExtra) reserve(n int) {
	x.tres, x.qos, x.limitMin = reserve(x.tres, n), reserve(x.qos, n), reserve(x.limitMin, n)
}

func reserve[T any](s []T, n int) []T {
	if n > cap(s) {
		s = slices.Grow(s, n-len(s))
	}
	return s
}

// move copies job src's columns to job dst (dedup's compaction).
func (x *jobExtra) move(dst, src int) {
	if len(x.after) > 0 {
		x.after[dst] = x.after[src]
	}
	if len(x.tres) == 0 {
		return
	}
	x.tres[dst], x.qos[dst], x.limitMin[dst] = x.tres[src], x.qos[src], x.limitMin[src]
}

// truncate keeps the first n jobs.
func (x *jobExtra) truncate(n int) {
	if len(x.after) > 0 {
		x.after = x.after[:n]
	}
	if len(x.tres) == 0 {
		return
	}
	x.tres, x.qos, x.limitMin = x.tres[:n], x.qos[:n], x.limitMin[:n]
}

// tresRun computes the TRESRunMins cells of each snapshot from the jobs
// running at the snapshot's tick, and only those: runningAt lists them per
// snapshot once, in one pass over the jobs' starts and ends.
type tresRun struct {
	names  []string        // the cluster's TRES, in sshare's order
	jobs   decay.Jobs      // Start and Assoc are read
	extra  *jobExtra       // same index as jobs
	dict   *export.JobDict // a read-only snapshot of the run's dictionary
	factor func(qos string) float64
	ticks  []int64   // the tick each snapshot's usage is taken at
	at     [][]int32 // the jobs running at ticks[i]

	alloc map[uint32][]uint64 // per TRES set: its counts of names
	qos   map[uint32]float64  // per QOS name: its UsageFactor
	own   []uint64            // per universe association × TRES
	out   []uint64            // per tree position × TRES
	buf   []byte
}

// newTRESRun prepares the TRESRunMins of the snapshots snaps of a run
// whose stream has read every job; dict is a read-only snapshot of the
// run's dictionary.
func newTRESRun(m *model, st *stream, dict *export.JobDict, snaps []int64) *tresRun {
	ticks, at := runningAt(st.jobs, snaps, m.params.OriginUnix, m.calcPeriod())
	return &tresRun{
		names: m.cfg.TRES, jobs: st.jobs, extra: &st.extra, dict: dict,
		factor: func(qos string) float64 { f, _ := st.usageFactor(qos); return f },
		ticks:  ticks, at: at, qos: map[uint32]float64{},
	}
}

// runningAt returns, for each snapshot time (sorted), the tick its usage
// is taken at (the last tick of the grid at or before it) and the indexes
// of the jobs running at that tick: start < tick and (still running or end
// > tick), the rule decay charges by (SLURM-SEMANTICS.md §1.12). A job is
// placed by the grid indexes of its first and last tick, looked up in a
// table of the first snapshot at or after each tick of the window (a
// binary search over the snapshots when the window has too many ticks for
// one), so the pass costs a few operations a job.
func runningAt(jobs decay.Jobs, snaps []int64, origin, period int64) (ticks []int64, at [][]int32) {
	ticks = make([]int64, len(snaps))
	at = make([][]int32, len(snaps))
	if len(snaps) == 0 {
		return ticks, at
	}
	kOf := make([]int64, len(snaps)) // grid index of each snapshot's tick
	for i, s := range snaps {
		ticks[i] = floorTick(s, origin, period)
		kOf[i] = (ticks[i] - origin) / period
	}
	kLo, kHi := kOf[0], kOf[len(kOf)-1]
	// first(k) is the first snapshot whose tick index is ≥ k, for k in
	// [kLo, kHi+1].
	var table []uint32
	if kHi-kLo < 1<<22 {
		table = make([]uint32, kHi-kLo+2)
		i := 0
		for k := kLo; k <= kHi+1; k++ {
			for i < len(kOf) && kOf[i] < k {
				i++
			}
			table[k-kLo] = uint32(i)
		}
	}
	first := func(k int64) int {
		switch {
		case k <= kLo:
			return 0
		case k > kHi:
			return len(kOf)
		case table != nil:
			return int(table[k-kLo])
		}
		i, _ := slices.BinarySearch(kOf, k)
		return i
	}
	for j, s := range jobs.Start {
		kFirst := floorDiv(s-origin, period) + 1 // first tick strictly after the start
		kLast := kHi
		if e := jobs.End[j]; e != decay.Running {
			kLast = min(kLast, -floorDiv(origin-e, period)-1) // last tick strictly before the end
		}
		if kFirst > kLast || kLast < kLo || kFirst > kHi {
			continue
		}
		for i := first(kFirst); i < first(kLast+1); i++ {
			at[i] = append(at[i], int32(j))
		}
	}
	return ticks, at
}

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// cells returns the TRESRunMins cell of every position of p's tree for
// snapshot i, taken at tick: the committed TRES-seconds of the jobs
// running then (fairshare.CommittedSecs), credited to their associations
// and rolled up to root (fairshare.RollUpTRESRun). A position that holds
// nothing gets "" (stored as NULL, printed as zeros): most do (58 % of the
// 5 M-job benchmark's rows), and a NULL costs the Parquet writer nothing.
func (r *tresRun) cells(i int, tick int64, p *fairshare.Projection, nAssoc int) ([]string, error) {
	if r.ticks[i] != tick {
		return nil, fmt.Errorf("snapshot %d: decay took it at tick %d, TRESRunMins expected %d", i, tick, r.ticks[i])
	}
	nT := len(r.names)
	r.own = slices.Grow(r.own[:0], nAssoc*nT)[:nAssoc*nT]
	clear(r.own)
	for _, j := range r.at[i] {
		alloc := r.counts(r.extra.tres[j])
		if alloc == nil {
			continue
		}
		limitSec := int64(r.extra.limitMin[j]) * 60
		q, ok := r.qos[r.extra.qos[j]]
		if !ok {
			q = r.factor(r.dict.Names()[r.extra.qos[j]])
			r.qos[r.extra.qos[j]] = q
		}
		a := int(r.jobs.Assoc[j])
		for k, c := range alloc {
			r.own[a*nT+k] += fairshare.CommittedSecs(c, r.jobs.Start[j], limitSec, tick, q)
		}
	}
	n := p.Tree.Len()
	r.out = slices.Grow(r.out[:0], n*nT)[:n*nT]
	fairshare.RollUpTRESRun(p, nT, r.own, r.out)
	cells := make([]string, n)
	for pos := range n {
		secs := r.out[pos*nT : (pos+1)*nT]
		if !slices.ContainsFunc(secs, func(v uint64) bool { return v >= 60 }) {
			continue // every TRES at 0 minutes
		}
		r.buf = fairshare.AppendTRESRunMins(r.buf[:0], r.names, secs)
		cells[pos] = string(r.buf)
	}
	return cells, nil
}

// counts returns the counts of TRES set id for r.names (nil for the empty
// set): the AllocTRES entry of each name, truncated to an integer as
// slurmctld's tres_alloc_cnt holds it; energy is never counted.
func (r *tresRun) counts(id uint32) []uint64 {
	if id == 0 {
		return nil
	}
	if c, ok := r.alloc[id]; ok {
		return c
	}
	m := r.dict.TRESMap(id)
	c := make([]uint64, len(r.names))
	for k, name := range r.names {
		if v := m[strings.ToLower(name)]; v > 0 && name != "energy" {
			c[k] = uint64(min(v, 1<<62))
		}
	}
	if r.alloc == nil {
		r.alloc = map[uint32][]uint64{}
	}
	r.alloc[id] = c
	return c
}
