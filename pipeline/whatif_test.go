package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/pipeline"
)

// whatIf replays cluster synth of hist under c and returns the snapshots.
func whatIf(t *testing.T, hist string, c pipeline.WhatIfChange) ([]pipeline.WhatIfSnapshot, *pipeline.WhatIfSummary, error) {
	t.Helper()
	v := openView(t, hist)
	defer v.Close()
	var out []pipeline.WhatIfSnapshot
	sum, err := pipeline.WhatIf(v, pipeline.WhatIfOptions{Cluster: "synth", Change: c}, func(s *pipeline.WhatIfSnapshot) error {
		out = append(out, *s)
		return nil
	})
	return out, sum, err
}

// sameRows fails unless got and want hold the same rows, bit for bit.
func sameRows(t *testing.T, what string, got, want []record.FairshareRow) {
	t.Helper()
	g, w := rowsByKey(got), rowsByKey(want)
	if len(g) != len(w) || len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d", what, len(got), len(want))
	}
	bad := 0
	for k, wl := range w {
		if g[k] != wl && bad < 3 {
			bad++
			t.Errorf("%s: %s:\n got %s\nwant %s", what, k, g[k], wl)
		}
	}
}

// TestWhatIfNoChangeEqualsHistory: a replay that changes nothing gives
// every stored snapshot bit for bit, of a history written by one run and
// of one written night by night (21 runs, each resuming the last, across
// a month boundary; limits enforced, so RawUsage's end charges and
// TRESRunMins count).
func TestWhatIfNoChangeEqualsHistory(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 400)
	single := filepath.Join(t.TempDir(), "single")
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, filepath.Join(dir, "sacct.psv")), runOpts(single, end)); err != nil {
		t.Fatal(err)
	}
	nightly := filepath.Join(t.TempDir(), "nightly")
	nights(t, dir, nightly, from, end)
	for _, hist := range []string{single, nightly} {
		snaps, sum, err := whatIf(t, hist, pipeline.WhatIfChange{})
		if err != nil {
			t.Fatal(err)
		}
		// Daily snapshots from 2025-01-21 to 2025-02-10.
		if len(snaps) != 21 || sum.Snapshots != 21 || !snaps[0].Time.Equal(from.AddDate(0, 0, 1)) || !snaps[20].Time.Equal(end) {
			t.Fatalf("%s: %d snapshots (%d), %v … %v", filepath.Base(hist), len(snaps), sum.Snapshots, snaps[0].Time, snaps[len(snaps)-1].Time)
		}
		for _, s := range snaps {
			sameRows(t, filepath.Base(hist)+" "+s.Time.Format(time.DateOnly), s.Replayed, s.Recorded)
		}
		if sum.Regular || len(sum.Folded) != 0 || sum.StartUsage {
			t.Errorf("%s: summary %+v", filepath.Base(hist), sum)
		}
	}
}

// withConfLines writes a copy of the generated cluster dir whose
// slurm.conf has lines appended (the last value of a key wins) and whose
// files are edited by edits (by file name).
func withConfLines(t *testing.T, dir string, lines []string, edits map[string]func(string) string) string {
	t.Helper()
	out := t.TempDir()
	for _, f := range []string{"slurm.conf", "assoc.psv", "qos.psv", "sacct.psv"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if e := edits[f]; e != nil {
			b = []byte(e(string(b)))
		}
		if f == "slurm.conf" {
			b = append(b, []byte(strings.Join(lines, "\n")+"\n")...)
		}
		if err := os.WriteFile(filepath.Join(out, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// replaceOnce returns an edit that replaces old by new in a file, failing
// the test when the file lacks old.
func replaceOnce(t *testing.T, old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("no %q to replace", old)
		}
		return strings.Replace(s, old, new, 1)
	}
}

// TestWhatIfEqualsRunWithChange: a replay of the nightly history under a
// changed setting gives, snapshot for snapshot, what one run of the same
// sacct file with the changed slurm.conf or tree stores: the half-life,
// the calc period (the replay then ticks on the new period from the
// history's start, as the run does), the reset period, the algorithm, the
// dampening, the shares and the tree.
func TestWhatIfEqualsRunWithChange(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 400)
	nightly := filepath.Join(t.TempDir(), "nightly")
	nights(t, dir, nightly, from, end)
	gpuWeights := `TRESBillingWeights="CPU=1.0,Mem=0.25G,GRES/gpu:a100=20.0,GRES/gpu:v100=10.0"`
	heavyGPU := `TRESBillingWeights="CPU=1.0,Mem=0.25G,GRES/gpu:a100=200.0,GRES/gpu:v100=100.0"`
	for _, tc := range []struct {
		name   string
		conf   []string
		shares []pipeline.WhatIfShares
		uf     []pipeline.WhatIfUsageFactor
		edits  func(t *testing.T) map[string]func(string) string
	}{
		{name: "half-life", conf: []string{"PriorityDecayHalfLife=1-12"}},
		{name: "no decay", conf: []string{"PriorityDecayHalfLife=0", "PriorityUsageResetPeriod=WEEKLY"}},
		{name: "calc period", conf: []string{"PriorityCalcPeriod=17"}},
		{name: "classic", conf: []string{"PriorityFlags=NO_FAIR_TREE", "FairShareDampeningFactor=3"}},
		{name: "shares", shares: []pipeline.WhatIfShares{{Account: "petrov_lab", Shares: 5000}},
			edits: func(t *testing.T) map[string]func(string) string {
				return map[string]func(string) string{"assoc.psv": replaceOnce(t, "synth|petrov_lab|||root|785|", "synth|petrov_lab|||root|5000|")}
			}},
		{name: "gpu weights", conf: []string{"PartitionName=gpu " + heavyGPU},
			edits: func(t *testing.T) map[string]func(string) string {
				return map[string]func(string) string{"slurm.conf": replaceOnce(t, "PartitionName=gpu Nodes=gpa[001-016],gpv[001-008] "+gpuWeights,
					"PartitionName=gpu Nodes=gpa[001-016],gpv[001-008] "+heavyGPU)}
			}},
		{name: "max tres", conf: []string{"PriorityFlags=MAX_TRES"}},
		{name: "usage factor", uf: []pipeline.WhatIfUsageFactor{{QOS: "lowprio", Factor: 2}, {QOS: "FREE", Factor: 1}},
			edits: func(t *testing.T) map[string]func(string) string {
				return map[string]func(string) string{"qos.psv": func(s string) string {
					return replaceOnce(t, "free|0.000000|", "free|1|")(replaceOnce(t, "lowprio|0.500000|", "lowprio|2|")(s))
				}}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snaps, sum, err := whatIf(t, nightly, pipeline.WhatIfChange{Conf: tc.conf, ConfName: "--set", Shares: tc.shares, UsageFactors: tc.uf})
			if err != nil {
				t.Fatal(err)
			}
			var edits map[string]func(string) string
			if tc.edits != nil {
				edits = tc.edits(t)
			}
			// A PartitionName line is the edit of the partition's own line
			// (slurm.conf takes no second line of a partition).
			top := slices.DeleteFunc(slices.Clone(tc.conf), func(l string) bool { return strings.HasPrefix(l, "PartitionName=") })
			alt := withConfLines(t, dir, top, edits)
			want := filepath.Join(t.TempDir(), "want")
			if _, err := pipeline.Run(context.Background(), siteInputs(t, alt, filepath.Join(alt, "sacct.psv")), runOpts(want, end)); err != nil {
				t.Fatal(err)
			}
			if len(snaps) != 21 {
				t.Fatalf("%d snapshots", len(snaps))
			}
			differ := 0
			for _, s := range snaps {
				w := snapshotAt(t, want, "synth", s.Time)
				sameRows(t, s.Time.Format(time.DateOnly), s.Replayed, w)
				if !slices.Equal(slices.Sorted(maps.Values(rowsByKey(s.Replayed))), slices.Sorted(maps.Values(rowsByKey(s.Recorded)))) {
					differ++
				}
			}
			if differ == 0 {
				t.Errorf("the change changed no snapshot")
			}
			rebilled := tc.name == "gpu weights" || tc.name == "max tres" || tc.name == "usage factor"
			if sum.Regular != (tc.name == "calc period") || sum.Rebilled != rebilled || sum.Unbilled != 0 || sum.Ambiguous != 0 {
				t.Errorf("summary %+v", sum)
			}
		})
	}
}

// TestWhatIfRefuses: changes a replay cannot make are refused with what
// to do instead.
func TestWhatIfRefuses(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 100)
	hist := filepath.Join(t.TempDir(), "h")
	nights(t, dir, hist, from, from.AddDate(0, 0, 2))
	for _, tc := range []struct {
		c    pipeline.WhatIfChange
		want string
	}{
		{pipeline.WhatIfChange{ConfName: "--set", Conf: []string{"PriorityWeightFairshare=1"}}, "computed without job priority (run --priority)"},
		{pipeline.WhatIfChange{ConfName: "--set", Conf: []string{"SchedulerType=sched/builtin"}}, "it does not change fair share"},
		{pipeline.WhatIfChange{ConfName: "--set", Conf: []string{"TRESBillingWeights=CPU=1"}}, "TRESBillingWeights is a partition's"},
		{pipeline.WhatIfChange{ConfName: "--set", Conf: []string{"PartitionName=nopart TRESBillingWeights=CPU=1"}}, "no such partition"},
		{pipeline.WhatIfChange{UsageFactors: []pipeline.WhatIfUsageFactor{{QOS: "noqos", Factor: 2}}}, "has no QOS noqos"},
		{pipeline.WhatIfChange{ConfName: "--set", Conf: []string{"AccountingStorageEnforce=associations"}}, "limits decide"},
		{pipeline.WhatIfChange{ConfName: "--set", Conf: []string{"PriorityCalcPeriod=0"}}, "at least 1 minute"},
		{pipeline.WhatIfChange{Shares: []pipeline.WhatIfShares{{Account: "nolab", Shares: 3}}}, "no association of the history's trees is account nolab"},
	} {
		_, _, err := whatIf(t, hist, tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.c, err, tc.want)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	v := openView(t, hist)
	defer v.Close()
	if _, err := pipeline.WhatIf(v, pipeline.WhatIfOptions{Cluster: "other"}, func(*pipeline.WhatIfSnapshot) error { return nil }); !errors.Is(err, pipeline.ErrNoMoment) {
		t.Errorf("another cluster: %v", err)
	}
}

// TestWhatIfPriority: on a history written night by night with job
// priority, a replay that changes nothing gives every snapshot's waiting
// jobs as recorded, and one that doubles PriorityWeightFairshare gives
// each waiting job twice its recorded fair-share term, every other term
// as recorded, and the priority docs/slurm-semantics.md §13.1 sums from
// them: age + assoc + 2·fairshare + jobsize + partition + qos + Σ tres +
// site − nice, truncated, at least 1. (Fair share itself does not change
// with a priority weight, so the recorded terms are the hand's inputs.)
func TestWhatIfPriority(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 1500)
	full := filepath.Join(dir, "sacct.psv")
	withRequest(t, full)
	hist := filepath.Join(t.TempDir(), "h")
	for n := from.AddDate(0, 0, 1); !n.After(from.AddDate(0, 0, 5)); n = n.AddDate(0, 0, 1) {
		f := nightFile(dir, n)
		sacctAsOfAll(t, full, f, n.AddDate(0, 0, -1), n)
		o := runOpts(hist, n)
		o.Priority = true
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, f), o); err != nil {
			t.Fatalf("night %s: %v", n.Format(time.DateOnly), err)
		}
	}
	same, _, err := whatIf(t, hist, pipeline.WhatIfChange{})
	if err != nil {
		t.Fatal(err)
	}
	waiting := 0
	for _, s := range same {
		g, w := priorityKeys(s.ReplayedQueue), priorityKeys(s.RecordedQueue)
		if !slices.Equal(g, w) {
			t.Errorf("%s: replayed queue\n%s\nrecorded\n%s", s.Time, strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
		waiting += len(w)
	}
	if waiting == 0 {
		t.Fatal("no job waited at any snapshot: the test proves nothing")
	}
	t.Logf("%d waiting jobs at %d snapshots", waiting, len(same))
	doubled, _, err := whatIf(t, hist, pipeline.WhatIfChange{ConfName: "--set", Conf: []string{"PriorityWeightFairshare=40000000"}})
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range doubled {
		rec := map[string]record.PriorityRow{}
		for _, r := range same[k].RecordedQueue {
			rec[fmt.Sprint(r.JobID, r.Partition)] = r
		}
		if len(s.ReplayedQueue) != len(rec) {
			t.Fatalf("%s: %d waiting jobs, recorded %d", s.Time, len(s.ReplayedQueue), len(rec))
		}
		for _, r := range s.ReplayedQueue {
			w := rec[fmt.Sprint(r.JobID, r.Partition)]
			tres := 0.0
			for _, v := range w.TRESW {
				tres += v
			}
			sum := w.AgeW + w.AssocW + 2*w.FairShareW + w.JobSizeW + w.PartitionW + w.QOSW + tres + float64(w.Site) - float64(w.Nice)
			want := max(int64(1), int64(sum))
			if r.FairShareW != 2*w.FairShareW || r.AgeW != w.AgeW || r.JobSizeW != w.JobSizeW || r.QOSW != w.QOSW || r.Priority != want {
				t.Errorf("%s job %d: replayed%s, want fairshare %v and priority %d from recorded%s", s.Time, r.JobID, fieldsLine(r), 2*w.FairShareW, want, fieldsLine(w))
			}
		}
	}
}
