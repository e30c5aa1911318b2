package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fairledger/fairledger/internal/slurmtime"
)

// The plain-language parts of a report, as plain text paragraphs that the
// HTML and Markdown writers both print.

// parentName is how the text names the lab's parent account.
func (r *Report) parentName() string {
	if r.Parent == "" {
		return "root"
	}
	return r.Parent
}

// limitedAbove reports whether, under Fair Tree, an account above the lab
// has a lower LevelFS than the lab and is below its share: then that
// account, not the lab, is what holds the lab's users down.
func (r *Report) limitedAbove() bool {
	rec := r.Recovery
	return r.fairTree() && rec.Limit != "" && rec.Limit != r.Account && rec.LimitLevelFS < 1
}

// limitParent names the parent of the limiting account (the last
// snapshot's tree).
func (r *Report) limitParent() string {
	if r.LimitParent == "" {
		return "root"
	}
	return r.LimitParent
}

// targetName is the factor value that means "exactly at its share".
func (r *Report) targetName() string {
	if r.fairTree() {
		return "LevelFS 1.0"
	}
	damp := r.Settings.Damp
	if damp < 1 {
		damp = 1
	}
	return "FairShare " + fmtFactor(math.Exp2(-1/float64(damp)))
}

// explanation returns the paragraphs under "Why is the factor what it is".
func (r *Report) explanation() []string {
	us, ns := last(r.Lab.EffectvUsage), last(r.Lab.NormShares)
	var out []string
	if r.fairTree() {
		out = append(out, fmt.Sprintf("On %s, %s has LevelFS %s: its fraction of the shares under %s (NormShares %s) "+
			"divided by its fraction of the decayed usage under %s (EffectvUsage %s).",
			fmtTime(r.Last), r.Account, fmtFactor(last(r.Lab.LevelFS)), r.parentName(), fmtFactor(ns), r.parentName(), fmtFactor(us)))
	} else {
		damp := ""
		if r.Settings.Damp > 1 {
			damp = fmt.Sprintf(" / %d", r.Settings.Damp)
		}
		out = append(out, fmt.Sprintf("On %s, %s has the FairShare factor %s = 2^(−EffectvUsage/NormShares%s), "+
			"with EffectvUsage %s and NormShares %s.",
			fmtTime(r.Last), r.Account, fmtFactor(last(r.Lab.FairShare)), damp, fmtFactor(us), fmtFactor(ns)))
	}
	rec := r.Recovery
	weight := "Counting recent use fully and older use less"
	if r.Settings.Known && r.Settings.HalfLifeSec > 0 {
		weight = fmt.Sprintf("Counting recent use fully and older use less (use from one half-life ago, %s days, counts half)",
			fmtDays(float64(r.Settings.HalfLifeSec)))
	}
	switch {
	case math.IsNaN(rec.Ratio):
	case rec.Ratio > 1:
		out = append(out, fmt.Sprintf("%s, the lab used %s× its share.", weight, fmtRatio(rec.Ratio)))
	default:
		out = append(out, fmt.Sprintf("%s, the lab used %s× its share, i.e. no more than its share.", weight, fmtRatio(rec.Ratio)))
	}
	above := r.limitedAbove()
	if above {
		out = append(out, fmt.Sprintf("But Fair Tree ranks whole subtrees level by level, and %s, above the lab, has "+
			"LevelFS %s (%s× its share among the accounts under %s), the lowest on the lab's path to the top of the tree. "+
			"Every user of %s therefore ranks behind the users of every account beside %s with a higher LevelFS, "+
			"whatever the lab's own LevelFS.",
			rec.Limit, fmtFactor(rec.LimitLevelFS), fmtRatio(1/rec.LimitLevelFS), r.limitParent(), r.Account, rec.Limit))
	}
	switch rec.State {
	case RecoveryWithin:
		if r.fairTree() && r.Parent != "" && r.Parent != "root" {
			out = append(out, "There is nothing to recover: the lab and every account above it are within their share, "+
				"so the lab's priority is as good as its share allows.")
		} else {
			out = append(out, "There is nothing to recover: the lab's priority is as good as its share allows.")
		}
	case RecoveryAfter:
		at := r.Last.Add(time.Duration(rec.Seconds) * time.Second)
		what := "it would be back at its share (" + r.targetName() + ")"
		if len(rec.Above) > 0 {
			what = "the lab and every account above it would be back at their share (LevelFS 1.0 or more at every level)"
		}
		out = append(out, fmt.Sprintf("At zero use %s in about %s days, around %s. "+
			"This assumes the lab runs nothing from %s on, so its usage halves every %s days, while the decayed usage "+
			"of everybody else stays where it is (the rest of the cluster keeps running as it does).",
			what, fmtDays(float64(rec.Seconds)), fmtDate(at), fmtDate(r.Last), fmtDays(r.effectiveHalfLifeDays()*86400)))
	case RecoveryNever:
		if len(rec.Above) > 0 {
			out = append(out, fmt.Sprintf("Decay of the lab's usage alone would not bring every level back to its share: "+
				"with everybody else's decayed usage held where it is, the usage/share ratio of the levels above their share "+
				"only falls to %s (the other accounts under %s use too much on their own).", fmtRatio(rec.Floor),
				strings.Join(rec.Above, ", ")))
			break
		}
		out = append(out, fmt.Sprintf("Decay alone would not bring it back to its share: with everybody else's decayed usage "+
			"held where it is, its usage/share ratio only falls to %s (the lab has no sibling with usage to compare with, "+
			"or its share is too small).", fmtRatio(rec.Floor)))
	case RecoveryNoDecay:
		reset := r.Settings.ResetPeriod
		if reset == "" {
			reset = "NONE"
		}
		out = append(out, fmt.Sprintf("Usage does not decay on this cluster (PriorityDecayHalfLife=0): it only falls at the "+
			"next usage reset (PriorityUsageResetPeriod=%s).", reset))
	case RecoveryNoShares:
		out = append(out, "The lab has no shares (NormShares 0): its factor stays at the bottom whatever it uses.")
	case RecoveryUnknown:
		out = append(out, "The history has no run record with the site's half-life, so no recovery time can be given.")
	}
	return out
}

// levelFSText returns the paragraphs under "What LevelFS means" (Fair Tree)
// or "What the factor means" (classic algorithms).
func (r *Report) levelFSText() []string {
	if r.fairTree() {
		return []string{
			fmt.Sprintf("LevelFS compares %s only with its sibling accounts under %s: it is the lab's fraction of the "+
				"shares at that level divided by its fraction of the decayed usage at that level. 1.0 means the lab used "+
				"exactly its share, 2.0 half its share, 0.5 twice its share, and inf no usage at all.", r.Account, r.parentName()),
			fmt.Sprintf("LevelFS is neither a priority nor a percentage: a LevelFS of 0.9 does not mean 90%% of anything. "+
				"Slurm sorts the accounts of each level by LevelFS, highest first, then the users inside each account by "+
				"their own LevelFS, and walks the tree depth first. A user's FairShare factor is their place in that walk: "+
				"1.0 for the first of the cluster's %d users, down to 1/%d for the last.", r.ClusterUsers, r.ClusterUsers),
			"So a user's factor depends on every account above them: it can fall when another lab uses less, without " +
				"the user running anything, and a small change of the lab's LevelFS can move all its users many places.",
		}
	}
	return []string{
		"The factor is 2^(−EffectvUsage/NormShares), divided in the exponent by FairShareDampeningFactor when it is set: " +
			"1.0 with no usage, 0.5 at exactly the share, 0.25 at twice the share, 0.125 at three times.",
		"NormShares is the lab's fraction of the whole cluster's shares (the product of the fractions down the tree). " +
			"EffectvUsage starts from its fraction of the cluster's decayed usage (NormUsage) and, below the top level, " +
			"is pulled towards the parent account's effective usage, so a lab inside a busy department is charged part of " +
			"the department's usage too.",
	}
}

// settingsRows returns the site settings as (name, value) pairs.
func (r *Report) settingsRows() [][2]string {
	s := r.Settings
	rows := [][2]string{{"Algorithm", algorithmName(r.Algorithm)}}
	if !s.Known {
		return append(rows, [2]string{"Run", "no run record in the history"})
	}
	half := "0 (no decay)"
	if s.HalfLifeSec > 0 {
		half = fmt.Sprintf("%s (%s; usage really halves every %s days)", slurmtime.Format(s.HalfLifeSec),
			fmtSpan(s.HalfLifeSec), fmtDays(r.effectiveHalfLifeDays()*86400))
	}
	reset := s.ResetPeriod
	if reset == "" {
		reset = "NONE"
	}
	flags := strings.Join(s.Flags, ",")
	if flags == "" {
		flags = "(none)"
	}
	rows = append(rows,
		[2]string{"PriorityDecayHalfLife", half},
		[2]string{"PriorityCalcPeriod", fmt.Sprintf("%s (%s)", slurmtime.Format(s.CalcPeriodSec), fmtSpan(s.CalcPeriodSec))},
		[2]string{"PriorityUsageResetPeriod", reset},
		[2]string{"PriorityFlags", flags},
	)
	if !r.fairTree() {
		rows = append(rows, [2]string{"FairShareDampeningFactor", fmt.Sprint(max(s.Damp, 1))})
	}
	limits := "no (the last partial calc period of each job is not charged)"
	if s.LimitsEnforced {
		limits = "yes (job-end tails charged)"
	}
	tz := s.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	rows = append(rows,
		[2]string{"AccountingStorageEnforce limits", limits},
		[2]string{"Time zone", tz},
		[2]string{"Run", fmt.Sprintf("%s, started %s", s.Run, fmtTime(s.RunStarted))},
	)
	return rows
}

// weightsText is a partition's TRESBillingWeights as shown.
func weightsText(w string) string {
	if w == "" {
		return "(none: billed by CPU count)"
	}
	return w
}
