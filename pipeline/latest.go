package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"time"

	"github.com/fairledger/fairledger/export/history"
)

// CheckpointInfo is what the newest checkpoint of a cluster says of the
// history: where the next night resumes, and the zone it was computed in.
type CheckpointInfo struct {
	// To is the checkpoint's time.
	To time.Time
	// Zone is the zone's name ("" in checkpoints written before it was
	// recorded).
	Zone string
}

// NewestCheckpoint reads the newest checkpoint of cluster in the committed
// generation of the history dir. ok is false when the history does not
// exist yet or has no checkpoint of the cluster. It only reads: a missing
// directory is not created, and the history is not locked.
func NewestCheckpoint(dir, cluster string) (c CheckpointInfo, ok bool, err error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	h, err := history.Open(dir) // exists: Open creates nothing
	if err != nil {
		return c, false, err
	}
	v, err := h.View()
	if err != nil {
		return c, false, err
	}
	defer v.Close()
	read := func(p history.Partition) ([]byte, error) { return v.ReadState(p.Cluster, path.Base(p.Path)) }
	cps, err := loadCheckpoints(&v.Manifest, read, cluster)
	if err != nil || len(cps) == 0 {
		return c, false, err
	}
	newest := cps[len(cps)-1]
	if err := newest.load(); err != nil {
		return c, false, fmt.Errorf("history %s: %w", dir, err)
	}
	return CheckpointInfo{To: time.Unix(newest.To, 0).UTC(), Zone: newest.Zone}, true, nil
}
