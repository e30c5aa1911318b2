package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 33: one changed min_time of a jobs segment in the committed
// manifest. verify used to report no problem, and the next night fed the
// same sacct file again added its jobs a second time with exit 0. Now the
// manifest's checksum refuses it: the run and the dry run exit 1 naming
// the manifest and writing nothing, sql and sshare refuse it, and verify
// reports it (exit 1).
func TestEditedMinTimeRefused(t *testing.T) {
	_, inputs := genSite(t)
	hist := filepath.Join(t.TempDir(), "hist")
	if code, _, errs := runCLI(t, append([]string{"run", "--history", hist, "--to", "2025-02-05"}, inputs...)...); code != exitOK {
		t.Fatalf("first night: exit %d\n%s", code, errs)
	}
	target, err := os.Readlink(filepath.Join(hist, "current"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(hist, target, "manifest.json")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	// The first jobs segment's min_time, one day later.
	re := regexp.MustCompile(`"path": "jobs/[^"]*",(?s:.*?)"min_time": (\d+)`)
	m := re.FindSubmatchIndex(b)
	if m == nil {
		t.Fatalf("no jobs segment with a min_time in %s:\n%s", manifest, b)
	}
	edited := string(b[:m[2]]) + "9" + string(b[m[2]+1:]) // 17… → 97…: far later
	if err := os.WriteFile(manifest, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, hist)
	want := "manifest " + manifest + " is damaged: its content does not match its checksum"
	for _, args := range [][]string{
		append([]string{"run", "--history", hist, "--to", "2025-02-06"}, inputs...),
		append([]string{"run", "--dry-run", "--history", hist, "--to", "2025-02-06"}, inputs...),
		{"sql", "--history", hist, "SELECT count(*) FROM jobs"},
		{"sshare", "--history", hist, "-a"},
		{"verify", "--history", hist},
	} {
		code, out, errs := runCLI(t, args...)
		msg, w := errs, want
		if args[0] == "verify" { // the problem on stdout
			msg, w = out, manifest+": the generation's manifest is damaged: its content does not match its checksum"
		}
		if code != exitError || !strings.Contains(msg, w) {
			t.Errorf("%s: exit %d, want %d and %q\n%s%s", args[0], code, exitError, w, out, errs)
		}
	}
	if got := treeHash(t, hist); got != before {
		t.Error("the refused commands changed the history")
	}
}
