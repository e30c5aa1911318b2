package ingest

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseSlurmVersion(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"22.05", "22.05", ""},
		{"22.05.8", "22.05", ""},
		{"25.11", "25.11", ""},
		{"23.5", "", "not a release series"},
		{"21.08", "", "not a release series fairledger reproduces (22.05, 23.02, 23.11, 24.05, 24.11, 25.05, 25.11, 26.05)"},
		{"latest", "", "want X.Y"},
		{"25", "", "want X.Y"},
	} {
		t.Run(fmt.Sprintf("%q", tc.in), func(t *testing.T) {
			v, err := ParseSlurmVersion(tc.in)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			case tc.err == "" && (err != nil || v.String() != tc.want):
				t.Errorf("%q: %v %v, want %s", tc.in, v, err, tc.want)
			}
		})
	}
	if !(SlurmVersion{24, 11}).Before(SlurmVersion{25, 5}) || (SlurmVersion{25, 5}).Before(SlurmVersion{25, 5}) {
		t.Error("Before")
	}
	if NewestSlurmVersion().String() != "26.05" {
		t.Errorf("newest %s", NewestSlurmVersion())
	}
}
