package pipeline

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/fairledger/fairledger/decay"
)

// dedup finds the job runs (job_id_raw, start) of the run's cluster that
// the input gives more than once (two overlapping sacct files, or a row
// repeated in one), so that decay and the stream's bookkeeping see each
// once, chosen as the jobs table's merge chooses: the later record wins.
//
// It keeps no map of every key (a Go map of 5 M keys costs seconds and
// hundreds of MB). While reading, a bitset filter finds the candidates: a
// key whose bit is already set may have been read before, or only share
// its bit; every key read a second time is a candidate. After reading,
// finish walks every record once, in input order, collects those whose
// bit is set in a second filter made of the candidates alone, sorts them
// by key and keeps the last record of each key found more than once. The
// walk needs every record's exact key: the decay jobs hold the start, ids
// their job_id_raw (4 bytes each; wider ones in wide), and others the
// records decay was not given. The result is exact: the filters only
// decide how many records finish sorts.
type dedup struct {
	bits []uint64 // the filter: bit filterBit(k, len(bits)) set once k was read

	ids  []uint32        // job_id_raw of each decay job appended while reading
	wide map[int32]int64 // the decay jobs whose job_id_raw is not in [1, 2^32): ids holds 0

	others []otherRow // the run's records decay was not given, in input order

	cand []jobKey // keys read when their bit was already set (repeats possible)
}

// otherRow is a record of the run's cluster that decay was not given (no
// or an unknown account, no start).
type otherRow struct {
	key   jobKey
	end   int64 // decay.Running when running
	after int   // the number of decay jobs appended before it
	dead  bool  // replaced by a later record of its key
}

// The filters give each block of 32 consecutive job ids a run of 1024
// bits (two cache lines), a key's bit in it chosen by its hash; blocks
// beyond the filter's size wrap around. sacct lists jobs by id, so
// reading touches the filter in order (a filter hashed as a whole cost
// 40 ns a record in cache misses, half the cost of the run's reading);
// requeued runs of one id, and ids in any order, still spread over the
// run's bits.
const (
	blockIDs  = 5  // log2 of the ids of a block
	blockBits = 10 // log2 of the bits of a block
)

// Filter sizes: 32 bits per expected record (about 1 in 64 records is a
// candidate; 5 M records make some 75,000), within these bounds (bits,
// log2).
const (
	dedupMinBits = 16
	dedupMaxBits = 28 // 32 MiB, of which 5 M dense ids touch 20
)

// filterBits returns a filter of about perKey bits for each of n keys.
func filterBits(n, perKey int) []uint64 {
	b := bits.Len64(uint64(max(n, 1)) * uint64(perKey))
	b = min(max(b, dedupMinBits), dedupMaxBits)
	return make([]uint64, 1<<b/64)
}

// filterBit returns the bit of k in a filter of words words (a power of
// two).
func filterBit(k jobKey, words int) uint64 {
	return (uint64(k.id)>>blockIDs<<blockBits | hashKey(k)&(1<<blockBits-1)) & uint64(words*64-1)
}

// newDedup sizes the filter for about expect records.
func newDedup(expect int) *dedup {
	return &dedup{bits: filterBits(expect, 1<<(blockBits-blockIDs))}
}

// hashKey mixes a key's two halves into a hash (keys that share a hash
// cost finish a map lookup, nothing more).
func hashKey(k jobKey) uint64 {
	x := uint64(k.id)*0x9e3779b97f4a7c15 ^ uint64(k.start)
	x ^= x >> 31
	x *= 0xd6e8feb86659fd93
	x ^= x >> 32
	x *= 0xd6e8feb86659fd93
	x ^= x >> 32
	return x
}

// see records that a record of key k was read.
func (d *dedup) see(k jobKey) {
	h := filterBit(k, len(d.bits))
	w, m := &d.bits[h/64], uint64(1)<<(h%64)
	if *w&m != 0 {
		d.cand = append(d.cand, k)
		return
	}
	*w |= m
}

// charged records the job_id_raw of the next decay job.
func (d *dedup) charged(id int64) {
	if id > 0 && id <= math.MaxUint32 {
		d.ids = append(d.ids, uint32(id))
		return
	}
	if d.wide == nil {
		d.wide = map[int32]int64{}
	}
	d.wide[int32(len(d.ids))] = id
	d.ids = append(d.ids, 0)
}

// other records a record of the run's cluster that decay was not given.
func (d *dedup) other(k jobKey, end int64) {
	d.others = append(d.others, otherRow{key: k, end: end, after: len(d.ids)})
}

// id returns the job_id_raw of decay job j.
func (d *dedup) id(j int) int64 {
	if v := d.ids[j]; v != 0 {
		return int64(v)
	}
	return d.wide[int32(j)]
}

// dupRef is a record finish looks at: its key, its place in the walk
// and where it is (j ≥ 0 decay job j, −1−u others[u]).
type dupRef struct {
	key jobKey
	seq int
	at  int
}

// winner is the record that stays of a key the input gives more than once.
type winner struct {
	end     int64 // decay.Running when running
	charged bool  // given to decay
}

// finish deduplicates jobs (the decay jobs appended while reading, one per
// ids entry) in place: of each key read more than once the last record
// stays; when it is a decay job, it takes the place of the key's first
// decay job (so that giving the same file twice gives decay the jobs of
// giving it once, in the same order); extra, when it is kept, moves along.
// It marks the replaced others dead and
// returns the number of records dropped and the winner of every key read
// more than once.
func (d *dedup) finish(jobs *decay.Jobs, extra *jobExtra) (int64, map[jobKey]winner) {
	if len(d.cand) == 0 {
		return 0, nil
	}
	// The records whose bit is set in a filter of the candidates alone,
	// sorted by key, then input order. Every key read more than once is a
	// candidate, so a key with more than one such record is read more than
	// once.
	cbits := filterBits(len(d.cand), 256)
	for _, k := range d.cand {
		h := filterBit(k, len(cbits))
		cbits[h/64] |= 1 << (h % 64)
	}
	var refs []dupRef
	visit := func(k jobKey, at int) {
		if h := filterBit(k, len(cbits)); cbits[h/64]&(1<<(h%64)) != 0 {
			refs = append(refs, dupRef{k, len(refs), at})
		}
	}
	u := 0
	for j := range d.ids {
		for u < len(d.others) && d.others[u].after <= j {
			visit(d.others[u].key, -1-u)
			u++
		}
		visit(jobKey{d.id(j), jobs.Start[j]}, j)
	}
	for ; u < len(d.others); u++ {
		visit(d.others[u].key, -1-u)
	}
	slices.SortFunc(refs, func(a, b dupRef) int {
		if c := cmp.Compare(a.key.id, b.key.id); c != 0 {
			return c
		}
		if c := cmp.Compare(a.key.start, b.key.start); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})

	var dropped int64
	winners := map[jobKey]winner{}
	var dead []int // decay jobs to drop
	var at []int   // a key's records, in input order: j ≥ 0 a decay job, −1−u others[u]
	for lo := 0; lo < len(refs); {
		k := refs[lo].key
		at = at[:0]
		for ; lo < len(refs) && refs[lo].key == k; lo++ {
			at = append(at, refs[lo].at)
		}
		if len(at) < 2 {
			continue // only shares a bit
		}
		dropped += int64(len(at) - 1)
		last := at[len(at)-1]
		keep := -1 // the decay job that stays
		if last >= 0 {
			winners[k] = winner{end: jobs.End[last], charged: true}
			keep = at[slices.IndexFunc(at, func(a int) bool { return a >= 0 })] // the key's first decay job
			if keep != last {
				jobs.Start[keep], jobs.End[keep] = jobs.Start[last], jobs.End[last]
				jobs.Rate[keep], jobs.Assoc[keep] = jobs.Rate[last], jobs.Assoc[last]
				extra.move(keep, last)
			}
		} else {
			winners[k] = winner{end: d.others[-1-last].end}
		}
		for _, a := range at {
			switch {
			case a >= 0 && a != keep:
				dead = append(dead, a)
			case a < 0 && a != last:
				d.others[-1-a].dead = true
			}
		}
	}
	if len(dead) > 0 {
		slices.Sort(dead)
		n, next := 0, 0
		for j := range jobs.Start {
			if next < len(dead) && dead[next] == j {
				next++
				continue
			}
			jobs.Start[n], jobs.End[n], jobs.Rate[n], jobs.Assoc[n] = jobs.Start[j], jobs.End[j], jobs.Rate[j], jobs.Assoc[j]
			extra.move(n, j)
			n++
		}
		jobs.Start, jobs.End, jobs.Rate, jobs.Assoc = jobs.Start[:n], jobs.End[:n], jobs.Rate[:n], jobs.Assoc[:n]
		extra.truncate(n)
	}
	return dropped, winners
}
