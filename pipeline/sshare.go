package pipeline

import (
	"fmt"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/ingest"
)

// SshareTree rebuilds the tree and result of a fair-share snapshot taken at
// at from its stored rows, as sshare prints them: each association's
// GrpTRESMins limit, stored as the association dump wrote it, becomes raw
// counts in TRES order (cpu=…,mem=…,…). The sshare command prints the
// result; it reads the limit with ingest's parser, so that the command
// does not.
func SshareTree(rows []record.FairshareRow, at time.Time) (*fairshare.Tree, *fairshare.Result, error) {
	tree, res, err := record.FairshareFromRows(rows)
	if err != nil {
		return nil, nil, err
	}
	for p, lim := range tree.GrpTRESMins {
		if lim == "" {
			continue
		}
		counts, err := ingest.ParseTRESLimit(lim)
		if err != nil {
			return nil, nil, fmt.Errorf("fairshare snapshot %s: %s GrpTRESMins=%q: %w", at.Format(time.RFC3339), tree.Account[p], lim, err)
		}
		tree.GrpTRESMins[p] = ingest.SshareTRES(counts)
	}
	return tree, res, nil
}
