package pipeline

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"

	"github.com/klauspost/compress/zstd"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/priority/queue"
)

// A run leaves in the history what `sshare --at T` and `sprio --at T` need
// to answer for any second T of its window without the sacct files
// (docs/moments.md): a moment seed at the window's start and at every
// snapshot it stores but the last, and the configuration its model came
// from. A seed at A holds decay's state at A (the last tick at or before
// it), TRESRunMins' residues at A, and every decay job that can count in
// a snapshot in [A, B] (B the next seed, or the run's --to), with the
// ticks and restarts slurmctld's log gave for that span: Moment replays
// from it, with the code the run takes its snapshots with, to one
// snapshot at T. The seeds are state files of the cluster
// (moment-<A>.bin.zst), the configuration one file per distinct content
// (model-<sha256>.json.zst).

const (
	seedVersion  = 1
	modelPrefix  = "model-"
	modelSuffix  = ".json.zst"
	seedMagic    = "fairledger moment seed\n"
	modelVersion = 1
)

// modelInputs is what a run's model is derived from (newModel): the
// configuration it read and the options that shape it.
type modelInputs struct {
	Version      int                        `json:"version"`
	Cluster      string                     `json:"cluster"`
	Zone         string                     `json:"time_zone"`
	SlurmVersion string                     `json:"slurm_version"`
	Priority     bool                       `json:"priority"`
	Conf         *ingest.Config             `json:"slurm_conf"`
	Assoc        []ingest.DatedAssociations `json:"assoc"`
	QOS          *ingest.QOSTable           `json:"qos,omitempty"`
}

// seedHeader is a seed's fixed part; its jobs follow it (seedJobs).
type seedHeader struct {
	Version int    `json:"version"`
	Cluster string `json:"cluster"`
	// At is the seed's time A, Until the next seed's of the run that
	// wrote it (or its --to), To that run's --to (Unix seconds): it
	// answers for the instants in [At, Until], and holds the jobs that
	// count in them only.
	At    int64 `json:"at"`
	Until int64 `json:"until"`
	To    int64 `json:"to"`
	// Model names the modelInputs file of the run.
	Model string `json:"model"`
	// Keys is the SHA-256 of the model's universe keys, which index
	// State's usage and the jobs' associations.
	Keys string `json:"keys_sha256"`
	// Origin is the phase of the tick grid the run charged on
	// (decay.Params.OriginUnix).
	Origin int64 `json:"tick_origin"`
	// State is decay's state at At (decay.State.MarshalBinary).
	State []byte `json:"state"`
	// Ticks are slurmctld's logged ticks from the state's tick up to the
	// seed's end, and the first one after it (ticksFor); Restarts its
	// starts in (At, end].
	Ticks    []int64 `json:"ticks,omitempty"`
	Restarts []int64 `json:"restarts,omitempty"`
	// ResidueFrom is when the run began counting TRESRunMins residues
	// (math.MaxInt64: it counted none); Residue what ended jobs left at At,
	// Debt what ends charged twice took beyond the jobs (checkpoint.Debt).
	ResidueFrom int64     `json:"residue_from"`
	Residue     []residue `json:"residue,omitempty"`
	Debt        []residue `json:"debt,omitempty"`
	// After are the jobs (indexes) whose end came after the tick of its
	// second (decay.Window.EndsAfterTick).
	After []int32 `json:"ends_after_tick,omitempty"`
	// Twice are the jobs (index, δ) whose end slurmctld charged on top of
	// its tick's pass, with the δ it charged (decay.Window.EndCharge).
	Twice [][2]int64 `json:"ends_charged_twice,omitempty"`
	// InPass are the jobs (indexes) of Twice whose end's charge came
	// before the fair-share step of its tick's pass
	// (decay.Window.EndChargeInPass).
	InPass []int32 `json:"ends_charged_in_pass,omitempty"`
	// TRESSets and Names are what the jobs' TRES and QOS index; index 0
	// of each is the empty set and the empty name.
	TRESSets []map[string]float64 `json:"tres_sets,omitempty"`
	Names    []string             `json:"names,omitempty"`
	// Jobs is the number of jobs; Extra reports whether they carry the
	// TRESRunMins columns (AccountingStorageEnforce with limits).
	Jobs  int  `json:"jobs"`
	Extra bool `json:"extra"`
	// Prio are, with job priority, the jobs that may wait in the queue
	// at a time the seed answers for.
	Prio *queue.Seed `json:"priority,omitempty"`
}

// seedPoint is where a seed starts, taken while decay runs.
type seedPoint struct {
	at    int64
	state *decay.State
	carry tresCarry
}

// keysSum is the SHA-256 of the universe keys, in order.
func keysSum(keys []fairshare.Key) string {
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%q %q %q\n", k.Account, k.User, k.Partition)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// compress is zstd at its fastest level with a window of 1 MiB (most of
// a seed is its jobs' columns: it makes them about a fifth); one encoder
// serves every seed of a run: a new one allocates its window each time,
// which cost as much as the compression. decompress reads any level.
type compressor struct{ enc *zstd.Encoder }

func newCompressor() (*compressor, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<20))
	if err != nil {
		return nil, err
	}
	return &compressor{enc: enc}, nil
}

func (c *compressor) compress(b []byte) []byte { return c.enc.EncodeAll(b, make([]byte, 0, len(b)/4)) }

func (c *compressor) close() { c.enc.Close() }

func decompress(b []byte) ([]byte, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return dec.DecodeAll(b, nil)
}

// writeSeeds stores the run's seeds (points, sorted by time) and its
// model's inputs in the commit, and drops the seeds of the window (lo, to]
// a recompute replaces. It runs after decay, while the run's decay jobs
// are still at hand; dict is a read-only snapshot of the run's dictionary
// that holds the jobs' TRES sets and QOS (nil without limits enforced).
func (r *runState) writeSeeds(points []seedPoint, ticks []int64, after map[int32]bool, dict *record.JobDict, prio []queue.Job) error {
	m, st, tx := r.m, r.st, r.tx
	for _, p := range tx.Files(history.TableState, m.cluster) {
		if at, ok := history.MomentSeedTime(path.Base(p.Path)); ok && at >= r.lo && at <= r.to {
			tx.RemoveState(m.cluster, path.Base(p.Path))
		}
	}
	if len(points) == 0 {
		return nil
	}
	z, err := newCompressor()
	if err != nil {
		return err
	}
	defer z.close()
	model, err := r.writeModel(z)
	if err != nil {
		return err
	}
	n := len(points)
	ends := make([]int64, n) // B of each seed
	for i := range points {
		ends[i] = r.to
		if i+1 < n {
			ends[i] = points[i+1].at
		}
	}
	// Each job goes to the seeds whose span it can count in: started by
	// B, and not ended before the seed state's tick.
	members := make([][]int32, n)
	jobs := st.jobs
	for j, s := range jobs.Start {
		i0, _ := slices.BinarySearch(ends, s)
		i1 := n
		if e := jobs.End[j]; e != decay.Running {
			i1, _ = slices.BinarySearchFunc(points, e, func(p seedPoint, e int64) int {
				return cmp.Compare(p.state.Tick, e+1)
			})
		}
		for i := i0; i < i1; i++ {
			members[i] = append(members[i], int32(j))
		}
	}
	var restarts []int64
	if m.ctld != nil {
		restarts = m.ctld.restarts
	}
	var waiting [][]int32 // per seed: the prio jobs that may wait in its span
	var firstEligible map[uint32]int64
	if m.prio != nil {
		waiting, firstEligible = seedWaiting(prio, points, ends)
	}
	hdr := seedHeader{Version: seedVersion, Cluster: m.cluster, To: r.to, Model: model, Keys: keysSum(m.keys),
		Origin: m.params.OriginUnix, ResidueFrom: r.residueFrom}
	for i, p := range points {
		h := hdr
		h.At, h.Until = p.at, ends[i]
		if h.State, err = p.state.MarshalBinary(); err != nil {
			return err
		}
		h.Residue, h.Debt = p.carry.Residue, p.carry.Debt
		h.Ticks = ticksFor(ticks, p.state.Tick, ends[i])
		for _, t := range restarts {
			if t > p.at && t <= ends[i] {
				h.Restarts = append(h.Restarts, t)
			}
		}
		if m.prio != nil {
			h.Prio = m.prio.Seed(prio, waiting[i], firstEligible)
		}
		b, err := encodeSeed(z, &h, jobs, &st.extra, dict, members[i], after)
		if err != nil {
			return fmt.Errorf("moment seed at %s: %w", fmtUnix(p.at), err)
		}
		if err := tx.WriteState(m.cluster, history.MomentSeedName(p.at), b); err != nil {
			return err
		}
	}
	return nil
}

// seedWaiting places the jobs of prio in the seeds (points, each up to
// its end) during whose span they may wait: submitted by its end, neither
// started nor ended by its start; the tasks of an array go with it
// wherever one of them does. It also returns each array's earliest
// eligible time.
func seedWaiting(prio []queue.Job, points []seedPoint, ends []int64) ([][]int32, map[uint32]int64) {
	n := len(points)
	waiting := make([][]int32, n)
	first := map[uint32]int64{}
	arrays := map[uint32][]int32{}
	for j := range prio {
		pj := &prio[j]
		if pj.ArrayJob != 0 {
			arrays[pj.ArrayJob] = append(arrays[pj.ArrayJob], int32(j))
			if e := pj.Eligible; e != 0 && (first[pj.ArrayJob] == 0 || e < first[pj.ArrayJob]) {
				first[pj.ArrayJob] = e
			}
		}
	}
	span := func(pj *queue.Job) (int, int) {
		if pj.Submit == 0 {
			return 0, 0
		}
		leave := int64(math.MaxInt64)
		if pj.Start != 0 {
			leave = pj.Start
		}
		if pj.End != 0 {
			leave = min(leave, pj.End)
		}
		i0, _ := slices.BinarySearch(ends, pj.Submit)
		i1, _ := slices.BinarySearchFunc(points, leave, func(p seedPoint, t int64) int { return cmp.Compare(p.at, t) })
		return i0, i1
	}
	for j := range prio {
		pj := &prio[j]
		if pj.ArrayJob != 0 {
			continue
		}
		i0, i1 := span(pj)
		for i := i0; i < i1; i++ {
			waiting[i] = append(waiting[i], int32(j))
		}
	}
	// An array: in every seed one of its tasks may wait in, all of them.
	ids := slices.Sorted(maps.Keys(arrays))
	for _, id := range ids {
		in := make([]bool, n)
		for _, j := range arrays[id] {
			i0, i1 := span(&prio[j])
			for i := i0; i < i1; i++ {
				in[i] = true
			}
		}
		for i, ok := range in {
			if ok {
				waiting[i] = append(waiting[i], arrays[id]...)
			}
		}
	}
	for i := range waiting {
		slices.Sort(waiting[i]) // the run's order
	}
	return waiting, first
}

// ticksFor are the ticks of the log from the last at or before from (the
// state's tick, which decay.Advance ignores but which tells it that the
// state need not be on the grid) up to to, and the first one after to: a
// replay up to to then ticks where the run did.
func ticksFor(ticks []int64, from, to int64) []int64 {
	i, _ := slices.BinarySearch(ticks, from+1)
	k, _ := slices.BinarySearch(ticks, to+1)
	return slices.Clone(ticks[max(i-1, 0):min(k+1, len(ticks))])
}

// writeModel stores the model's inputs, once per content, and returns the
// file's name.
func (r *runState) writeModel(z *compressor) (string, error) {
	in := modelInputs{Version: modelVersion, Cluster: r.m.cluster, Zone: r.opt.Location.String(),
		SlurmVersion: r.m.cfg.SlurmVersion, Priority: r.m.prio != nil, Conf: r.in.Conf, Assoc: r.in.Assoc, QOS: r.in.QOS}
	b, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("moment model: %w", err)
	}
	sum := sha256.Sum256(b)
	name := modelPrefix + hex.EncodeToString(sum[:16]) + modelSuffix
	for _, p := range r.tx.Files(history.TableState, r.m.cluster) {
		if path.Base(p.Path) == name {
			return name, nil
		}
	}
	return name, r.tx.WriteState(r.m.cluster, name, z.compress(b))
}

// encodeSeed lays out a seed: the magic line, the header's length and
// JSON, then the jobs (members of jobs, in order) as columns: starts as
// differences from the one before, ends as End − Start + 1 (0: running),
// rates as float64 bits, associations and, with extra, TRES sets, QOS and
// time limits (indexes into the header's tables); zstd over the whole.
func encodeSeed(z *compressor, h *seedHeader, jobs decay.Jobs, extra *jobExtra, dict *record.JobDict, members []int32, after map[int32]bool) ([]byte, error) {
	h.Jobs, h.Extra = len(members), len(extra.tres) > 0
	var tresIdx, nameIdx map[uint32]uint32
	if h.Extra {
		h.TRESSets, h.Names = []map[string]float64{nil}, []string{""}
		tresIdx, nameIdx = map[uint32]uint32{0: 0}, map[uint32]uint32{}
	}
	cols := make([]byte, 0, 24*len(members))
	prev := int64(0)
	for k, j := range members {
		s, e := jobs.Start[j], jobs.End[j]
		cols = binary.AppendVarint(cols, s-prev)
		prev = s
		if e == decay.Running {
			cols = binary.AppendUvarint(cols, 0)
		} else {
			cols = binary.AppendUvarint(cols, uint64(e-s)+1)
		}
		cols = binary.LittleEndian.AppendUint64(cols, math.Float64bits(jobs.Rate[j]))
		cols = binary.AppendUvarint(cols, uint64(jobs.Assoc[j]))
		if after[j] {
			h.After = append(h.After, int32(k))
		}
		if sec, ok := extra.twice[j]; ok {
			h.Twice = append(h.Twice, [2]int64{int64(k), sec})
			if extra.inPass[j] {
				h.InPass = append(h.InPass, int32(k))
			}
		}
		if !h.Extra {
			continue
		}
		t, ok := tresIdx[extra.tres[j]]
		if !ok {
			t = uint32(len(h.TRESSets))
			tresIdx[extra.tres[j]] = t
			h.TRESSets = append(h.TRESSets, dict.TRESMap(extra.tres[j]))
		}
		q, ok := nameIdx[extra.qos[j]]
		if !ok {
			if name := dict.Names()[extra.qos[j]]; name == "" {
				q = 0
			} else {
				q = uint32(len(h.Names))
				h.Names = append(h.Names, name)
			}
			nameIdx[extra.qos[j]] = q
		}
		cols = binary.AppendUvarint(cols, uint64(t))
		cols = binary.AppendUvarint(cols, uint64(q))
		cols = binary.AppendUvarint(cols, uint64(extra.limitMin[j]))
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 0, len(seedMagic)+10+len(hj)+len(cols))
	raw = append(raw, seedMagic...)
	raw = binary.AppendUvarint(raw, uint64(len(hj)))
	raw = append(raw, hj...)
	raw = append(raw, cols...)
	return z.compress(raw), nil
}

// seedData is a decoded seed: its header and jobs.
type seedData struct {
	seedHeader
	jobs  decay.Jobs
	extra jobExtra
	dict  *record.JobDict
	after map[int32]bool
}

// decodeSeed reads what encodeSeed wrote.
func decodeSeed(z []byte) (*seedData, error) {
	raw, err := decompress(z)
	if err != nil {
		return nil, err
	}
	rest, ok := bytes.CutPrefix(raw, []byte(seedMagic))
	if !ok {
		return nil, errors.New("not a moment seed")
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)-k) {
		return nil, errors.New("moment seed: header length out of range")
	}
	d := &seedData{}
	if err := json.Unmarshal(rest[k:k+int(n)], &d.seedHeader); err != nil {
		return nil, fmt.Errorf("moment seed header: %w", err)
	}
	if d.Version != seedVersion {
		return nil, fmt.Errorf("moment seed: version %d, want %d", d.Version, seedVersion)
	}
	cols := rest[k+int(n):]
	bad := errors.New("moment seed: jobs truncated or malformed")
	uv := func() (uint64, error) {
		v, k := binary.Uvarint(cols)
		if k <= 0 {
			return 0, bad
		}
		cols = cols[k:]
		return v, nil
	}
	d.jobs.Reserve(d.Jobs)
	d.dict = record.NewJobDict()
	var tresIDs, nameIDs []uint32
	if d.Extra {
		d.extra.reserve(d.Jobs)
		tresIDs = make([]uint32, len(d.TRESSets))
		for i, s := range d.TRESSets {
			if i > 0 {
				tresIDs[i] = d.dict.TRESSet(s)
			}
		}
		nameIDs = make([]uint32, len(d.Names))
		for i, s := range d.Names {
			nameIDs[i] = d.dict.Name(s)
		}
	}
	prev := int64(0)
	for range d.Jobs {
		ds, k := binary.Varint(cols)
		if k <= 0 {
			return nil, bad
		}
		cols = cols[k:]
		s := prev + ds
		prev = s
		le, err := uv()
		if err != nil {
			return nil, err
		}
		e := int64(decay.Running)
		if le > 0 {
			e = s + int64(le) - 1
		}
		if len(cols) < 8 {
			return nil, bad
		}
		rate := math.Float64frombits(binary.LittleEndian.Uint64(cols))
		cols = cols[8:]
		a, err := uv()
		if err != nil {
			return nil, err
		}
		d.jobs.Start = append(d.jobs.Start, s)
		d.jobs.End = append(d.jobs.End, e)
		d.jobs.Rate = append(d.jobs.Rate, rate)
		d.jobs.Assoc = append(d.jobs.Assoc, int32(a))
		if !d.Extra {
			continue
		}
		var v [3]uint64
		for i := range v {
			if v[i], err = uv(); err != nil {
				return nil, err
			}
		}
		if v[0] >= uint64(len(tresIDs)) || v[1] >= uint64(len(nameIDs)) {
			return nil, bad
		}
		d.extra.tres = append(d.extra.tres, tresIDs[v[0]])
		d.extra.qos = append(d.extra.qos, nameIDs[v[1]])
		d.extra.limitMin = append(d.extra.limitMin, uint32(v[2]))
	}
	if len(cols) != 0 {
		return nil, bad
	}
	for _, j := range d.After {
		if j < 0 || int(j) >= d.Jobs {
			return nil, bad
		}
		if d.after == nil {
			d.after = map[int32]bool{}
		}
		d.after[j] = true
	}
	for _, x := range d.Twice {
		if x[0] < 0 || x[0] >= int64(d.Jobs) || x[1] < 0 {
			return nil, bad
		}
		if d.extra.twice == nil {
			d.extra.twice = map[int32]int64{}
		}
		d.extra.twice[int32(x[0])] = x[1]
	}
	for _, j := range d.InPass {
		if _, ok := d.extra.twice[j]; !ok {
			return nil, bad
		}
		if d.extra.inPass == nil {
			d.extra.inPass = map[int32]bool{}
		}
		d.extra.inPass[j] = true
	}
	return d, nil
}
