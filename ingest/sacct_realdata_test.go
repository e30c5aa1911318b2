package ingest

import (
	"errors"
	"strings"
	"testing"
)

// Every real sacct file in testdata/sacct (public third-party samples, each
// origin listed in testdata/README.md) goes through the reader with every row
// accounted for; the tricky rows are checked one by one. Expected values are
// read off the raw lines.
func TestSacctRealData(t *testing.T) {
	t.Parallel()
	type want struct {
		file     string
		fields   []string
		read     int64
		ingested int64
		rejected int64
		skipped  map[string]int64
		warn     string // substring of the single warning, if any
		// fileErr is a substring of the *FileError the file is refused
		// with (it lacks required columns), if any.
		fileErr string
	}
	for _, w := range []want{
		{file: "sacct_xdmod_shredder_accounting-logs.psv", fields: []string{"xdmod"}, read: 4, ingested: 4},
		// XDMoD's test gives its ranges the TIMEOUT state and the times of
		// a run: a range that started is a damaged row (sacct prints a
		// range only for pending tasks), rejected rather than skipped.
		{file: "sacct_xdmod_shredder_job-array-ranges.psv", fields: []string{"xdmod"}, read: 6, ingested: 1, rejected: 5},
		{file: "sacct_xdmod_shredder_non-ended-states.psv", fields: []string{"xdmod"}, read: 2, ingested: 1, skipped: map[string]int64{SkipPending: 1}},
		{file: "sacct_xdmod_shredder_utf8-jobname.psv", fields: []string{"xdmod"}, read: 1, ingested: 1},
		{file: "sacct_ubccr_allfields_107cols_dump2101.psv", read: 15, ingested: 12, rejected: 1, skipped: map[string]int64{SkipJobStep: 2}},
		{file: "sacct_ubccr_allfields_109cols_dump2110_steps.psv", read: 7, ingested: 4, rejected: 1, skipped: map[string]int64{SkipJobStep: 2}},
		{file: "sacct_ubccr_allfields_multiline-submitline.psv", read: 13, ingested: 5, rejected: 1, skipped: map[string]int64{SkipJobStep: 7}},
		{file: "sacct_ubccr_simple_pipe-in-jobname.psv", fileErr: ":1: no AllocTRES column in the header"},
		{file: "sacct_slurm2sql_test-data1_steps_cancelledby.psv", read: 5, ingested: 2, skipped: map[string]int64{SkipJobStep: 3}},
		{file: "sacct_P_alloctres_mig-typed-gpu_billing_slurm-mail-issue142.psv", fileErr: ":1: no User, Account, Partition, Start, End, State columns in the header"},
		{file: "sacct_P_hetjob_components_torchx-test.psv", fileErr: ":1: no User, Start, End, AllocTRES columns in the header"},
		// reportseff's `sacct -p` excerpt has no header; its columns are
		// (blank),NNodes,Elapsed,JobID,JobIDRaw,MaxRSS,AllocCPUS,ReqMem,State,Timelimit,TotalCPU.
		{file: "sacct_p_requeued_duplicates_reportseff-issue25.psv", fields: strings.Split("Blank,NNodes,Elapsed,JobID,JobIDRaw,MaxRSS,AllocCPUS,ReqMem,State,Timelimit,TotalCPU", ","), fileErr: ": no User, Account, Partition, Start, End, AllocTRES columns in the --sacct-fields list"},
	} {
		t.Run(w.file, func(t *testing.T) {
			res := readFile(t, w.file, SacctOptions{Fields: w.fields, Cluster: "dflt"})
			if w.fileErr != "" {
				var fe *FileError
				if !errors.As(res.err, &fe) || !strings.Contains(fe.Error(), w.fileErr) || res.stats.Read != 0 {
					t.Fatalf("err = %v after %d rows, want a *FileError containing %q before any row", res.err, res.stats.Read, w.fileErr)
				}
				return
			}
			if res.err != nil {
				t.Fatal(res.err)
			}
			st := res.stats
			if st.Read != w.read || st.Ingested != w.ingested || st.Rejected != w.rejected || len(st.Skipped) != len(w.skipped) {
				t.Errorf("stats = %s, want read=%d ingested=%d rejected=%d skipped=%v", st.String(), w.read, w.ingested, w.rejected, w.skipped)
			}
			for k, v := range w.skipped {
				if st.Skipped[k] != v {
					t.Errorf("skipped[%s] = %d, want %d", k, st.Skipped[k], v)
				}
			}
			if (w.warn == "") != (len(st.Warnings) == 0) || w.warn != "" && !strings.Contains(st.Warnings[0], w.warn) {
				t.Errorf("warnings = %q, want one containing %q", st.Warnings, w.warn)
			}
		})
	}
}

func TestSacctRealDataRows(t *testing.T) {
	t.Parallel()
	t.Run("xdmod", func(t *testing.T) {
		res := readFile(t, "sacct_xdmod_shredder_accounting-logs.psv", SacctOptions{Fields: []string{"xdmod"}})
		j := res.jobs
		// 4107166 ... CANCELLED by 102216, AllocTRES billing=36,cpu=36,mem=48000M,node=3.
		if j[1].State != "CANCELLED" || j[1].CancelledBy != "102216" || j[1].CPU != 36 || j[1].MemMB != 48000 || j[1].Node != 3 || j[1].BillingSacct != "36" {
			t.Errorf("cancelled-by row = %+v", j[1])
		}
		// 3-00:00:00 timelimit = 4320 minutes; TIMEOUT kept as its own state.
		if j[0].State != "TIMEOUT" || j[0].Timelimit != "4320" || j[0].Cluster != "ub-hpc" || j[0].Partition != "general-compute" {
			t.Errorf("timeout row = %+v", j[0])
		}
		// 5692623: empty partition, Eligible Unknown, 0 CPUs, AllocTRES only gres/gpu=2, Start == End.
		if j[3].Partition != "" || j[3].GPU != 2 || j[3].CPU != 0 || j[3].Start != j[3].End {
			t.Errorf("gpu-only row = %+v", j[3])
		}
	})
	t.Run("xdmod array ranges", func(t *testing.T) {
		res := readFile(t, "sacct_xdmod_shredder_job-array-ranges.psv", SacctOptions{Fields: []string{"xdmod"}})
		// 4103947_100 is an array task with JobIDRaw 4103947 and empty
		// AllocTRES: CPUs and nodes come from NCPUS (256) and NNodes (32).
		if j := res.jobs[0]; j.ArrayJob != "4103947" || j.ArrayTask != "100" || j.CPU != 256 || j.Node != 32 || len(j.TRES) != 0 {
			t.Errorf("array task = %+v", j)
		}
	})
	t.Run("xdmod running", func(t *testing.T) {
		res := readFile(t, "sacct_xdmod_shredder_non-ended-states.psv", SacctOptions{Fields: []string{"xdmod"}})
		// RUNNING with End printed equal to Start: treated as still running.
		if j := res.jobs[0]; j.State != "RUNNING" || j.End != "" || j.Cluster != "phillips" {
			t.Errorf("running row = %+v", j)
		}
	})
	t.Run("utf8", func(t *testing.T) {
		res := readFile(t, "sacct_xdmod_shredder_utf8-jobname.psv", SacctOptions{Fields: []string{"xdmod"}})
		if res.jobs[0].JobName != "aàb" {
			t.Errorf("job name = %q", res.jobs[0].JobName)
		}
	})
	t.Run("107 columns with pipes", func(t *testing.T) {
		res := readFile(t, "sacct_ubccr_allfields_107cols_dump2101.psv", SacctOptions{})
		names := map[string]string{}
		for _, j := range res.jobs {
			names[j.JobID] = j.JobName
		}
		// Lines 12-15 carry '|' inside Constraints and JobName; each is
		// recovered with the job name as written.
		for id, want := range map[string]string{"4830974": "JobName003", "4830975": "Job| Name003", "4830976": "Job| Name |003", "4830977": "Jo| bNa| me003"} {
			if names[id] != want {
				t.Errorf("JobName(%s) = %q, want %q", id, names[id], want)
			}
		}
		// Array task 4744528_255 has its own JobIDRaw 4744783... read it off the file.
		for _, j := range res.jobs {
			if j.JobID == "4744528_255" && (j.ArrayJob != "4744528" || j.ArrayTask != "255" || j.Raw == "4744528") {
				t.Errorf("array task = %+v", j)
			}
		}
		// Line 16 is the tail of a record cut by the parser tests: 74 of 107 fields.
		if len(res.rejects) != 1 || !strings.Contains(res.rejects[0], ":16: too few fields: 74 of 107") {
			t.Errorf("rejects = %q", res.rejects)
		}
	})
	t.Run("multiline SubmitLine", func(t *testing.T) {
		res := readFile(t, "sacct_ubccr_allfields_multiline-submitline.psv", SacctOptions{})
		var found bool
		for _, j := range res.jobs {
			if j.JobID == "9067954" {
				found = true
				// 16 nodes, 576 CPUs, mem=576G.
				if j.Node != 16 || j.CPU != 576 || j.MemMB != 576*1024 || j.Line != 4 {
					t.Errorf("multi-node job = %+v", j)
				}
			}
		}
		if !found {
			t.Error("job 9067954 missing")
		}
		// The step 9067954.1 spans lines 8-12; it is one record, skipped as a
		// step, not five broken ones.
		if res.stats.Skipped[SkipJobStep] != 7 {
			t.Errorf("steps = %d", res.stats.Skipped[SkipJobStep])
		}
		// Line 18 puts '|' in Constraints, JobName and SubmitLine at once
		// with empty neighbours: no single alignment fits, so it is rejected
		// with that reason rather than guessed.
		if len(res.rejects) != 1 || !strings.Contains(res.rejects[0], ":18: too many fields (116 of 109)") {
			t.Errorf("rejects = %q", res.rejects)
		}
	})
	t.Run("slurm2sql", func(t *testing.T) {
		res := readFile(t, "sacct_slurm2sql_test-data1_steps_cancelledby.psv", SacctOptions{})
		j := res.jobs
		if j[0].State != "CANCELLED" || j[0].CancelledBy != "1300204" || j[0].Elapsed != "12805" {
			t.Errorf("first job = %+v", j[0])
		}
		// 43977780: CANCELLED with End=Unknown: the end is Start + Elapsed (17 s).
		if j[1].JobID != "43977780" || j[1].End == "" {
			t.Fatalf("second job = %+v", j[1])
		}
		if s, e := j[1].Start, j[1].End; s == "" || atoi(e)-atoi(s) != 17 {
			t.Errorf("derived end: start %s end %s", s, e)
		}
	})
}

func atoi(s string) int64 {
	n, _ := parseInt([]byte(s))
	return n
}
