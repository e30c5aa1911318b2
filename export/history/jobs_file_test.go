package history

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// TestJobsEncodings checks the encodings of a written jobs file, column by
// column, against jobsSchema's rule: every INT64 column (ids, counts,
// timestamps) DELTA_BINARY_PACKED, the TRES map and the resource amounts
// dictionary encoded, job_id DELTA_BYTE_ARRAY, the other columns as their
// struct tags say.
func TestJobsEncodings(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
