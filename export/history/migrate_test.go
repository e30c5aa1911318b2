package history

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// oldHistory is testdata/history-v1: a history written by fairledger
// 47c0f80, the last commit before the generation store (see its README).
const oldHistory = "../../testdata/history-v1"

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// oldCopy is a copy of testdata/history-v1 in a temp dir.
func oldCopy(t *testing.T) *Store {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "history")
	copyTree(t, oldHistory, dir)
	h, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// readOldRows reads the old layout's files of table directly with
// parquet-go, grouped by "cluster/month", each group's rows in file name
// order.
func readOldRows[T any](t *testing.T, dir, table string) map[string][]T {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, table, "cluster=*", "month=*", "[^.]*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	out := map[string][]T{}
	for _, f := range files {
		rows, err := parquet.ReadFile[T](f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m := strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "month=")
		c := strings.TrimPrefix(filepath.Base(filepath.Dir(filepath.Dir(f))), "cluster=")
		out[c+"/"+m] = append(out[c+"/"+m], rows...)
	}
	return out
}

// checkRows compares the old rows of table with the view's partitions of
// the same cluster and month; it returns the rows per "table/cluster/month".
func checkRows[T any](t *testing.T, v *View, old map[string][]T, table string) map[string]int64 {
	t.Helper()
	counts := map[string]int64{}
	for key, want := range old {
		c, m, _ := strings.Cut(key, "/")
		month, err := schemas.ParseMonth(m)
		if err != nil {
			t.Fatal(err)
		}
		var got []T
		if err := v.ReadPartition(table, c, month, &got); err != nil {
			t.Errorf("%s %s: %v", table, key, err)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s %s: %d rows, the old files have %d", table, key, len(got), len(want))
			continue
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s %s row %d:\n got %+v\nwant %+v", table, key, i, got[i], want[i])
				break
			}
		}
		counts[table+"/"+key] = int64(len(got))
	}
	return counts
}

// oldManifestRows sums the rows of the old manifest.json's files per
// "table/cluster/month". A path counts once: the old code listed the first
// file it wrote twice (testdata/history-v1's usage of 2025-01).
func oldManifestRows(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Partitions []struct {
			Table, Cluster, Month, Path string
			Rows                        int64
		} `json:"partitions"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	seen := map[string]bool{}
	for _, p := range m.Partitions {
		if !seen[p.Path] {
			seen[p.Path] = true
			out[p.Table+"/"+p.Cluster+"/"+p.Month] += p.Rows
		}
	}
	if len(seen) != 17 {
		t.Fatalf("old manifest.json lists %d files, want 17", len(seen))
	}
	return out
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	// Read the jobs files 100 rows at a time, as a large file is: the rows
	// of a chunk must not keep values of the chunk before.
	defer func(n int) { migrateChunk = n }(migrateChunk)
	migrateChunk = 100
	h := oldCopy(t)
	// What an interrupted old writer leaves: temp files, which hold nothing
	// a reader saw.
	for _, tmp := range []string{"jobs/cluster=synth/month=2025-01/.data.parquet.tmp-123", ".manifest.json.tmp-9",
		"state/cluster=synth/.checkpoint-20250501T000000Z.json.tmp-4"} {
		if err := os.WriteFile(filepath.Join(h.Dir, tmp), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.View(); !errors.Is(err, ErrOldLayout) {
		t.Fatalf("View of the old layout: %v, want ErrOldLayout", err)
	}

	// The old files, read before the migration.
	wantRows := oldManifestRows(t, h.Dir)
	jobs := readOldRows[record.JobRow](t, h.Dir, schemas.TableJobs)
	usage := readOldRows[record.UsageRow](t, h.Dir, schemas.TableUsage)
	fairshare := readOldRows[record.FairshareRow](t, h.Dir, schemas.TableFairshare)
	assoc := readOldRows[record.AssociationRow](t, h.Dir, schemas.TableAssociations)
	runs := readOldRows[record.RunRow](t, h.Dir, schemas.TableRuns)
	for k, rs := range runs { // a partition of several runs reads in start order
		slices.SortStableFunc(rs, func(a, b record.RunRow) int { return a.Started.Compare(b.Started) })
		runs[k] = rs
	}
	checkpoints := map[string][]byte{}
	for _, name := range []string{"checkpoint-20250215T000000Z.json", "checkpoint-20250405T000000Z.json"} {
		b, err := os.ReadFile(filepath.Join(h.Dir, "state", "cluster=synth", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"jobs_extent"`) {
			t.Fatalf("%s has no jobs_extent: not the checkpoint the test is about", name)
		}
		checkpoints[name] = b
	}

	n, err := h.Migrate()
	if err != nil {
		t.Fatal(err)
	}
	// 4 associations, 4 fairshare, 3 jobs, 4 usage and 2 runs files, and 2
	// checkpoints (testdata/history-v1).
	if n != 19 {
		t.Errorf("Migrate converted %d files, want 19", n)
	}
	if target, err := os.Readlink(filepath.Join(h.Dir, "current")); err != nil || target != "gen/00000001" {
		t.Errorf("current -> %q (%v), want gen/00000001", target, err)
	}
	for _, old := range []string{"jobs", "usage", "fairshare", "associations", "runs", "state", "manifest.json",
		".manifest.json.tmp-9", migratingMarker} {
		if _, err := os.Lstat(filepath.Join(h.Dir, old)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left after the migration (%v)", old, err)
		}
	}

	v, err := h.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	gotRows := map[string]int64{}
	for _, c := range []map[string]int64{
		checkRows(t, v, jobs, schemas.TableJobs),
		checkRows(t, v, usage, schemas.TableUsage),
		checkRows(t, v, fairshare, schemas.TableFairshare),
		checkRows(t, v, assoc, schemas.TableAssociations),
		checkRows(t, v, runs, schemas.TableRuns),
	} {
		for k, n := range c {
			gotRows[k] = n
		}
	}
	// The new manifest's row counts, per partition, too.
	manifestRows := map[string]int64{}
	for _, p := range v.Manifest.Partitions {
		if p.Table != TableState {
			manifestRows[p.Table+"/"+p.Cluster+"/"+p.Month] += p.Rows
		}
	}
	if !reflect.DeepEqual(gotRows, wantRows) || !reflect.DeepEqual(manifestRows, wantRows) {
		t.Errorf("rows per partition:\n read     %v\n manifest %v\nwant (old manifest.json) %v", gotRows, manifestRows, wantRows)
	}
	for name, want := range checkpoints {
		got, err := v.ReadState("synth", name)
		if err != nil || string(got) != string(want) {
			t.Errorf("checkpoint %s: %d bytes (%v), want the old %d bytes unchanged", name, len(got), err, len(want))
		}
	}
	if got := v.Manifest.States("synth"); len(got) != 2 {
		t.Errorf("checkpoints %v, want the 2 old ones (no temp file)", got)
	}
	// Every migrated segment is a cold one with its statistics.
	for _, p := range v.Manifest.Partitions {
		if p.Hot || p.Table != TableState && (p.MinTime == 0 || p.MaxTime < p.MinTime) {
			t.Errorf("%s: hot %v, times %d..%d", p.Path, p.Hot, p.MinTime, p.MaxTime)
		}
		if p.Table == schemas.TableJobs && (p.MinID == 0 || p.MaxEnd < p.MaxTime) {
			t.Errorf("%s: ids %d..%d, max end %d", p.Path, p.MinID, p.MaxID, p.MaxEnd)
		}
	}
	v.Close()

	rep, err := h.Verify("")
	if err != nil {
		t.Fatal(err)
	}
	// The 17 old Parquet files are 16 segments (the two runs files of
	// 2026-11 are one), and the 2 checkpoints.
	if len(rep.Problems) != 0 || rep.Files != 18 {
		t.Errorf("Verify after the migration: %d files, problems %+v", rep.Files, rep.Problems)
	}

	// A second migration changes nothing.
	n, err = h.Migrate()
	if err != nil || n != 0 {
		t.Errorf("second Migrate: %d files, %v; want 0, nil", n, err)
	}
	if target, _ := os.Readlink(filepath.Join(h.Dir, "current")); target != "gen/00000001" {
		t.Errorf("after a second Migrate current -> %q", target)
	}
}

// A migration interrupted between its commit and the removal of the old
// files is finished by the next call; old files no migration left are
// refused.
func TestMigrateFinishesInterrupted(t *testing.T) {
	t.Parallel()
	h := oldCopy(t)
	if _, err := h.Migrate(); err != nil {
		t.Fatal(err)
	}
	// The state after a crash just after the commit: the old files and the
	// marker are back.
	copyTree(t, oldHistory, h.Dir)
	if err := os.WriteFile(filepath.Join(h.Dir, migratingMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := h.Verify("")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 7 || !strings.Contains(rep.Problems[0].Repair, "verify --migrate") { // 5 tables, state, manifest.json
		t.Errorf("Verify with old files left: %+v", rep.Problems)
	}
	n, err := h.Migrate()
	if err != nil || n != 0 {
		t.Fatalf("Migrate after an interrupted one: %d, %v", n, err)
	}
	for _, old := range []string{"jobs", "state", "manifest.json", migratingMarker} {
		if _, err := os.Lstat(filepath.Join(h.Dir, old)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left (%v)", old, err)
		}
	}
	if target, _ := os.Readlink(filepath.Join(h.Dir, "current")); target != "gen/00000001" {
		t.Errorf("current -> %q, want gen/00000001", target)
	}

	// Without the marker the old files are not the migration's.
	copyTree(t, oldHistory, h.Dir)
	if _, err := h.Migrate(); err == nil || !strings.Contains(err.Error(), "older than the generation store") {
		t.Errorf("old files beside a committed generation: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "jobs", "cluster=synth", "month=2025-01", "data.parquet")); err != nil {
		t.Errorf("refused migration removed files: %v", err)
	}
}

// checkUnchanged fails unless h is still testdata/history-v1 and nothing of
// a generation store was left.
func checkUnchanged(t *testing.T, h *Store) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(h.Dir, "current")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("current exists after a refused migration (%v)", err)
	}
	if _, err := os.Lstat(filepath.Join(h.Dir, migratingMarker)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("marker left after a refused migration (%v)", err)
	}
	if gens, _ := os.ReadDir(filepath.Join(h.Dir, "gen")); len(gens) != 0 {
		t.Errorf("gen/ holds %d entries after a refused migration", len(gens))
	}
	if _, err := h.View(); !errors.Is(err, ErrOldLayout) {
		t.Errorf("after a refused migration View: %v, want ErrOldLayout", err)
	}
}

func TestMigrateRefusesFilesTheManifestDisagreesWith(t *testing.T) {
	t.Parallel()
	h := oldCopy(t)
	// A run killed between a file's rename and the manifest's: the file
	// on disk is valid Parquet with other bytes than manifest.json says.
	jan := filepath.Join(h.Dir, "usage", "cluster=synth", "month=2025-01", "data.parquet")
	feb, err := os.ReadFile(filepath.Join(h.Dir, "usage", "cluster=synth", "month=2025-02", "data.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jan, feb, 0o644); err != nil {
		t.Fatal(err)
	}
	// And a file manifest.json lists that is gone.
	if err := os.Remove(filepath.Join(h.Dir, "runs", "cluster=synth", "month=2026-11", "run-20261126T195326Z-8720e666.parquet")); err != nil {
		t.Fatal(err)
	}
	_, err = h.Migrate()
	for _, want := range []string{"usage/cluster=synth/month=2025-01/data.parquet: ", "bytes, manifest.json says",
		"runs/cluster=synth/month=2026-11/run-20261126T195326Z-8720e666.parquet: listed in manifest.json but not on disk",
		"remove " + filepath.Join(h.Dir, "manifest.json")} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Migrate: %v; want %q", err, want)
		}
	}
	checkUnchanged(t, h)

	// Without the old manifest the files on disk are taken as they are.
	if err := os.Remove(filepath.Join(h.Dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	n, err := h.Migrate()
	if err != nil || n != 18 {
		t.Fatalf("Migrate without manifest.json: %d, %v; want 18 files", n, err)
	}
	var got []record.UsageRow
	if err := h.ReadPartition(schemas.TableUsage, "synth", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0].PeriodStart.Month() != time.February {
		t.Errorf("usage of 2025-01 after the migration: %d rows, first %v; want February's file", len(got), got)
	}
}

func TestMigrateRefusesUnknownFiles(t *testing.T) {
	t.Parallel()
	h := oldCopy(t)
	notes := filepath.Join(h.Dir, "jobs", "cluster=synth", "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := h.Migrate()
	if err == nil || !strings.Contains(err.Error(), "jobs/cluster=synth/notes.txt") {
		t.Errorf("Migrate with a file fairledger did not write: %v", err)
	}
	checkUnchanged(t, h)
	if _, err := os.Stat(notes); err != nil {
		t.Error(err)
	}
}

func TestMigrateEmpty(t *testing.T) {
	t.Parallel()
	h, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if n, err := h.Migrate(); n != 0 || err != nil {
		t.Errorf("Migrate of an empty history: %d, %v", n, err)
	}
	if _, err := os.Lstat(filepath.Join(h.Dir, "current")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Migrate of an empty history committed (%v)", err)
	}
}

// The old code could leave a stale second entry of a path in manifest.json
// (see oldManifestRows): the file matches one of them, and is migrated.
func TestMigrateStaleDuplicateEntry(t *testing.T) {
	t.Parallel()
	h := oldCopy(t)
	name := filepath.Join(h.Dir, "manifest.json")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string][]map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var stale map[string]any
	for _, e := range m["partitions"] {
		if e["path"] == "jobs/cluster=synth/month=2025-02/data.parquet" {
			stale = map[string]any{}
			for k, v := range e {
				stale[k] = v
			}
		}
	}
	stale["rows"], stale["bytes"], stale["sha256"] = 5, 1234, strings.Repeat("0", 64)
	m["partitions"] = append(m["partitions"], stale)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := h.Migrate(); err != nil || n != 19 {
		t.Fatalf("Migrate: %d, %v; want 19 files", n, err)
	}
	var jobs []record.JobRow
	if err := h.ReadPartition(schemas.TableJobs, "synth", time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), &jobs); err != nil || len(jobs) != 920 {
		t.Errorf("jobs of 2025-02: %d rows (%v), want the file's 920", len(jobs), err)
	}
}
