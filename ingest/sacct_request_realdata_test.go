package ingest

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fairledger/fairledger/schemas"
)

// TestSacctRequestRealData reads the request columns of real dumps (see
// testdata/sacct/README.md for their origins); the expected cells are read
// off the files' lines by hand.
func TestSacctRequestRealData(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "sacct", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	pick := func(rows []map[string]string, ids ...string) []map[string]string {
		var out []map[string]string
		for _, id := range ids {
			for _, r := range rows {
				if r[schemas.ColJobID] == id {
					out = append(out, r)
				}
			}
		}
		return out
	}
	cols := []string{schemas.ColJobID, schemas.ColTimelimitMin, schemas.ColReqCPUs, schemas.ColReqNodes, schemas.ColReqTRES, schemas.ColPrioritySacct, schemas.ColNice}
	row := func(v ...string) map[string]string {
		m := map[string]string{}
		for i, c := range cols {
			m[c] = v[i]
		}
		return m
	}

	// ubccr-slurm-simulator/slurm_sim_tools,
	// tests/slurmanalyser/slurmparser/test_sacctlog/sacct_dump2101.log: all
	// 107 fields of a 2021 sacct, no SubmitLine column. Lines 2, 8 and 11:
	// a held array task cancelled by its user (Priority 0) and two jobs
	// that ran.
	rows, _, st := requestRead(t, read("sacct_ubccr_allfields_107cols_dump2101.psv"), SacctOptions{RequestColumns: true}, cols...)
	want := []map[string]string{
		row("4744528_255", "2880", "12", "1", "billing=12,cpu=12,mem=33600,node=1", "0", "null"),
		row("4822203", "2400", "25", "1", "billing=25,cpu=25,mem=550000,node=1", "162794", "null"),
		row("4830973", "4320", "40", "1", "billing=40,cpu=40,mem=180000,node=1", "197655", "null"),
	}
	if got := pick(rows, "4744528_255", "4822203", "4830973"); !reflect.DeepEqual(got, want) {
		t.Errorf("dump2101 rows:\n%v\nwant\n%v", got, want)
	}
	if st.Ingested != 12 || st.Rejected != 1 || !st.Balanced() {
		t.Errorf("dump2101 stats %s, want ingested=12 rejected=1 as without the request columns", st.String())
	}

	// ubccr/xdmod, tests/artifacts/xdmod/unit/shredder/slurm/input/
	// non-ended-job-state.log (XDMoD's 26 fields, no header): with
	// KeepPending the PENDING job 3483276 is a row, start and end null
	// (XDMoD prints its Submit as End), with what it requested.
	cols = []string{schemas.ColJobID, schemas.ColState, schemas.ColSubmit, schemas.ColStart, schemas.ColEnd, schemas.ColTimelimitMin, schemas.ColReqCPUs, schemas.ColReqTRES}
	rows, _, st = requestRead(t, read("sacct_xdmod_shredder_non-ended-states.psv"), SacctOptions{Fields: []string{"xdmod"}, KeepPending: true, RequestColumns: true}, cols...)
	want = []map[string]string{
		row("3483276", "PENDING", "1593617297", "null", "null", "4320", "40", "billing=40,cpu=40,mem=120000,node=1"),
	}
	if got := pick(rows, "3483276"); !reflect.DeepEqual(got, want) {
		t.Errorf("non-ended rows:\n%v\nwant\n%v", got, want)
	}
	if st.Read != 2 || st.Ingested != 2 || st.NeverStarted != 1 || !st.Balanced() {
		t.Errorf("non-ended stats %s never started %d, want read=2 ingested=2, 1 never started", st.String(), st.NeverStarted)
	}
}
