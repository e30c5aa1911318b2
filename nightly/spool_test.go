package nightly

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// A dump is kept only when the tree changed, and each night's run reads
// the dumps its window needs, not the whole spool.
func TestNightAssocDumps(t *testing.T) {
	t.Parallel()
	spool := t.TempDir()
	day := func(d int) time.Time { return time.Date(2025, 3, d, 0, 0, 0, 0, time.UTC) }
	night := func(lo, to time.Time, tree string) (*Night, bool) {
		t.Helper()
		n, err := NewNight(spool, "c", to)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(n.FetchedAssoc(), []byte(tree), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(n.QOSFile(), []byte("Name|UsageFactor|Flags\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		isNew, err := n.PrepareAssoc(lo, to, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return n, isNew
	}
	// The first night backfills from March 1: its dump is in force from then.
	n, isNew := night(day(1), day(3), "tree A")
	if !isNew || !slices.Equal(names(t, n.AssocDir()), []string{"assoc-2025-03-01.psv"}) {
		t.Fatalf("first night: new %v, run reads %v", isNew, names(t, n.AssocDir()))
	}
	if err := n.Commit(); err != nil {
		t.Fatal(err)
	}
	// The same tree the next night: nothing kept.
	n, isNew = night(day(3), day(4), "tree A")
	if isNew || !slices.Equal(names(t, n.AssocDir()), []string{"assoc-2025-03-01.psv"}) {
		t.Fatalf("same tree: new %v, run reads %v", isNew, names(t, n.AssocDir()))
	}
	if err := n.Commit(); err != nil {
		t.Fatal(err)
	}
	// A changed tree is kept as in force from the night's end.
	n, isNew = night(day(4), day(5), "tree B")
	if !isNew || !slices.Equal(names(t, n.AssocDir()), []string{"assoc-2025-03-01.psv", "assoc-2025-03-05.psv"}) {
		t.Fatalf("changed tree: new %v, run reads %v", isNew, names(t, n.AssocDir()))
	}
	if err := n.Commit(); err != nil {
		t.Fatal(err)
	}
	// Later nights read only the dump in force.
	n, _ = night(day(6), day(7), "tree B")
	if got := names(t, n.AssocDir()); !slices.Equal(got, []string{"assoc-2025-03-05.psv"}) {
		t.Errorf("later night reads %v", got)
	}
	// A failed night leaves nothing behind, and the spool as it was.
	if err := n.Discard(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, filepath.Join(spool, "c")); !slices.Equal(got, []string{".lock", "assoc", "nights", "qos.psv"}) {
		t.Errorf("cluster spool = %v", got)
	}
	if got := names(t, filepath.Join(spool, "c", "assoc")); !slices.Equal(got, []string{"assoc-2025-03-01.psv", "assoc-2025-03-05.psv"}) {
		t.Errorf("kept dumps = %v", got)
	}
	if got := names(t, filepath.Join(spool, "c", "nights")); !slices.Equal(got, []string{"20250303T000000Z", "20250304T000000Z", "20250305T000000Z"}) {
		t.Errorf("nights = %v", got)
	}
}

// Two nights of one cluster at once: the second is refused before it
// touches the first one's files.
func TestNightLock(t *testing.T) {
	t.Parallel()
	spool := t.TempDir()
	to := time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)
	a, err := NewNight(spool, "c", to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewNight(spool, "c", to); err == nil {
		t.Fatal("a second night of the same cluster was not refused")
	}
	if _, err := os.Stat(a.Dir); err != nil {
		t.Fatalf("the refused night touched the first one's files: %v", err)
	}
	if err := a.Discard(); err != nil {
		t.Fatal(err)
	}
	b, err := NewNight(spool, "c", to)
	if err != nil {
		t.Fatalf("after the first night: %v", err)
	}
	b.Discard()
}
