package ingest

import (
	"reflect"
	"strings"
	"testing"
)

// TestExpandHostlist expands the forms src/common/hostlist.c reads; the
// host lists are written out by hand.
func TestExpandHostlist(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want []string
	}{
		{"", nil},
		{"node1", []string{"node1"}},
		{"node[01-03,07]", []string{"node01", "node02", "node03", "node07"}},
		{"node[01-10,12]", []string{"node01", "node02", "node03", "node04", "node05", "node06", "node07", "node08", "node09", "node10", "node12"}},
		// The width is lo's: [8-10] is not padded, [08-10] is.
		{"n[8-10]", []string{"n8", "n9", "n10"}},
		{"n[08-10]", []string{"n08", "n09", "n10"}},
		{"n[098-100]", []string{"n098", "n099", "n100"}},
		{"a,b c\td", []string{"a", "b", "c", "d"}},
		{"gpu[1-2],cpu[1,3]", []string{"gpu1", "gpu2", "cpu1", "cpu3"}},
		{"node[1-2]-ib", []string{"node1-ib", "node2-ib"}},
		{"r[1-2]n[1-2]", []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
		{"r[1-2]n[3]x", []string{"r1n3x", "r2n3x"}},
		{"[1-3]", []string{"1", "2", "3"}},
		{"n[5]", []string{"n5"}},
		{",,n1,,", []string{"n1"}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := ExpandHostlist(tt.expr)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ExpandHostlist(%q) = %q, %v; want %q", tt.expr, got, err, tt.want)
			}
		})
	}
}

func TestExpandHostlistErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{"n[1-3", `"n[1-3": '[' without ']'`},
		{"n1]", `"n1]": ']' without '['`},
		{"n[]", `"n[]": bad range "" (want n or lo-hi)`},
		{"n[1,,2]", `"n[1,,2]": bad range "" (want n or lo-hi)`},
		{"n[3-1]", `"n[3-1]": bad range "3-1": 3 > 1`},
		{"n[a-b]", `"n[a-b]": bad range "a-b" (want n or lo-hi)`},
		{"n[-1]", `"n[-1]": bad range "-1" (want n or lo-hi)`},
		{"n[1-2-3]", `"n[1-2-3]": bad range "1-2-3" (want n or lo-hi)`},
		{"n[0-65536]", `"n[0-65536]": range "0-65536" holds more than 65536 hosts`},
		{"n[1-2]x]", `"n[1-2]x]": ']' without '['`},
		{"n[99999999999999999999]", `"n[99999999999999999999]": bad range "99999999999999999999": number too large`},
		{"a[0-2047]b[0-1023]", `"a[0-2047]b[0-1023]": more than 1048576 hosts`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := ExpandHostlist(tt.expr)
			if err == nil || err.Error() != tt.want {
				t.Errorf("ExpandHostlist(%q) = %d hosts, error %v; want %s", tt.expr, len(got), err, tt.want)
			}
		})
	}
	// The largest range Slurm takes is fine.
	if got, err := ExpandHostlist("n[0-65535]"); err != nil || len(got) != 65536 || got[65535] != "n65535" {
		t.Errorf("ExpandHostlist(n[0-65535]) = %d hosts, %v", len(got), err)
	}
}

// FuzzExpandHostlist checks that any expression expands without panicking
// within the bounds, to non-empty hosts that hold no separator.
// Run: go test -run '^$' -fuzz FuzzExpandHostlist -fuzztime 30s ./ingest/
func FuzzExpandHostlist(f *testing.F) {
	for _, s := range []string{"node[01-10,12]", "r[1-2]n[1-2]-ib", "a,b c", "n[1-3", "[18446744073709551615]", "x[0-65535]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		hosts, err := ExpandHostlist(expr)
		if err != nil {
			return
		}
		if len(hosts) > maxHostlistHosts {
			t.Fatalf("%d hosts", len(hosts))
		}
		for _, h := range hosts {
			if h == "" || strings.ContainsAny(h, ", \t") {
				t.Fatalf("host %q of %q", h, expr)
			}
		}
	})
}
