package billing

import (
	"errors"
	"math"
	"reflect"
	"sort"
	"testing"

	"github.com/fairledger/fairledger/schemas"
)

// FuzzParseWeights checks ParseWeights' invariants on arbitrary input: it
// never panics; a success is canonical, de-duplicated, in summation order,
// finite, free of billing and energy, and survives a String round trip; a
// failure is a *WeightsError whose every item wraps one of the sentinels.
//
//	go test ./billing -run '^$' -fuzz FuzzParseWeights -fuzztime 60s
func FuzzParseWeights(f *testing.F) {
	for _, s := range []string{
		"CPU=1.0,Mem=0.25G,GRES/gpu=2.0,license/lic1=1.5",
		"Mem=256K", "Mem=1T", "CPU=1K", "bb/datawarp=1G", "fs/disk=1P",
		"CPU=-1.5,node=.5", "GRES/gpu:a100=20,gres/gpu=10", "billing=3",
		"energy=1", "CPU=1X", "foo=1", "=", ",,", "CPU=1e999", "Mem=0.25GB",
		"cpu=1e-320", "CPU=+.5e+2k", "CPU=0x1.8p1", "CPU=-0x1p-1074", "CPU=nan(x)", "Mem=G", "CPU=-inf",
	} {
		f.Add(s)
	}
	sentinels := []error{ErrSyntax, ErrNumber, ErrUnit, ErrUnknownType, ErrEnergy, ErrNotTracked}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWeights(s, nil)
		if err != nil {
			var we *WeightsError
			if !errors.As(err, &we) || len(we.Items) == 0 {
				t.Fatalf("ParseWeights(%q) error %v, want *WeightsError with items", s, err)
			}
			for _, it := range we.Items {
				known := false
				for _, e := range sentinels {
					known = known || errors.Is(it, e)
				}
				if !known {
					t.Errorf("ParseWeights(%q) item error %v wraps no sentinel", s, it)
				}
			}
			return
		}
		seen := map[string]bool{}
		for _, x := range w {
			if x.TRES != schemas.CanonicalTRES(x.TRES) || x.TRES == "billing" || x.TRES == "energy" || seen[x.TRES] {
				t.Errorf("ParseWeights(%q) = %v: bad or repeated TRES %q", s, w, x.TRES)
			}
			seen[x.TRES] = true
			if math.IsInf(x.PerUnit, 0) || math.IsNaN(x.PerUnit) {
				t.Errorf("ParseWeights(%q) = %v: weight of %s not finite", s, w, x.TRES)
			}
		}
		if !sort.SliceIsSorted(w, func(i, j int) bool { return TRESLess(w[i].TRES, w[j].TRES) }) {
			t.Errorf("ParseWeights(%q) = %v, not in summation order", s, w)
		}
		back, err := ParseWeights(w.String(), nil)
		if err != nil || !reflect.DeepEqual(back, w) {
			t.Errorf("ParseWeights(%q) = %v; re-parsing %q gives %v, %v", s, w, w.String(), back, err)
		}
	})
}
