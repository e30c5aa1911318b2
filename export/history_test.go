package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/schemas"
	"github.com/parquet-go/parquet-go"
)

func ptr[T any](v T) *T { return &v }

// ts is a UTC time with microseconds, the precision the files keep.
func ts(s string, micros int) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC().Add(time.Duration(micros) * time.Microsecond)
}

var jan = ts("2025-01-01T00:00:00Z", 0)

func openHistory(t *testing.T) *History {
	t.Helper()
	h, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func sampleJobs() []JobRow {
	return []JobRow{
		{JobID: "101_3", JobIDRaw: 104, ArrayJobID: ptr[int64](101), ArrayTaskID: ptr[int64](3),
			User: "bob", Account: "physics", Partition: "gpu", QOS: "normal", State: "COMPLETED",
			Submit: ptr(ts("2025-01-02T09:00:00Z", 0)), Eligible: ptr(ts("2025-01-02T09:00:01Z", 0)),
			Start: ts("2025-01-02T10:00:00Z", 250), End: ptr(ts("2025-01-02T11:00:00Z", 0)),
			ElapsedSec: ptr[int64](3600), ChargedSec: 3600, SuspendedSec: ptr[int64](0), TimelimitMin: ptr[int64](120),
			NNodes: 1, AllocCPUs: 8, MemMB: 32768, NodeCount: 1, GPU: 2,
			TRES:    map[string]float64{"cpu": 8, "mem": 32768, "node": 1, "gres/gpu": 2, "gres/gpu:a100": 2, "billing": 24},
			Billing: 24.5, BillingSlurm: 24, UsageFactor: 1, SourceFile: "sacct-2025-01-02.txt", SourceLine: 2},
		{JobID: "99", JobIDRaw: 99, User: "alice", Account: "physics", Partition: "cpu", QOS: "", State: "RUNNING",
			CancelledBy: nil, Start: ts("2025-01-03T00:00:00Z", 0), End: nil,
			ChargedSec: 86400, NNodes: 2, AllocCPUs: 64, MemMB: 0, NodeCount: 2, GPU: 0,
			TRES: map[string]float64{"cpu": 64, "node": 2}, Billing: math.Inf(1), BillingSlurm: math.MaxInt64,
			UsageFactor: 0.5, SourceFile: "sacct-2025-01-03.txt", SourceLine: 7},
		{JobID: "42+1", JobIDRaw: 43, HetJobID: ptr[int64](42), HetJobOffset: ptr[int64](1),
			User: "alice", Account: "chem", Partition: "cpu", QOS: "low", State: "CANCELLED",
			CancelledBy: ptr("1000"), Start: ts("2025-01-01T00:00:00Z", 0), End: ptr(ts("2025-01-01T00:00:10Z", 0)),
			ElapsedSec: ptr[int64](10), ChargedSec: 10, NNodes: 1, AllocCPUs: 1, MemMB: 100, NodeCount: 1,
			TRES: map[string]float64{}, Billing: math.Inf(-1), BillingSlurm: 0, UsageFactor: 1,
			SourceFile: "sacct-2025-01-01.txt", SourceLine: 3},
	}
}

// wantJobOrder is sampleJobs in (account, user, start, job_id_raw, job_id)
// order, worked out by hand: chem/alice, physics/alice, physics/bob.
var wantJobOrder = []string{"42+1", "99", "101_3"}

func sampleUsage() []UsageRow {
	return []UsageRow{
		{Account: "physics", User: "bob", Partition: "", PeriodStart: ts("2025-01-02T00:00:00Z", 0), BillingSec: 88200, CPUSec: 28800, MemMBSec: 117964800, GPUSec: 7200},
		{Account: "physics", User: "bob", Partition: "", PeriodStart: ts("2025-01-01T00:00:00Z", 0), BillingSec: 1, CPUSec: 1, MemMBSec: 1, GPUSec: 0},
		{Account: "chem", User: "alice", Partition: "gpu", PeriodStart: ts("2025-01-01T00:00:00Z", 0), BillingSec: 10, CPUSec: 10, MemMBSec: 1000, GPUSec: 0},
	}
}

func sampleFairshare() []FairshareRow {
	snap := ts("2025-01-31T00:00:00Z", 0)
	return []FairshareRow{
		{Snapshot: snap, Algorithm: "fair_tree", Account: "root", Depth: 0, NormShares: ptr(0.0), RawUsage: ptr(100.0),
			EffectvUsage: ptr(1.0)},
		{Snapshot: snap, Algorithm: "fair_tree", Account: "physics", Parent: "root", Depth: 1, RawShares: ptr[int64](40),
			NormShares: ptr(0.4), RawUsage: ptr(0.0), NormUsage: ptr(0.0), EffectvUsage: ptr(0.0), LevelFS: ptr(math.Inf(1))},
		{Snapshot: snap, Algorithm: "fair_tree", Account: "physics", User: "bob", Parent: "physics", Depth: 2, IsUser: true,
			RawShares: ptr[int64](1), NormShares: ptr(1.0), RawUsage: ptr(0.0), NormUsage: ptr(0.0), EffectvUsage: ptr(0.0),
			FairShare: ptr(1.0), LevelFS: ptr(math.Inf(1)), Rank: ptr[int32](2)},
		{Snapshot: snap, Algorithm: "fair_tree", Account: "chem", User: "alice", Partition: "gpu", Parent: "chem", Depth: 2,
			IsUser: true, SharesParent: true, NormShares: ptr(0.6), RawUsage: ptr(100.0), NormUsage: ptr(1.0),
			EffectvUsage: ptr(1.0), FairShare: ptr(0.5), Rank: ptr[int32](1)},
	}
}

func sampleAssociations() []AssociationRow {
	snap := ts("2025-01-01T00:00:00Z", 0)
	return []AssociationRow{
		{Snapshot: snap, Account: "root", Shares: ptr[int64](1), Lineage: "/", SourceFile: "assoc.txt"},
		{Snapshot: snap, Account: "physics", Parent: "root", Shares: ptr[int64](40), Lineage: "/physics/", SourceFile: "assoc.txt"},
		{Snapshot: snap, Account: "physics", User: "bob", Parent: "physics", SharesParent: true, Lineage: "/physics/0-bob/", SourceFile: "assoc.txt"},
	}
}

func sampleRun() RunRow {
	return RunRow{RunID: "0123456789abcdef", Started: ts("2025-02-01T03:04:05Z", 0), Finished: ts("2025-02-01T03:05:00Z", 999),
		Version: "v0.1.0", Inputs: []RunInput{{Path: "sacct.txt", SizeBytes: 1234, SHA256: strings.Repeat("ab", 32)}, {Path: "slurm.conf", SizeBytes: 99, SHA256: strings.Repeat("cd", 32)}},
		Config: `{"PriorityDecayHalfLife":"7-0"}`, Read: 10, Ingested: 7, Rejected: 1,
		Skipped: map[string]int64{"step record": 1, "zero elapsed": 1}, JobsCharged: 7, Snapshots: 31}
}

// normalize makes read-back rows comparable with reflect.DeepEqual: times in
// UTC and empty maps and slices as nil.
func normalize[T any](rows []T) []T {
	out := slices.Clone(rows)
	for i := range out {
		v := reflect.ValueOf(&out[i]).Elem()
		for j := 0; j < v.NumField(); j++ {
			f := v.Field(j)
			switch x := f.Interface().(type) {
			case time.Time:
				f.Set(reflect.ValueOf(x.UTC()))
			case *time.Time:
				if x != nil {
					f.Set(reflect.ValueOf(ptr(x.UTC())))
				}
			default:
				if (f.Kind() == reflect.Map || f.Kind() == reflect.Slice) && f.Len() == 0 {
					f.Set(reflect.Zero(f.Type()))
				}
			}
		}
	}
	return out
}

func sortedCopy[T any](rows []T, cmp func(a, b *T) int) []T {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b T) int { return cmp(&a, &b) })
	return out
}

func TestRoundTrip(t *testing.T) {
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
	var gotJobs []JobRow
	var gotUsage []UsageRow
	var gotFS []FairshareRow
	var gotAssoc []AssociationRow
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
	check("jobs", normalize(gotJobs), normalize(sortedCopy(jobs, compareJobs)))
	check("usage", normalize(gotUsage), normalize(sortedCopy(usage, compareUsage)))
	check("fairshare", normalize(gotFS), normalize(sortedCopy(fs, compareFairshare)))
	check("associations", normalize(gotAssoc), normalize(sortedCopy(assoc, compareAssociations)))

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

func TestRowOrderAndInputUntouched(t *testing.T) {
	h := openHistory(t)
	usage := sampleUsage()
	before := slices.Clone(usage)
	if err := h.WritePartition(schemas.TableUsage, "c1", jan, usage); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(usage, before) {
		t.Errorf("WritePartition reordered the caller's slice")
	}
	var got []UsageRow
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
	if err := checkSchemas(); err != nil {
		t.Fatalf("checkSchemas: %v", err)
	}
	h := openHistory(t)
	writes := map[string]any{schemas.TableJobs: sampleJobs(), schemas.TableUsage: sampleUsage(),
		schemas.TableFairshare: sampleFairshare(), schemas.TableAssociations: sampleAssociations()}
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
		f := openParquet(t, filepath.Join(h.Dir, ps[0].Path))
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
		if err := checkSchema(def, f.Schema()); err != nil {
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

func TestIdempotent(t *testing.T) {
	h := openHistory(t)
	dir := filepath.Join(h.Dir, "jobs", "cluster=c1", "month=2025-01")
	var files [2][]byte
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
		b, err := os.ReadFile(filepath.Join(dir, "data.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		files[i] = b
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Errorf("two writes of the same rows differ (%d and %d bytes)", len(files[0]), len(files[1]))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "data.parquet" {
		t.Errorf("partition directory holds %v, want only data.parquet", entries)
	}
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(files[1])
	want := []Partition{{Table: "jobs", Cluster: "c1", Month: "2025-01", Path: "jobs/cluster=c1/month=2025-01/data.parquet",
		Rows: 3, Bytes: int64(len(files[1])), SHA256: hex.EncodeToString(sum[:])}}
	if !reflect.DeepEqual(m.Partitions, want) {
		t.Errorf("manifest = %+v, want %+v", m.Partitions, want)
	}
}

func TestCrashSafety(t *testing.T) {
	h := openHistory(t)
	if err := h.WritePartition(schemas.TableUsage, "c1", jan, sampleUsage()); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h.Dir, "usage", "cluster=c1", "month=2025-01")
	good, err := os.ReadFile(filepath.Join(dir, "data.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	// A crash leaves an empty temp file and a half-written one.
	if err := os.WriteFile(filepath.Join(dir, ".data.parquet.tmp-111"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".data.parquet.tmp-222"), good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	// A write that fails midway (the encoder errors after some bytes)
	// leaves no temp file and the previous file intact.
	boom := errors.New("disk full")
	_, _, err = writeAtomic(h.Dir, filepath.Join("usage", "cluster=c1", "month=2025-01"), "data.parquet", func(w io.Writer) error {
		w.Write(good[:100])
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("writeAtomic error = %v, want %v", err, boom)
	}

	var got []UsageRow
	if err := h.ReadPartition(schemas.TableUsage, "c1", jan, &got); err != nil || len(got) != 3 {
		t.Errorf("ReadPartition after crash = %d rows, %v; want 3 rows", len(got), err)
	}
	ps, err := h.Partitions(schemas.TableUsage)
	if err != nil || len(ps) != 1 || ps[0].Rows != 3 {
		t.Errorf("Partitions after crash = %+v, %v; want one of 3 rows", ps, err)
	}
	n, err := h.CleanTemps()
	if err != nil || n != 2 {
		t.Errorf("CleanTemps() = %d, %v; want 2, nil", n, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "data.parquet" {
		t.Errorf("after CleanTemps the partition holds %v, want only data.parquet", entries)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "data.parquet"))
	if !bytes.Equal(after, good) {
		t.Errorf("data.parquet changed by a failed write")
	}
}

func TestAppendRunAndManifest(t *testing.T) {
	h := openHistory(t)
	run := sampleRun()
	p, err := h.AppendRun("c1", run)
	if err != nil {
		t.Fatal(err)
	}
	// run-<Started UTC>-<first 8 hex of SHA-256(run_id)>.parquet.
	id := sha256.Sum256([]byte(run.RunID))
	wantPath := "runs/cluster=c1/month=2025-02/run-20250201T030405Z-" + hex.EncodeToString(id[:4]) + ".parquet"
	if p.Path != wantPath || p.Rows != 1 {
		t.Errorf("AppendRun path, rows = %s, %d; want %s, 1", p.Path, p.Rows, wantPath)
	}
	// Appending the same run again is idempotent; another run adds a file.
	if _, err := h.AppendRun("c1", run); err != nil {
		t.Fatal(err)
	}
	run2 := run
	run2.RunID, run2.Started, run2.Skipped, run2.Inputs = "second", ts("2025-02-02T00:00:00Z", 0), nil, nil
	if _, err := h.AppendRun("c1", run2); err != nil {
		t.Fatal(err)
	}
	got, err := h.ReadRuns("c1", ts("2025-02-15T00:00:00Z", 0))
	if err != nil {
		t.Fatal(err)
	}
	want := normalize([]RunRow{run, run2})
	if !reflect.DeepEqual(normalize(got), want) {
		t.Errorf("ReadRuns =\n%+v\nwant\n%+v", got, want)
	}
	if err := h.WritePartition(schemas.TableJobs, "c2", jan, sampleJobs()); err != nil {
		t.Fatal(err)
	}
	m, err := h.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range m.Partitions {
		paths = append(paths, e.Path)
		b, err := os.ReadFile(filepath.Join(h.Dir, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if e.SHA256 != hex.EncodeToString(sum[:]) || e.Bytes != int64(len(b)) {
			t.Errorf("manifest %s: sha256 %s, %d bytes; file has %x, %d bytes", e.Path, e.SHA256, e.Bytes, sum, len(b))
		}
	}
	wantPaths := []string{"jobs/cluster=c2/month=2025-01/data.parquet", wantPath,
		"runs/cluster=c1/month=2025-02/run-20250202T000000Z-" + func() string { s := sha256.Sum256([]byte("second")); return hex.EncodeToString(s[:4]) }() + ".parquet"}
	if !slices.Equal(paths, wantPaths) {
		t.Errorf("manifest paths = %v, want %v", paths, wantPaths)
	}
	// RebuildManifest from disk gives the same manifest.
	if err := h.RebuildManifest(); err != nil {
		t.Fatal(err)
	}
	m2, err := h.ReadManifest()
	if err != nil || !reflect.DeepEqual(m, m2) {
		t.Errorf("RebuildManifest = %+v, %v; want %+v", m2, err, m)
	}
}

func TestWritePartitionErrors(t *testing.T) {
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
	var dst []JobRow
	if err := h.ReadPartition(schemas.TableJobs, "c1", jan, &dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadPartition of a missing partition = %v, want ErrNotExist", err)
	}
}
