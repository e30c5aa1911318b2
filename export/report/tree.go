package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
)

// snapTree is the association tree of the Last snapshot, rebuilt from its
// fairshare rows by record.FairshareFromRows: the tree, the stored values
// of every position and the raw usage the projection starts from.
type snapTree struct {
	t     *fairshare.Tree
	res   *fairshare.Result // the stored values, by position
	keys  []assocKey        // by position
	usage []float64         // raw usage by position (NULL as 0)
	pos   map[assocKey]int32
}

// newSnapTree rebuilds the tree of one snapshot from its fairshare rows.
func newSnapTree(rows []record.FairshareRow) (*snapTree, error) {
	t, res, err := record.FairshareFromRows(rows)
	if err != nil {
		return nil, err
	}
	s := &snapTree{t: t, res: res, keys: make([]assocKey, t.Len()), usage: make([]float64, t.Len()),
		pos: make(map[assocKey]int32, t.Len())}
	for p := range t.Len() {
		k := assocKey{t.Account[p], t.User[p], t.Partition[p]}
		s.keys[p], s.pos[k] = k, int32(p)
		if u := res.RawUsage[p]; u > 0 && !math.IsInf(u, 0) {
			s.usage[p] = u
		}
	}
	return s, nil
}

// account returns the position of an account.
func (s *snapTree) account(name string) (int32, bool) {
	p, ok := s.pos[assocKey{Account: name}]
	return p, ok
}

// end returns one past the last position of p's subtree (positions are a
// depth-first pre-order).
func (s *snapTree) end(p int32) int32 {
	e := p + 1
	for int(e) < s.t.Len() && s.t.Depth[e] > s.t.Depth[p] {
		e++
	}
	return e
}

// subtreeAccounts returns the accounts of p's subtree, p included, sorted.
func (s *snapTree) subtreeAccounts(p int32) []string {
	var out []string
	for q := p; q < s.end(p); q++ {
		if !s.t.IsUser[q] {
			out = append(out, s.keys[q].Account)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// subtreeUsers returns the user associations of p's subtree in position
// order.
func (s *snapTree) subtreeUsers(p int32) []assocKey {
	var out []assocKey
	for q := p; q < s.end(p); q++ {
		if s.t.IsUser[q] {
			out = append(out, s.keys[q])
		}
	}
	return out
}

// labs returns every account but root that has a user association as a
// direct child, sorted by name.
func (s *snapTree) labs() []string {
	var out []string
	for q := 1; q < s.t.Len(); q++ {
		if s.t.IsUser[q] && s.t.Parent[q] > 0 {
			out = append(out, s.keys[s.t.Parent[q]].Account)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// RecoveryState says what the recovery figure means.
type RecoveryState int

const (
	// RecoveryUnknown: no run config (half-life) or no share to compare with.
	RecoveryUnknown RecoveryState = iota
	// RecoveryWithin: the lab is at or below its share already.
	RecoveryWithin
	// RecoveryAfter: at zero use the lab is back at its share after Seconds.
	RecoveryAfter
	// RecoveryNever: decay alone never brings the lab back to its share
	// (Floor is the ratio it tends to).
	RecoveryNever
	// RecoveryNoDecay: PriorityDecayHalfLife=0; usage only falls at a reset.
	RecoveryNoDecay
	// RecoveryNoShares: the lab has no shares; its factor stays at the bottom.
	RecoveryNoShares
)

// String is the state as the summary table prints it.
func (s RecoveryState) String() string {
	return map[RecoveryState]string{RecoveryUnknown: "unknown", RecoveryWithin: "within share",
		RecoveryAfter: "recovers", RecoveryNever: "never by decay alone", RecoveryNoDecay: "no decay",
		RecoveryNoShares: "no shares"}[s]
}

// LabRecovery works out when lab would be back at its share at zero use
// from one snapshot's fairshare rows, under the half-life and dampening
// given: the figure of a lab report's summary (see snapTree.recover). The
// dampening does not change it: under the classic algorithms the factor
// 2^(−Ratio/damp) is back at 2^(−1/damp) when Ratio is back at 1, whatever
// damp is.
func LabRecovery(rows []record.FairshareRow, lab string, halfLifeSec int64, damp float64) (Recovery, error) {
	t, err := newSnapTree(rows)
	if err != nil {
		return Recovery{}, err
	}
	p, ok := t.account(lab)
	if !ok {
		return Recovery{}, fmt.Errorf("no account %q in the snapshot", lab)
	}
	return t.recover(p, halfLifeSec), nil
}

// LabRecoveries is LabRecovery for every lab of one snapshot (every
// account but root with a user association of its own), by lab name,
// from one tree: what the metrics export needs at each snapshot. (It
// takes no dampening, which does not change the figure.)
func LabRecoveries(rows []record.FairshareRow, halfLifeSec int64) (map[string]Recovery, error) {
	t, err := newSnapTree(rows)
	if err != nil {
		return nil, err
	}
	labs := t.labs()
	out := make(map[string]Recovery, len(labs))
	buf := slices.Clone(t.usage)
	for _, lab := range labs {
		p, _ := t.account(lab)
		out[lab] = t.recoverIn(p, halfLifeSec, buf)
	}
	return out, nil
}

// Recovery is the explanation of a lab's current factor.
type Recovery struct {
	// Ratio is the lab's EffectvUsage/NormShares at the Last snapshot: the
	// decayed usage against the share (1 = exactly its share). Under Fair
	// Tree it is 1/LevelFS; under the classic algorithms the factor is
	// 2^(−Ratio/damp).
	Ratio float64
	// Limit is, under Fair Tree, the account with the lowest LevelFS on the
	// lab's path to the top (the lab, its parent, ... up to a child of
	// root; FairShare=parent accounts have no level of their own), and
	// LimitLevelFS that LevelFS (NormShares/EffectvUsage). Fair Tree ranks
	// whole subtrees level by level, so an account above the lab with
	// LevelFS below 1 puts every user under it behind the users of its
	// siblings with a higher LevelFS, whatever the lab's own LevelFS. Limit
	// is the lab itself when no account above it is lower, and empty under
	// the classic algorithms (there the lab's EffectvUsage already carries
	// its parents' usage).
	Limit        string
	LimitLevelFS float64
	// Above are the accounts above the lab on that path with LevelFS below
	// 1, nearest first: State, Seconds and Floor cover them too.
	Above []string
	// State tells which of the fields below apply. Under Fair Tree it is
	// about every level of the path: RecoveryWithin means every LevelFS on
	// it is at least 1.
	State RecoveryState
	// Seconds is the time at zero use until the ratio is ≤ 1 at every level
	// of the path (RecoveryAfter).
	Seconds int64
	// Floor is the limit of the ratio at zero use (RecoveryNever): under
	// Fair Tree the highest of the levels that are above their share now.
	Floor float64
}

// projector works out the usage/share ratios of the watched positions
// after the lab's subtree usage decayed.
type projector struct {
	s        *snapTree
	algo     fairshare.Algorithm
	lab, end int32
	watch    []int32   // the positions whose ratio must fall to 1
	buf      []float64 // the usage projected; s.usage outside the lab's subtree and ancestors
}

// ratio returns the highest EffectvUsage/NormShares of the watched
// positions after the lab's subtree usage decayed by the factor f while
// every other association's usage stays as it is: the lab's descendants
// are scaled by f, its ancestors lose what the lab lost, the rest of the
// tree is unchanged. The values are the ones the history's fairshare
// algorithm computes (fairshare.Compute) from that usage, bit for bit:
// fairshare.EffectvUsageOf recomputes only what a watched position
// depends on, not the whole tree.
func (p *projector) ratio(f float64) float64 {
	u, s := p.buf, p.s
	lab := s.usage[p.lab]
	for q := p.lab; q < p.end; q++ {
		u[q] = s.usage[q] * f
	}
	// An ancestor keeps the others' usage and gets the lab's decayed one:
	// (u − lab) + lab·f, not u − lab·(1−f), which cancels to 0 when the
	// lab is all of it. Others' usage below 1e-9 of the total is rounding
	// noise of the stored sums and counts as none.
	for a := s.t.Parent[p.lab]; a >= 0; a = s.t.Parent[a] {
		rest := s.usage[a] - lab
		if rest < 1e-9*s.usage[a] {
			rest = 0
		}
		u[a] = rest + lab*f
	}
	worst := math.Inf(-1)
	for _, q := range p.watch {
		r := math.Inf(1) // no shares: LevelFS 0, never at its share
		if ns := s.t.NormSharesOf(p.algo, q); ns > 0 {
			r = fairshare.EffectvUsageOf(p.algo, s.t, u, q) / ns
		}
		worst = max(worst, r)
	}
	return worst
}

// restore sets the usage that ratio projected back to s.usage.
func (p *projector) restore() {
	s := p.s
	copy(p.buf[p.lab:p.end], s.usage[p.lab:p.end])
	for a := s.t.Parent[p.lab]; a >= 0; a = s.t.Parent[a] {
		p.buf[a] = s.usage[a]
	}
}

// path returns the levels that rank the lab's users under Fair Tree: the
// lab and each ancestor below root, nearest first, but for
// FairShare=parent accounts (they have no LevelFS; their children compete
// at the level above).
func (s *snapTree) path(lab int32) []int32 {
	out := []int32{lab}
	for a := s.t.Parent[lab]; a > 0 && s.t.Parent[a] >= 0; a = s.t.Parent[a] {
		if !s.t.SharesParent[a] {
			out = append(out, a)
		}
	}
	return out
}

// recover works out when the lab would be back at its share at zero use,
// under the algorithm of the snapshot (s.res.Algorithm).
//
// Assumption: the lab runs nothing from the Last snapshot on, so its usage
// (and its users' and sub-accounts') decays by d^t (decay.DecayOver, d =
// 1 − 0.693/H for the half-life H, docs/slurm-semantics.md §2.2), while the
// decayed usage of every other association stays where it is, i.e. the
// rest of the cluster keeps using it at the rate that balances its own
// decay. (Letting everybody's usage decay with nobody running anything
// would change no ratio at all: usage fractions are scale-free, so the lab
// would never recover; holding the others constant is the steady state a
// busy cluster is in.)
//
// Under the classic algorithms the answer is the first whole second t at
// which the lab's EffectvUsage/NormShares, recomputed by the history's
// algorithm, is ≤ 1: FairShare back at 2^(−1/damp) (0.5 with the default
// dampening).
//
// Under Fair Tree a user's rank depends on the LevelFS of every account on
// the path from the user's account up to root's child (see snapTree.path),
// so the answer is the first t at which every level of the path is at its
// share: LevelFS ≥ 1 at each. For a level A with share S (its NormShares,
// a fraction of its siblings' shares), raw usage U_A of which a is the
// lab's, under a parent with raw usage U_P (docs/slurm-semantics.md §7.2):
//
//	LevelFS_A(t) = S·(U_P − a + a·d^t) / (U_A − a + a·d^t)
//	LevelFS_A(t) ≥ 1  ⇔  d^t ≤ f_A = (S·(U_P − a) − (U_A − a)) / (a·(1 − S))
//	t_A = ln(f_A) / ln(d)   (0 when f_A ≥ 1; never when f_A ≤ 0 and S < 1)
//
// and t = max over the levels of t_A, rounded up to a whole second. (For
// the lab itself U_A − a = 0; a level that is its parent's only child has
// S = 1 and is always at its share.) Each level's ratio only falls as the
// lab's usage decays, so recover finds t by bisection over the history's
// algorithm (fairshare.FairTree) rather than by the formula: the same code
// then serves FairShare=parent accounts and the classic algorithms; the
// tests check it against the formula.
//
// Each step of the bisection recomputes only what the watched ratios
// depend on (fairshare.EffectvUsageOf): under Fair Tree each watched
// level's usage over its fs parent's, under the classic algorithm the
// EffectvUsage of the lab's fs ancestors top-down, under depth-oblivious
// those with their siblings' NormUsage — the values a recomputation of the
// whole tree gives, bit for bit (TestRecoveryMatchesWholeTree), at a
// hundredth of the cost.
func (s *snapTree) recover(lab int32, halfLifeSec int64) Recovery {
	return s.recoverIn(lab, halfLifeSec, nil)
}

// recoverIn is recover with buf, a copy of s.usage, as the projection's
// memory (nil: a new one); buf is s.usage again on return, for the next
// lab.
func (s *snapTree) recoverIn(lab int32, halfLifeSec int64, buf []float64) Recovery {
	algo := s.res.Algorithm
	ns := s.res.NormShares[lab]
	rec := Recovery{Ratio: s.res.EffectvUsage[lab] / ns}
	watch := []int32{lab}
	fairTree := algo != fairshare.ClassicAlgo && algo != fairshare.DepthObliviousAlgo
	if fairTree && ns > 0 && !math.IsNaN(rec.Ratio) {
		watch = watch[:0]
		rec.Limit, rec.LimitLevelFS = s.keys[lab].Account, 1/rec.Ratio
		for _, q := range s.path(lab) {
			r := s.res.EffectvUsage[q] / s.res.NormShares[q]
			if lf := s.res.NormShares[q] / s.res.EffectvUsage[q]; lf < rec.LimitLevelFS {
				rec.Limit, rec.LimitLevelFS = s.keys[q].Account, lf
			}
			if r > 1 || s.res.NormShares[q] <= 0 {
				watch = append(watch, q)
				if q != lab {
					rec.Above = append(rec.Above, s.keys[q].Account)
				}
			}
		}
	}
	switch {
	case !(ns > 0):
		rec.Ratio = math.NaN()
		rec.State = RecoveryNoShares
		return rec
	case math.IsNaN(rec.Ratio):
		return rec
	case !fairTree && rec.Ratio <= 1, fairTree && len(watch) == 0:
		rec.State = RecoveryWithin
		return rec
	case halfLifeSec <= 0:
		rec.State = RecoveryNoDecay
		return rec
	}
	if buf == nil {
		buf = slices.Clone(s.usage)
	}
	p := &projector{s: s, algo: algo, lab: lab, end: s.end(lab), watch: watch, buf: buf}
	defer p.restore()
	hi := 200 * halfLifeSec // d^hi < 1e-40: the lab's usage is gone
	// A level that only tends to its share (ratio → 1) never reaches it.
	if fl := p.ratio(decay.DecayOver(halfLifeSec, hi)); fl >= 1 {
		rec.State, rec.Floor = RecoveryNever, fl
		return rec
	}
	lo := int64(0) // ratio(lo) > 1 ≥ ratio(hi); the ratio falls as t grows
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if p.ratio(decay.DecayOver(halfLifeSec, mid)) <= 1 {
			hi = mid
		} else {
			lo = mid
		}
	}
	rec.State, rec.Seconds = RecoveryAfter, hi
	return rec
}
