package ingest

import (
	"fmt"
	"strconv"
	"strings"
)

// SlurmVersion is a Slurm release series, X.Y (22.05, 23.02, …): what a
// site's slurmctld runs, on which a few rules of what fairledger computes
// and prints depend (docs/slurm-versions.md).
type SlurmVersion struct {
	Major, Minor int
}

// SupportedSlurmVersions returns the release series fairledger
// reproduces, oldest first; the last is the default.
func SupportedSlurmVersions() []SlurmVersion {
	return []SlurmVersion{{22, 5}, {23, 2}, {23, 11}, {24, 5}, {24, 11}, {25, 5}, {25, 11}, {26, 5}}
}

// NewestSlurmVersion is the newest release series fairledger reproduces,
// the default of run --slurm-version.
func NewestSlurmVersion() SlurmVersion {
	all := SupportedSlurmVersions()
	return all[len(all)-1]
}

// String is "X.YY" (22.05).
func (v SlurmVersion) String() string { return fmt.Sprintf("%d.%02d", v.Major, v.Minor) }

// Before reports whether v is an older series than w.
func (v SlurmVersion) Before(w SlurmVersion) bool {
	return v.Major < w.Major || v.Major == w.Major && v.Minor < w.Minor
}

// ParseSlurmVersion reads a release series, "22.05" (a full release such
// as 22.05.8 is taken as its series), and refuses one fairledger does not
// reproduce.
func ParseSlurmVersion(s string) (SlurmVersion, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	var v SlurmVersion
	var err1, err2 error
	if len(parts) >= 2 {
		v.Major, err1 = strconv.Atoi(parts[0])
		v.Minor, err2 = strconv.Atoi(parts[1])
	}
	if len(parts) < 2 || len(parts) > 3 || err1 != nil || err2 != nil {
		//lint:ignore ST1005 Slurm is a name
		return SlurmVersion{}, fmt.Errorf("Slurm version %q: want X.Y, e.g. 22.05", s)
	}
	all := SupportedSlurmVersions()
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
	return SlurmVersion{}, fmt.Errorf("Slurm version %s: not a release series fairledger reproduces (%s)", v, strings.Join(names, ", "))
}
