package pipeline_test

import (
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/pipeline"
)

// whatIfSite writes a Fair Tree site without limits (ticks every 5
// minutes on the epoch's grid; a job's last partial interval is never
// charged, and a job ending in a tick's second is not charged at that
// tick), two labs of one user each, and these jobs (UTC):
//
//	job 1 ua of la, 1 CPU, 2025-03-01 00:00 → 01:00
//	job 2 ub of lb, 2 CPUs and a GPU, 2025-03-01 12:00 → 13:00
//	job 4 ub of lb, 2 CPUs, 2025-03-01 12:00 → 13:00 (job 2's twin but for the GPU)
//	job 3 ua of la, 1 CPU in QOS half (UsageFactor 0.5), 2025-03-02 06:00 → 07:00
//
// The partition has no TRESBillingWeights, so a job bills its CPUs: the
// rates are 1, 2, 2 and 0.5. Jobs 2 and 4 are alike in all a seed holds
// (association, start, end, rate), so billing them again must tell them
// apart by their rows.
//
// and runs it night by night (two runs, the second resuming the first)
// into a history with a snapshot at 2025-03-02 and 2025-03-03 00:00.
func whatIfSite(t *testing.T) (hist string) {
	t.Helper()
	dir := t.TempDir()
	head := "JobID|JobIDRaw|Partition|QOS|Account|User|Start|End|Elapsed|State|AllocTRES\n"
	files := map[string]string{
		"slurm.conf": "ClusterName=wi\nPriorityType=priority/multifactor\nPriorityCalcPeriod=5\nPriorityDecayHalfLife=7-0\n" +
			"AccountingStorageEnforce=associations\nAccountingStorageTRES=gres/gpu\nPartitionName=cpu Nodes=n1 Default=YES\n",
		"qos.psv": "Name|UsageFactor|Flags\nnormal|1.000000|\nhalf|0.500000|\n",
		"assoc.psv": "Cluster|Account|User|Partition|ParentName|Share\n" +
			"wi|root||||\nwi|la|||root|1\nwi|la|ua|||1\nwi|lb|||root|1\nwi|lb|ub|||1\n",
		"night1.psv": head +
			"1|1|cpu|normal|la|ua|2025-03-01T00:00:00|2025-03-01T01:00:00|01:00:00|COMPLETED|billing=1,cpu=1,node=1\n" +
			"2|2|cpu|normal|lb|ub|2025-03-01T12:00:00|2025-03-01T13:00:00|01:00:00|COMPLETED|billing=2,cpu=2,gres/gpu=1,node=1\n" +
			"4|4|cpu|normal|lb|ub|2025-03-01T12:00:00|2025-03-01T13:00:00|01:00:00|COMPLETED|billing=2,cpu=2,node=1\n",
		"night2.psv": head +
			"3|3|cpu|half|la|ua|2025-03-02T06:00:00|2025-03-02T07:00:00|01:00:00|COMPLETED|billing=1,cpu=1,node=1\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hist = filepath.Join(dir, "history")
	for i, to := range []time.Time{day(2), day(3)} {
		f := filepath.Join(dir, []string{"night1.psv", "night2.psv"}[i])
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, f), runOpts(hist, to)); err != nil {
			t.Fatal(err)
		}
	}
	return hist
}

// day is 00:00 UTC of 2025-03-d.
func day(d int) time.Time { return time.Date(2025, 3, d, 0, 0, 0, 0, time.UTC) }

// charged is what a job of billing rate running from start (on a tick)
// for n periods of p seconds holds at the tick at: the chunk
// rate·p·d^p of each tick, decayed from that tick to at
// (docs/slurm-semantics.md §2.4, §2.8).
func charged(halfLife, p int64, rate float64, start time.Time, n int, at time.Time) float64 {
	d := decay.Factor(halfLife)
	u := 0.0
	for k := 1; k <= n; k++ {
		tick := start.Unix() + int64(k)*p
		u += rate * float64(p) * math.Pow(d, float64(p)) * math.Pow(d, float64(at.Unix()-tick))
	}
	return u
}

// near reports whether got is within 1e-9 of want, relatively.
func near(got, want float64) bool {
	return got == want || math.Abs(got-want) <= 1e-9*math.Max(math.Abs(got), math.Abs(want))
}

// rowOf returns the row of account/user in rows.
func rowOf(t *testing.T, rows []record.FairshareRow, account, user string) record.FairshareRow {
	t.Helper()
	for _, r := range rows {
		if r.Account == account && r.User == user && r.Partition == "" {
			return r
		}
	}
	t.Fatalf("no row %s/%s", account, user)
	return record.FairshareRow{}
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// TestWhatIfByHand replays whatIfSite's history under each kind of change
// and checks the snapshot at 2025-03-03 against numbers worked out from
// Slurm's formulas (docs/slurm-semantics.md §2, §4, §7): RawUsage of the
// users, NormUsage, NormShares, EffectvUsage and LevelFS of the labs.
//
// Recorded (H = 7 days, P = 5 min): job 1 is charged at the 11 ticks
// 00:05 … 00:55 (the tick at 01:00 is its end's second), jobs 2 and 4
// likewise with rate 2 each (ub's 4), job 3 at 06:05 … 06:55 of 03-02
// with rate 0.5. So at 03-03 00:00 ua = charged(job 1) + charged(job 3),
// ub = charged(jobs 2 and 4), each chunk rate·300·d^300 decayed to 03-03;
// la's NormUsage and EffectvUsage are ua/(ua+ub), its LevelFS 0.5 over
// that.
//
// Billing (docs/slurm-semantics.md §3.3): with TRESBillingWeights
// CPU=1,GRES/gpu=4 job 2 bills 2·1 + 1·4 = 6 (SUM) and job 4 still 2: ub's
// rate is 8; with MAX_TRES too job 2 bills max(2, 4) = 4 and job 4 2: 6.
// (Taking job 2's row for both twins would give 12 or 4.) A UsageFactor
// of 2 for QOS half makes job 3's rate 2, 4 times its recorded 0.5.
func TestWhatIfByHand(t *testing.T) {
	t.Parallel()
	hist := whatIfSite(t)
	at := day(3)
	week, oneDay := int64(7*86400), int64(86400)
	// usageWith is ua and ub with the half-life h, period p, ub's rate
	// r2 (jobs 2 and 4) and job 3's r3.
	usageWith := func(h, p int64, r2, r3 float64) (ua, ub float64) {
		n := int(3600/p) - 1 // the tick at the end's second charges nothing
		ua = charged(h, p, 1, day(1), n, at) + charged(h, p, r3, day(2).Add(6*time.Hour), n, at)
		ub = charged(h, p, r2, day(1).Add(12*time.Hour), n, at)
		return ua, ub
	}
	usage := func(h, p int64) (ua, ub float64) { return usageWith(h, p, 4, 0.5) }
	type want struct {
		ua, ub             float64 // RawUsage of the users
		laShares, lbShares float64 // NormShares of the labs
	}
	ua7, ub7 := usage(week, 300)
	ua1, ub1 := usage(oneDay, 300)
	ua15, ub15 := usage(week, 900)
	// WEEKLY: 2025-03-02 is a Sunday; the tick at its 00:00 zeroes every
	// usage before it decays and charges, so only job 3 is left.
	uaW := charged(week, 300, 0.5, day(2).Add(6*time.Hour), 11, at)
	uaSum, ubSum := usageWith(week, 300, 8, 0.5)
	uaMax, ubMax := usageWith(week, 300, 6, 0.5)
	uaUF, ubUF := usageWith(week, 300, 4, 2)
	weights := "PartitionName=cpu TRESBillingWeights=CPU=1.0,GRES/gpu=4.0"

	moved, _, err := ingest.ParseAssoc("moved.psv", strings.NewReader("Cluster|Account|User|Partition|ParentName|Share\n"+
		"wi|root||||\nwi|la|||root|1\nwi|la|ua|||1\nwi|lb|||la|1\nwi|lb|ub|||1\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    pipeline.WhatIfChange
		w    want
	}{
		{"recorded", pipeline.WhatIfChange{}, want{ua7, ub7, 0.5, 0.5}},
		{"half-life 1 day", pipeline.WhatIfChange{Conf: []string{"PriorityDecayHalfLife=1-0"}}, want{ua1, ub1, 0.5, 0.5}},
		{"calc period 15 min", pipeline.WhatIfChange{Conf: []string{"PriorityCalcPeriod=15"}}, want{ua15, ub15, 0.5, 0.5}},
		{"weekly reset", pipeline.WhatIfChange{Conf: []string{"PriorityUsageResetPeriod=WEEKLY"}}, want{uaW, 0, 0.5, 0.5}},
		{"la 3 shares", pipeline.WhatIfChange{Shares: []pipeline.WhatIfShares{{Account: "la", Shares: 3}}}, want{ua7, ub7, 0.75, 0.25}},
		{"GPU weight", pipeline.WhatIfChange{Conf: []string{weights}}, want{uaSum, ubSum, 0.5, 0.5}},
		{"GPU weight, MAX_TRES", pipeline.WhatIfChange{Conf: []string{weights, "PriorityFlags=MAX_TRES"}}, want{uaMax, ubMax, 0.5, 0.5}},
		{"UsageFactor", pipeline.WhatIfChange{UsageFactors: []pipeline.WhatIfUsageFactor{{QOS: "half", Factor: 2}}}, want{uaUF, ubUF, 0.5, 0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.ConfName = "--set"
			snaps := whatIfCluster(t, hist, "wi", tc.c)
			if len(snaps) != 2 || !snaps[0].Time.Equal(day(2)) || !snaps[1].Time.Equal(at) {
				t.Fatalf("%d snapshots", len(snaps))
			}
			rows := snaps[1].Replayed
			w := tc.w
			ua, ub := rowOf(t, rows, "la", "ua"), rowOf(t, rows, "lb", "ub")
			la, lb := rowOf(t, rows, "la", ""), rowOf(t, rows, "lb", "")
			if !near(val(ua.RawUsage), w.ua) || !near(val(ub.RawUsage), w.ub) {
				t.Errorf("RawUsage ua %v ub %v, want %v %v", val(ua.RawUsage), val(ub.RawUsage), w.ua, w.ub)
			}
			normA := w.ua / (w.ua + w.ub)
			if !near(val(la.NormUsage), normA) || !near(val(lb.NormUsage), 1-normA) || !near(val(la.EffectvUsage), normA) {
				t.Errorf("NormUsage la %v lb %v EffectvUsage la %v, want %v %v", val(la.NormUsage), val(lb.NormUsage), val(la.EffectvUsage), normA, 1-normA)
			}
			if !near(val(la.NormShares), w.laShares) || !near(val(lb.NormShares), w.lbShares) {
				t.Errorf("NormShares la %v lb %v, want %v %v", val(la.NormShares), val(lb.NormShares), w.laShares, w.lbShares)
			}
			if !near(val(la.LevelFS), w.laShares/normA) {
				t.Errorf("LevelFS la %v, want %v", val(la.LevelFS), w.laShares/normA)
			}
			if tc.name == "recorded" {
				sameRows(t, "no change", rows, snaps[1].Recorded)
			}
		})
	}

	// The tree: lb moved under la. la is root's only child (NormShares 1)
	// and holds both users' usage; lb shares la's level with ua, 1 share
	// each (NormShares 0.5), and its EffectvUsage is its usage within la's:
	// ub/(ua+ub), its LevelFS 0.5 over that.
	snaps := whatIfCluster(t, hist, "wi", pipeline.WhatIfChange{Assoc: []ingest.DatedAssociations{{Assoc: moved}}})
	rows := snaps[1].Replayed
	la, lb := rowOf(t, rows, "la", ""), rowOf(t, rows, "lb", "")
	eff := ub7 / (ua7 + ub7)
	if lb.Parent != "la" || !near(val(la.NormShares), 1) || !near(val(lb.NormShares), 0.5) ||
		!near(val(la.RawUsage), ua7+ub7) || !near(val(lb.EffectvUsage), eff) || !near(val(lb.LevelFS), 0.5/eff) {
		t.Errorf("moved tree: lb parent %q, NormShares la %v lb %v, RawUsage la %v (want %v), EffectvUsage lb %v (want %v), LevelFS lb %v (want %v)",
			lb.Parent, val(la.NormShares), val(lb.NormShares), val(la.RawUsage), ua7+ub7, val(lb.EffectvUsage), eff, val(lb.LevelFS), 0.5/eff)
	}
}

// whatIfCluster is whatIf for any cluster, failing the test on an error.
func whatIfCluster(t *testing.T, hist, cluster string, c pipeline.WhatIfChange) []pipeline.WhatIfSnapshot {
	t.Helper()
	v := openView(t, hist)
	defer v.Close()
	var out []pipeline.WhatIfSnapshot
	if _, err := pipeline.WhatIf(v, pipeline.WhatIfOptions{Cluster: cluster, Change: c}, func(s *pipeline.WhatIfSnapshot) error {
		out = append(out, *s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWhatIfPriorityByHand: a Fair Tree site with job priority
// (PriorityWeightAge=1000 over PriorityMaxAge=2 days,
// PriorityWeightFairshare=1000), labs la and lb of one user each, ua's job
// 1 run on 03-01 00:00–01:00, and two jobs waiting at the 03-02 00:00
// snapshot in partition cpu: job 2 of ua, eligible since 03-01 00:00,
// and job 3 of ub, eligible since 03-01 12:00. At the snapshot
// (docs/slurm-semantics.md §13): age factors 1 day / 2 days = 0.5 and
// 12 h / 2 days = 0.25; Fair Tree FairShare of the two users, ub without
// usage first: ub 2/2 = 1, ua 1/2 = 0.5. Recorded: job 2 = 1000·0.5 +
// 1000·0.5 = 1000, job 3 = 1000·0.25 + 1000·1 = 1250: job 3 first, job 2
// second with one job ahead. With PriorityWeightAge=4000: job 2 = 2000 +
// 500 = 2500, job 3 = 1000 + 1000 = 2000: job 2 first, moved by age.
func TestWhatIfPriorityByHand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	head := "JobID|JobIDRaw|Partition|QOS|Account|User|Submit|Eligible|Start|End|Elapsed|State|AllocTRES|ReqCPUS|ReqNodes|ReqTRES|Timelimit|Priority|SubmitLine\n"
	job1 := "1|1|cpu|normal|la|ua|2025-03-01T00:00:00|2025-03-01T00:00:00|2025-03-01T00:00:00|2025-03-01T01:00:00|01:00:00|COMPLETED|billing=1,cpu=1,node=1|1|1|cpu=1|01:00:00|1000|sbatch --wrap x\n"
	files := map[string]string{
		"slurm.conf": "ClusterName=wi\nPriorityType=priority/multifactor\nPriorityCalcPeriod=5\nPriorityDecayHalfLife=7-0\n" +
			"PriorityWeightAge=1000\nPriorityMaxAge=2-0\nPriorityWeightFairshare=1000\n" +
			"AccountingStorageEnforce=associations\nPartitionName=cpu Nodes=n1 Default=YES\n",
		"assoc.psv": "Cluster|Account|User|Partition|ParentName|Share\n" +
			"wi|root||||\nwi|la|||root|1\nwi|la|ua|||1\nwi|lb|||root|1\nwi|lb|ub|||1\n",
		"night1.psv": head + job1 +
			"2|2|cpu|normal|la|ua|2025-03-01T00:00:00|2025-03-01T00:00:00|Unknown|Unknown|00:00:00|PENDING||1|1|cpu=1|01:00:00|1000|sbatch --wrap x\n" +
			"3|3|cpu|normal|lb|ub|2025-03-01T12:00:00|2025-03-01T12:00:00|Unknown|Unknown|00:00:00|PENDING||1|1|cpu=1|01:00:00|1250|sbatch --wrap x\n",
		"night2.psv": head +
			"2|2|cpu|normal|la|ua|2025-03-01T00:00:00|2025-03-01T00:00:00|2025-03-02T06:00:00|2025-03-02T07:00:00|01:00:00|COMPLETED|billing=1,cpu=1,node=1|1|1|cpu=1|01:00:00|1000|sbatch --wrap x\n" +
			"3|3|cpu|normal|lb|ub|2025-03-01T12:00:00|2025-03-01T12:00:00|2025-03-02T06:00:00|2025-03-02T07:00:00|01:00:00|COMPLETED|billing=1,cpu=1,node=1|1|1|cpu=1|01:00:00|1250|sbatch --wrap x\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hist := filepath.Join(dir, "history")
	for i, to := range []time.Time{day(2), day(3)} {
		o := runOpts(hist, to)
		o.Priority = true
		sum, err := pipeline.Run(context.Background(), siteInputs(t, dir, filepath.Join(dir, []string{"night1.psv", "night2.psv"}[i])), o)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Ingest.Rejected != 0 {
			t.Fatalf("night %d: %d rows rejected", i+1, sum.Ingest.Rejected)
		}
	}
	for _, tc := range []struct {
		name string
		conf []string
		prio map[int64]int64
	}{
		{"recorded", nil, map[int64]int64{2: 1000, 3: 1250}},
		{"age 4000", []string{"PriorityWeightAge=4000"}, map[int64]int64{2: 2500, 3: 2000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snaps := whatIfCluster(t, hist, "wi", pipeline.WhatIfChange{ConfName: "--set", Conf: tc.conf})
			if len(snaps) != 2 || !snaps[0].Time.Equal(day(2)) {
				t.Fatalf("%d snapshots", len(snaps))
			}
			q := snaps[0].ReplayedQueue
			got := map[int64]int64{}
			for _, r := range q {
				got[r.JobID] = r.Priority
			}
			if !maps.Equal(got, tc.prio) {
				t.Errorf("waiting jobs' priorities %v, want %v", got, tc.prio)
			}
			rec := map[int64]int64{}
			for _, r := range snaps[0].RecordedQueue {
				rec[r.JobID] = r.Priority
			}
			if !maps.Equal(rec, map[int64]int64{2: 1000, 3: 1250}) {
				t.Errorf("recorded priorities %v, want 2: 1000, 3: 1250", rec)
			}
		})
	}
}
