package pipeline_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/pipeline"
)

// liveSite writes a Fair Tree site with PriorityCalcPeriod=1 (ticks every
// minute on the epoch's grid), the given half-life and enforcement, one
// account holding users ua and ub, and these jobs (2025-01-01, UTC):
//
//	job 1 ua billing 4, 00:00:10 → 00:01:40 (ends 40 s after the tick at 00:01)
//	job 2 ub billing 1, 00:00:00 → running
//	job 3 ub billing 2, 00:00:30 → 00:01:00 (ends on the tick: in its usage)
//	job 4 ub billing 3, 00:01:20 → 00:01:30 (starts and ends after the tick)
func liveSite(t *testing.T, halfLife, enforce string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"slurm.conf": "ClusterName=live\nPriorityType=priority/multifactor\nPriorityCalcPeriod=1\n" +
			"PriorityDecayHalfLife=" + halfLife + "\nPriorityUsageResetPeriod=YEARLY\n" +
			"AccountingStorageEnforce=" + enforce + "\nPartitionName=cpu Nodes=n1 Default=YES\n",
		"assoc.psv": "Cluster|Account|User|Partition|ParentName|Share\n" +
			"live|root||||\nlive|acct|||root|1\nlive|acct|ua|||1\nlive|acct|ub|||1\n",
		"sacct.psv": "JobID|JobIDRaw|Partition|QOS|Account|User|Start|End|Elapsed|State|AllocTRES\n" +
			"1|1|cpu|normal|acct|ua|2025-01-01T00:00:10|2025-01-01T00:01:40|00:01:30|COMPLETED|billing=4,cpu=4,node=1\n" +
			"2|2|cpu|normal|acct|ub|2025-01-01T00:00:00|Unknown|00:01:50|RUNNING|billing=1,cpu=1,node=1\n" +
			"3|3|cpu|normal|acct|ub|2025-01-01T00:00:30|2025-01-01T00:01:00|00:00:30|COMPLETED|billing=2,cpu=2,node=1\n" +
			"4|4|cpu|normal|acct|ub|2025-01-01T00:01:20|2025-01-01T00:01:30|00:00:10|COMPLETED|billing=3,cpu=3,node=1\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(dir, "sacct.psv")
}

// TestLiveRawUsage: a snapshot between two ticks prints RawUsage as
// slurmctld's usage_raw is at that second: with limits, every job that
// ended after the tick has been charged at its end (priority_p_job_end),
// rate·δ·d^δ with δ = end − max(tick, start); NormUsage and EffectvUsage
// stay those of the tick. The snapshot is at 00:01:50, its tick 00:01:00.
//
// No decay, by hand. At the tick: ua = 4·(60−10) = 200; ub = 1·60 (job 2)
// + 2·30 (job 3, charged at its end on the tick) = 120; root 320;
// NormUsage ua 200/320 = 0.625, ub 120/320 = 0.375 (the fair tree's
// EffectvUsage is the same: the account holds all the usage). After the
// tick: job 1 ends, 4·(100−60) = 160; job 4 ends, 3·(90−80) = 30; job 2
// still runs: nothing. RawUsage ua 200 + 160 = 360, ub 120 + 30 = 150,
// root 320 + 190 = 510.
//
// H = 3600 s: d = 1 − 0.693/3600 = 0.9998075, d^10 = 0.998076667,
// d^40 = 0.992328834, d^50 = 0.990420254, d^60 = 0.988515346, d^90 =
// 0.982822576. At the tick: ua = 4·50·d^50 = 198.084051; ub = 1·60·d^60
// (job 2's chunk) + 2·30·d^30·d^60 (job 3's end charge, decayed by the
// tick over 60 s) = 59.310921 + 58.969355 = 118.280275; root 316.364326;
// NormUsage ua 198.084051/316.364326 = 0.626126, ub 0.373874. After the
// tick: job 1 adds 4·40·d^40 = 158.772613, job 4 3·10·d^10 = 29.942300:
// RawUsage ua 356.856664 (sshare prints 356), ub 148.222575, root
// 505.079240.
//
// Without limits nothing is charged at a job's end: RawUsage is the
// tick's, and job 3, which ended on the tick before it, is never charged
// (slurmctld's tick skips finished jobs): ua 200, ub 60, root 260, NormUsage
// ua 200/260, ub 60/260.
func TestLiveRawUsage(t *testing.T) {
	t.Parallel()
	to := time.Date(2025, 1, 1, 0, 1, 50, 0, time.UTC)
	for _, tc := range []struct {
		name, halfLife, enforce string
		raw, norm, eff          map[string]float64
	}{
		{"no decay", "0", "associations,limits",
			map[string]float64{"": 510, "ua": 360, "ub": 150},
			map[string]float64{"ua": 0.625, "ub": 0.375},
			map[string]float64{"ua": 0.625, "ub": 0.375}},
		{"H 3600 s", "60", "associations,limits",
			map[string]float64{"": 505.079240, "ua": 356.856664, "ub": 148.222575},
			map[string]float64{"ua": 0.626126, "ub": 0.373874},
			map[string]float64{"ua": 0.626126, "ub": 0.373874}},
		{"no limits", "0", "associations",
			map[string]float64{"": 260, "ua": 200, "ub": 60},
			map[string]float64{"ua": 200.0 / 260, "ub": 60.0 / 260},
			map[string]float64{"ua": 200.0 / 260, "ub": 60.0 / 260}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, sacct := liveSite(t, tc.halfLife, tc.enforce)
			hist := t.TempDir()
			opt := runOpts(hist, to)
			opt.SnapshotEvery = 0
			if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, sacct), opt); err != nil {
				t.Fatal(err)
			}
			for _, r := range snapshotAt(t, hist, "live", to) {
				key := r.User
				if !r.IsUser && r.Account != "root" {
					continue // acct holds root's usage; checked through root
				}
				check := func(col string, got *float64, want map[string]float64) {
					w, ok := want[key]
					if !ok {
						return
					}
					if got == nil || math.Abs(*got-w) > 5e-7 {
						t.Errorf("%s %s: %s = %v, want %.6f", r.Account, r.User, col, deref(got), w)
					}
				}
				check("RawUsage", r.RawUsage, tc.raw)
				check("NormUsage", r.NormUsage, tc.norm)
				check("EffectvUsage", r.EffectvUsage, tc.eff)
			}
		})
	}
}

func deref(p *float64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

// TestEndInTheSecondAsked: a snapshot or moment at T is the instant T.000,
// so a job whose End is T still runs at it (docs/slurm-semantics.md §2.9).
// The site of TestLiveRawUsage without decay, limits enforced, every job
// with a 10-minute limit, ticks every minute: job 1 of ua (billing 4,
// cpu 4, node 1, 00:00:10 → 00:01:40) ends at 00:01:40. By hand:
//
//	at 00:01:40.000 job 1 still runs: its end charge 4·(100 − 60) = 160
//	is not in RawUsage yet: ua 200 (the tick's), ub 120 + 30 (job 4,
//	ended at 00:01:30) = 150, root 350. TRESRunMins: job 1 holds 600 − 50
//	(the tick at 00:01:00) = 550 s of cpu 4, node 1, billing 4; job 2
//	(ub, running since 00:00:00) 600 − 60 = 540 s of cpu 1, node 1,
//	billing 1: root cpu 2740 s = 45 min, node 1090 s = 18, billing 45.
//	at 00:01:41 job 1 has ended: ua 360, root 510; root cpu 540 s = 9,
//	node 9, billing 9.
//
// The run ending at that second and the moment replayed from a longer
// history both show it.
func TestEndInTheSecondAsked(t *testing.T) {
	t.Parallel()
	dir, sacct := liveSite(t, "0", "associations,limits")
	jobs := "JobID|JobIDRaw|Partition|QOS|Account|User|Start|End|Elapsed|State|AllocTRES|Timelimit\n" +
		"1|1|cpu|normal|acct|ua|2025-01-01T00:00:10|2025-01-01T00:01:40|00:01:30|COMPLETED|billing=4,cpu=4,node=1|00:10:00\n" +
		"2|2|cpu|normal|acct|ub|2025-01-01T00:00:00|Unknown|00:01:50|RUNNING|billing=1,cpu=1,node=1|00:10:00\n" +
		"3|3|cpu|normal|acct|ub|2025-01-01T00:00:30|2025-01-01T00:01:00|00:00:30|COMPLETED|billing=2,cpu=2,node=1|00:10:00\n" +
		"4|4|cpu|normal|acct|ub|2025-01-01T00:01:20|2025-01-01T00:01:30|00:00:10|COMPLETED|billing=3,cpu=3,node=1|00:10:00\n"
	if err := os.WriteFile(sacct, []byte(jobs), 0o644); err != nil {
		t.Fatal(err)
	}
	long := t.TempDir()
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, sacct), runOpts(long, time.Date(2025, 1, 1, 0, 5, 0, 0, time.UTC))); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sec      int
		ua, root float64
		run      string
	}{{40, 200, 350, "cpu=45,mem=0,energy=0,node=18,billing=45,"}, {41, 360, 510, "cpu=9,mem=0,energy=0,node=9,billing=9,"}} {
		at := time.Date(2025, 1, 1, 0, 1, c.sec, 0, time.UTC)
		one := t.TempDir()
		opt := runOpts(one, at)
		opt.SnapshotEvery = 0
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, sacct), opt); err != nil {
			t.Fatal(err)
		}
		m, err := momentAt(t, long, "live", at)
		if err != nil {
			t.Fatal(err)
		}
		for name, rows := range map[string][]record.FairshareRow{"run --to": snapshotAt(t, one, "live", at), "moment": m.Rows} {
			seen := 0
			for _, r := range rows {
				switch {
				case r.User == "ua":
					seen++
					if r.RawUsage == nil || *r.RawUsage != c.ua {
						t.Errorf("%s %s: ua RawUsage %s, want %v", name, at.Format(time.TimeOnly), deref(r.RawUsage), c.ua)
					}
				case r.Account == "root" && r.User == "":
					seen++
					if r.RawUsage == nil || *r.RawUsage != c.root {
						t.Errorf("%s %s: root RawUsage %s, want %v", name, at.Format(time.TimeOnly), deref(r.RawUsage), c.root)
					}
					if r.TRESRunMins == nil || !strings.HasPrefix(*r.TRESRunMins, c.run) {
						t.Errorf("%s %s: root TRESRunMins %v, want %s…", name, at.Format(time.TimeOnly), r.TRESRunMins, c.run)
					}
				}
			}
			if seen != 2 {
				t.Errorf("%s %s: %d of the rows checked", name, at.Format(time.TimeOnly), seen)
			}
		}
	}
}
