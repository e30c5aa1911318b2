package history

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// verifyHistory writes a small history of cluster c, month 2025-03: 3 jobs
// rows, 2 usage rows, 1 fairshare row and two checkpoints (1 March and 15
// March), one commit each, so 5 files in the last generation.
func verifyHistory(t *testing.T) *Store {
	t.Helper()
	h, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	march := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(day, hour int) time.Time { return time.Date(2025, 3, day, hour, 0, 0, 0, time.UTC) }
	jobs := []record.JobRow{
		{JobID: "101", JobIDRaw: 101, User: "ann", Account: "lab1", Partition: "cpu", QOS: "normal", State: "COMPLETED",
			Start: at(2, 10), ChargedSec: 3600, NNodes: 1, AllocCPUs: 4, Billing: 4, UsageFactor: 1, SourceFile: "sacct.psv", SourceLine: 2},
		{JobID: "102", JobIDRaw: 102, User: "bob", Account: "lab1", Partition: "gpu", QOS: "normal", State: "COMPLETED",
			Start: at(3, 11), ChargedSec: 7200, NNodes: 1, AllocCPUs: 8, GPU: 1, TRES: map[string]float64{"cpu": 8, "gres/gpu": 1},
			Billing: 8, UsageFactor: 1, SourceFile: "sacct.psv", SourceLine: 3},
		{JobID: "103", JobIDRaw: 103, User: "cy", Account: "lab2", Partition: "cpu", QOS: "normal", State: "FAILED",
			Start: at(4, 12), ChargedSec: 60, NNodes: 2, AllocCPUs: 2, Billing: 2, UsageFactor: 1, SourceFile: "sacct.psv", SourceLine: 4},
	}
	usage := []record.UsageRow{
		{Account: "lab1", User: "ann", Partition: "cpu", PeriodStart: at(2, 0), BillingSec: 14400, CPUSec: 14400},
		{Account: "lab1", User: "bob", Partition: "gpu", PeriodStart: at(3, 0), BillingSec: 57600, CPUSec: 57600, GPUSec: 7200},
	}
	share := 1.0
	fs := []record.FairshareRow{{Snapshot: at(5, 0), Algorithm: "classic", Account: "lab1", Parent: "root", Depth: 1, FairShare: &share}}
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
func genDirOf(t *testing.T, h *Store) string {
	t.Helper()
	target, err := os.Readlink(filepath.Join(h.Dir, "current"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(h.Dir, target)
}

// onlyFile is the one Parquet file of a partition directory of the
// committed generation, as gen/<N>/... and relative to it.
func onlyFile(t *testing.T, h *Store, table string) (full, rel string) {
	t.Helper()
	dir := genDirOf(t, h)
	m, err := filepath.Glob(filepath.Join(dir, table, "cluster=c", "month=2025-03", "*.parquet"))
	if err != nil || len(m) != 1 {
		t.Fatalf("%s files: %v %v", table, m, err)
	}
	rel, _ = filepath.Rel(dir, m[0])
	return m[0], rel
}

func mustVerify(t *testing.T, h *Store, cluster string) VerifyReport {
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
	t.Parallel()
	h := verifyHistory(t)
	rep := mustVerify(t, h, "")
	if len(rep.Problems) != 0 {
		t.Fatalf("clean history: problems %+v", rep.Problems)
	}
	// The commit's views.sql, outside the manifest, is no stray.
	if _, err := os.Stat(filepath.Join(genDirOf(t, h), ViewsFile)); err != nil {
		t.Errorf("the generation has no %s: %v", ViewsFile, err)
	}
	// 3 data files and 2 checkpoints; every byte of each is hashed.
	var size int64
	var files int
	dir := genDirOf(t, h)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "manifest.json" && d.Name() != ViewsFile {
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
	t.Parallel()
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
	for _, want := range []string{"copy it back from a backup", sum, "stops on it", "remove it with `fairledger verify --repair --history " + h.Dir + "`",
		"fairledger run --history " + h.Dir + " --from 2025-03-01T00:00:00Z --to 2025-03-15T00:00:00Z"} {
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
	t.Parallel()
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
	t.Parallel()
	h := verifyHistory(t)
	full, _ := onlyFile(t, h, schemas.TableFairshare)
	if err := os.Remove(full); err != nil {
		t.Fatal(err)
	}
	p := oneProblem(t, mustVerify(t, h, ""), full, "missing")
	// The fairshare file was written by the third commit; the fourth (the
	// generation kept before the fifth) links it too.
	rel, _ := filepath.Rel(genDirOf(t, h), full)
	if want := "cp " + filepath.Join(h.Dir, "gen", "00000004", rel) + " " + full + ";"; !strings.Contains(p.Repair, want) {
		t.Errorf("repair %q, want it to say %q", p.Repair, want)
	}
	if p.Intact == "" || p.Rerun != nil {
		t.Errorf("intact copy %q, rerun %+v: want a copy and nothing to recompute", p.Intact, p.Rerun)
	}
}

func TestVerifyStray(t *testing.T) {
	t.Parallel()
	h := verifyHistory(t)
	dir := genDirOf(t, h)
	stray := filepath.Join(dir, "jobs", "cluster=c", "month=2025-03", "extra.parquet")
	if err := os.WriteFile(stray, []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := oneProblem(t, mustVerify(t, h, ""), stray, "not listed in the manifest")
	if !strings.Contains(p.Repair, "an engine globbing the table's directories would count its rows") {
		t.Errorf("a stray Parquet file's repair should say that a globbing engine reads it: %q", p.Repair)
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
	t.Parallel()
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
	if r := rep.Problems[0].Repair; !strings.Contains(r, "a run of cluster c that resumes from it stops on it") || !strings.Contains(r, "backup") {
		t.Errorf("repair of a damaged checkpoint: %q", r)
	}
}

func TestVerifyUnknownClusterAndOldLayout(t *testing.T) {
	t.Parallel()
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

// Times of repairHistory, Unix seconds (computed by hand: 2025-01-01 is
// 1735689600; March 1 is 59 days later).
const (
	origin20250101 = 1735689600 // 2025-01-01T00:00:00Z, where cluster c1's history started
	cp20250301     = 1740787200 // 2025-03-01T00:00:00Z
	cp20250315     = 1741996800 // 2025-03-15T00:00:00Z
	cp20250401     = 1743465600 // 2025-04-01T00:00:00Z, the newest checkpoint
)

// repairHistory writes a history of cluster c1 with checkpoints at 1 March,
// 15 March and 1 April 2025 (origin 1 January), a usage file of February
// (first day 10 February, before every checkpoint), one of March (first
// day 20 March: its checkpoint is 15 March), a jobs file of March (first
// start 2 March 10:00: 1 March), a fairshare file of March (one snapshot
// at 15 March 00:00, the time of a checkpoint: a run resuming there takes
// its snapshots after it, so 1 March), and a runs file.
func repairHistory(t *testing.T) *Store {
	t.Helper()
	h, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []int64{cp20250301, cp20250315, cp20250401} {
		name := "checkpoint-" + time.Unix(to, 0).UTC().Format("20060102T150405Z") + ".json"
		blob := fmt.Sprintf(`{"version":1,"cluster":"c1","to":%d,"origin":%d}`, to, origin20250101)
		if err := h.WriteState("c1", name, []byte(blob)); err != nil {
			t.Fatal(err)
		}
	}
	day := func(m time.Month, d int) time.Time { return time.Date(2025, m, d, 0, 0, 0, 0, time.UTC) }
	share := 0.5
	for _, w := range []struct {
		table string
		month time.Time
		rows  any
	}{
		{schemas.TableUsage, day(2, 1), []record.UsageRow{{Account: "lab1", User: "ann", Partition: "cpu", PeriodStart: day(2, 10), BillingSec: 3600, CPUSec: 3600}}},
		{schemas.TableUsage, day(3, 1), []record.UsageRow{
			{Account: "lab1", User: "ann", Partition: "cpu", PeriodStart: day(3, 20), BillingSec: 7200, CPUSec: 7200},
			{Account: "lab1", User: "bob", Partition: "cpu", PeriodStart: day(3, 21), BillingSec: 60, CPUSec: 60},
		}},
		{schemas.TableJobs, day(3, 1), []record.JobRow{{JobID: "7", JobIDRaw: 7, User: "ann", Account: "lab1", Partition: "cpu", QOS: "normal",
			State: "COMPLETED", Start: day(3, 2).Add(10 * time.Hour), ChargedSec: 3600, NNodes: 1, AllocCPUs: 2, Billing: 2, UsageFactor: 1}}},
		{schemas.TableFairshare, day(3, 1), []record.FairshareRow{{Snapshot: day(3, 15), Algorithm: "classic", Account: "lab1", Parent: "root", Depth: 1, FairShare: &share}}},
	} {
		if err := h.WritePartition(w.table, "c1", w.month, w.rows); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.AppendRun("c1", record.RunRow{RunID: "r1", Started: day(4, 1), Finished: day(4, 1).Add(time.Minute), Version: "test"}); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 0 {
		t.Fatalf("fresh history: %+v", rep.Problems)
	}
	return h
}

// fileOf is the manifest entry of the one file of table, month in the
// committed generation, and its full path.
func fileOf(t *testing.T, h *Store, table, month string) (Partition, string) {
	t.Helper()
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	var out []Partition
	for _, p := range m.Files(table, "c1") {
		if p.Month == month {
			out = append(out, p)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%s %s: files %+v, want one", table, month, out)
	}
	return out[0], filepath.Join(genDirOf(t, h), filepath.FromSlash(out[0].Path))
}

// damageInPlace changes the file's last byte through its inode, so every
// generation's hard link sees it: no intact copy is left.
func damageInPlace(t *testing.T, file string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, fi.Size()-1); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, fi.Size()-1); err != nil {
		t.Fatal(err)
	}
}

func mustRepair(t *testing.T, h *Store, cluster string) VerifyReport {
	t.Helper()
	rep, err := h.Repair(cluster)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRepairDataFile(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	before, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	bad, full := fileOf(t, h, schemas.TableUsage, "2025-03")
	damageInPlace(t, full)

	// The usage rows start on 20 March: the newest checkpoint at or before
	// is 15 March; the run ends at the newest, 1 April.
	const rerun = "fairledger run --history %s --from 2025-03-15T00:00:00Z --to 2025-04-01T00:00:00Z --sacct <every sacct file of cluster c1 from 2025-03-15 on> ..."
	cmd := fmt.Sprintf(rerun, h.Dir)
	p := oneProblem(t, mustVerify(t, h, ""), full, "SHA-256")
	for _, want := range []string{"remove it with `fairledger verify --repair --history " + h.Dir + "`", "`" + cmd + "`",
		"checkpoint-20250315T000000Z.json", "--slurm-conf, --assoc"} {
		if !strings.Contains(p.Repair, want) {
			t.Errorf("verify: repair %q lacks %q", p.Repair, want)
		}
	}
	if p.Fixed != "" {
		t.Errorf("verify changed something: %+v", p)
	}

	rep := mustRepair(t, h, "")
	p = oneProblem(t, rep, full, "SHA-256")
	if p.Fixed != FixedRemoved || rep.Repaired != before.Generation+1 {
		t.Errorf("fixed %q in generation %d, want removed in %d", p.Fixed, rep.Repaired, before.Generation+1)
	}
	want := Rerun{Cluster: "c1", From: cp20250315, Checkpoint: "checkpoint-20250315T000000Z.json", To: cp20250401, Command: cmd}
	if p.Rerun == nil || *p.Rerun != want {
		t.Errorf("rerun %+v, want %+v", p.Rerun, want)
	}
	if len(rep.Reruns) != 1 || rep.Reruns[0] != want {
		t.Errorf("reruns %+v, want one: %+v", rep.Reruns, want)
	}
	for _, w := range []string{fmt.Sprintf("removed from the history in generation %d", rep.Repaired), "queries lack its 2 rows", "`" + cmd + "`"} {
		if !strings.Contains(p.Repair, w) {
			t.Errorf("repair: %q lacks %q", p.Repair, w)
		}
	}

	// Exactly that file is gone; every other one is the same and intact.
	after, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	var wantFiles []Partition
	for _, f := range before.Partitions {
		if f.Path != bad.Path {
			wantFiles = append(wantFiles, f)
		}
	}
	if after.Generation != rep.Repaired || fmt.Sprint(after.Partitions) != fmt.Sprint(wantFiles) {
		t.Errorf("manifest after the repair (generation %d):\n%+v\nwant generation %d:\n%+v", after.Generation, after.Partitions, rep.Repaired, wantFiles)
	}
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 0 || rep.Files != len(before.Partitions)-1 {
		t.Errorf("after the repair: %d files, problems %+v", rep.Files, rep.Problems)
	}
	// A second repair has nothing to do and commits nothing.
	if rep := mustRepair(t, h, ""); rep.Repaired != 0 || len(rep.Problems) != 0 {
		t.Errorf("repair of a clean history: %+v", rep)
	}
}

// Several damaged files of a cluster need one run, from the earliest
// start any of them needs: here the origin, as the February usage is
// before every checkpoint.
func TestRepairRerunsOnePerCluster(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	for _, f := range []struct{ table, month, from string }{
		{schemas.TableJobs, "2025-03", "--from 2025-03-01T00:00:00Z --to 2025-04-01T00:00:00Z"},
		// The snapshot at 15 March is the one the checkpoint's run took:
		// a run from 15 March takes its snapshots after it, so 1 March.
		{schemas.TableFairshare, "2025-03", "--from 2025-03-01T00:00:00Z --to 2025-04-01T00:00:00Z"},
		{schemas.TableUsage, "2025-02", "--from 2025-01-01T00:00:00Z --to 2025-04-01T00:00:00Z --sacct <every sacct file of cluster c1 from 2025-01-01 on>"},
	} {
		_, full := fileOf(t, h, f.table, f.month)
		damageInPlace(t, full)
		rep := mustVerify(t, h, "")
		var p *Problem
		for i := range rep.Problems {
			if rep.Problems[i].Path == full {
				p = &rep.Problems[i]
			}
		}
		if p == nil || !strings.Contains(p.Repair, f.from) {
			t.Errorf("%s %s: problem %+v, want %q", f.table, f.month, p, f.from)
		}
	}
	rep := mustRepair(t, h, "")
	if len(rep.Problems) != 3 {
		t.Fatalf("problems %+v, want 3", rep.Problems)
	}
	want := Rerun{Cluster: "c1", From: origin20250101, Fresh: true, To: cp20250401,
		Command: "fairledger run --history " + h.Dir + " --from 2025-01-01T00:00:00Z --to 2025-04-01T00:00:00Z --sacct <every sacct file of cluster c1 from 2025-01-01 on> ..."}
	if len(rep.Reruns) != 1 || rep.Reruns[0] != want {
		t.Errorf("reruns %+v, want %+v", rep.Reruns, want)
	}
	for _, p := range rep.Problems {
		if p.Fixed != FixedRemoved {
			t.Errorf("%s: fixed %q", p.Path, p.Fixed)
		}
	}
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 0 {
		t.Errorf("after the repair: %+v", rep.Problems)
	}
}

func TestRepairNewestCheckpoint(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	full := filepath.Join(genDirOf(t, h), "state", "cluster=c1", "checkpoint-20250401T000000Z.json")
	damageInPlace(t, full)
	p := oneProblem(t, mustVerify(t, h, ""), full, "SHA-256")
	if !strings.Contains(p.Repair, "a run of cluster c1 that resumes from it stops on it") || !strings.Contains(p.Repair, "resume from the one before, checkpoint-20250315T000000Z.json") ||
		!strings.Contains(p.Repair, "the next nightly run recomputes from 2025-03-15T00:00:00Z on") {
		t.Errorf("verify: repair %q", p.Repair)
	}
	rep := mustRepair(t, h, "c1")
	p = oneProblem(t, rep, full, "SHA-256")
	if p.Fixed != FixedRemoved || p.Rerun != nil || len(rep.Reruns) != 0 ||
		!strings.HasPrefix(p.Repair, fmt.Sprintf("removed from the history in generation %d: runs of cluster c1 then resume from the one before", rep.Repaired)) {
		t.Errorf("repair: %+v, reruns %+v", p, rep.Reruns)
	}
	states, err := h.States("c1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"checkpoint-20250301T000000Z.json", "checkpoint-20250315T000000Z.json"}; !slices.Equal(states, want) {
		t.Errorf("checkpoints %v, want %v", states, want)
	}
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 0 {
		t.Errorf("after the repair: %+v", rep.Problems)
	}
}

func TestRepairOlderCheckpointAndRuns(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	cp := filepath.Join(genDirOf(t, h), "state", "cluster=c1", "checkpoint-20250315T000000Z.json")
	damageInPlace(t, cp)
	_, runs := fileOf(t, h, schemas.TableRuns, "2025-04")
	damageInPlace(t, runs)
	rep := mustRepair(t, h, "")
	if len(rep.Problems) != 2 || len(rep.Reruns) != 0 {
		t.Fatalf("problems %+v, reruns %+v", rep.Problems, rep.Reruns)
	}
	for _, p := range rep.Problems {
		var want string
		switch p.Path {
		case cp:
			want = "resume from the newest checkpoint, checkpoint-20250401T000000Z.json, as before, and a recompute (--from) that would have started " +
				"at this one starts from the one before, checkpoint-20250301T000000Z.json, instead: nothing to rerun"
		case runs:
			want = "the runs table lacks those run records; nothing else depends on them"
		}
		if p.Fixed != FixedRemoved || want == "" || !strings.Contains(p.Repair, want) {
			t.Errorf("%s: fixed %q, repair %q, want %q", p.Path, p.Fixed, p.Repair, want)
		}
	}
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 0 {
		t.Errorf("after the repair: %+v", rep.Problems)
	}
}

// A file deleted from the committed generation is still in the one
// before: Repair links it back instead of removing it.
func TestRepairRestoresIntactCopy(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	before, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	_, full := fileOf(t, h, schemas.TableJobs, "2025-03")
	if err := os.Remove(full); err != nil {
		t.Fatal(err)
	}
	rep := mustRepair(t, h, "")
	p := oneProblem(t, rep, full, "missing")
	if p.Fixed != FixedRestored || p.Rerun != nil || len(rep.Reruns) != 0 || !strings.Contains(p.Repair, "nothing to recompute") {
		t.Errorf("repair: %+v, reruns %+v", p, rep.Reruns)
	}
	after, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after.Partitions) != fmt.Sprint(before.Partitions) {
		t.Errorf("manifest changed:\n%+v\nwant\n%+v", after.Partitions, before.Partitions)
	}
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 0 {
		t.Errorf("after the repair: %+v", rep.Problems)
	}
}

// The only intact checkpoint damaged: the cluster is recomputed from its
// origin (its checkpoint recorded none here: the first sacct file).
func TestRepairOnlyCheckpoint(t *testing.T) {
	t.Parallel()
	h, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.WriteState("c1", "checkpoint-20250301T000000Z.json", []byte(`{"version":1,"cluster":"c1","to":1740787200}`)); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(genDirOf(t, h), "state", "cluster=c1", "checkpoint-20250301T000000Z.json")
	damageInPlace(t, full)
	rep := mustRepair(t, h, "")
	p := oneProblem(t, rep, full, "SHA-256")
	want := "fairledger run --history " + h.Dir + " --from <the start of cluster c1's first sacct file> --to 2025-03-01T00:00:00Z --sacct <every sacct file of cluster c1> ..."
	if p.Rerun == nil || p.Rerun.Command != want || !p.Rerun.Fresh || len(rep.Reruns) != 1 || !strings.Contains(p.Repair, "no intact checkpoint") {
		t.Errorf("problem %+v, reruns %+v, want %q", p, rep.Reruns, want)
	}
}

// Files the manifest does not list are reported, not removed; alone they
// make no commit.
func TestRepairStrayOnly(t *testing.T) {
	t.Parallel()
	h := repairHistory(t)
	gen := mustVerify(t, h, "").Generation
	stray := filepath.Join(genDirOf(t, h), "usage", "cluster=c1", "month=2025-03", "extra.parquet")
	if err := os.WriteFile(stray, []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := mustRepair(t, h, "")
	p := oneProblem(t, rep, stray, "not listed")
	if rep.Repaired != 0 || p.Fixed != "" || !strings.Contains(p.Repair, "move it out of the history") {
		t.Errorf("repair: %+v, %+v", rep, p)
	}
	if g := mustVerify(t, h, "").Generation; g != gen {
		t.Errorf("generation %d, want %d (no commit)", g, gen)
	}
	// With a damaged file as well, the commit leaves the stray behind.
	_, full := fileOf(t, h, schemas.TableUsage, "2025-03")
	damageInPlace(t, full)
	rep = mustRepair(t, h, "")
	if len(rep.Problems) != 2 || rep.Repaired != gen+1 {
		t.Fatalf("problems %+v, repaired %d", rep.Problems, rep.Repaired)
	}
	if r := rep.Problems[0].Repair; rep.Problems[0].Path != stray || !strings.Contains(r, fmt.Sprintf("not in generation %d", gen+1)) {
		t.Errorf("stray after the repair: %+v", rep.Problems[0])
	}
	if rep := mustVerify(t, h, ""); len(rep.Problems) != 0 {
		t.Errorf("after the repair: %+v", rep.Problems)
	}
}
