package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/fairledger/fairledger/export/history"
)

// LatestCheckpoint is the time of the newest checkpoint of cluster in the
// committed generation of the history dir: where the next night of the
// cluster resumes. ok is false when the history does not exist yet or has
// no checkpoint of the cluster. It only reads: nothing is created or locked.
func LatestCheckpoint(dir, cluster string) (at time.Time, ok bool, err error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, false, nil
	}
	v, err := (&history.Store{Dir: dir}).View()
	if err != nil {
		return time.Time{}, false, fmt.Errorf("history %s: %w", dir, err)
	}
	defer v.Close()
	cps, err := loadCheckpoints(&v.Manifest, nil, cluster)
	if err != nil || len(cps) == 0 {
		return time.Time{}, false, err
	}
	return time.Unix(cps[len(cps)-1].To, 0).UTC(), true, nil
}
