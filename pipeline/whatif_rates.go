package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fairledger/fairledger/billing"
	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/ingest"
)

// A seed holds one rate per job, billing × UsageFactor as the run
// computed it. A replay under other TRESBillingWeights, billing flags or
// UsageFactors bills the jobs again from the history's jobs table, which
// keeps each job's allocated TRES, partition and QOS: a seed's job is
// found there by its account, user and start (and, among jobs that share
// them, by its recorded rate and end), and takes the rate the changed
// billing table and QOS give that row.

// rebill gives the seeds' jobs the changed model's rates. It keeps the
// jobs table's index of the last few months it read.
type rebill struct {
	v       *history.View
	cluster string
	alt     *model
	sig     string // alt's billingSignature, which the months were billed with
	months  map[string]map[rebillKey][]rebillCand
	recent  []string          // the months indexed, least recently used first
	names   map[string]uint32 // "account\x00user" and partitions, numbered

	// Unmatched counts the seed jobs the jobs table has no row for (they
	// keep their recorded rate); Ambiguous those whose account, user,
	// start, rate and end several rows share with other new rates (one is
	// taken).
	Unmatched, Ambiguous int64
}

// rebillMonths is how many months of the jobs table rebill keeps
// indexed: a seed's jobs started in its month or, running, in the ones
// before.
const rebillMonths = 3

// rebillKey is a job's account and user (numbered by rebill.name) and
// start: 16 bytes without a pointer, so that a month's index of some
// 400,000 jobs costs the collector nothing to scan.
type rebillKey struct {
	who   uint32
	start int64
}

type rebillCand struct {
	partition uint32 // rebill.name of the partition
	end       int64  // decay.Running when the row has none
	old, new  float64
}

// name numbers a name (an account and user joined by a NUL, or a
// partition), known is false when it has none yet and add is not set.
func (r *rebill) name(s string, add bool) (id uint32, known bool) {
	if id, ok := r.names[s]; ok {
		return id, true
	}
	if !add {
		return 0, false
	}
	if r.names == nil {
		r.names = map[string]uint32{}
	}
	id = uint32(len(r.names))
	r.names[s] = id
	return id, true
}

// billingSignature says what a model bills with: the changed billing of a
// replay differs from the recorded one's in it.
func (m *model) billingSignature() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%v|", m.bill.Mode(), m.conf.AccountingStorageTRES)
	for _, p := range m.conf.Partitions {
		fmt.Fprintf(&b, "%q=%q,", p.Name, p.TRESBillingWeights)
	}
	if m.qos != nil {
		for _, q := range m.qos.Rows {
			fmt.Fprintf(&b, "%q:%v,", strings.ToLower(q.Name), billing.UsageFactor(q.UsageFactor))
		}
	}
	return b.String()
}

// apply sets the rate of every job of the seed d, whose associations are
// keys (the recorded model's), from the jobs table billed under alt. A
// job takes the row of its account, user and start that matches it best
// (score); several jobs of the seed that match several rows equally (jobs
// alike in all the seed holds) take them in turn, so that each row is
// charged once.
func (r *rebill) apply(d *seedData, keys []fairshare.Key, alt *model) error {
	if sig := alt.billingSignature(); sig != r.sig {
		r.alt, r.sig, r.months, r.recent = alt, sig, nil, nil
	}
	turn := map[rebillKey]int{}
	var best []rebillCand
	for i, s := range d.jobs.Start {
		k := keys[d.jobs.Assoc[i]]
		idx, err := r.month(s)
		if err != nil {
			return err
		}
		who, ok := r.name(k.Account+"\x00"+k.User, false)
		part, partOK := r.name(k.Partition, false)
		rate, end := d.jobs.Rate[i], d.jobs.End[i]
		best, top := best[:0], -1
		key := rebillKey{who, s}
		for _, c := range idx[key] {
			if !ok || k.Partition != "" && (!partOK || c.partition != part) {
				continue
			}
			switch sc := score(c, rate, end); {
			case sc > top:
				best, top = append(best[:0], c), sc
			case sc == top:
				best = append(best, c)
			}
		}
		if len(best) == 0 {
			r.Unmatched++
			continue
		}
		pick := best[0]
		if len(best) > 1 {
			pick = best[turn[key]%len(best)]
			turn[key]++
			if slices.ContainsFunc(best, func(c rebillCand) bool { return c.new != pick.new }) {
				r.Ambiguous++
			}
		}
		d.jobs.Rate[i] = pick.new
	}
	return nil
}

// score ranks a row for a seed job of rate and end: the recorded rate
// first, then the end (a job running in the seed matches a row that ended
// later or has none).
func score(c rebillCand, rate float64, end int64) int {
	s := 0
	if c.old == rate {
		s += 2
	}
	if c.end == end || end == decay.Running {
		s++
	}
	return s
}

// month returns the index of the jobs table's month of start, reading it
// when it is not among the recent ones.
func (r *rebill) month(start int64) (map[rebillKey][]rebillCand, error) {
	mon := monthStart(start)
	key := monthKey(mon)
	if idx, ok := r.months[key]; ok {
		if i := slices.Index(r.recent, key); i >= 0 {
			r.recent = append(slices.Delete(r.recent, i, i+1), key)
		}
		return idx, nil
	}
	idx := map[rebillKey][]rebillCand{}
	if err := r.v.EachJobCharge(r.cluster, mon, func(rows []record.JobCharge) error {
		r.index(idx, rows)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("what-if billing: the jobs of %s: %w", key, err)
	}
	if r.months == nil {
		r.months = map[string]map[rebillKey][]rebillCand{}
	}
	if len(r.recent) == rebillMonths {
		delete(r.months, r.recent[0])
		r.recent = r.recent[1:]
	}
	r.months[key], r.recent = idx, append(r.recent, key)
	return idx, nil
}

// index adds rows to idx, billed under the changed model as a run's
// batch is billed (billing.Table.Apply): a partition slurm.conf lacks
// bills sacct's billing=, else the CPU count; the QOS dump's UsageFactor,
// 1 for a QOS it lacks or none.
func (r *rebill) index(idx map[rebillKey][]rebillCand, rows []record.JobCharge) {
	t := r.alt.bill
	dense := t.DenseTRES()
	n := len(rows)
	cols := make([][]float64, len(dense))
	for j := range cols {
		cols[j] = make([]float64, n)
	}
	part := make([]int32, n)
	b := make([]float64, n)
	for i := range rows {
		row := &rows[i]
		part[i] = t.PartitionIndex(row.Partition)
		gpu, typed, untyped := 0.0, 0.0, false
		for name, v := range row.TRES {
			switch {
			case name == "gres/gpu":
				gpu, untyped = v, true
			case strings.HasPrefix(name, "gres/gpu:"):
				typed += v
			}
		}
		if !untyped {
			gpu = typed
		}
		for j, name := range dense {
			if name == "gres/gpu" {
				cols[j][i] = gpu
			} else {
				cols[j][i] = row.TRES[name]
			}
		}
		if part[i] < 0 {
			if v, ok := row.TRES["billing"]; ok {
				b[i] = v
			} else {
				b[i] = cols[0][i]
			}
		}
	}
	billing.Billable(b, part, cols, t)
	for i := range rows {
		row := &rows[i]
		uf := 1.0
		if r.alt.qos != nil && row.QOS != "" && slices.ContainsFunc(r.alt.qos.Rows, func(q ingest.QOS) bool { return strings.EqualFold(q.Name, row.QOS) }) {
			uf = billing.UsageFactor(r.alt.qos.UsageFactor(row.QOS))
		}
		end := int64(decay.Running)
		if row.End != nil {
			end = row.End.Unix()
		}
		who, _ := r.name(row.Account+"\x00"+row.User, true)
		part, _ := r.name(row.Partition, true)
		k := rebillKey{who, row.Start.Unix()}
		idx[k] = append(idx[k], rebillCand{partition: part, end: end, old: row.Billing * row.UsageFactor, new: b[i] * uf})
	}
}
