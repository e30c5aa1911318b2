package history

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A damaged manifest (a *ManifestError: missing, not a manifest, or not
// matching its checksum) makes its whole generation untrustworthy: the
// manifest is what says which files are the generation's and what their
// rows are. Verify reports it as one Problem; Repair does not rebuild it
// from the files (a file removed from the generation, or one dropped into
// it, would go unnoticed) but goes back to the newest older generation
// whose manifest and every listed file verify, committing a copy of it as
// the next generation. The nights the damaged generation held beyond it
// are left to the next run, which resumes from that generation's newest
// checkpoint of each cluster; the report says which (VerifyReport.Reruns).

// fallback is the older generation Repair goes back to.
type fallback struct {
	manifest Manifest
	// reruns are the runs that recompute what the damaged generation held
	// beyond it, one per cluster.
	reruns []Rerun
}

// damagedManifest is the report's damaged-manifest Problem, or nil.
func (rep *VerifyReport) damagedManifest() *Problem {
	for i := range rep.Problems {
		if rep.Problems[i].kind == badManifest {
			return &rep.Problems[i]
		}
	}
	return nil
}

// manifestReport is Verify's report on a generation whose manifest is
// damaged: that one Problem (its files cannot be checked against it),
// files of the old layout, and the generation Repair would go back to.
func (h *Store) manifestReport(me *ManifestError) VerifyReport {
	rep := VerifyReport{Generation: me.Generation}
	rep.Problems = append(rep.Problems, Problem{Path: me.Path, What: "the generation's manifest is damaged: " + me.Problem, kind: badManifest})
	rep.Problems = append(rep.Problems, h.oldLeftovers()...)
	slices.SortStableFunc(rep.Problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	if fb := h.findFallback(me.Generation); fb != nil {
		rep.fallback = fb
		rep.Fallback = fb.manifest.Generation
	}
	return rep
}

// findFallback returns the newest generation before n whose manifest is
// sound and whose listed files all verify (and no checkpoint of which is
// in the future), or nil.
func (h *Store) findFallback(n int64) *fallback {
	entries, err := os.ReadDir(filepath.Join(h.Dir, genDir))
	if err != nil {
		return nil
	}
	for _, e := range slices.Backward(entries) { // the newest first
		k, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil || k <= 0 || k >= n {
			continue
		}
		v, err := h.pinGeneration(k)
		if err != nil {
			continue
		}
		problems, _ := h.checkFiles(v, v.Manifest.Partitions, false)
		ok := !slices.ContainsFunc(problems, func(p *Problem) bool { return p != nil }) &&
			len(futureCheckpoints(&v.Manifest, "", h.now().Unix())) == 0
		if ok {
			fb := &fallback{manifest: v.Manifest, reruns: h.lostNights(v, n)}
			v.Close()
			return fb
		}
		v.Close()
	}
	return nil
}

// pinGeneration pins generation k for reading, as View pins the committed
// one.
func (h *Store) pinGeneration(k int64) (*View, error) {
	f, b, err := h.pinManifest(k)
	if err != nil {
		return nil, err
	}
	m, err := h.decodeManifest(b, k)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &View{Dir: h.genPath(k), Manifest: m, lock: f}, nil
}

// lostNights are the runs that recompute what damaged generation n held
// beyond fallback v: for each cluster whose newest checkpoint in n's
// directory (its manifest cannot be trusted, so its state/ directory is
// listed) is after v's newest, the run from v's newest checkpoint (afresh
// when v has none) to n's newest.
func (h *Store) lostNights(v *View, n int64) []Rerun {
	newestN := map[string]int64{}
	stateRoot := filepath.Join(h.genPath(n), stateDir)
	dirs, _ := os.ReadDir(stateRoot)
	for _, d := range dirs {
		c, ok := strings.CutPrefix(d.Name(), "cluster=")
		if !ok || !d.IsDir() {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(stateRoot, d.Name()))
		for _, f := range files {
			newestN[c] = max(newestN[c], checkpointTime(f.Name()))
		}
	}
	now := h.now().Unix()
	var out []Rerun
	for _, c := range sortedKeys(newestN) {
		to := newestN[c]
		plan := newClusterPlan(v, c, nil, now)
		last := plan.newestIntact()
		var r Rerun
		switch {
		case last != nil && last.at >= to:
			continue // the fallback holds as much of the cluster
		case last != nil:
			r = Rerun{Cluster: c, From: last.at, Checkpoint: last.name, To: to}
		default:
			r = Rerun{Cluster: c, From: plan.origin, Fresh: true, To: to}
		}
		r.setCommand(h.Dir)
		out = append(out, r)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fallBack is Repair of a history whose committed manifest is damaged
// (rep, from verify): it commits a copy of the fallback generation as the
// next one, or, without a fallback, commits nothing.
func (h *Store) fallBack(rep VerifyReport, cluster string) (VerifyReport, error) {
	pr := rep.damagedManifest()
	if rep.fallback == nil {
		h.explain(&rep, nil)
		return rep, nil
	}
	if cluster != "" {
		h.explain(&rep, nil)
		return rep, fmt.Errorf("repair: manifest %s is every cluster's: run verify --repair without --cluster; nothing was changed", pr.Path)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.committed()
	if err != nil {
		return rep, fmt.Errorf("repair: %w", err)
	}
	if n != rep.Generation {
		return rep, fmt.Errorf("repair: generation %d was committed while generation %d was verified: "+
			"does a process write history %s without its lock? nothing was changed", n, rep.Generation, h.Dir)
	}
	if err := h.removeUncommitted(n); err != nil {
		return rep, fmt.Errorf("repair: %w", err)
	}
	t, err := h.newTxn(rep.fallback.manifest, n+1)
	if err != nil {
		return rep, fmt.Errorf("repair: %w", err)
	}
	if err := t.Commit(); err != nil {
		return rep, fmt.Errorf("repair: %w", err)
	}
	rep.Repaired = t.Generation()
	pr.Fixed = FixedReplaced
	h.explain(&rep, nil)
	return rep, nil
}

// manifestText is the Repair text of the damaged manifest pr.
func (h *Store) manifestText(rep *VerifyReport, pr *Problem) string {
	fix := "`fairledger verify --repair --history " + h.Dir + "`"
	fb := rep.fallback
	if fb == nil {
		return "every command refuses this history until it is mended, and no older generation of it verifies (a commit keeps only the one " +
			"before it): restore " + pr.Path + " from a backup of the history, or move the history aside and recompute it from the start " +
			"into a new one with every sacct file (`fairledger run --history <new directory> --sacct <every sacct file> ...`)"
	}
	k := fb.manifest.Generation
	var head string
	if rep.Repaired != 0 {
		head = fmt.Sprintf("generation %d was committed as a copy of generation %d, whose manifest and %d files verify; generation %d "+
			"is no longer read, and a later commit removes it", rep.Repaired, k, len(fb.manifest.Partitions), rep.Generation)
	} else {
		head = fmt.Sprintf("every command refuses this history until it is mended: %s commits a copy of generation %d, the newest older one "+
			"whose manifest and %d files verify, as the next generation (or restore this manifest from a backup of the history)",
			fix, k, len(fb.manifest.Partitions))
	}
	if len(fb.reruns) == 0 {
		return head + "; generation " + strconv.FormatInt(k, 10) + " holds every night the damaged one did: nothing to recompute"
	}
	var nights []string
	for _, r := range fb.reruns {
		from := "afresh"
		if !r.Fresh {
			from = "from " + r.Checkpoint + " (" + fmtUnix(r.From) + ")"
		}
		nights = append(nights, fmt.Sprintf("cluster %s %s to %s", r.Cluster, from, fmtUnix(r.To)))
	}
	return head + "; the nights generation " + strconv.FormatInt(rep.Generation, 10) + " held beyond it are recomputed by the next run, " +
		"whose sacct files must reach back to where it resumes: " + strings.Join(nights, ", ") + " (the recompute is printed per cluster)"
}

// statsText says what to do about data file pr.File whose manifest entry's
// statistics are not its rows' (with repaired != 0: what Repair did), and
// sets pr.Rerun.
func (h *Store) statsText(pr *Problem, plan *clusterPlan, fix string, repaired int64) string {
	p := pr.File
	q := withStats(*p, *pr.actual)
	q.MinTime = min(p.MinTime, q.MinTime) // the runs may have planned with either
	r := plan.rerunFor(q)
	r.setCommand(h.Dir)
	pr.Rerun = r
	head := fix + " records the file's own statistics in a new generation (the file is kept: its SHA-256 is the manifest's, its bytes are as the run wrote them)"
	if pr.Fixed == FixedRecorded {
		head = fmt.Sprintf("its statistics were recorded from its rows in generation %d (the file is kept as it is)", repaired)
	}
	return head + "; runs decide with them which jobs files to rewrite and to deduplicate against, so a run committed since the manifest " +
		"was changed may have counted jobs twice: recompute from before the file's first row: `" + r.Command + "` (" + r.why(&q) + ")"
}
