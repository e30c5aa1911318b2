package treslist

import "testing"

// TestAppend checks the name=value,… form after what b holds, and that an
// empty list appends nothing.
func TestAppend(t *testing.T) {
	t.Parallel()
	names, vals := []string{"cpu", "mem", "gres/gpu"}, []string{"96", "393216", "0"}
	got := string(Append([]byte("x:"), len(names), func(i int) string { return names[i] },
		func(b []byte, i int) []byte { return append(b, vals[i]...) }))
	if want := "x:cpu=96,mem=393216,gres/gpu=0"; got != want {
		t.Errorf("Append = %q, want %q", got, want)
	}
	if got := Append(nil, 0, nil, nil); len(got) != 0 {
		t.Errorf("Append of nothing = %q", got)
	}
}
