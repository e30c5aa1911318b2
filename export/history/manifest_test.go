package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/schemas"
)

// manifestPath is generation n's manifest file.
func manifestPath(h *Store, n int64) string {
	return filepath.Join(h.Dir, "gen", genName(n), "manifest.json")
}

// editManifest rewrites generation n's manifest file with edit applied to
// its text.
func editManifest(t *testing.T, h *Store, n int64, edit func(string) string) {
	t.Helper()
	file := manifestPath(h, n)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	after := edit(string(b))
	if after == string(b) {
		t.Fatalf("edit of %s changed nothing", file)
	}
	if err := os.WriteFile(file, []byte(after), 0o644); err != nil {
		t.Fatal(err)
	}
}

var checksumLine = regexp.MustCompile(`(?m)^  "checksum": "[^"]*",\n`)

// dropChecksum removes the checksum line: a manifest as a fairledger before
// checksums wrote it.
func dropChecksum(s string) string { return checksumLine.ReplaceAllString(s, "") }

// The checksum is the SHA-256 of the manifest's compact JSON without the
// checksum, computed here from the file's own text (the line removed, the
// rest compacted), not by the code under test.
func TestManifestChecksum(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	b, err := os.ReadFile(manifestPath(h, 8))
	if err != nil {
		t.Fatal(err)
	}
	m := checksumLine.FindString(string(b))
	if m == "" {
		t.Fatalf("manifest has no checksum line:\n%s", b)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(dropChecksum(string(b)))); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(compact.Bytes())
	if want := `  "checksum": "sha256:` + hex.EncodeToString(sum[:]) + `",` + "\n"; m != want {
		t.Errorf("checksum line %q, want %q", m, want)
	}
}

// checkManifestRefused checks that every way into the history refuses it
// with a *ManifestError naming generation n's manifest and the repair.
func checkManifestRefused(t *testing.T, h *Store, n int64) {
	t.Helper()
	file := manifestPath(h, n)
	var rows []any
	for name, err := range map[string]error{
		"View":          func() error { _, err := h.View(); return err }(),
		"Begin":         func() error { _, err := h.Begin(); return err }(),
		"ReadManifest":  func() error { _, err := h.ReadManifest(); return err }(),
		"ReadPartition": h.ReadPartition(schemas.TableJobs, "c1", time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), &rows),
		"WriteState":    h.WriteState("c1", "checkpoint-20250402T000000Z.json", []byte(`{}`)),
	} {
		var me *ManifestError
		if !errors.As(err, &me) {
			t.Errorf("%s: error %v, want a *ManifestError", name, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, file) || !strings.Contains(msg, "fairledger verify --repair --history "+h.Dir) {
			t.Errorf("%s: %q, want the manifest %s and `fairledger verify --repair --history %s`", name, msg, file, h.Dir)
		}
	}
}

// Issue 33: one changed min_time of a settled jobs segment. Every reader
// and writer refuses the generation; verify reports the manifest;
// --repair goes back to generation 7 (the one before the last commit,
// which only appended a run: every checkpoint is in it, nothing to
// recompute) and what it commits has the file's true min_time.
func TestEditedManifestRefused(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	// The jobs file of March: one job started 2025-03-02T10:00:00Z.
	editManifest(t, h, 8, func(s string) string {
		return strings.Replace(s, `"min_time": 1740909600`, `"min_time": 1740996000`, 1)
	})
	checkManifestRefused(t, h, 8)

	rep := mustVerify(t, h, "")
	p := oneProblem(t, rep, manifestPath(h, 8), "does not match its checksum")
	if rep.Generation != 8 || rep.Fallback != 7 || len(rep.Reruns) != 0 {
		t.Errorf("generation %d, fallback %d, reruns %+v; want 8, 7 and none", rep.Generation, rep.Fallback, rep.Reruns)
	}
	for _, want := range []string{"verify --repair --history " + h.Dir, "copy of generation 7", "nothing to recompute"} {
		if !strings.Contains(p.Repair, want) {
			t.Errorf("repair %q lacks %q", p.Repair, want)
		}
	}

	rep = mustRepair(t, h, "")
	if rep.Repaired != 9 || rep.Problems[0].Fixed != FixedReplaced {
		t.Fatalf("repair: generation %d, fixed %q; want 9, %q", rep.Repaired, rep.Problems[0].Fixed, FixedReplaced)
	}
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 0 || rep.Generation != 9 {
		t.Fatalf("after repair: generation %d, problems %+v", rep.Generation, rep.Problems)
	}
	jobs, _ := fileOf(t, h, schemas.TableJobs, "2025-03")
	if jobs.MinTime != 1740909600 {
		t.Errorf("jobs file min_time %d after repair, want 1740909600 (2025-03-02T10:00:00Z)", jobs.MinTime)
	}
	if m, _ := h.ReadManifest(); len(m.Files(schemas.TableRuns, "c1")) != 0 {
		t.Errorf("runs files %+v after repair, want none (generation 7 had none)", m.Files(schemas.TableRuns, "c1"))
	}
}

// A manifest replaced by something else (report --out into the history)
// after a night that added a checkpoint: the repair goes back one
// generation and says the next run recomputes from the checkpoint of 1
// April to that of 15 April.
func TestRepairDamagedManifestRecomputesNights(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	if err := h.WriteState("c1", "checkpoint-20250415T000000Z.json", []byte(`{"version":1,"cluster":"c1","to":1744675200}`)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifestPath(h, 9), []byte("<!DOCTYPE html>\n<html></html>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkManifestRefused(t, h, 9)
	rep := mustVerify(t, h, "")
	oneProblem(t, rep, manifestPath(h, 9), "not a manifest")
	want := Rerun{Cluster: "c1", From: cp20250401, Checkpoint: "checkpoint-20250401T000000Z.json", To: 1744675200}
	if rep.Fallback != 8 || len(rep.Reruns) != 1 {
		t.Fatalf("fallback %d, reruns %+v; want 8 and one", rep.Fallback, rep.Reruns)
	}
	if r := rep.Reruns[0]; r.Cluster != want.Cluster || r.From != want.From || r.Checkpoint != want.Checkpoint || r.To != want.To || r.Fresh {
		t.Errorf("rerun %+v, want %+v", r, want)
	}
	if c := rep.Reruns[0].Command; !strings.Contains(c, "--from 2025-04-01T00:00:00Z --to 2025-04-15T00:00:00Z") {
		t.Errorf("rerun command %q, want --from 2025-04-01T00:00:00Z --to 2025-04-15T00:00:00Z", c)
	}
	if rep, err := h.Repair("c1"); err == nil || rep.Repaired != 0 {
		t.Errorf("repair --cluster c1 of a damaged manifest: generation %d, error %v; want an error and no commit", rep.Repaired, err)
	}
	rep = mustRepair(t, h, "")
	if rep.Repaired != 10 {
		t.Fatalf("repaired generation %d, want 10", rep.Repaired)
	}
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Files(TableState, "c1")); got != 3 {
		t.Errorf("checkpoints after repair: %d, want 3 (1 and 15 March, 1 April)", got)
	}
}

// No older generation verifies: the one before shares the damaged file
// (a hard link). Repair commits nothing and says to restore from a backup.
func TestRepairDamagedManifestNoFallback(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	for n := int64(7); n >= 1; n-- {
		os.RemoveAll(filepath.Join(h.Dir, "gen", genName(n))) // as if older generations were removed
	}
	if err := h.WriteState("c1", "checkpoint-20250415T000000Z.json", []byte(`{}`)); err != nil { // generation 9
		t.Fatal(err)
	}
	_, jobs := fileOf(t, h, schemas.TableJobs, "2025-03")
	damageInPlace(t, jobs) // generations 8 and 9 share it
	editManifest(t, h, 9, dropChecksumAndRename)
	rep := mustRepair(t, h, "")
	p := oneProblem(t, rep, manifestPath(h, 9), "manifest is damaged")
	if rep.Fallback != 0 || rep.Repaired != 0 {
		t.Errorf("fallback %d, repaired %d; want 0 and 0", rep.Fallback, rep.Repaired)
	}
	if !strings.Contains(p.Repair, "from a backup") {
		t.Errorf("repair %q, want a restore from a backup", p.Repair)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "gen", genName(10))); err == nil {
		t.Error("generation 10 committed without a generation that verifies")
	}
}

// dropChecksumAndRename damages a manifest otherwise: its generation
// number changed.
func dropChecksumAndRename(s string) string {
	return strings.Replace(s, `"generation": 9`, `"generation": 8`, 1)
}

// A manifest written before checksums is read, and the next commit writes
// one.
func TestManifestWithoutChecksum(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	editManifest(t, h, 8, dropChecksum)
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 0 {
		t.Fatalf("a manifest without a checksum: problems %+v, want none", rep.Problems)
	}
	if m, err := h.ReadManifest(); err != nil || m.Checksum != "" || len(m.Partitions) != 8 {
		t.Fatalf("ReadManifest = %d files, checksum %q, %v; want 8 files, no checksum", len(m.Partitions), m.Checksum, err)
	}
	if err := h.WriteState("c1", "checkpoint-20250415T000000Z.json", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(manifestPath(h, 9))
	if err != nil {
		t.Fatal(err)
	}
	if !checksumLine.Match(b) {
		t.Errorf("generation 9's manifest has no checksum:\n%s", b)
	}
}

// Issue 33 in a history whose manifest has no checksum (written before
// them): the statistics are checked against the file's rows. The jobs file
// of March holds one job, started 2025-03-02T10:00:00Z (1740909600),
// charged 3600 s (max_end 1740913200), job_id_raw 7.
func TestVerifyStatistics(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	editManifest(t, h, 8, func(s string) string {
		s = strings.Replace(dropChecksum(s), `"min_time": 1740909600`, `"min_time": 1740996000`, 1)
		return strings.Replace(s, `"max_end": 1740913200`, `"max_end": 1740909601`, 1)
	})
	jobs, full := fileOf(t, h, schemas.TableJobs, "2025-03")
	rep := mustVerify(t, h, "")
	p := oneProblem(t, rep, full, "min_time 1740996000 (2025-03-03T10:00:00Z) in the manifest, 1740909600 (2025-03-02T10:00:00Z) in the file")
	if want := "max_end 1740909601 (2025-03-02T10:00:01Z) in the manifest, 1740913200 (2025-03-02T11:00:00Z) in the file"; !strings.Contains(p.What, want) {
		t.Errorf("what %q lacks %q", p.What, want)
	}
	// The runs may have planned with the wrong start: recompute from the
	// checkpoint of 1 March, the newest at or before the first row.
	if p.Rerun == nil || p.Rerun.Checkpoint != "checkpoint-20250301T000000Z.json" {
		t.Errorf("rerun %+v, want from checkpoint-20250301T000000Z.json", p.Rerun)
	}

	rep = mustRepair(t, h, "")
	if rep.Repaired != 9 || rep.Problems[0].Fixed != FixedRecorded {
		t.Fatalf("repair: generation %d, fixed %q; want 9, %q", rep.Repaired, rep.Problems[0].Fixed, FixedRecorded)
	}
	after, _ := fileOf(t, h, schemas.TableJobs, "2025-03")
	if after.Path != jobs.Path || after.MinTime != 1740909600 || after.MaxEnd != 1740913200 || after.MinID != 7 || after.MaxID != 7 || after.Rows != 1 {
		t.Errorf("entry after repair %+v, want %s with min_time 1740909600, max_end 1740913200, ids 7, 1 row", after, jobs.Path)
	}
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 0 {
		t.Errorf("after repair: %+v", rep.Problems)
	}
}

// The statistics of each table's file, from its rows, against values
// worked out by hand from repairHistory's rows.
func TestContentStats(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	for _, c := range []struct {
		table, month string
		want         Partition
	}{
		// 2025-03-02T10:00Z, +3600 s, id 7.
		{schemas.TableJobs, "2025-03", Partition{Rows: 1, MinTime: 1740909600, MaxTime: 1740909600, MinID: 7, MaxID: 7, MaxEnd: 1740913200}},
		// Days 20 and 21 March.
		{schemas.TableUsage, "2025-03", Partition{Rows: 2, MinTime: 1742428800, MaxTime: 1742515200}},
		// The snapshot of 15 March.
		{schemas.TableFairshare, "2025-03", Partition{Rows: 1, MinTime: cp20250315, MaxTime: cp20250315}},
		// The run started 1 April.
		{schemas.TableRuns, "2025-04", Partition{Rows: 1, MinTime: cp20250401, MaxTime: cp20250401}},
	} {
		p, full := fileOf(t, h, c.table, c.month)
		got, err := statsOfFile(full, p)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s %s: statistics %+v, want %+v", c.table, c.month, got, c.want)
		}
	}
}
