package report

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
)

// spec is one association of a hand-made tree with its stored NormShares
// and EffectvUsage given by hand (they make the current ratio); shares -1
// is NULL (root).
type spec struct {
	account, user, parent string
	shares                int64
	raw, ns, eu           float64
}

func row(account, user, parent string, shares int64, raw, ns, eu float64) spec {
	return spec{account, user, parent, shares, raw, ns, eu}
}

// fsRows turns specs into the fairshare rows of one snapshot.
func fsRows(algo string, specs []spec) []record.FairshareRow {
	depth := map[string]int32{}
	var rows []record.FairshareRow
	for _, sp := range specs {
		d := int32(0)
		if sp.parent != "" {
			d = depth[sp.parent] + 1
		}
		if sp.user == "" {
			depth[sp.account] = d
		}
		r := record.FairshareRow{Algorithm: algo, Account: sp.account, User: sp.user, Parent: sp.parent, Depth: d,
			IsUser: sp.user != "", NormShares: fptr(sp.ns), RawUsage: fptr(sp.raw), EffectvUsage: fptr(sp.eu)}
		if sp.shares >= 0 {
			sh := sp.shares
			r.RawShares = &sh
		}
		rows = append(rows, r)
	}
	return rows
}

// effHalfLife7d is the effective half-life of H = 7 days, ln(0.5)/ln(d)
// with d = 1 − 0.693/604800 (docs/slurm-semantics.md §11.4).
const effHalfLife7d = 604928.101918

// TestRecoveryByHand: at zero use the lab's usage is a·f with f = d^t,
// everybody else's stays. For a lab with share S, usage a and siblings'
// usage o at its level, usage/share ≤ 1 once a·f/(a·f+o) ≤ S, i.e.
// f ≤ S·o/(a·(1−S)), t = log2(1/f) effective half-lives.
func TestRecoveryByHand(t *testing.T) {
	t.Parallel()
	// root: A (30 shares, usage 750), B (20, 250), C (50, 0); one user each.
	flat := []spec{
		row("root", "", "", -1, 1000, 0, 1),
		row("A", "", "root", 30, 750, 0.3, 0.75), row("A", "a1", "A", 1, 750, 1, 1),
		row("B", "", "root", 20, 250, 0.2, 0.25), row("B", "b1", "B", 1, 250, 1, 1),
		row("C", "", "root", 50, 0, 0.5, 0), row("C", "c1", "C", 1, 0, 1, 0),
	}
	// root: D (usage 800) holding L1 (600) and L2 (200); E (600).
	deep := []spec{
		row("root", "", "", -1, 1400, 0, 1),
		row("D", "", "root", 1, 800, 0.5, 800.0/1400),
		row("L1", "", "D", 1, 600, 0.5, 0.75), row("L1", "x", "L1", 1, 600, 1, 1),
		row("L2", "", "D", 1, 200, 0.5, 0.25), row("L2", "y", "L2", 1, 200, 1, 1),
		row("E", "", "root", 1, 600, 0.5, 600.0/1400), row("E", "z", "E", 1, 600, 1, 1),
	}
	// The same with E at 200 (root 1000): without L1, D would use exactly
	// its share (200 of 400), so D's LevelFS only tends to 1.
	deepTight := []spec{
		row("root", "", "", -1, 1000, 0, 1),
		row("D", "", "root", 1, 800, 0.5, 0.8),
		row("L1", "", "D", 1, 600, 0.5, 0.75), row("L1", "x", "L1", 1, 600, 1, 1),
		row("L2", "", "D", 1, 200, 0.5, 0.25), row("L2", "y", "L2", 1, 200, 1, 1),
		row("E", "", "root", 1, 200, 0.5, 0.2), row("E", "z", "E", 1, 200, 1, 1),
	}
	// root: D (usage 900) whose only child is L (900); E (100). L's own
	// LevelFS is 1 (S = 1, all of D's usage), D's is 0.5/0.9.
	dept := []spec{
		row("root", "", "", -1, 1000, 0, 1),
		row("D", "", "root", 1, 900, 0.5, 0.9),
		row("L", "", "D", 1, 900, 1, 1), row("L", "x", "L", 1, 900, 1, 1),
		row("E", "", "root", 1, 100, 0.5, 0.1), row("E", "z", "E", 1, 100, 1, 1),
	}
	// root: A alone has usage: its fraction stays 1 whatever it decays to.
	alone := []spec{
		row("root", "", "", -1, 100, 0, 1),
		row("A", "", "root", 50, 100, 0.5, 1), row("A", "a1", "A", 1, 100, 1, 1),
		row("B", "", "root", 50, 0, 0.5, 0), row("B", "b1", "B", 1, 0, 1, 0),
		row("Z", "", "root", 0, 0, 0, 0), row("Z", "z1", "Z", 1, 0, 1, 0),
	}
	const week = 7 * 86400
	tests := []struct {
		name, algo, lab string
		rows            []spec
		half            int64
		ratio           float64
		state           RecoveryState
		sec             float64 // expected seconds (RecoveryAfter), to within 1 s
		floor           float64
	}{
		// A: S = 0.3, a = 750, o = 250: f ≤ 0.3·250/(750·0.7) = 1/7.
		{"fair tree A", "fair_tree", "A", flat, week, 2.5, RecoveryAfter, math.Log2(7) * effHalfLife7d, 0},
		// Classic: A is a child of root, UE = UN = 750/1000, S = 30/100: the same.
		{"classic A", "classic", "A", flat, week, 2.5, RecoveryAfter, math.Log2(7) * effHalfLife7d, 0},
		// B: S = 0.2, a = 250, o = 750: f ≤ 0.2·750/(250·0.8) = 3/4.
		{"fair tree B", "fair_tree", "B", flat, week, 1.25, RecoveryAfter, math.Log2(4.0/3) * effHalfLife7d, 0},
		{"fair tree C", "fair_tree", "C", flat, week, 0, RecoveryWithin, 0, 0},
		// L1 under D: S = 0.5, a = 600, o = 200 (L2; E is not at its level): f ≤ 1/3.
		// D (ratio (800/1400)/0.5 = 8/7) must get back to its share too:
		// f_D = (0.5·(1400−600) − (800−600))/(600·0.5) = 2/3, later than 1/3.
		{"fair tree deep L1", "fair_tree", "L1", deep, week, 1.5, RecoveryAfter, math.Log2(3) * effHalfLife7d, 0},
		// With E at 200: f_D = (0.5·(1000−600) − 200)/(600·0.5) = 0: D's
		// ratio (200 + 600f)/(400 + 600f)/0.5 only tends to 1.
		{"fair tree deep L1, D tight", "fair_tree", "L1", deepTight, week, 1.5, RecoveryNever, 0, 1},
		// L is D's only child (ratio 1), but D used 1.8× its share:
		// f_D = (0.5·(1000−900) − 0)/(900·0.5) = 1/9.
		{"fair tree only child", "fair_tree", "L", dept, week, 1, RecoveryAfter, math.Log2(9) * effHalfLife7d, 0},
		// Classic: L's EffectvUsage already holds D's; only L's ratio counts.
		{"classic only child", "classic", "L", dept, week, 1, RecoveryWithin, 0, 0},
		// E is below its share and so is every level above it (none).
		{"fair tree E", "fair_tree", "E", dept, week, 0.2, RecoveryWithin, 0, 0},
		// A alone: usage/share stays 1/0.5 = 2.
		{"alone", "fair_tree", "A", alone, week, 2, RecoveryNever, 0, 2},
		{"no decay", "fair_tree", "A", flat, 0, 2.5, RecoveryNoDecay, 0, 0},
		{"no shares", "fair_tree", "Z", alone, week, math.NaN(), RecoveryNoShares, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newSnapTree(fsRows(tc.algo, tc.rows))
			if err != nil {
				t.Fatal(err)
			}
			lab, _ := s.account(tc.lab)
			got := s.recover(lab, tc.half)
			if got.State != tc.state {
				t.Fatalf("state = %v, want %v (%+v)", got.State, tc.state, got)
			}
			if !(math.IsNaN(tc.ratio) && math.IsNaN(got.Ratio)) && !near(got.Ratio, tc.ratio, 1e-12) {
				t.Errorf("ratio = %v, want %v", got.Ratio, tc.ratio)
			}
			if tc.state == RecoveryAfter {
				if s := float64(got.Seconds); s < tc.sec || s > tc.sec+1.01 {
					t.Errorf("recovers after %d s, want ⌈%.3f⌉ (%.2f days)", got.Seconds, tc.sec, tc.sec/86400)
				}
			}
			if tc.state == RecoveryNever && !near(got.Floor, tc.floor, 1e-9) {
				t.Errorf("floor = %v, want %v", got.Floor, tc.floor)
			}
		})
	}
}

// TestRecoveryLimit: under Fair Tree the limiting level is the account
// with the lowest LevelFS = NormShares/EffectvUsage on the lab's path to
// root's child (the trees of TestRecoveryByHand, worked by hand).
func TestRecoveryLimit(t *testing.T) {
	t.Parallel()
	dept := []spec{
		row("root", "", "", -1, 1000, 0, 1),
		row("D", "", "root", 1, 900, 0.5, 0.9),
		row("L", "", "D", 1, 900, 1, 1), row("L", "x", "L", 1, 900, 1, 1),
		row("E", "", "root", 1, 100, 0.5, 0.1), row("E", "z", "E", 1, 100, 1, 1),
	}
	deep := []spec{
		row("root", "", "", -1, 1000, 0, 1),
		row("D", "", "root", 1, 800, 0.5, 0.8),
		row("L1", "", "D", 1, 600, 0.5, 0.75), row("L1", "x", "L1", 1, 600, 1, 1),
		row("L2", "", "D", 1, 200, 0.5, 0.25), row("L2", "y", "L2", 1, 200, 1, 1),
		row("E", "", "root", 1, 200, 0.5, 0.2), row("E", "z", "E", 1, 200, 1, 1),
	}
	for _, tc := range []struct {
		name, algo, lab string
		rows            []spec
		limit           string
		lf              float64
	}{
		{"only child", "fair_tree", "L", dept, "D", 0.5 / 0.9}, // L 1, D 0.5556
		{"deep L1", "fair_tree", "L1", deep, "D", 0.5 / 0.8},   // L1 0.5/0.75 = 0.667, D 0.625
		{"deep L2", "fair_tree", "L2", deep, "D", 0.5 / 0.8},   // L2 2, D 0.625
		{"top level", "fair_tree", "E", dept, "E", 0.5 / 0.1},  // E 5, nothing above
		{"classic", "classic", "L", dept, "", 0},               // no levels
	} {
		s, err := newSnapTree(fsRows(tc.algo, tc.rows))
		if err != nil {
			t.Fatal(err)
		}
		lab, _ := s.account(tc.lab)
		got := s.recover(lab, 7*86400)
		if got.Limit != tc.limit || !near(got.LimitLevelFS, tc.lf, 1e-12) {
			t.Errorf("%s: limit %s LevelFS %v, want %s %v", tc.name, got.Limit, got.LimitLevelFS, tc.limit, tc.lf)
		}
	}
}

// TestSnapTree: labs are the accounts with users directly under them;
// subtrees follow the pre-order.
func TestSnapTree(t *testing.T) {
	t.Parallel()
	rows := []spec{
		row("root", "", "", -1, 0, 0, 1), row("root", "admin", "root", 1, 0, 0, 0),
		row("D", "", "root", 1, 0, 0, 0), row("L1", "", "D", 1, 0, 0, 0), row("L1", "x", "L1", 1, 0, 0, 0),
		row("L2", "", "D", 1, 0, 0, 0), row("L2", "y", "L2", 1, 0, 0, 0), row("E", "", "root", 1, 0, 0, 0),
	}
	s, err := newSnapTree(fsRows("fair_tree", rows))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.labs(); !slices.Equal(got, []string{"L1", "L2"}) {
		t.Errorf("labs = %v, want [L1 L2] (not root with its admin user, not D, not E without users)", got)
	}
	d, _ := s.account("D")
	if got := s.subtreeAccounts(d); !slices.Equal(got, []string{"D", "L1", "L2"}) {
		t.Errorf("subtree of D = %v", got)
	}
	if got := s.subtreeUsers(d); !slices.Equal(got, []assocKey{{"L1", "x", ""}, {"L2", "y", ""}}) {
		t.Errorf("users of D = %v", got)
	}
	if _, err := newSnapTree(fsRows("fair_tree", []spec{row("root", "", "", -1, 0, 0, 1), row("A", "u", "A", 1, 0, 0, 0)})); err == nil {
		t.Error("a user whose account has no row: no error")
	}
}

// TestThin: beyond the limit, the last snapshot of each k-day bucket.
func TestThin(t *testing.T) {
	t.Parallel()
	var ts []time.Time
	start := day("2025-01-01")
	for i := range 24 * 10 { // hourly for 10 days
		ts = append(ts, start.Add(time.Hour*time.Duration(i)))
	}
	got := thin(ts, 5)
	// 10 days at ≤ 5 points: 2-day buckets, the last hour of each.
	if len(got) != 5 || !got[4].Equal(ts[len(ts)-1]) || !got[0].Equal(day("2025-01-02").Add(23*time.Hour)) {
		t.Errorf("thin = %v", got)
	}
	if got := thin(ts[:4], 5); len(got) != 4 {
		t.Errorf("thin of 4 = %d points, want all 4", len(got))
	}
}
