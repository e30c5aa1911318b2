package pipeline

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/fairshare"
)

// checkpointVersion is the version of the checkpoint JSON layout.
const checkpointVersion = 1

// DefaultKeepCheckpoints is how many checkpoints per cluster a run keeps.
const DefaultKeepCheckpoints = 62

// checkpoint is where the next run of a cluster resumes. It is stored as
// JSON (maps sorted, floats in shortest round-trip form), so equal
// checkpoints are equal bytes.
type checkpoint struct {
	Version int    `json:"version"`
	Cluster string `json:"cluster"`
	// To is the --to of the run that wrote it (Unix seconds).
	To int64 `json:"to"`
	// Origin is where the history's charging of the cluster started: the
	// window start of the fresh run the chain of runs up to this one
	// resumed from (Unix seconds); 0 in checkpoints written before it was
	// recorded.
	Origin int64 `json:"origin,omitempty"`
	// Keys name the associations of State.Usage, by index.
	Keys [][3]string `json:"keys"`
	// State is decay's marshalled State (own usage per association).
	State []byte `json:"state"`
	// Running are the jobs still running at To.
	Running []carriedJob `json:"running"`
	// Residue is what ended jobs left in slurmctld's TRESRunMins at To
	// (fairshare.RunSecs), per association, counted from ResidueFrom on
	// and cleared at every slurmctld start the logs showed; only runs with
	// slurmctld's log (run --slurmctld-log) count residues.
	Residue []residue `json:"tres_residue,omitempty"`
	// Debt is what ends slurmctld charged twice took from TRESRunMins
	// beyond the jobs' values, per association, still owed at To
	// (live.TRESRun.Debts; docs/slurm-versions.md §10).
	Debt []residue `json:"tres_debt,omitempty"`
	// ResidueFrom is when the chain of runs up to this one began counting
	// residues (Unix seconds; 0: none was counted).
	ResidueFrom int64 `json:"tres_residue_from,omitempty"`
	// Zone is the name of the zone (Options.Location) the history of the
	// cluster is computed in: local midnights, usage resets, and sacct's
	// local times. Empty in checkpoints written before it was recorded:
	// those accept any zone, and the next run records its own.
	Zone string `json:"time_zone,omitempty"`
	// JobsExtent was, before the generation store, how far each month of
	// the jobs table reached; the segments' statistics (MaxEnd) hold it
	// now. Read from older checkpoints, never written.
	JobsExtent map[string]int64 `json:"jobs_extent,omitempty"`
}

// residue is one association's TRESRunMins residue (or debt): seconds per
// TRES.
type residue struct {
	Key  [3]string         `json:"key"`
	Secs map[string]uint64 `json:"secs"`
}

// carriedJob is a job running at a checkpoint's To.
type carriedJob struct {
	JobIDRaw int64     `json:"job_id_raw"`
	Start    int64     `json:"start"`
	End      int64     `json:"end"` // decay.Running, or a known end after To
	Rate     float64   `json:"rate"`
	Key      [3]string `json:"key"`
	// TRES (AllocTRES), QOS and TimelimitMin are what sshare's TRESRunMins
	// needs of the job should a later night's input lack it; kept only
	// with limits enforced. A checkpoint without them (older, or without
	// limits) leaves such a job holding nothing.
	TRES         map[string]float64 `json:"tres,omitempty"`
	QOS          string             `json:"qos,omitempty"`
	TimelimitMin uint32             `json:"timelimit_min,omitempty"`
}

// storedCheckpoint is a checkpoint of the history, read only when needed:
// its time is in its file name, its contents (half a megabyte and more on
// a busy cluster, with the running jobs) are decoded by load.
type storedCheckpoint struct {
	checkpoint
	part   history.Partition
	read   func(history.Partition) ([]byte, error)
	loaded bool
}

// load decodes the checkpoint, verified against the manifest, once.
func (c *storedCheckpoint) load() error {
	if c.loaded {
		return nil
	}
	name := path.Base(c.part.Path)
	b, err := c.read(c.part)
	if err != nil {
		return fmt.Errorf("checkpoint of cluster %s: %w", c.part.Cluster, err)
	}
	var full checkpoint
	if err := json.Unmarshal(b, &full); err != nil {
		return fmt.Errorf("checkpoint %s of cluster %s: %w", name, c.part.Cluster, err)
	}
	if full.Version != checkpointVersion {
		return fmt.Errorf("checkpoint %s of cluster %s: version %d, want %d", name, c.part.Cluster, full.Version, checkpointVersion)
	}
	if full.To != c.To {
		return fmt.Errorf("checkpoint %s of cluster %s: taken at %s, not at the time its name gives", name, c.part.Cluster, fmtUnix(full.To))
	}
	c.checkpoint, c.loaded = full, true
	return nil
}

// loadAll loads every checkpoint of cps.
func loadAll(cps []*storedCheckpoint) error {
	for _, c := range cps {
		if err := c.load(); err != nil {
			return err
		}
	}
	return nil
}

// jobKey identifies a job allocation run: requeued runs share the raw id
// but not the start.
type jobKey struct {
	id    int64
	start int64
}

func (c carriedJob) key() jobKey { return jobKey{c.JobIDRaw, c.Start} }

func keyArray(k fairshare.Key) [3]string { return [3]string{k.Account, k.User, k.Partition} }

func keyOf(a [3]string) fairshare.Key {
	return fairshare.Key{Account: a[0], User: a[1], Partition: a[2]}
}

// checkpointLayout is the time layout of a checkpoint's file name.
const checkpointLayout = "20060102T150405Z"

// checkpointName is the file name of the checkpoint taken at to; names sort
// by time.
func checkpointName(to int64) string {
	return "checkpoint-" + time.Unix(to, 0).UTC().Format(checkpointLayout) + ".json"
}

// loadCheckpoints lists the checkpoints of cluster in the manifest m,
// oldest first, with their times (from their names); read returns a
// file's bytes, verified against m, for storedCheckpoint.load.
func loadCheckpoints(m *history.Manifest, read func(history.Partition) ([]byte, error), cluster string) ([]*storedCheckpoint, error) {
	var out []*storedCheckpoint
	for _, p := range m.Files(history.TableState, cluster) {
		n := path.Base(p.Path)
		stamp, ok := strings.CutPrefix(n, "checkpoint-")
		if !ok {
			continue
		}
		at, err := time.Parse(checkpointLayout+".json", stamp)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s of cluster %s: not a checkpoint name: %w", n, cluster, err)
		}
		c := &storedCheckpoint{part: p, read: read}
		c.Cluster, c.To = cluster, at.Unix()
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *storedCheckpoint) int { return cmp.Compare(a.To, b.To) })
	return out, nil
}

// saveCheckpoint writes c into the commit and drops all but the newest
// keep checkpoints of its cluster.
func saveCheckpoint(tx *history.Txn, c *checkpoint, keep int) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	if err := tx.WriteState(c.Cluster, checkpointName(c.To), b); err != nil {
		return err
	}
	var cps []string
	for _, p := range tx.Files(history.TableState, c.Cluster) {
		if n := path.Base(p.Path); strings.HasPrefix(n, "checkpoint-") {
			cps = append(cps, n)
		}
	}
	slices.Sort(cps)
	for len(cps) > keep {
		tx.RemoveState(c.Cluster, cps[0])
		cps = cps[1:]
	}
	return nil
}

// pickCheckpoint chooses where a run ending at to resumes: with from set,
// the newest checkpoint at or before from; otherwise the newest taken
// before to. nil means a fresh start.
func pickCheckpoint(cps []*storedCheckpoint, from time.Time, to int64) *storedCheckpoint {
	var best *storedCheckpoint
	for _, c := range cps {
		ok := c.To < to
		if !from.IsZero() {
			ok = c.To <= from.Unix()
		}
		if ok && (best == nil || c.To > best.To) {
			best = c
		}
	}
	return best
}

// resumeState rebuilds the decay State of c on the universe keys: usage of
// an association the universe no longer has goes to its account, or to the
// root. It returns the number of such folded associations.
func resumeState(c *checkpoint, keys []fairshare.Key, index func(fairshare.Key) (int32, bool)) (*decay.State, int, error) {
	var old decay.State
	if err := old.UnmarshalBinary(c.State); err != nil {
		return nil, 0, fmt.Errorf("checkpoint at %s: %w", time.Unix(c.To, 0).UTC().Format(time.RFC3339), err)
	}
	if len(old.Usage) != len(c.Keys) {
		return nil, 0, fmt.Errorf("checkpoint at %s: %d usage values for %d associations",
			time.Unix(c.To, 0).UTC().Format(time.RFC3339), len(old.Usage), len(c.Keys))
	}
	st := old.Clone()
	st.Usage = make([]float64, len(keys))
	folded := 0
	for i, k := range c.Keys {
		j, exact := foldAssoc(index, keyOf(k))
		if !exact {
			folded++
		}
		st.Usage[j] += old.Usage[i]
	}
	return st, folded, nil
}

// foldAssoc is the association index gives for k; for an association it
// lacks, that of k's account, else root's (0), with exact false. A
// resumed run credits a checkpoint's association so, and charges a
// checkpoint's running job of one; a what-if moves usage and jobs so onto
// another tree.
func foldAssoc(index func(fairshare.Key) (int32, bool), k fairshare.Key) (j int32, exact bool) {
	if j, ok := index(k); ok {
		return j, true
	}
	if j, ok := index(fairshare.Key{Account: k.Account}); ok {
		return j, false
	}
	return 0, false
}
