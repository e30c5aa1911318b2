package ingest

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/schemas"
)

// TRESCount is one TRES and its count: an item of a TRES limit such as
// GrpTRESMins, or of the resources of nodes (NodeGroup.GRES, Totals).
type TRESCount struct {
	// TRES is the canonical TRES name ("cpu", "mem", "gres/gpu").
	TRES string
	// Count is in the TRES's base unit: MiB for mem, bb/* and gres/gpumem
	// (times minutes, for a TRES-minutes limit), a plain count otherwise.
	Count uint64
}

// tresUnits are the unit letters of Slurm's convert_num_unit, from K up.
const tresUnits = "KMGTPE"

// ParseTRESLimit parses a TRES limit as sacctmgr prints it: comma-separated
// type[/name]=count items.
//
// sacctmgr prints limits with slurmdb_make_tres_string_from_simple(...,
// CONVERT_NUM_UNIT_EXACT, ...): mem, bb/* and gres/gpumem go through
// convert_num_unit from MiB, which divides by 1024 while the value stays a
// multiple of 512 and then prints an integer or two decimals with the unit
// (2560 → "2.50G", 1572864 → "1.50T", 20480 → "20G", 1000 → "1000M"); every
// other TRES prints its plain integer. ParseTRESLimit inverts that: the MiB
// of such a TRES are number × 1024^k for M (k=0), G, T, P, E, or number/1024
// for K, exact wherever the printed form is (always the case for what
// convert_num_unit prints; a value that is not a whole number of MiB is
// rounded half up). A count TRES takes an integer, with a unit letter scaled
// as Slurm scales one typed for a unit-less TRES (K = 1024, M = 1024², ...).
func ParseTRESLimit(s string) ([]TRESCount, error) {
	var out []TRESCount
	for item := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("item %q: want type=count", item)
		}
		tres := schemas.CanonicalTRES(k)
		var (
			n   uint64
			err error
		)
		if tresInMiB(tres) {
			n, err = parseMiB(v)
		} else {
			n, err = parseTRESCount(v)
		}
		if err != nil {
			return nil, fmt.Errorf("item %q: %w", item, err)
		}
		if slices.ContainsFunc(out, func(c TRESCount) bool { return c.TRES == tres }) {
			return nil, fmt.Errorf("item %q: TRES %s given twice", item, tres)
		}
		out = append(out, TRESCount{TRES: tres, Count: n})
	}
	return out, nil
}

// tresInMiB reports whether Slurm prints the TRES in memory units (MiB
// base): mem, any bb/* and gres/gpumem (slurmdb_make_tres_string_from_simple).
func tresInMiB(tres string) bool {
	typ, name, _ := strings.Cut(tres, "/")
	return tres == "mem" || typ == "bb" || name == "gpumem"
}

// unitPower splits a trailing unit letter off v and returns the power of
// 1024 it stands for relative to K (K = 1, M = 2, ...); 0 without one.
func unitPower(v string) (string, int) {
	if v == "" {
		return v, 0
	}
	if i := strings.IndexByte(tresUnits, strings.ToUpper(v[len(v)-1:])[0]); i >= 0 {
		return v[:len(v)-1], i + 1
	}
	return v, 0
}

// parseTRESCount parses a count TRES's value: digits, optionally a unit.
func parseTRESCount(v string) (uint64, error) {
	digits, p := unitPower(v)
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, errors.New("count is not a non-negative integer")
	}
	for range p {
		if n > (1<<64-1)/1024 {
			return 0, errors.New("count is too large")
		}
		n *= 1024
	}
	return n, nil
}

// parseMiB parses a memory-unit value (digits, optional decimals, optional
// unit; MiB without one) into MiB.
func parseMiB(v string) (uint64, error) {
	num, p := unitPower(v)
	whole, frac, hasFrac := strings.Cut(num, ".")
	if !allDigits(whole) || hasFrac && !allDigits(frac) {
		return 0, fmt.Errorf("count is not a non-negative number with an optional unit (%s)", strings.Join(strings.Split(tresUnits, ""), ", "))
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, errors.New("count is not a number")
	}
	// p is relative to K; MiB is p = 2 (or no unit).
	shift := 0
	if p != 0 {
		shift = p - 2
	}
	scale := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(10*abs(shift))))
	if shift >= 0 {
		r.Mul(r, scale)
	} else {
		r.Quo(r, scale)
	}
	// Round half up to whole MiB.
	r.Add(r, big.NewRat(1, 2))
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if !n.IsUint64() {
		return 0, errors.New("count is too large")
	}
	return n.Uint64(), nil
}

// allDigits reports whether s is a non-empty run of ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// SshareTRES formats a TRES limit the way sshare -l prints GrpTRESMins
// (src/sshare/process.c _print_tres → slurmdb_make_tres_string_from_arrays):
// name=count with the raw count in the base unit, no unit conversion, in
// the order of the cluster's TRES array (schemas.CompareTRES); unset TRES are
// not listed. "cpu=6000,mem=20G,gres/gpu=100" prints
// "cpu=6000,mem=20480,gres/gpu=100".
func SshareTRES(counts []TRESCount) string {
	sorted := slices.Clone(counts)
	slices.SortFunc(sorted, func(a, b TRESCount) int { return schemas.CompareTRES(a.TRES, b.TRES) })
	return string(fairshare.AppendTRESList(nil, len(sorted), func(i int) string { return sorted[i].TRES },
		func(b []byte, i int) []byte { return strconv.AppendUint(b, sorted[i].Count, 10) }))
}
