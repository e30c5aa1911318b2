package export

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// variedJobs makes n jobs rows in shuffled order exercising every way a
// value can look to the encoder: nil and set pointers in each nullable
// column, nil, empty and larger TRES maps, empty and non-ASCII strings,
// rows equal in every sort key (so the tie order shows), timestamps with
// microseconds and before 1970, NaN and infinite floats; with mono, 1% of
// the starts carry a monotonic clock reading (which time.Compare, and so
// record.CompareJobs, compares instead of the wall clock).
func variedJobs(n int, seed uint64, mono bool) []record.JobRow {
	r := rand.New(rand.NewPCG(seed, 1))
	users := []string{"alice", "bob", "", "zoë", "user-with-a-rather-long-name", "Bob"}
	accounts := []string{"physics", "chem", "", "Åström_lab", "bio"}
	tresKeys := []string{"cpu", "mem", "node", "billing", "gres/gpu", "gres/gpu:a100", "license/matlab", "bb/datawarp"}
	now := time.Now() // carries a monotonic reading
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	maybe := func(p float64) bool { return r.Float64() < p }
	i64 := func(v int64) *int64 {
		if maybe(0.3) {
			return nil
		}
		return &v
	}
	tm := func(t time.Time) *time.Time {
		if maybe(0.2) {
			return nil
		}
		return &t
	}
	rows := make([]record.JobRow, n)
	for i := range rows {
		start := base.Add(time.Duration(r.Int64N(40*86400*1e6)) * time.Microsecond)
		switch {
		case maybe(0.01):
			start = time.Date(1969, 12, 31, 23, 59, 59, 999_000, time.UTC)
		case mono && maybe(0.01):
			start = now.Add(time.Duration(r.IntN(1000)) * time.Second)
		}
		raw := int64(1000 + r.IntN(n))
		var tres map[string]float64
		switch k := r.IntN(10); {
		case k == 0: // nil
		case k == 1:
			tres = map[string]float64{}
		default:
			tres = map[string]float64{}
			for range k {
				tres[tresKeys[r.IntN(len(tresKeys))]] = float64(r.IntN(1 << 20))
			}
		}
		row := record.JobRow{JobID: strconv.FormatInt(raw, 10), JobIDRaw: raw,
			ArrayJobID: i64(raw - 5), ArrayTaskID: i64(int64(r.IntN(100))), HetJobID: i64(raw), HetJobOffset: i64(0),
			User: users[r.IntN(len(users))], Account: accounts[r.IntN(len(accounts))],
			Partition: []string{"cpu", "gpu", ""}[r.IntN(3)], QOS: []string{"normal", ""}[r.IntN(2)],
			State:  []string{"COMPLETED", "RUNNING", "CANCELLED"}[r.IntN(3)],
			Submit: tm(start.Add(-time.Hour)), Eligible: tm(start), Start: start, End: tm(start.Add(time.Duration(r.IntN(86400)) * time.Second)),
			ElapsedSec: i64(int64(r.IntN(86400))), ChargedSec: int64(r.IntN(86400)), SuspendedSec: i64(0), TimelimitMin: i64(int64(r.IntN(4320))),
			NNodes: int64(1 + r.IntN(4)), AllocCPUs: int64(r.IntN(256)), MemMB: float64(r.IntN(1 << 20)), NodeCount: 1, GPU: float64(r.IntN(8)),
			TRES: tres, Billing: r.Float64() * 100, BillingSlurm: int64(r.IntN(100)), UsageFactor: []float64{1, 0.5, 0}[r.IntN(3)],
			SourceFile: "sacct-" + strconv.Itoa(r.IntN(30)) + ".txt", SourceLine: int64(i + 2)}
		if maybe(0.05) {
			s := strconv.Itoa(60000 + r.IntN(10))
			row.CancelledBy = &s
		}
		if maybe(0.01) {
			row.Billing, row.BillingSlurm = math.Inf(1), math.MaxInt64
		}
		if maybe(0.01) {
			row.MemMB = math.NaN()
		}
		if maybe(0.02) && i > 0 { // equal sort keys, other columns differ
			p := rows[r.IntN(i)]
			row.Account, row.User, row.Start, row.JobIDRaw, row.JobID = p.Account, p.User, p.Start, p.JobIDRaw, p.JobID
		}
		rows[i] = row
	}
	return rows
}

// TestJobsEncoderBytes checks that the jobs encoder, given the rows as a
// record.JobTable sorted by record.JobTable.Sort, writes exactly the bytes of
// parquet-go's GenericWriter[record.JobRow] fed in record.CompareJobs order (the generic
// encoder every other table uses), for row counts around the batch and
// row-group sizes, for rows given sorted or not, and for starts with
// nanoseconds and monotonic clock readings.
func TestJobsEncoderBytes(t *testing.T) {
	def, err := schemas.TableByName(schemas.TableJobs)
	if err != nil {
		t.Fatal(err)
	}
	big := 2*RowGroupRows + 100
	if testing.Short() {
		big = RowGroupRows + 1
	}
	shuffled := variedJobs(5000, 9, false)
	var sorted []record.JobRow
	for _, i := range sortedOrder(shuffled, record.CompareJobs) {
		sorted = append(sorted, shuffled[i])
	}
	cases := []struct {
		name string
		rows []record.JobRow
	}{
		{"none", nil},
		{"sample", sampleJobs()},
		{"one batch", variedJobs(writeBatch, 1, false)},
		{"batch+1", variedJobs(writeBatch+1, 2, false)},
		{"already sorted", sorted},
		{"row groups", variedJobs(big, 3, false)},
		{"monotonic starts", variedJobs(3*writeBatch, 5, true)},
	}
	for _, c := range cases {
		var want, got bytes.Buffer
		if err := encoder(c.rows, record.CompareJobs, def.SortBy)(&want); err != nil {
			t.Fatalf("%s: generic encoder: %v", c.name, err)
		}
		if err := jobsEncoder(jobTableOf(c.rows), def.SortBy)(&got); err != nil {
			t.Fatalf("%s: jobs encoder: %v", c.name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s (%d rows): jobs encoder wrote %d bytes that differ from the generic encoder's %d",
				c.name, len(c.rows), got.Len(), want.Len())
		}
	}
}

// TestJobsEncodings checks the encodings of a written jobs file, column by
// column, against jobsSchema's rule: every INT64 column (ids, counts,
// timestamps) DELTA_BINARY_PACKED, the TRES map and the resource amounts
// dictionary encoded, job_id DELTA_BYTE_ARRAY, the other columns as their
// struct tags say.
func TestJobsEncodings(t *testing.T) {
	h := openHistory(t)
	if err := h.WritePartition(schemas.TableJobs, "c1", jan, variedJobs(500, 8, false)); err != nil {
		t.Fatal(err)
	}
	f := openParquet(t, histPath(h, histOnlyFile(t, h, schemas.TableJobs, "c1", "2025-01")))
	const (
		delta = "DELTA_BINARY_PACKED"
		dict  = "RLE_DICTIONARY"
		dlba  = "DELTA_LENGTH_BYTE_ARRAY"
		dba   = "DELTA_BYTE_ARRAY"
	)
	want := map[string]string{
		"job_id": dba, "job_id_raw": delta, "array_job_id": delta, "array_task_id": delta, "het_job_id": delta,
		"het_job_offset": delta, "user": dict, "account": dict, "partition": dict, "qos": dict, "state": dict,
		"cancelled_by": dlba, "submit": delta, "eligible": delta, "start": delta, "end": delta,
		"elapsed_sec": delta, "charged_sec": delta, "suspended_sec": delta, "timelimit_min": dict,
		"nnodes": delta, "alloc_cpus": dict, "mem_mb": dict, "node_count": dict, "gpu": dict,
		"tres.key_value.key": dict, "tres.key_value.value": dict, "billing": dict, "billing_slurm": dict,
		"usage_factor": dict, "source_file": dict, "source_line": delta,
	}
	cols := f.Metadata().RowGroups[0].Columns
	if len(cols) != len(want) {
		t.Fatalf("%d leaf columns, want %d", len(cols), len(want))
	}
	for _, c := range cols {
		name := strings.Join(c.MetaData.PathInSchema, ".")
		var encs []string
		for _, e := range c.MetaData.Encoding {
			encs = append(encs, e.String())
		}
		if w, ok := want[name]; !ok || !slices.Contains(encs, w) {
			t.Errorf("column %s: encodings %v, want %s", name, encs, w)
		}
	}
}

// TestJobsColumnCodecs: a jobs file records each column's codec (jobsCodec)
// in its metadata, as written out by hand here from jobsCodec's table, and
// parquet-go reads the rows back.
func TestJobsColumnCodecs(t *testing.T) {
	h, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rows := variedJobs(3*writeBatch, 4, false)
	if err := h.WritePartition(schemas.TableJobs, "c1", jan, rows); err != nil {
		t.Fatal(err)
	}
	none := []string{"end", "elapsed_sec", "charged_sec"}
	snappy := []string{"job_id_raw", "source_line", "billing_slurm", "submit", "eligible", "start", "timelimit_min",
		"alloc_cpus", "array_job_id", "array_task_id", "het_job_id"}
	f, err := os.Open(histPath(h, histOnlyFile(t, h, schemas.TableJobs, "c1", "2025-01")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	cols := pf.Schema().Columns()
	for _, rg := range pf.Metadata().RowGroups {
		for i, cc := range rg.Columns {
			path := strings.Join(cols[i], "/")
			want := format.Zstd
			switch {
			case slices.Contains(none, path):
				want = format.Uncompressed
			case slices.Contains(snappy, path):
				want = format.Snappy
			}
			if cc.MetaData.Codec != want {
				t.Errorf("column %s: codec %v, want %v", path, cc.MetaData.Codec, want)
			}
		}
	}
	var back []record.JobRow
	if err := h.ReadPartition(schemas.TableJobs, "c1", jan, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != len(rows) {
		t.Fatalf("read %d rows back, wrote %d", len(back), len(rows))
	}
}
