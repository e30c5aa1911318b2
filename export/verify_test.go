package export

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/schemas"
)

// verifyHistory writes a small history of cluster c, month 2025-03: 3 jobs
// rows, 2 usage rows, 1 fairshare row and two checkpoints (1 March and 15
// March), one commit each, so 5 files in the last generation.
func verifyHistory(t *testing.T) *History {
	t.Helper()
	h, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	march := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(day, hour int) time.Time { return time.Date(2025, 3, day, hour, 0, 0, 0, time.UTC) }
	jobs := []JobRow{
		{JobID: "101", JobIDRaw: 101, User: "ann", Account: "lab1", Partition: "cpu", QOS: "normal", State: "COMPLETED",
			Start: at(2, 10), ChargedSec: 3600, NNodes: 1, AllocCPUs: 4, Billing: 4, UsageFactor: 1, SourceFile: "sacct.psv", SourceLine: 2},
		{JobID: "102", JobIDRaw: 102, User: "bob", Account: "lab1", Partition: "gpu", QOS: "normal", State: "COMPLETED",
			Start: at(3, 11), ChargedSec: 7200, NNodes: 1, AllocCPUs: 8, GPU: 1, TRES: map[string]float64{"cpu": 8, "gres/gpu": 1},
			Billing: 8, UsageFactor: 1, SourceFile: "sacct.psv", SourceLine: 3},
		{JobID: "103", JobIDRaw: 103, User: "cy", Account: "lab2", Partition: "cpu", QOS: "normal", State: "FAILED",
			Start: at(4, 12), ChargedSec: 60, NNodes: 2, AllocCPUs: 2, Billing: 2, UsageFactor: 1, SourceFile: "sacct.psv", SourceLine: 4},
	}
	usage := []UsageRow{
		{Account: "lab1", User: "ann", Partition: "cpu", PeriodStart: at(2, 0), BillingSec: 14400, CPUSec: 14400},
		{Account: "lab1", User: "bob", Partition: "gpu", PeriodStart: at(3, 0), BillingSec: 57600, CPUSec: 57600, GPUSec: 7200},
	}
	share := 1.0
	fs := []FairshareRow{{Snapshot: at(5, 0), Algorithm: "classic", Account: "lab1", Parent: "root", Depth: 1, FairShare: &share}}
	for _, w := range []struct {
		table string
		rows  any
	}{{schemas.TableJobs, jobs}, {schemas.TableUsage, usage}, {schemas.TableFairshare, fs}} {
		if err := h.WritePartition(w.table, "c", march, w.rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.WriteState("c", "checkpoint-20250301T000000Z.json", []byte(`{"version":1,"to":1740787200}`)); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteState("c", "checkpoint-20250315T000000Z.json", []byte(`{"version":1,"to":1741996800}`)); err != nil {
		t.Fatal(err)
	}
	return h
}

// genDirOf is the committed generation's directory, from the symlink.
func genDirOf(t *testing.T, h *History) string {
	t.Helper()
	target, err := os.Readlink(filepath.Join(h.Dir, "current"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(h.Dir, target)
}

// onlyFile is the one Parquet file of a partition directory of the
// committed generation, as gen/<N>/... and relative to it.
func onlyFile(t *testing.T, h *History, table string) (full, rel string) {
	t.Helper()
	dir := genDirOf(t, h)
	m, err := filepath.Glob(filepath.Join(dir, table, "cluster=c", "month=2025-03", "*.parquet"))
	if err != nil || len(m) != 1 {
		t.Fatalf("%s files: %v %v", table, m, err)
	}
	rel, _ = filepath.Rel(dir, m[0])
	return m[0], rel
}

func mustVerify(t *testing.T, h *History, cluster string) VerifyReport {
	t.Helper()
	rep, err := h.Verify(cluster)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func oneProblem(t *testing.T, rep VerifyReport, path, what string) Problem {
	t.Helper()
	if len(rep.Problems) != 1 {
		t.Fatalf("problems = %+v, want one for %s", rep.Problems, path)
	}
	p := rep.Problems[0]
	if p.Path != path || !strings.Contains(p.What, what) {
		t.Fatalf("problem = %+v, want path %s and %q", p, path, what)
	}
	if p.Repair == "" {
		t.Errorf("problem %+v has no repair", p)
	}
	return p
}

func TestVerifyClean(t *testing.T) {
	h := verifyHistory(t)
	rep := mustVerify(t, h, "")
	if len(rep.Problems) != 0 {
		t.Fatalf("clean history: problems %+v", rep.Problems)
	}
	// 3 data files and 2 checkpoints; every byte of each is hashed.
	var size int64
	var files int
	dir := genDirOf(t, h)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "manifest.json" {
			fi, _ := d.Info()
			size += fi.Size()
			files++
		}
		return err
	})
	if files != 5 || rep.Files != 5 || rep.Bytes != size {
		t.Errorf("report: %d files, %d bytes; on disk %d files, %d bytes, want 5 files", rep.Files, rep.Bytes, files, size)
	}
	if rep.Generation != 5 {
		t.Errorf("generation %d, want 5 (five commits)", rep.Generation)
	}
}

func TestVerifyFlippedBytes(t *testing.T) {
	h := verifyHistory(t)
	full, rel := onlyFile(t, h, schemas.TableJobs)
	// Modify the file in place through the current generation's path: the
	// previous generations hold the same inode.
	f, err := os.OpenFile(filepath.Join(h.Dir, "current", rel), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	sum := fmt.Sprintf("%x", sha256.Sum256(b))
	fi, _ := f.Stat()
	mid := fi.Size() / 2
	buf := make([]byte, 16)
	if _, err := f.ReadAt(buf, mid); err != nil {
		t.Fatal(err)
	}
	orig := append([]byte(nil), buf...)
	for i := range buf {
		buf[i] ^= 0xff
	}
	if _, err := f.WriteAt(buf, mid); err != nil {
		t.Fatal(err)
	}
	p := oneProblem(t, mustVerify(t, h, ""), full, "SHA-256")
	// Every generation's link is the same inode, so only a backup helps:
	// the repair names the bytes to look for.
	for _, want := range []string{"restore it from a backup", sum, "stops on it", "fairledger run --history NEWDIR"} {
		if !strings.Contains(p.Repair, want) {
			t.Errorf("repair %q lacks %q", p.Repair, want)
		}
	}
	// Verify of another file set: the cluster filter still sees it.
	oneProblem(t, mustVerify(t, h, "c"), full, "SHA-256")
	if _, err := f.WriteAt(orig, mid); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 0 {
		t.Errorf("bytes restored: problems %+v", rep.Problems)
	}
}

func TestVerifyTruncated(t *testing.T) {
	h := verifyHistory(t)
	full, _ := onlyFile(t, h, schemas.TableUsage)
	fi, err := os.Stat(full)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(full, fi.Size()-100); err != nil {
		t.Fatal(err)
	}
	// 100 bytes less than written.
	want := strconv.FormatInt(fi.Size()-100, 10) + " bytes, the manifest says " + strconv.FormatInt(fi.Size(), 10)
	p := oneProblem(t, mustVerify(t, h, ""), full, want)
	if !strings.Contains(p.Repair, "`fairledger run`, `sql` and `report` refuse this history") || !strings.Contains(p.Repair, "backup") {
		t.Errorf("repair %q", p.Repair)
	}
}

func TestVerifyMissing(t *testing.T) {
	h := verifyHistory(t)
	full, _ := onlyFile(t, h, schemas.TableFairshare)
	if err := os.Remove(full); err != nil {
		t.Fatal(err)
	}
	p := oneProblem(t, mustVerify(t, h, ""), full, "missing")
	// The fairshare file was written by the third commit; the fourth (the
	// generation kept before the fifth) links it too.
	rel, _ := filepath.Rel(genDirOf(t, h), full)
	if want := "cp " + filepath.Join(h.Dir, "gen", "00000004", rel) + " " + full; !strings.HasSuffix(p.Repair, want) {
		t.Errorf("repair %q, want it to end with %q", p.Repair, want)
	}
}

func TestVerifyStray(t *testing.T) {
	h := verifyHistory(t)
	dir := genDirOf(t, h)
	stray := filepath.Join(dir, "jobs", "cluster=c", "month=2025-03", "extra.parquet")
	if err := os.WriteFile(stray, []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := oneProblem(t, mustVerify(t, h, ""), stray, "not listed in the manifest")
	if !strings.Contains(p.Repair, "fairledger sql") {
		t.Errorf("a stray Parquet file's repair should say that queries read it: %q", p.Repair)
	}
	// A stray of another cluster is not cluster c's.
	other := filepath.Join(dir, "jobs", "cluster=d", "month=2025-03", "x.parquet")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 2 {
		t.Errorf("all clusters: problems %+v, want 2", rep.Problems)
	}
	oneProblem(t, mustVerify(t, h, "c"), stray, "not listed")
}

func TestVerifyCheckpoint(t *testing.T) {
	h := verifyHistory(t)
	// A checkpoint whose bytes are what was committed but not JSON.
	if err := h.WriteState("c", "checkpoint-20250320T000000Z.json", []byte(`{"version":1,`)); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(genDirOf(t, h), "state", "cluster=c", "checkpoint-20250320T000000Z.json")
	p := oneProblem(t, mustVerify(t, h, ""), full, "not valid JSON")
	if !strings.Contains(p.Repair, "report this as a bug") || strings.Contains(p.Repair, "backup") {
		t.Errorf("repair %q: every copy has the same bytes", p.Repair)
	}

	// A damaged checkpoint's bytes.
	old := filepath.Join(genDirOf(t, h), "state", "cluster=c", "checkpoint-20250301T000000Z.json")
	if err := os.WriteFile(old, []byte(`{"version":1,"to":1740787201}`), 0o644); err != nil { // same length
		t.Fatal(err)
	}
	rep := mustVerify(t, h, "")
	if len(rep.Problems) != 2 || rep.Problems[0].Path != old || !strings.Contains(rep.Problems[0].What, "SHA-256") {
		t.Fatalf("problems %+v, want the SHA-256 of %s first", rep.Problems, old)
	}
	if r := rep.Problems[0].Repair; !strings.Contains(r, "every run of cluster c stops on it") || !strings.Contains(r, "backup") {
		t.Errorf("repair of a damaged checkpoint: %q", r)
	}
}

func TestVerifyUnknownClusterAndOldLayout(t *testing.T) {
	h := verifyHistory(t)
	if _, err := h.Verify("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown cluster: err %v", err)
	}
	old, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old.Dir, "manifest.json"), []byte(`{"partitions":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Verify(""); !errors.Is(err, ErrOldLayout) {
		t.Errorf("old layout: err %v, want ErrOldLayout", err)
	}
	empty, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, empty, ""); rep.Files != 0 || len(rep.Problems) != 0 || rep.Generation != 0 {
		t.Errorf("empty history: %+v", rep)
	}
}
