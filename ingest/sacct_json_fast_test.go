package ingest

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// fixtureJobs are the jobs of the live clusters' sacct --json dumps kept
// in testdata/sacct.
func fixtureJobs(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, f := range []string{"sacct_json_v0.0.42_slurm-24.11_e2e-prio", "sacct_json_v0.0.45_slurm-26.05_e2e-prio"} {
		b, err := os.ReadFile("../testdata/sacct/" + f + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Jobs []json.RawMessage `json:"jobs"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, j := range doc.Jobs {
			out = append(out, j)
		}
	}
	return out
}

// goodFastJob is a job of the fields the reader uses, and some it does not.
const goodFastJob = `{"job_id": 7, "account": "physics", "user": "alice", "comment": {"x": "}\\\""}, "name": "j", "submit_line": "sbatch -D \/x \"q\"\n",
  "state": {"current": ["COMPLETED"], "reason": "None"}, "array": {"job_id": 0, "task_id": {"set": false, "infinite": false, "number": 0}, "task": ""},
  "time": {"start": 1795168805, "limit": {"set": true, "infinite": false, "number": 120}, "system": {"seconds": 1, "microseconds": 2}},
  "tres": {"allocated": [{"type": "cpu", "name": "", "id": 1, "count": 4}, {"type": "mem", "name": "", "id": 2, "count": 2048}]},
  "steps": [{"step": {"id": "7.batch", "name": "batch"}, "tres": {"requested": {"max": []}}}]}`

// TestJobDecodeFast: every job of sacct's own dumps (24.11 and 26.05,
// with all the fields sacct prints) is read by the fast decoder, to the
// job encoding/json reads; the shapes it leaves to encoding/json are.
func TestJobDecodeFast(t *testing.T) {
	t.Parallel()
	jobs := fixtureJobs(t)
	if len(jobs) != 42 {
		t.Fatalf("%d jobs in the two dumps, want 21 each", len(jobs))
	}
	for i, b := range jobs {
		var f, s jsonJob
		if !decodeJobFast(b, &f) {
			t.Errorf("job %d of the dumps left to encoding/json", i)
			continue
		}
		if err := json.Unmarshal(b, &s); err != nil || !reflect.DeepEqual(f, s) {
			t.Errorf("job %d: fast %+v\nencoding/json %+v, %v", i, f, s, err)
		}
	}
	good := goodFastJob
	for _, c := range []string{
		`{"job_id": 1, "name": "a\u0022b"}`,
		`{"job_id": 1, "Name": "x"}`,
		`{"job_id": 1, "job_id": 2}`,
		`{"job_id": 1, "time": {"start": "x"}}`,
		`{"job_id": 1, "state": {"current": 7}}`,
		`{"job_id": 1, "tres": {"allocated": [{"type": "cpu", "count": 2.5}]}}`,
		"{\"job_id\": 1, \"name\": \"\xff\"}",
	} {
		var f jsonJob
		if decodeJobFast([]byte(c), &f) {
			t.Errorf("%s read by the fast decoder, want it left to encoding/json", c)
		}
	}
	for _, c := range []string{`{"job_id": 1, "user": null, "steps": null, "tres": {"allocated": null}, "state": {"current": null}, "time": {"end": null}}`} {
		var f, s jsonJob
		if !decodeJobFast([]byte(c), &f) || json.Unmarshal([]byte(c), &s) != nil || !reflect.DeepEqual(f, s) || f.Steps != nil || f.JobID.n != 1 {
			t.Errorf("%s: fast %+v, encoding/json %+v", c, f, s)
		}
	}
	var f jsonJob
	if !decodeJobFast([]byte(good), &f) || f.JobID.n != 7 || f.Time.Limit.n != 120 || len(f.Steps) != 1 || f.Steps[0].Step.ID != "7.batch" ||
		len(f.TRES.Allocated) != 2 || f.TRES.Allocated[1].Count.n != 2048 || f.State.Current[0] != "COMPLETED" || f.Name != "j" || f.SubmitLine != "sbatch -D /x \"q\"\n" {
		t.Errorf("good job: %+v", f)
	}
}

// FuzzJobDecodeFast: whatever valid JSON value a job is, the fast decoder
// either leaves it to encoding/json or reads it to the same job.
//
//	go test ./ingest -run '^$' -fuzz '^FuzzJobDecodeFast$' -fuzztime 60s -fuzzminimizetime 5s
func FuzzJobDecodeFast(f *testing.F) {
	for _, b := range fixtureJobs(f) {
		f.Add(b)
	}
	f.Add([]byte(goodFastJob))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var x, y jsonJob
		if !decodeJobFast(b, &x) {
			return
		}
		if err := json.Unmarshal(b, &y); err != nil || !reflect.DeepEqual(x, y) {
			t.Fatalf("%s: fast %+v\nencoding/json %+v, %v", b, x, y, err)
		}
	})
}
