package ingest_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/ingest/ingesttest"
)

// TestSacctJSONVersionRefused: a document of a data_parser version the
// reader does not know, or of none, is refused naming file and version,
// whether meta comes before or after the jobs, and no batch is returned
// as good.
func TestSacctJSONVersionRefused(t *testing.T) {
	t.Parallel()
	job := `{"job_id": 5, "account": "a", "user": "u", "partition": "p", "state": {"current": ["COMPLETED"]},` +
		`"time": {"start": 1795168805, "end": 1795168905, "submission": 1795168800, "eligible": 1795168800, "elapsed": 100},` +
		`"tres": {"allocated": [{"type": "cpu", "name": "", "id": 1, "count": 2}]}}`
	for _, c := range []struct{ name, doc, want string }{
		{"after", `{"jobs": [` + job + `], "meta": {"plugin": {"data_parser": "data_parser/v0.0.99"}}}`, `data_parser "v0.0.99" is not one fairledger reads`},
		{"before", `{"meta": {"plugin": {"data_parser": "data_parser/v0.0.41"}}, "jobs": [` + job + `]}`, `data_parser "v0.0.41"`},
		{"none", `{"jobs": [` + job + `]}`, `no meta.plugin.data_parser`},
		{"openapi", "{\n\"meta\": {\"plugin\": {\"name\": \"Slurm OpenAPI slurmdbd\"}},\n\"jobs\": []}", `x.json:2: data_parser "openapi Slurm OpenAPI slurmdbd"`},
		{"nojobs", `{"meta": {"plugin": {"data_parser": "data_parser/v0.0.42"}}}`, `no "jobs" array`},
		{"errors", `{"jobs": [], "meta": {"plugin": {"data_parser": "data_parser/v0.0.42"}}, "errors": [{"error": "Unable to connect to database", "description": "x"}]}`, `reports 1 error(s) (the first: Unable to connect to database: x)`},
		{"cut", "{\"jobs\": [\n" + job + ",\n", `x.json:3: the JSON document ends early`},
		{"syntax", "{\"jobs\": [\n" + job + ",\n{\"job_id\": 6,, }]}", `x.json:3: not valid JSON`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := ingesttest.Cells(t, "x.json", []byte(c.doc), ingest.SacctOptions{})
			if res.Err == nil || !strings.Contains(res.Err.Error(), c.want) {
				t.Fatalf("err = %v, want it to hold %q", res.Err, c.want)
			}
			if !strings.HasPrefix(res.Err.Error(), "ingest x.json") {
				t.Errorf("err = %v, want it to name the file", res.Err)
			}
			var fe *ingest.FileError
			var pe *ingest.ParseError
			if !errors.As(res.Err, &fe) && !errors.As(res.Err, &pe) {
				t.Errorf("err is %T", res.Err)
			}
		})
	}
}

// TestSacctJSONFixtures: the prio scenario of a live cluster of each
// release (testdata/slurm-e2e/run.sh, kept with FAIRLEDGER_SLURM_KEEP),
// dumped by its sacct with --json and with -P (the twin: PriorityFields,
// every state, times in Unix seconds), reads to the same rows cell for
// cell and the same counts, as a plain run and as run --priority read it.
// The counts are sacct's own: 21 jobs (16 that ran, each with its batch
// step; 4 pending; job 12 cancelled before it started), read 37 = 21 + 16.
func TestSacctJSONFixtures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file     string
		jobs     int64
		steps    int64
		pending  int64 // PENDING
		never    int64 // cancelled before it started
		rejected int64
	}{
		{"sacct_json_v0.0.42_slurm-24.11_e2e-prio", 21, 16, 4, 1, 0},
		{"sacct_json_v0.0.45_slurm-26.05_e2e-prio", 21, 16, 4, 1, 0},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			js := mustReadFile(t, "../testdata/sacct/"+c.file+".json")
			psv := mustReadFile(t, "../testdata/sacct/"+c.file+".twin.psv")
			for _, opt := range []ingest.SacctOptions{{}, {KeepPending: true, RequestColumns: true}} {
				p := ingesttest.Cells(t, "twin.psv", psv, opt)
				j := ingesttest.Cells(t, "x.json", js, opt)
				ingesttest.Compare(t, p, j, 0)
				st := j.Stats
				ran := c.jobs - c.pending - c.never
				wantIngested := ran
				if opt.KeepPending {
					wantIngested = c.jobs
				}
				if st.Read != c.jobs+c.steps || st.Skipped[ingest.SkipJobStep] != c.steps || st.Ingested != wantIngested || st.Rejected != c.rejected {
					t.Errorf("keep pending %v: %s", opt.KeepPending, ingesttest.StatsText(st))
				}
			}
		})
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonJobText is a v0.0.42 job with the fields the reader uses, fields
// holding Go format verbs for the cases of TestSacctJSONBadJobs.
const jsonJobText = `{"job_id": %s, "account": "physics", "user": "alice", "partition": "cpu", "cluster": "c", "qos": "normal", "name": "j",
  "state": {"current": %s}, "array": {"job_id": 0, "task_id": {"set": false, "infinite": false, "number": 0}, "task": ""},
  "het": {"job_id": 0, "job_offset": {"set": false, "infinite": false, "number": 0}},
  "time": {"submission": 1795168800, "eligible": 1795168800, "start": %s, "end": 1795172405, "elapsed": 3600, "suspended": 0,
    "limit": {"set": true, "infinite": false, "number": 120}},
  "exit_code": {"status": ["SUCCESS"], "return_code": {"set": true, "infinite": false, "number": 0}},
  "tres": {"allocated": [{"type": "cpu", "name": "", "id": 1, "count": %s}, {"type": "mem", "name": "", "id": 2, "count": 2048}]},
  "steps": [{"step": {"id": "%[1]s.batch", "name": "batch"}}]}`

// TestSacctJSONBadJobs: a job the reader cannot use is rejected naming the
// file, the line the job starts on, its id, the JSON field and value, and
// its steps are counted as skipped steps, as a -P row's are; the jobs
// around it are ingested.
func TestSacctJSONBadJobs(t *testing.T) {
	t.Parallel()
	good := fmt.Sprintf(jsonJobText, "7", `["COMPLETED"]`, "1795168805", "4")
	meta := `"meta": {"plugin": {"data_parser": "data_parser/v0.0.42"}}`
	for _, c := range []struct{ name, job, want string }{
		{"type", fmt.Sprintf(jsonJobText, "8", `["COMPLETED"]`, `"soon"`, "4"), `x.json:12: job 8: time.start="\"soon\"": want a number, or {"set", "infinite", "number"}`},
		{"state", fmt.Sprintf(jsonJobText, "8", `7`, "1795168805", "4"), `x.json:12: job 8: state.current="7": want a list of strings`},
		{"fraction", fmt.Sprintf(jsonJobText, "8", `["COMPLETED"]`, "1795168805", "2.5"), `x.json:12: job 8: tres.allocated.count="2.5": want a number, or {"set", "infinite", "number"}`},
		{"bounds", fmt.Sprintf(jsonJobText, "8", `["COMPLETED"]`, "12", "4"), `x.json:12: job 8: time.start="12": `},
		{"nostate", fmt.Sprintf(jsonJobText, "8", `[]`, "1795168805", "4"), `x.json:12: job 8: state.current="": empty`},
		{"endbefore", fmt.Sprintf(jsonJobText, "8", `["COMPLETED"]`, "1795172406", "4"), `x.json:12: job 8: time.end="1795172405": before Start`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			doc := "{\n" + meta + ",\n\"jobs\": [\n" + good + ",\n" + c.job + ",\n" + good + "\n]}\n"
			res := ingesttest.Cells(t, "x.json", []byte(doc), ingest.SacctOptions{})
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if len(res.Rejects) != 1 || !strings.Contains(res.Rejects[0], c.want) {
				t.Fatalf("rejects = %q, want one holding %q", res.Rejects, c.want)
			}
			st := res.Stats
			if st.Read != 6 || st.Ingested != 2 || st.Rejected != 1 || st.Skipped[ingest.SkipJobStep] != 3 {
				t.Errorf("stats: %s", ingesttest.StatsText(st))
			}
		})
	}
}
