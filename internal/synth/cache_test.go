package synth

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestYear5M(t *testing.T) {
	t.Parallel()
	o := New(Year5M()).Options()
	from := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if o.Seed != 7 || o.Jobs != 5_000_000 || o.Labs != 300 || !o.From.Equal(from) || !o.To.Equal(to) ||
		o.StepFraction != 0 || o.UnixTimes || o.Location != time.UTC {
		t.Errorf("Year5M (defaults filled in) = %+v, want seed 7, 5M jobs, 300 labs, 2024 in UTC, no steps, no Unix times", o)
	}
}

func TestCached(t *testing.T) {
	t.Parallel()
	o := Options{Seed: 3, Jobs: 200, Labs: 5}
	// What WriteDir writes for o is what Cached must hand out.
	ref := t.TempDir()
	wantSum, err := WriteDir(ref, o)
	if err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "cache") // created by Cached
	// A killed run leaves a temp directory with a half-written file; it
	// must not be taken for the cache.
	name, err := CacheName(o)
	if err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(dir, "."+name+".tmp-123")
	if err := os.MkdirAll(half, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(half, SacctFile), []byte("JobID|"), 0o644); err != nil {
		t.Fatal(err)
	}

	f, err := Cached(dir, o)
	if err != nil {
		t.Fatalf("Cached: %v", err)
	}
	if f.Dir != filepath.Join(dir, name) {
		t.Errorf("Dir = %s, want %s", f.Dir, filepath.Join(dir, name))
	}
	if f.Summary != wantSum {
		t.Errorf("Summary = %+v, want %+v", f.Summary, wantSum)
	}
	for _, c := range []struct{ got, name string }{
		{f.SlurmConf, SlurmConfFile}, {f.Assoc, AssocFile}, {f.QOS, QOSFile}, {f.Sacct, SacctFile},
	} {
		got, err := os.ReadFile(c.got)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(ref, c.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what WriteDir writes", c.got)
		}
	}

	// A second call reuses the files: a mark appended to sacct.psv stays.
	mark := []byte("# reused\n")
	appendTo(t, f.Sacct, mark)
	f2, err := Cached(dir, o)
	if err != nil {
		t.Fatalf("Cached again: %v", err)
	}
	if f2 != f {
		t.Errorf("second Cached = %+v, want %+v", f2, f)
	}
	if b, _ := os.ReadFile(f.Sacct); !bytes.HasSuffix(b, mark) {
		t.Errorf("second Cached rewrote %s", f.Sacct)
	}

	// Other options get another directory.
	o2 := o
	o2.Jobs = 201
	g, err := Cached(dir, o2)
	if err != nil {
		t.Fatal(err)
	}
	if g.Dir == f.Dir || g.Summary.Jobs != 201 {
		t.Errorf("Cached(Jobs 201) = dir %s with %d jobs, want a new dir with 201 jobs", g.Dir, g.Summary.Jobs)
	}

	// A directory missing a file is regenerated, not handed out.
	if err := os.Remove(filepath.Join(f.Dir, summaryFile)); err != nil {
		t.Fatal(err)
	}
	f3, err := Cached(dir, o)
	if err != nil {
		t.Fatalf("Cached after removing %s: %v", summaryFile, err)
	}
	if f3 != f {
		t.Errorf("regenerated = %+v, want %+v", f3, f)
	}
	if b, _ := os.ReadFile(f.Sacct); bytes.HasSuffix(b, mark) {
		t.Errorf("incomplete cache directory was reused")
	}

	// The only entries are the two caches and the killed run's temp dir.
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 3 {
		t.Errorf("cache dir holds %v, want 2 caches and the stale temp dir", names)
	}
}

func TestCacheName(t *testing.T) {
	t.Parallel()
	a, err := CacheName(Options{Seed: 3, Jobs: 200, Labs: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a, "seed3-jobs200-") || len(a) != len("seed3-jobs200-")+12 {
		t.Errorf("CacheName = %q, want seed3-jobs200-<12 hex>", a)
	}
	// Defaults are filled in first: an explicit default is the same cluster.
	b, err := CacheName(Options{Seed: 3, Jobs: 200, Labs: 5, UsersPerLab: 6, Cluster: "synth"})
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("explicit defaults: %q, want %q", b, a)
	}
	for _, o := range []Options{
		{Seed: 4, Jobs: 200, Labs: 5},
		{Seed: 3, Jobs: 200, Labs: 5, UnixTimes: true},
		{Seed: 3, Jobs: 200, Labs: 5, StepFraction: -1},
	} {
		c, err := CacheName(o)
		if err != nil {
			t.Fatal(err)
		}
		if c == a {
			t.Errorf("CacheName(%+v) = %q, same as for other options", o, c)
		}
	}
	if _, err := CacheName(Options{Seed: 3, Jobs: -1}); err == nil {
		t.Error("CacheName(Jobs -1): no error")
	}
}

func appendTo(t *testing.T, name string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
