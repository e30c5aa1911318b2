package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutsideHistory: which output paths lie inside a history, symlinks
// resolved as the kernel resolves them (".." after a symlink is the
// parent of its target, not of the link).
func TestOutsideHistory(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		mk(filepath.Dir(p))
		if err := os.WriteFile(filepath.Join(root, p), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(name, target string) {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("hist/gen/00000001/manifest.json")
	mk("hist/gen/00000001/jobs")
	link("hist/current", "gen/00000001")
	write("nolink/gen/00000003/manifest.json") // a history whose current link is gone
	mk("notes/gen/drafts")                     // a gen directory without manifests: not a history
	mk("out")
	link("cur", "hist/current")
	link("dangling.html", "hist/new.html")
	link("outlink", "out")

	for _, c := range []struct {
		path string
		in   string // the history named, "" for none
	}{
		{"out/report.html", ""},
		{"outlink/report.html", ""},
		{"notes/gen/drafts/report.html", ""},
		{"-", ""},
		{"hist", "hist"},
		{"hist/report.html", "hist"},
		{"hist/current/manifest.json", "hist"},
		{"cur/jobs/new/deeper.html", "hist"},
		{"cur/../x.html", "hist"}, // hist/gen/x.html, not ./x.html
		{"out/../hist/x.html", "hist"},
		{"dangling.html", "hist"},
		{"nolink/x.html", "nolink"},
	} {
		name := c.path
		if name != "-" {
			name = filepath.Join(root, c.path)
			if strings.HasPrefix(c.path, "cur/..") {
				name = root + "/" + c.path // not cleaned by Join
			}
		}
		err := outsideHistory("out", name)
		if c.in == "" {
			if err != nil {
				t.Errorf("%s: %v, want no error", c.path, err)
			}
			continue
		}
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: error %v, want a usage error", c.path, err)
			continue
		}
		if want := "is inside the fairledger history " + filepath.Join(root, c.in) + ":"; !strings.Contains(err.Error(), want) ||
			!strings.HasPrefix(err.Error(), "--out "+name) {
			t.Errorf("%s: %q, want --out %s and %q", c.path, err, name, want)
		}
	}

	// A run's own --history is refused before its first commit.
	if err := outsideHistory("rejects", filepath.Join(root, "out", "r.tsv"), filepath.Join(root, "outlink")); err == nil ||
		!strings.Contains(err.Error(), "inside the fairledger history "+filepath.Join(root, "outlink")) {
		t.Errorf("--rejects in the run's own --history: %v, want refused", err)
	}
}
