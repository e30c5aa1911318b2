package ingest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestParseTRESLimit inverts what sacctmgr prints through convert_num_unit
// (docs/slurm-semantics.md §11.5 "Memory unit rendering", MiB → printed):
// 2560 → 2.50G, 1572864 → 1.50T, 20480 → 20G, 1000 → 1000M, 1536 → 1.50G,
// 1048576 → 1T, 0 → 0. Count TRES print plain integers.
func TestParseTRESLimit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []TRESCount
	}{
		{"mem=2.50G", []TRESCount{{"mem", 2560}}},
		{"mem=1.50T", []TRESCount{{"mem", 1572864}}},
		{"mem=20G", []TRESCount{{"mem", 20480}}},
		{"mem=1000M", []TRESCount{{"mem", 1000}}},
		{"mem=1.50G", []TRESCount{{"mem", 1536}}},
		{"mem=1T", []TRESCount{{"mem", 1048576}}},
		{"mem=0", []TRESCount{{"mem", 0}}},
		{"mem=1P", []TRESCount{{"mem", 1 << 30}}},
		// K is below the MiB base: 2048K = 2 MiB.
		{"mem=2048K", []TRESCount{{"mem", 2}}},
		// bb/* and gres/gpumem are printed in memory units too.
		{"bb/datawarp=1.50G,gres/gpumem=4G", []TRESCount{{"bb/datawarp", 1536}, {"gres/gpumem", 4096}}},
		{"cpu=6000,mem=20G,gres/gpu=100", []TRESCount{{"cpu", 6000}, {"mem", 20480}, {"gres/gpu", 100}}},
		{"CPU=5", []TRESCount{{"cpu", 5}}},
		// A unit on a count TRES scales by 1024 per step, K first.
		{"cpu=2K", []TRESCount{{"cpu", 2048}}},
	} {
		t.Run(fmt.Sprintf("%q", c.in), func(t *testing.T) {
			got, err := ParseTRESLimit(c.in)
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("ParseTRESLimit(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
		})
	}
	for _, c := range []struct{ in, err string }{
		{"cpu=", `item "cpu=": want type=count`},
		{"cpu", `item "cpu": want type=count`},
		{"cpu=-5", `item "cpu=-5": count is not a non-negative integer`},
		{"cpu=2.5", `item "cpu=2.5": count is not a non-negative integer`},
		{"cpu=lots", `item "cpu=lots": count is not a non-negative integer`},
		{"mem=2.5.0G", `item "mem=2.5.0G": count is not a non-negative number with an optional unit (K, M, G, T, P, E)`},
		{"mem=G", `item "mem=G": count is not a non-negative number`},
		{"mem=.5G", `item "mem=.5G": count is not a non-negative number`},
		{"mem=1X", `item "mem=1X": count is not a non-negative number`},
		{"mem=-1G", `item "mem=-1G": count is not a non-negative number`},
		{"cpu=1,cpu=2", `item "cpu=2": TRES cpu given twice`},
		{"mem=99999999E", `item "mem=99999999E": count is too large`},
	} {
		t.Run(fmt.Sprintf("%q", c.in), func(t *testing.T) {
			_, err := ParseTRESLimit(c.in)
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("ParseTRESLimit(%q) error = %v, want %q", c.in, err, c.err)
			}
		})
	}
}

// TestSshareTRES checks GrpTRESMins as sshare -l prints it: raw counts (MiB
// for mem), static TRES by id, then the others by type and name, whatever
// order the dump listed them in.
func TestSshareTRES(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"cpu=6000,mem=20G,gres/gpu=100", "cpu=6000,mem=20480,gres/gpu=100"},
		{"mem=2G,cpu=5", "cpu=5,mem=2048"},
		{"license/matlab=10,gres/gpu=4,billing=7,node=2,bb/cray=1G", "node=2,billing=7,bb/cray=1024,gres/gpu=4,license/matlab=10"},
		{"mem=2.50G", "mem=2560"},
	} {
		t.Run(fmt.Sprintf("%q", c.in), func(t *testing.T) {
			counts, err := ParseTRESLimit(c.in)
			if err != nil {
				t.Fatalf("ParseTRESLimit(%q): %v", c.in, err)
			}
			if got := SshareTRES(counts); got != c.want {
				t.Errorf("SshareTRES(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
