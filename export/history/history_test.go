package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/encode"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/record/recordtest"
	"github.com/fairledger/fairledger/schemas"
	"github.com/parquet-go/parquet-go"
)

func openHistory(t *testing.T) *Store {
	t.Helper()
	h, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	jobs, usage, fs, assoc := sampleJobs(), sampleUsage(), sampleFairshare(), sampleAssociations()
	for _, w := range []struct {
		table string
		rows  any
	}{{schemas.TableJobs, jobs}, {schemas.TableUsage, usage}, {schemas.TableFairshare, fs}, {schemas.TableAssociations, assoc}} {
		if err := h.WritePartition(w.table, "c1", jan.Add(5*24*time.Hour), w.rows); err != nil {
			t.Fatalf("WritePartition(%s): %v", w.table, err)
		}
	}
	var gotJobs []record.JobRow
	var gotUsage []record.UsageRow
	var gotFS []record.FairshareRow
	var gotAssoc []record.AssociationRow
	for _, r := range []struct {
		table string
		dst   any
	}{{schemas.TableJobs, &gotJobs}, {schemas.TableUsage, &gotUsage}, {schemas.TableFairshare, &gotFS}, {schemas.TableAssociations, &gotAssoc}} {
		if err := h.ReadPartition(r.table, "c1", jan, r.dst); err != nil {
			t.Fatalf("ReadPartition(%s): %v", r.table, err)
		}
	}
	check := func(table string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s read back:\n%+v\nwant\n%+v", table, got, want)
		}
	}
	check("jobs", normalize(gotJobs), normalize(sortedCopy(jobs, record.CompareJobs)))
	check("usage", normalize(gotUsage), normalize(sortedCopy(usage, record.CompareUsage)))
	check("fairshare", normalize(gotFS), normalize(sortedCopy(fs, record.CompareFairshare)))
	check("associations", normalize(gotAssoc), normalize(sortedCopy(assoc, record.CompareAssociations)))

	// Spot checks written by hand, independent of the sort helper.
	for i, id := range wantJobOrder {
		if gotJobs[i].JobID != id {
			t.Errorf("jobs row %d = %s, want %s", i, gotJobs[i].JobID, id)
		}
	}
	if b := gotJobs[2].TRES["gres/gpu:a100"]; b != 2 {
		t.Errorf(`jobs 101_3 tres["gres/gpu:a100"] = %v, want 2`, b)
	}
	if !gotJobs[2].Start.Equal(ts("2025-01-02T10:00:00Z", 250)) {
		t.Errorf("jobs 101_3 start = %v, want 2025-01-02T10:00:00.000250Z", gotJobs[2].Start)
	}
	if gotJobs[1].End != nil || !math.IsInf(gotJobs[1].Billing, 1) || !math.IsInf(gotJobs[0].Billing, -1) {
		t.Errorf("jobs 99 end = %v billing = %v, 42+1 billing = %v; want NULL, +Inf, -Inf", gotJobs[1].End, gotJobs[1].Billing, gotJobs[0].Billing)
	}
	// Fairshare order: (snapshot, account, user, partition) — chem/alice,
	// physics, physics/bob, root.
	wantFS := []string{"chem/alice", "physics/", "physics/bob", "root/"}
	for i, w := range wantFS {
		if got := gotFS[i].Account + "/" + gotFS[i].User; got != w {
			t.Errorf("fairshare row %d = %s, want %s", i, got, w)
		}
	}
	if gotFS[3].RawShares != nil || gotFS[3].LevelFS != nil || gotFS[3].NormUsage != nil {
		t.Errorf("fairshare root raw_shares, level_fs, norm_usage = %v, %v, %v; want NULLs", gotFS[3].RawShares, gotFS[3].LevelFS, gotFS[3].NormUsage)
	}
	if gotFS[1].LevelFS == nil || !math.IsInf(*gotFS[1].LevelFS, 1) {
		t.Errorf("fairshare physics level_fs = %v, want +Inf", gotFS[1].LevelFS)
	}
}

// TestPriorityRoundTrip writes priority rows through the history (the
// priority table's encoder, encode.Priority) and reads them back with its
// reader: the sample rows, whose order and values are checked by hand,
// and varied rows (every event, nil and set pointers, nil, empty, one- and
// many-entry TRES maps, empty and non-ASCII names, NaN and infinite
// weights) over more than one row group, compared row by row with the
// input in record.ComparePriority order.
func TestPriorityRoundTrip(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	if err := h.WritePartition(schemas.TablePriority, "c1", jan, samplePriority()); err != nil {
		t.Fatal(err)
	}
	var got []record.PriorityRow
	if err := h.ReadPartition(schemas.TablePriority, "c1", jan, &got); err != nil {
		t.Fatal(err)
	}
	// (event_time, job_id, partition, event), by hand: job 12's submit at
	// 20:00; at the snapshot job 3 (cpu), job 12 cpu, job 12 gpu; job 12's
	// start at 00:10.
	want := []string{"2024-12-31T20:00:00Z 12 cpu submit", "2025-01-01T00:00:00Z 3 cpu pending",
		"2025-01-01T00:00:00Z 12 cpu pending", "2025-01-01T00:00:00Z 12 gpu pending", "2025-01-01T00:10:00Z 12 gpu start"}
	for i, w := range want {
		if i >= len(got) {
			t.Fatalf("read %d priority rows, want %d", len(got), len(want))
		}
		r := got[i]
		if g := r.At.UTC().Format(time.RFC3339) + " " + strconv.FormatInt(r.JobID, 10) + " " + r.Partition + " " + r.Event; g != w {
			t.Errorf("priority row %d = %q, want %q", i, g, w)
		}
	}
	if r := got[1]; len(r.TRESW) != 0 || r.Nice != 100 || r.Eligible != nil || r.ArrayJobID == nil || *r.ArrayJobID != 3 {
		t.Errorf("job 3 read back as %s; want an empty tres_w, nice 100, eligible NULL, array_job_id 3", fmtPriority(r))
	}
	if r := got[4]; len(r.TRESW) != 2 || r.TRESW["cpu"] != 31.25 || r.TRESW["mem"] != 3.2 {
		t.Errorf("job 12's start read back as %s; want tres_w cpu=31.25, mem=3.2", fmtPriority(r))
	}
	if r := got[4]; r.WaitSec == nil || *r.WaitSec != 4*3600+600 || r.Rank == nil || *r.Rank != 2 || r.Waiting == nil || *r.Waiting != 2 {
		t.Errorf("job 12's start read back as %s; want wait_sec 15000, rank 2, waiting 2", fmtPriority(r))
	}

	n := encode.RowGroupRows + 1000
	if testing.Short() {
		n = 3000
	}
	rows := variedPriority(n, 11)
	feb := jan.AddDate(0, 1, 0)
	if err := h.WritePartition(schemas.TablePriority, "c1", feb, rows); err != nil {
		t.Fatal(err)
	}
	got = nil
	if err := h.ReadPartition(schemas.TablePriority, "c1", feb, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("read %d varied priority rows, want %d", len(got), len(rows))
	}
	bad := 0
	for i, w := range sortedCopy(rows, record.ComparePriority) {
		if g, w := fmtPriority(got[i]), fmtPriority(w); g != w && bad < 5 {
			t.Errorf("varied priority row %d read back as\n%s\nwant\n%s", i, g, w)
			bad++
		}
	}
}

func TestRowOrderAndInputUntouched(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	usage := sampleUsage()
	before := slices.Clone(usage)
	if err := h.WritePartition(schemas.TableUsage, "c1", jan, usage); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(usage, before) {
		t.Errorf("WritePartition reordered the caller's slice")
	}
	var got []record.UsageRow
	if err := h.ReadPartition(schemas.TableUsage, "c1", jan, &got); err != nil {
		t.Fatal(err)
	}
	// (account, user, partition, period_start), by hand: chem/alice/gpu
	// 01-01, physics/bob 01-01, physics/bob 01-02.
	want := []string{"chem alice 2025-01-01", "physics bob 2025-01-01", "physics bob 2025-01-02"}
	for i, w := range want {
		g := got[i].Account + " " + got[i].User + " " + got[i].PeriodStart.UTC().Format("2006-01-02")
		if g != w {
			t.Errorf("usage row %d = %q, want %q", i, g, w)
		}
	}
}

// TestFileSchemas checks that each written file has exactly the columns
// schemas.Tables documents (cluster and month only in the path), with the
// documented types, zstd compression (the jobs table's, per column:
// TestJobsColumnCodecs) and sorting metadata.
func TestFileSchemas(t *testing.T) {
	t.Parallel()
	if err := checkSchemas(); err != nil {
		t.Fatalf("checkSchemas: %v", err)
	}
	h := openHistory(t)
	writes := map[string]any{schemas.TableJobs: sampleJobs(), schemas.TableUsage: sampleUsage(),
		schemas.TableFairshare: sampleFairshare(), schemas.TableAssociations: sampleAssociations(),
		schemas.TablePriority: recordtest.Priority()}
	for table, rows := range writes {
		if err := h.WritePartition(table, "c1", jan, rows); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.AppendRun("c1", sampleRun()); err != nil {
		t.Fatal(err)
	}
	for _, def := range schemas.Tables() {
		ps, err := h.Partitions(def.Name)
		if err != nil || len(ps) != 1 {
			t.Fatalf("Partitions(%s) = %v, %v; want one", def.Name, ps, err)
		}
		f := openParquet(t, histPath(h, ps[0]))
		fields := f.Schema().Fields()
		var names, want []string
		for _, fl := range fields {
			names = append(names, fl.Name())
		}
		for _, c := range def.Columns {
			want = append(want, c.Name)
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s file columns = %v, want %v", def.Name, names, want)
		}
		if err := encode.CheckSchema(def, f.Schema()); err != nil {
			t.Errorf("%s file schema: %v", def.Name, err)
		}
		for _, rg := range f.Metadata().RowGroups {
			for _, cc := range rg.Columns {
				// The jobs table's codecs are per column: TestJobsColumnCodecs.
				if def.Name != schemas.TableJobs && cc.MetaData.Codec.String() != "ZSTD" {
					t.Errorf("%s column %v codec %s, want ZSTD", def.Name, cc.MetaData.PathInSchema, cc.MetaData.Codec)
				}
			}
			if def.Name != schemas.TableRuns && len(rg.SortingColumns) != len(def.SortBy) {
				t.Errorf("%s row group sorting columns = %v, want %d", def.Name, rg.SortingColumns, len(def.SortBy))
			}
		}
	}
}

func openParquet(t *testing.T, name string) *parquet.File {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// histPath is the path of file p of the committed generation,
// through the current symlink.
func histPath(h *Store, p Partition) string {
	return filepath.Join(h.Dir, CurrentLink, filepath.FromSlash(p.Path))
}

// histFiles returns the committed files of the (table, cluster, month)
// partition.
func histFiles(t *testing.T, h *Store, table, cluster, month string) []Partition {
	t.Helper()
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	var out []Partition
	for _, p := range m.Files(table, cluster) {
		if p.Month == month {
			out = append(out, p)
		}
	}
	return out
}

// histOnlyFile returns the one committed file of a partition.
func histOnlyFile(t *testing.T, h *Store, table, cluster, month string) Partition {
	t.Helper()
	ps := histFiles(t, h, table, cluster, month)
	if len(ps) != 1 {
		t.Fatalf("partition %s has files %+v, want one", partitionDir(table, cluster, month), ps)
	}
	return ps[0]
}

// histContentNamed checks that file p is named by its content: part- and
// the first 16 hex digits of the SHA-256 of its bytes, which the manifest
// records with its size.
func histContentNamed(t *testing.T, h *Store, p Partition) []byte {
	t.Helper()
	b, err := os.ReadFile(histPath(h, p))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	hexSum := hex.EncodeToString(sum[:])
	want := path.Join(partitionDir(p.Table, p.Cluster, p.Month), "part-"+hexSum[:16]+".parquet")
	if p.Path != want || p.SHA256 != hexSum || p.Bytes != int64(len(b)) {
		t.Errorf("file %s: sha256 %s, %d bytes; the file is %s, %d bytes, so want path %s", p.Path, p.SHA256, p.Bytes, hexSum, len(b), want)
	}
	return b
}

// TestIdempotent: writing the same rows again (in another order) gives the
// same bytes, so the same content-named file, which replaces the
// partition's segment rather than adding one; the manifest entry is
// exactly the file's (size, hash, rows and the statistics, worked out by
// hand); other rows give another name and the old file leaves the
// generation.
func TestIdempotent(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	dir := filepath.Join(h.Dir, CurrentLink, "jobs", "cluster=c1", "month=2025-01")
	var files [2][]byte
	var entries [2]Partition
	for i := range files {
		// The second write gets the same rows in another order and with
		// maps built in another insertion order: same bytes.
		rows := sampleJobs()
		if i == 1 {
			slices.Reverse(rows)
		}
		if err := h.WritePartition(schemas.TableJobs, "c1", jan, rows); err != nil {
			t.Fatal(err)
		}
		entries[i] = histOnlyFile(t, h, schemas.TableJobs, "c1", "2025-01")
		files[i] = histContentNamed(t, h, entries[i])
	}
	if !bytes.Equal(files[0], files[1]) || entries[0] != entries[1] {
		t.Errorf("two writes of the same rows differ: %+v (%d bytes) and %+v (%d bytes)", entries[0], len(files[0]), entries[1], len(files[1]))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != path.Base(entries[1].Path) {
		t.Errorf("partition directory holds %v, want only %s", ents, path.Base(entries[1].Path))
	}
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(files[1])
	// Starts 2025-01-01T00:00:00Z (1735689600, 42+1), 2025-01-02T10:00:00.00025Z
	// (1735812000 floored, 101_3), 2025-01-03T00:00:00Z (1735862400, 99);
	// job_id_raw 43..104; the latest charged end 99's 1735862400 + 86400.
	want := Manifest{Format: StoreFormat, Generation: 2, Partitions: []Partition{{Table: "jobs", Cluster: "c1", Month: "2025-01",
		Path: "jobs/cluster=c1/month=2025-01/part-" + hex.EncodeToString(sum[:8]) + ".parquet",
		Rows: 3, Bytes: int64(len(files[1])), SHA256: hex.EncodeToString(sum[:]),
		MinTime: 1735689600, MaxTime: 1735862400, MinID: 43, MaxID: 104, MaxEnd: 1735948800}}}
	if !strings.HasPrefix(m.Checksum, "sha256:") || len(m.Checksum) != len("sha256:")+64 {
		t.Errorf("manifest checksum %q, want sha256: and 64 hex digits", m.Checksum)
	}
	m.Checksum = "" // a hash of the rest: TestManifestChecksum checks it
	if !reflect.DeepEqual(m, want) {
		t.Errorf("manifest = %+v, want %+v", m, want)
	}

	// Other rows: another file, and the old one is not in the generation.
	if err := h.WritePartition(schemas.TableJobs, "c1", jan, sampleJobs()[:2]); err != nil {
		t.Fatal(err)
	}
	p := histOnlyFile(t, h, schemas.TableJobs, "c1", "2025-01")
	histContentNamed(t, h, p)
	if p.Path == entries[1].Path || p.Rows != 2 {
		t.Errorf("rewrite with 2 rows: %+v, want a new file of 2 rows", p)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 || ents[0].Name() != path.Base(p.Path) {
		t.Errorf("after the rewrite the partition directory holds %v, want only %s", ents, path.Base(p.Path))
	}
}

// TestSameRowsSameManifest: the manifest holds no timestamps, so the same
// writes in another order give the same manifest but for the generation.
func TestSameRowsSameManifest(t *testing.T) {
	t.Parallel()
	writes := []func(h *Store) error{
		func(h *Store) error { return h.WritePartition(schemas.TableJobs, "c1", jan, sampleJobs()) },
		func(h *Store) error { return h.WritePartition(schemas.TableUsage, "c1", jan, sampleUsage()) },
		func(h *Store) error { _, err := h.AppendRun("c1", sampleRun()); return err },
		func(h *Store) error { return h.WriteState("c1", "checkpoint-a.json", []byte(`{"a":1}`)) },
	}
	var ms [2]Manifest
	for i := range ms {
		h := openHistory(t)
		for j := range writes {
			if i == 1 {
				j = len(writes) - 1 - j
			}
			if err := writes[j](h); err != nil {
				t.Fatal(err)
			}
		}
		// One more commit on the second history: generation numbers differ.
		if i == 1 {
			if err := h.WritePartition(schemas.TableUsage, "c1", jan, sampleUsage()); err != nil {
				t.Fatal(err)
			}
		}
		m, err := h.ReadManifest()
		if err != nil {
			t.Fatal(err)
		}
		ms[i] = m
	}
	if ms[0].Generation != 4 || ms[1].Generation != 5 {
		t.Errorf("generations %d and %d, want 4 and 5", ms[0].Generation, ms[1].Generation)
	}
	ms[1].Generation = ms[0].Generation
	ms[0].Checksum, ms[1].Checksum = "", "" // they cover the generation number
	if !reflect.DeepEqual(ms[0], ms[1]) || len(ms[0].Partitions) != 4 {
		t.Errorf("manifests differ:\n%+v\n%+v", ms[0], ms[1])
	}
}

// TestFailedWrite: a write that fails midway (the encoder errors after
// some bytes) returns the error and leaves no file in the commit's stage,
// the only stage after Begin; aborted, the commit leaves no stage and the
// history as it was. (TestCrashSafety, an external test, checks what
// crashed commits leave.)
func TestFailedWrite(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	if err := h.WritePartition(schemas.TableUsage, "c1", jan, sampleUsage()); err != nil {
		t.Fatal(err)
	}
	p := histOnlyFile(t, h, schemas.TableUsage, "c1", "2025-01")
	good, err := os.ReadFile(histPath(h, p))
	if err != nil {
		t.Fatal(err)
	}
	before, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	stages, _ := filepath.Glob(filepath.Join(h.Dir, genDir, stagePrefix+"*"))
	if len(stages) != 1 || stages[0] != tx.stage {
		t.Errorf("after Begin the stages are %v, want only the new one %s", stages, tx.stage)
	}
	boom := errors.New("disk full")
	fp := Partition{Table: schemas.TableUsage, Cluster: "c1", Month: "2025-01"}
	err = tx.writeNamed(&fp, partitionDir(schemas.TableUsage, "c1", "2025-01"), "part-", ".parquet", func(w io.Writer) error {
		w.Write(good[:100])
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("failed write error = %v, want %v", err, boom)
	}
	if left, _ := os.ReadDir(filepath.Join(tx.stage, "usage", "cluster=c1", "month=2025-01")); len(left) != 0 {
		t.Errorf("a failed write left %v in the stage", left)
	}
	tx.Remove(p)
	tx.Abort()
	if stages, _ := filepath.Glob(filepath.Join(h.Dir, genDir, stagePrefix+"*")); len(stages) != 0 {
		t.Errorf("Abort left the stages %v", stages)
	}
	after, err := h.ReadManifest()
	if err != nil || !reflect.DeepEqual(after, before) {
		t.Errorf("manifest after an aborted commit = %+v, %v; want %+v", after, err, before)
	}
	if b, _ := os.ReadFile(histPath(h, p)); !bytes.Equal(b, good) {
		t.Errorf("%s changed by a failed write", p.Path)
	}
}

// TestAppendRunAndManifest: each run is a content-named file of the runs
// partition of its start month; appending the same run again adds nothing
// and ReadRuns reads every file in start order. The manifest lists every
// file of the generation, no more, no less, with its size and SHA-256.
func TestAppendRunAndManifest(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	run := sampleRun()
	p, err := h.AppendRun("c1", run)
	if err != nil {
		t.Fatal(err)
	}
	histContentNamed(t, h, p)
	started := run.Started.Unix()
	if p.Table != schemas.TableRuns || p.Cluster != "c1" || p.Month != "2025-02" || p.Rows != 1 || p.MinTime != started || p.MaxTime != started {
		t.Errorf("AppendRun = %+v; want a file of 1 row in runs/cluster=c1/month=2025-02, times %d", p, started)
	}
	// Appending the same run again is idempotent; other runs add a file
	// each (the last started first: read back in start order).
	if _, err := h.AppendRun("c1", run); err != nil {
		t.Fatal(err)
	}
	if ps, err := h.Partitions(schemas.TableRuns); err != nil || len(ps) != 1 || ps[0] != p {
		t.Errorf("after appending the same run: %+v, %v; want only %+v", ps, err, p)
	}
	run2 := run
	run2.RunID, run2.Started, run2.Skipped, run2.Inputs = "second", ts("2025-02-02T00:00:00Z", 0), nil, nil
	run0 := run2
	run0.RunID, run0.Started = "earlier", ts("2025-02-01T00:00:00Z", 0)
	for _, r := range []record.RunRow{run2, run0} {
		if _, err := h.AppendRun("c1", r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := h.ReadRuns("c1", ts("2025-02-15T00:00:00Z", 0))
	if err != nil {
		t.Fatal(err)
	}
	want := normalize([]record.RunRow{run0, run, run2})
	if !reflect.DeepEqual(normalize(got), want) {
		t.Errorf("ReadRuns =\n%+v\nwant\n%+v", got, want)
	}
	if got, err := h.ReadRuns("c1", ts("2025-03-01T00:00:00Z", 0)); err != nil || got != nil {
		t.Errorf("ReadRuns of a month without runs = %v, %v; want none", got, err)
	}
	if err := h.WritePartition(schemas.TableJobs, "c2", jan, sampleJobs()); err != nil {
		t.Fatal(err)
	}
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Format != StoreFormat || m.Generation != 5 {
		t.Errorf("manifest format %d generation %d, want %d and 5 (4 appends, 1 write)", m.Format, m.Generation, StoreFormat)
	}
	var paths, parts []string
	listed := map[string]bool{}
	for _, e := range m.Partitions {
		paths = append(paths, e.Path)
		parts = append(parts, partitionDir(e.Table, e.Cluster, e.Month))
		listed[e.Path] = true
		histContentNamed(t, h, e)
	}
	if !slices.IsSorted(paths) {
		t.Errorf("manifest paths not sorted: %v", paths)
	}
	if want := []string{"jobs/cluster=c2/month=2025-01", "runs/cluster=c1/month=2025-02", "runs/cluster=c1/month=2025-02", "runs/cluster=c1/month=2025-02"}; !slices.Equal(parts, want) {
		t.Errorf("manifest partitions = %v, want %v", parts, want)
	}
	// The generation's directory holds exactly the manifest's files, the
	// manifest itself and views.sql, a copy of schemas/views.sql.
	gen := filepath.Join(h.Dir, genDir, genName(m.Generation))
	sawViews := false
	err = filepath.WalkDir(gen, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(gen, p)
		if rel = filepath.ToSlash(rel); rel == ViewsFile {
			if b, err := os.ReadFile(p); err != nil || string(b) != schemas.ViewsSQL() {
				t.Errorf("generation %d: %s is not schemas/views.sql (%v)", m.Generation, rel, err)
			}
			sawViews = true
			return nil
		}
		if rel != manifestFile && !listed[rel] {
			t.Errorf("generation %d holds %s, which its manifest does not list", m.Generation, rel)
		}
		delete(listed, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 0 {
		t.Errorf("files listed but missing: %v", listed)
	}
	if !sawViews {
		t.Errorf("generation %d has no %s", m.Generation, ViewsFile)
	}
	raw, err := os.ReadFile(filepath.Join(h.Dir, CurrentLink, manifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk Manifest
	if err := json.Unmarshal(raw, &onDisk); err != nil || !reflect.DeepEqual(onDisk, m) {
		t.Errorf("current/manifest.json = %s, %v; want %+v", raw, err, m)
	}
}

func TestWritePartitionErrors(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	tests := []struct {
		name, table, cluster string
		rows                 any
		want                 string
	}{
		{"path cluster", schemas.TableJobs, "../x", sampleJobs(), "cluster name"},
		{"dot cluster", schemas.TableJobs, ".hidden", sampleJobs(), "cluster name"},
		{"wrong rows", schemas.TableUsage, "c1", sampleJobs(), "belong to table jobs"},
		{"unknown table", "nope", "c1", sampleJobs(), "unknown history table"},
		{"not rows", schemas.TableJobs, "c1", 42, "rows of type int"},
	}
	for _, tt := range tests {
		err := h.WritePartition(tt.table, tt.cluster, jan, tt.rows)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: WritePartition(%s, %q) = %v, want error containing %q", tt.name, tt.table, tt.cluster, err, tt.want)
		}
	}
	var dst []record.JobRow
	if err := h.ReadPartition(schemas.TableJobs, "c1", jan, &dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadPartition of a missing partition = %v, want ErrNotExist", err)
	}
	// The failed commits were aborted: nothing committed, no stage left.
	if m, err := h.ReadManifest(); err != nil || m.Generation != 0 || len(m.Partitions) != 0 {
		t.Errorf("manifest after failed writes = %+v, %v; want generation 0, no files", m, err)
	}
	if entries, _ := os.ReadDir(filepath.Join(h.Dir, genDir)); len(entries) != 0 {
		t.Errorf("failed writes left %v in %s", entries, genDir)
	}
	if _, err := os.Lstat(filepath.Join(h.Dir, CurrentLink)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed writes made %s: %v", CurrentLink, err)
	}
}
