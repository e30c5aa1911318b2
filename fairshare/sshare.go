package fairshare

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// SshareOptions selects the sshare layout WriteSshare reproduces. Only the
// parsable layouts (-p, -P) are produced; the fixed-width one is not.
type SshareOptions struct {
	// Long adds NormUsage, LevelFS (Fair Tree only), GrpTRESMins and
	// TRESRunMins (sshare -l).
	Long bool
	// TrailingSep ends every line with '|' (sshare -p); otherwise the
	// separator only separates fields (sshare -P).
	TrailingSep bool
	// NoHeader omits the header line (sshare -n).
	NoHeader bool
	// Partitions inserts the Partition column after User (sshare -m).
	Partitions bool
	// AccountFairShare prints the classic/depth-oblivious FairShare of
	// account rows too, as sshare did before 25.11. Fair Tree accounts
	// have no factor and stay blank.
	AccountFairShare bool
	// GrpTRESMins is an optional per-position GrpTRESMins limit string
	// (e.g. "cpu=1000"); nil or "" prints blank.
	GrpTRESMins []string
	// TRESRunMins is an optional per-position TRESRunMins string; nil or ""
	// prints "cpu=0".
	TRESRunMins []string
}

// WriteSshare writes r in the layout of `sshare -a [-l] -P` (or -p), one line
// per association in tree position order (sshare's row order, §7): Account
// indented by one space per depth below root, User, RawShares ("parent" for
// FairShare=parent, blank for root), NormShares, RawUsage (uint64 truncation
// of the raw usage), NormUsage, EffectvUsage, FairShare, LevelFS ("inf" for
// +Inf), GrpTRESMins, TRESRunMins. Doubles use C's %f (6 decimals of the
// exact binary value, round half to even, which Go's 'f' format matches); NaN
// cells are blank. The column set follows r.Algorithm: LevelFS only for Fair
// Tree.
func WriteSshare(w io.Writer, t *Tree, r *Result, opt SshareOptions) error {
	n := t.Len()
	if len(r.NormShares) != n || r.Algorithm == 0 {
		return fmt.Errorf("write sshare: result holds %d associations (algorithm %v), tree %d", len(r.NormShares), r.Algorithm, n)
	}
	if opt.GrpTRESMins != nil && len(opt.GrpTRESMins) != n {
		return fmt.Errorf("write sshare: %d GrpTRESMins strings for %d associations", len(opt.GrpTRESMins), n)
	}
	if opt.TRESRunMins != nil && len(opt.TRESRunMins) != n {
		return fmt.Errorf("write sshare: %d TRESRunMins strings for %d associations", len(opt.TRESRunMins), n)
	}
	fairTree := r.Algorithm == FairTreeAlgo

	var cols []string
	cols = append(cols, "Account", "User")
	if opt.Partitions {
		cols = append(cols, "Partition")
	}
	cols = append(cols, "RawShares", "NormShares", "RawUsage")
	if opt.Long {
		cols = append(cols, "NormUsage")
	}
	cols = append(cols, "EffectvUsage", "FairShare")
	if opt.Long {
		if fairTree {
			cols = append(cols, "LevelFS")
		}
		cols = append(cols, "GrpTRESMins", "TRESRunMins")
	}

	b := make([]byte, 0, 64<<10)
	end := func() {
		if opt.TrailingSep {
			b = append(b, '|')
		}
		b = append(b, '\n')
	}
	if !opt.NoHeader {
		for k, c := range cols {
			if k > 0 {
				b = append(b, '|')
			}
			b = append(b, c...)
		}
		end()
	}
	for p := 0; p < n; p++ {
		for d := int32(0); d < t.Depth[p]; d++ {
			b = append(b, ' ')
		}
		b = append(b, t.Account[p]...)
		b = append(b, '|')
		b = append(b, t.User[p]...)
		if opt.Partitions {
			b = append(b, '|')
			b = append(b, t.Partition[p]...)
		}
		b = append(b, '|')
		switch {
		case p == 0:
		case t.SharesParent[p]:
			b = append(b, "parent"...)
		default:
			b = strconv.AppendInt(b, t.Shares[p], 10)
		}
		b = append(b, '|')
		b = appendF(b, r.NormShares[p])
		b = append(b, '|')
		b = strconv.AppendUint(b, rawUsage(r.RawUsage[p]), 10)
		if opt.Long {
			b = append(b, '|')
			b = appendF(b, r.NormUsage[p])
		}
		b = append(b, '|')
		b = appendF(b, r.EffectvUsage[p])
		b = append(b, '|')
		if t.IsUser[p] || (opt.AccountFairShare && !fairTree) {
			b = appendF(b, r.FairShare[p])
		}
		if opt.Long {
			if fairTree {
				b = append(b, '|')
				b = appendF(b, r.LevelFS[p])
			}
			b = append(b, '|')
			if opt.GrpTRESMins != nil {
				b = append(b, opt.GrpTRESMins[p]...)
			}
			b = append(b, '|')
			if opt.TRESRunMins != nil && opt.TRESRunMins[p] != "" {
				b = append(b, opt.TRESRunMins[p]...)
			} else {
				b = append(b, "cpu=0"...)
			}
		}
		end()
		if len(b) >= 60<<10 {
			if _, err := w.Write(b); err != nil {
				return fmt.Errorf("write sshare: %w", err)
			}
			b = b[:0]
		}
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write sshare: %w", err)
	}
	return nil
}

// appendF appends v as C's printf("%f") would, blank for NaN and "inf" for
// +Inf.
func appendF(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return b
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, v, 'f', 6, 64)
}

// rawUsage converts usage to sshare's RawUsage: C's (uint64) cast truncates
// toward zero; negative or NaN usage prints 0 and overflow saturates.
func rawUsage(v float64) uint64 {
	switch {
	case !(v > 0):
		return 0
	case v >= 18446744073709551615.0:
		return math.MaxUint64
	}
	return uint64(v)
}
