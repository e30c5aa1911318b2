package pipeline

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fairledger/fairledger/billing"
	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/priority/queue"
	"github.com/fairledger/fairledger/schemas"
)

// model is what a run derives from the cluster's configuration.
type model struct {
	cluster   string
	conf      *ingest.Config
	params    decay.Params
	bill      *billing.Table
	algo      fairshare.Algorithm
	damp      float64
	trees     []*fairshare.Tree
	effective []time.Time
	sources   []string
	uni       *fairshare.Universe
	keys      []fairshare.Key
	res       *decay.Resolver
	cfg       record.RunConfig
	qos       *ingest.QOSTable
	ctld      *ctldLog     // nil without Inputs.SlurmctldLogs
	prio      *queue.Model // nil without Options.Priority
}

// flatParents is decay's parent list of the universe: every association
// a root. decay charges each association its own usage; the tree's
// projection (fairshare.Projection) sums it up the tree at a snapshot.
func (m *model) flatParents() []int32 {
	parents := make([]int32, len(m.keys))
	for i := range parents {
		parents[i] = -1
	}
	return parents
}

func (m *model) calcPeriod() int64 {
	if m.params.CalcPeriodSec > 0 {
		return m.params.CalcPeriodSec
	}
	return decay.DefaultCalcPeriodSec
}

func newModel(in Inputs, opt Options) (*model, error) {
	conf := in.Conf
	if conf == nil {
		return nil, errors.New("run: no slurm.conf")
	}
	m := &model{conf: conf, cluster: opt.Cluster, qos: in.QOS}
	if m.cluster == "" {
		m.cluster = conf.ClusterName
	}
	if m.cluster == "" {
		return nil, errors.New("run: slurm.conf has no ClusterName; pass --cluster")
	}
	m.params = decay.Params{
		HalfLifeSec: conf.DecayHalfLifeSec, CalcPeriodSec: conf.CalcPeriodSec,
		ResetPeriod: conf.UsageResetPeriod, Location: opt.Location, LimitsEnforced: conf.LimitsEnforced(),
	}
	if err := m.params.Validate(); err != nil {
		return nil, fmt.Errorf("slurm.conf %s: %w", conf.File, err)
	}
	var parts []billing.Partition
	var rparts []record.RunPartition
	for _, p := range conf.Partitions {
		parts = append(parts, billing.Partition{Name: p.Name, TRESBillingWeights: p.TRESBillingWeights})
		rparts = append(rparts, record.RunPartition{Name: p.Name, TRESBillingWeights: p.TRESBillingWeights})
	}
	bill, err := billing.Compile(parts, conf.PriorityFlags, append(billing.AlwaysTracked(), conf.AccountingStorageTRES...))
	if rerr := checkWeightBound(conf); err != nil || rerr != nil {
		if err != nil {
			err = weightsError(conf, err)
		}
		return nil, errors.Join(err, rerr)
	}
	m.bill = bill
	version := opt.SlurmVersion.OrNewest()
	if err := bill.Mode().CheckRelease(version); err != nil {
		return nil, fmt.Errorf("slurm.conf %s: %w, or give the --slurm-version the site runs", conf.File, err)
	}
	m.algo = conf.Algorithm()
	m.damp = float64(conf.FairShareDampeningFactor)
	if m.damp < 1 {
		m.damp = 1
	}
	if len(in.Assoc) == 0 {
		return nil, errors.New("run: no association tree")
	}
	for _, d := range in.Assoc {
		key := m.cluster
		if cl := d.Assoc.Clusters(); len(cl) == 1 && cl[0] == "" {
			key = "" // a dump without a Cluster column
		}
		nodes, err := d.Assoc.Nodes(key)
		if err != nil {
			return nil, err
		}
		t, err := fairshare.NewTree(nodes)
		if err != nil {
			return nil, fmt.Errorf("association tree %s: %w", d.Assoc.File, err)
		}
		m.trees = append(m.trees, t)
		m.effective = append(m.effective, d.Effective)
		m.sources = append(m.sources, d.Assoc.File)
	}
	if m.uni, err = fairshare.NewUniverse(m.trees); err != nil {
		return nil, fmt.Errorf("association trees: %w", err)
	}
	m.keys = m.uni.Keys()
	assocs := make([]decay.Assoc, len(m.keys))
	for i, k := range m.keys {
		assocs[i] = decay.Assoc{Account: k.Account, User: k.User, Partition: k.Partition, Parent: m.uni.Parents()[i]}
	}
	if m.res, err = decay.NewResolver(m.cluster, assocs); err != nil {
		return nil, fmt.Errorf("association trees: %w", err)
	}
	every := opt.SnapshotEvery.String()
	m.cfg = record.RunConfig{
		Cluster: m.cluster, Algorithm: m.algo.String(), HalfLifeSec: conf.DecayHalfLifeSec, CalcPeriodSec: m.calcPeriod(),
		UsageResetPeriod: orNone(conf.UsageResetPeriod), PriorityFlags: conf.PriorityFlags,
		DampeningFactor: int64(m.damp), AccountingStorageEnforce: conf.AccountingStorageEnforce,
		LimitsEnforced: m.params.LimitsEnforced, TimeZone: opt.Location.String(), SnapshotEvery: every,
		TRES: schemas.ClusterTRES(conf.AccountingStorageTRES, version), Partitions: rparts, SlurmVersion: version.String(),
	}
	if opt.Priority {
		// Association priorities from each dump, in force from its date
		// as the dump's tree is.
		assocs := make([]*ingest.Associations, len(in.Assoc))
		for i, d := range in.Assoc {
			assocs[i] = d.Assoc
		}
		if m.prio, err = newPrioModel(conf, assocs, in.QOS, version); err != nil {
			return nil, fmt.Errorf("slurm.conf %s: %w", conf.File, err)
		}
		m.cfg.PriorityWeights = &record.PriorityWeights{Age: conf.PriorityWeightAge, Assoc: conf.PriorityWeightAssoc,
			FairShare: conf.PriorityWeightFairshare, JobSize: conf.PriorityWeightJobSize,
			Partition: conf.PriorityWeightPartition, QOS: conf.PriorityWeightQOS, TRES: conf.PriorityWeightTRES}
	}
	return m, nil
}

// setTickPhase sets the phase of the run's tick grid (m.params.OriginUnix,
// recorded in m.cfg), in [0, PriorityCalcPeriod): origin's when given,
// else the history's (its newest checkpoint's), else 0. A resumed
// checkpoint of another phase is refused later, where it is resumed.
func (m *model) setTickPhase(cps []*storedCheckpoint, origin *int64) error {
	P := m.calcPeriod()
	hist := int64(-1)
	if len(cps) > 0 {
		newest := cps[len(cps)-1]
		if err := newest.load(); err != nil {
			return err
		}
		var st decay.State
		if err := st.UnmarshalBinary(newest.State); err != nil {
			return fmt.Errorf("checkpoint at %s: %w", fmtUnix(newest.To), err)
		}
		if st.CalcPeriodSec == P {
			hist = decay.TickPhase(st.OriginUnix, P)
		}
	}
	phase := max(hist, 0)
	if origin != nil {
		phase = decay.TickPhase(*origin, P)
	}
	m.params.OriginUnix, m.cfg.TickOriginUnix = phase, phase
	return nil
}

// checkWeightBound refuses the TRESBillingWeights of a partition whose
// weights are so large that a job's billing may not be finite: Σ|weight|
// × ingest.MaxTRESCount (2^40, beyond any count a sacct row may hold)
// overflows a double, so some job's billing would be ±inf, or NaN where
// weights of both signs meet, and no usage can be charged with it
// (CPU=1e308 is refused; CPU=1e290 is not). Any other weight Slurm reads is
// taken, negative ones included: slurmctld takes them
// (_tres_weight_item, src/common/slurm_protocol_api.c) and charges the
// billing they give, and ingest warns of them (Config.Warnings).
func checkWeightBound(conf *ingest.Config) error {
	var errs []error
	for _, p := range conf.Partitions {
		// Item by item: the items Compile refused do not hide the others.
		var w billing.Weights
		for _, item := range strings.Split(p.TRESBillingWeights, ",") {
			if x, err := billing.ParseWeights(item, nil); err == nil {
				w = append(w, x...)
			}
		}
		sum, largest := 0.0, -1
		for i, x := range w {
			sum += math.Abs(x.PerUnit)
			if largest < 0 || math.Abs(x.PerUnit) > math.Abs(w[largest].PerUnit) {
				largest = i
			}
		}
		if largest >= 0 && math.IsInf(sum*ingest.MaxTRESCount, 0) {
			x := w[largest]
			errs = append(errs, &ingest.ParseError{File: p.WeightsFile, Line: p.WeightsLine, Field: "TRESBillingWeights", Value: p.TRESBillingWeights,
				Err: fmt.Errorf("partition %s: weight of %s is %g per unit: a job's billing from weights this large may not be finite (the sum of their magnitudes times 2^40, the largest count a job may hold, overflows)",
					p.Name, x.TRES, x.PerUnit)})
		}
	}
	return errors.Join(errs...)
}

// weightsError names the file and line of each partition whose
// TRESBillingWeights billing.Compile refused.
func weightsError(conf *ingest.Config, err error) error {
	var errs []error
	for _, p := range conf.Partitions {
		_, perr := billing.ParseWeights(p.TRESBillingWeights, append(billing.AlwaysTracked(), conf.AccountingStorageTRES...))
		var we *billing.WeightsError
		if errors.As(perr, &we) {
			items := make([]error, len(we.Items))
			for i, it := range we.Items {
				items[i] = it
			}
			perr = errors.Join(items...)
		}
		if perr != nil {
			errs = append(errs, &ingest.ParseError{File: p.WeightsFile, Line: p.WeightsLine, Field: "TRESBillingWeights", Value: p.TRESBillingWeights,
				Err: fmt.Errorf("partition %s: %w", p.Name, perr)})
		}
	}
	if len(errs) == 0 {
		return fmt.Errorf("slurm.conf %s: TRESBillingWeights: %w", conf.File, err)
	}
	return errors.Join(errs...)
}

func orNone(s string) string {
	if s == "" {
		return "NONE"
	}
	return s
}

// treeAt is the index of the association dump in force at t (the oldest
// before the first dump).
func (m *model) treeAt(t time.Time) int {
	i := 0
	for j, e := range m.effective {
		if !e.After(t) {
			i = j
		}
	}
	return i
}
