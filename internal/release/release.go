package release

import (
	"fmt"
	"strconv"
	"strings"
)

// Series is a Slurm release series, X.Y (22.05 is {22, 5}): what a site's
// slurmctld runs, on which a few rules of what fairledger computes and
// prints depend (docs/slurm-versions.md). The zero Series means the newest
// series fairledger reproduces (Newest) wherever one is compared.
type Series struct {
	Major, Minor int
}

// Supported returns the release series fairledger reproduces, oldest
// first; the last is the default.
func Supported() []Series {
	return []Series{{22, 5}, {23, 2}, {23, 11}, {24, 5}, {24, 11}, {25, 5}, {25, 11}, {26, 5}}
}

// Newest is the newest release series fairledger reproduces, the default
// of run --slurm-version.
func Newest() Series {
	all := Supported()
	return all[len(all)-1]
}

// OrNewest returns s, or Newest for the zero Series.
func (s Series) OrNewest() Series {
	if s == (Series{}) {
		return Newest()
	}
	return s
}

// String is "X.YY" (22.05), as written; the zero Series is "0.00".
func (s Series) String() string { return fmt.Sprintf("%d.%02d", s.Major, s.Minor) }

// Before reports whether s is an older series than t (the zero Series of
// either being Newest).
func (s Series) Before(t Series) bool {
	s, t = s.OrNewest(), t.OrNewest()
	return s.Major < t.Major || s.Major == t.Major && s.Minor < t.Minor
}

// AtLeast reports whether s is the series t or a later one (the zero
// Series of either being Newest).
func (s Series) AtLeast(t Series) bool { return !s.Before(t) }

// Parse reads a release series, "22.05" (a full release such as 22.05.8 is
// taken as its series), and refuses one fairledger does not reproduce.
func Parse(s string) (Series, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	var v Series
	var err1, err2 error
	if len(parts) >= 2 {
		v.Major, err1 = strconv.Atoi(parts[0])
		v.Minor, err2 = strconv.Atoi(parts[1])
	}
	if len(parts) < 2 || len(parts) > 3 || err1 != nil || err2 != nil {
		//lint:ignore ST1005 Slurm is a name
		return Series{}, fmt.Errorf("Slurm version %q: want X.Y, e.g. 22.05", s)
	}
	all := Supported()
	for _, w := range all {
		if v == w {
			return v, nil
		}
	}
	names := make([]string, len(all))
	for i, w := range all {
		names[i] = w.String()
	}
	//lint:ignore ST1005 Slurm is a name
	return Series{}, fmt.Errorf("Slurm version %s: not a release series fairledger reproduces (%s)", v, strings.Join(names, ", "))
}
