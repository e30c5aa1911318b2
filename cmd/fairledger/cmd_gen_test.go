package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenUsersPerLab: --users-per-lab sets the mean lab size. Lab sizes
// are lognormal around the mean, at least 1 and at most 5× the mean, and
// about 4 % of users also get an association in a second lab: with 40
// labs, a mean of 1 gives 40 to 200 primary user associations and a mean
// of 9 gives 40 to 1,800, about 360 on average; the two must differ as
// the means do. A negative mean is refused.
func TestGenUsersPerLab(t *testing.T) {
	users := func(perLab string) int {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "g")
		code, _, stderr := runCLI(t, "gen", "--dir", dir, "--jobs", "10", "--labs", "40", "--users-per-lab", perLab)
		if code != 0 {
			t.Fatalf("gen --users-per-lab %s: exit %d: %s", perLab, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, "assoc.psv"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			if f := strings.Split(line, "|"); f[2] != "" && f[2] != "root" {
				n++
			}
		}
		return n
	}
	one, nine := users("1"), users("9")
	t.Logf("user associations: %d at a mean of 1, %d at 9", one, nine)
	if one < 40 || one > 2*200 {
		t.Errorf("--users-per-lab 1: %d user associations, want 40..400", one)
	}
	if nine < 4*one || nine < 200 {
		t.Errorf("--users-per-lab 9: %d user associations (1: %d), want over 200 and 4× as many", nine, one)
	}
	if code, _, stderr := runCLI(t, "gen", "--dir", t.TempDir(), "--users-per-lab", "-1"); code == 0 || !strings.Contains(stderr, "users per lab -1: must not be negative") {
		t.Errorf("--users-per-lab -1: exit %d, %s", code, stderr)
	}
}
