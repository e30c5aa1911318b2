package ingest

import (
	"bytes"
	"strings"
	"testing"
)

// TestSacctAllFieldsByRelease reads a `sacct -P -o ALL` dump of each
// release whose header is the release's own: the names of the fields array
// of src/sacct/sacct.c in its order (options.c expands ALL to every entry of
// it), at slurm-22-05-8-1 (109 fields, with Reserved, ResvCPU, ResvCPURAW),
// slurm-24-11-5-1 (118: those three gone, Extra, FailedNode, Licenses,
// Planned, PlannedCPU, PlannedCPURAW, QOSREQ, Restarts, SLUID, StdErr,
// StdIn, StdOut added) and slurm-26-05-3-1 (123: Exclusive, OriginalSLUID,
// OverSubscribe, ReqReservation, SegmentSize added). The rows are written
// by hand (testdata/sacct/sacct_P_allfields_*_handwritten.psv): the same
// three jobs and one step in each, the step's TRESUsageInTot with
// gres/gpumem and gres/gpuutil from 24.11 (tracked with gres/gpu from
// 23.02), job 102_3's SubmitLine holding a '|' that every column's syntax
// must place, and the fields a release prints empty left empty (sacct's
// print_fields_str of NULL prints nothing).
//
// Expected by hand from the rows: 101 ran 10:00:05–11:00:05 on
// 2026-11-20 UTC (1795168805–1795172405), 4 CPUs, mem=16G = 16384 MiB, one
// GPU, billing=8, timelimit 02:00:00 = 120 min; 102_3 (JobIDRaw 105) ran
// 10:10:00–10:40:00 (1795169400–1795171200), mem=2000M = 2000 MiB, cancelled
// by uid 1001, timelimit 1-00:00:00 = 1440 min; 103 runs from 11:00:00
// (1795172400) with no End, UNLIMITED time limit (null).
func TestSacctAllFieldsByRelease(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file   string
		fields int
		gone   []string // 22.05's fields the release no longer prints
	}{
		{"sacct_P_allfields_109cols_slurm-22.05_handwritten.psv", 109, nil},
		{"sacct_P_allfields_118cols_slurm-24.11_handwritten.psv", 118, []string{"Reserved", "ResvCPU", "ResvCPURAW"}},
		{"sacct_P_allfields_123cols_slurm-26.05_handwritten.psv", 123, []string{"Reserved", "ResvCPU", "ResvCPURAW"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			data := mustRead(t, "../testdata/sacct/"+c.file)
			header, _, _ := bytes.Cut(data, []byte("\n"))
			names := strings.Split(string(header), "|")
			if len(names) != c.fields {
				t.Fatalf("header has %d fields, want %d", len(names), c.fields)
			}
			for _, g := range c.gone {
				for _, n := range names {
					if n == g {
						t.Errorf("header has %s", g)
					}
				}
			}
			for _, opt := range []SacctOptions{{}, {RequestColumns: true}} {
				res := readAll(t, c.file, data, opt)
				if res.err != nil || len(res.rejects) != 0 {
					t.Fatalf("request columns %v: %v, rejects %q", opt.RequestColumns, res.err, res.rejects)
				}
				st := res.stats
				if st.Read != 4 || st.Ingested != 3 || st.Skipped[SkipJobStep] != 1 {
					t.Fatalf("stats = %s", st.String())
				}
				j := res.jobs
				if got := j[0]; got.JobID != "101" || got.Cluster != "tc" || got.User != "alice" || got.Account != "physics" ||
					got.Partition != "gpu" || got.QOS != "normal" || got.State != "COMPLETED" ||
					got.Start != "1795168805" || got.End != "1795172405" || got.Elapsed != "3600" || got.Timelimit != "120" ||
					got.CPU != 4 || got.MemMB != 16384 || got.GPU != 1 || got.Node != 1 || got.BillingSacct != "8" ||
					got.JobName != "train" || got.Line != 2 {
					t.Errorf("job 101 = %+v", got)
				}
				if got := j[1]; got.JobID != "102_3" || got.Raw != "105" || got.ArrayJob != "102" || got.ArrayTask != "3" ||
					got.State != "CANCELLED" || got.CancelledBy != "1001" || got.User != "bob" || got.Partition != "batch" ||
					got.Start != "1795169400" || got.End != "1795171200" || got.MemMB != 2000 || got.CPU != 2 ||
					got.Timelimit != "1440" || got.JobName != "sweep" || got.Line != 4 {
					t.Errorf("job 102_3 = %+v", got)
				}
				if got := j[2]; got.JobID != "103" || got.State != "RUNNING" || got.End != "" || got.Start != "1795172400" ||
					got.NNodes != 2 || got.CPU != 8 || got.MemMB != 4096 || got.Timelimit != "" || got.QOS != "high" {
					t.Errorf("job 103 = %+v", got)
				}
			}
		})
	}
}
