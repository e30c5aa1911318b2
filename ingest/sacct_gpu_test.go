package ingest

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestGPUCountXDMoD feeds XDMoD's AllocTRES → GPU-count cases (a real
// fixture, testdata/sacct/alloctres_gpu_count_cases_xdmod.json) through the
// reader: the dense gres/gpu column must equal XDMoD's expected count.
func TestGPUCountXDMoD(t *testing.T) {
	t.Parallel()
	var cases [][2]any
	if err := json.Unmarshal(mustRead(t, filepath.Join("..", "testdata", "sacct", "alloctres_gpu_count_cases_xdmod.json")), &cases); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("JobID|User|Account|Partition|Start|End|State|AllocTRES\n")
	for i, c := range cases {
		fmt.Fprintf(&b, "%d|u|a|p|1704067200|1704070800|COMPLETED|%s\n", i+1, c[0].(string))
	}
	res := readAll(t, "gpu.psv", []byte(b.String()), SacctOptions{})
	if res.err != nil || len(res.jobs) != len(cases) {
		t.Fatalf("read %d of %d cases: %v %q", len(res.jobs), len(cases), res.err, res.rejects)
	}
	for i, c := range cases {
		if got, want := res.jobs[i].GPU, c[1].(float64); got != want {
			t.Errorf("GPUs(%q) = %v, want %v", c[0], got, want)
		}
	}
}

// TestReqVsAllocTRES uses the two sacct -X -P outputs of PrincetonUniversity
// jobstats issue #6 (testdata/sacct/sacct_reqtres_vs_alloctres_exclusive_jobstats-issue6.txt):
// an --exclusive job requested billing=2,cpu=1,mem=5G and was allocated
// billing=112,cpu=36,gres/gpu:rtx2080ti=4,gres/gpu=4,mem=180G. Fair share is
// charged on the allocation: 36 CPUs, 184320 MiB, 4 GPUs (the untyped total,
// not 4+4).
func TestReqVsAllocTRES(t *testing.T) {
	t.Parallel()
	lines := strings.Split(strings.TrimSpace(string(mustRead(t, filepath.Join("..", "testdata", "sacct", "sacct_reqtres_vs_alloctres_exclusive_jobstats-issue6.txt")))), "\n")
	var req, alloc string
	for i, l := range lines {
		if strings.Contains(l, `"reqtres"`) {
			req = lines[i+1]
		}
		if strings.Contains(l, `"alloctres"`) {
			alloc = lines[i+1]
		}
	}
	in := "JobID|User|Account|Partition|Start|End|State|ReqTRES|AllocTRES\n" +
		"12345678|u|a|p|1704067200|1704070800|COMPLETED|" + req + "|" + alloc + "\n"
	res := readAll(t, "jobstats.psv", []byte(in), SacctOptions{})
	if len(res.jobs) != 1 {
		t.Fatalf("jobs = %+v, rejects %q", res.jobs, res.rejects)
	}
	j := res.jobs[0]
	if j.CPU != 36 || j.MemMB != 180*1024 || j.GPU != 4 || j.BillingSacct != "112" || j.TRES["gres/gpu:rtx2080ti"] != 4 {
		t.Errorf("job = %+v", j)
	}
}
