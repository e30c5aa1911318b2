package ingest_test

import (
	"errors"
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
