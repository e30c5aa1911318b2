package release

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseSlurmVersion(t *testing.T) {
	t.Parallel()
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
			v, err := Parse(tc.in)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			case tc.err == "" && (err != nil || v.String() != tc.want):
				t.Errorf("%q: %v %v, want %s", tc.in, v, err, tc.want)
			}
		})
	}
	if !(Series{24, 11}).Before(Series{25, 5}) || (Series{25, 5}).Before(Series{25, 5}) {
		t.Error("Before")
	}
	if Newest().String() != "26.05" {
		t.Errorf("newest %s", Newest())
	}
}

// The zero Series is the newest: later than or equal to every supported
// series, and a rule's newer behaviour holds for it (what priority's
// zero Release meant).
func TestZeroIsNewest(t *testing.T) {
	t.Parallel()
	zero := Series{}
	if zero.OrNewest() != (Series{26, 5}) || (Series{23, 11}).OrNewest() != (Series{23, 11}) {
		t.Errorf("OrNewest: %v, %v", zero.OrNewest(), (Series{23, 11}).OrNewest())
	}
	for _, s := range Supported() {
		if !zero.AtLeast(s) {
			t.Errorf("zero.AtLeast(%s) = false, want true", s)
		}
		if zero.Before(s) {
			t.Errorf("zero.Before(%s) = true, want false", s)
		}
		if want := s != (Series{26, 5}); s.Before(zero) != want {
			t.Errorf("%s.Before(zero) = %v, want %v", s, s.Before(zero), want)
		}
	}
	for _, tc := range []struct {
		s, t    Series
		atLeast bool
	}{
		{Series{22, 5}, Series{23, 2}, false},
		{Series{23, 2}, Series{23, 2}, true},
		{Series{23, 11}, Series{23, 2}, true},
		{Series{23, 11}, Series{24, 5}, false},
		{Series{25, 11}, Series{25, 5}, true},
	} {
		if got := tc.s.AtLeast(tc.t); got != tc.atLeast {
			t.Errorf("%s.AtLeast(%s) = %v, want %v", tc.s, tc.t, got, tc.atLeast)
		}
		if got := tc.s.Before(tc.t); got == tc.atLeast {
			t.Errorf("%s.Before(%s) = %v, want %v", tc.s, tc.t, got, !tc.atLeast)
		}
	}
}

// Every rule changes at a supported series after the oldest (a rule from
// 22.05 on would hold for every series), the list is in its documented
// order, and no two rules share a name in one package.
func TestRules(t *testing.T) {
	t.Parallel()
	supported := map[Series]bool{}
	for _, s := range Supported()[1:] {
		supported[s] = true
	}
	seen := map[string]bool{}
	rules := Rules()
	for i, r := range rules {
		if !supported[r.Since] {
			t.Errorf("rule %s.%s: since %s, not a supported series after the oldest", r.Package, r.Name, r.Since)
		}
		if r.Package == "" || r.Name == "" || r.Text == "" || strings.Contains(r.Text, "|") {
			t.Errorf("rule %d %+v: empty field, or a | in its text (a table cell)", i, r)
		}
		if key := r.Package + "." + r.Name; seen[key] {
			t.Errorf("rule %s listed twice", key)
		} else {
			seen[key] = true
		}
		if i == 0 {
			continue
		}
		p := rules[i-1]
		if r.Since.Before(p.Since) || r.Since == p.Since && (r.Package < p.Package || r.Package == p.Package && r.Name < p.Name) {
			t.Errorf("rule %s.%s (%s) listed after %s.%s (%s): want by series, package, name", r.Package, r.Name, r.Since, p.Package, p.Name, p.Since)
		}
	}
}
