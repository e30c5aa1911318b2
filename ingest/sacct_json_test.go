package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fairledger/fairledger/schemas"
)

// cellTable is what a sacct reader gave for a file: every cell of every
// column but the two naming the file and line (which differ between a
// JSON file and its -P twin by construction), row by row, and the Stats.
type cellTable struct {
	cols    []string
	rows    [][]string
	stats   Stats
	rejects []string
	err     error
}

// readCells reads data with opt into a cellTable.
func readCells(t testing.TB, name string, data []byte, opt SacctOptions) cellTable {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Allocator = mem
	var res cellTable
	opt.OnReject = func(e *ParseError, raw string) { res.rejects = append(res.rejects, e.Error()) }
	r, err := NewSacctReader(name, bytes.NewReader(data), opt)
	if err != nil {
		res.err = err
		return res
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			res.err = err
			break
		}
		res.addBatch(rec)
		rec.Release()
	}
	res.stats = r.Stats()
	if res.err == nil && !res.stats.Balanced() {
		t.Errorf("%s: stats do not add up: %s", name, res.stats.String())
	}
	return res
}

func (c *cellTable) addBatch(rec arrow.RecordBatch) {
	if c.cols == nil {
		for _, f := range rec.Schema().Fields() {
			c.cols = append(c.cols, f.Name)
		}
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		row := make([]string, 0, rec.NumCols())
		for k := 0; k < int(rec.NumCols()); k++ {
			switch rec.ColumnName(k) {
			case schemas.ColSourceFile, schemas.ColSourceLine:
				row = append(row, "")
				continue
			}
			a := rec.Column(k)
			if a.IsNull(i) {
				row = append(row, "(null)")
			} else {
				row = append(row, a.ValueStr(i))
			}
		}
		c.rows = append(c.rows, row)
	}
}

// statsText is the counts of st that a JSON file and its -P twin share.
func statsText(st Stats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "read %d ingested %d rejected %d never-started %d", st.Read, st.Ingested, st.Rejected, st.NeverStarted)
	for _, k := range slices.Sorted(maps.Keys(st.Skipped)) {
		fmt.Fprintf(&b, "; skipped %q %d", k, st.Skipped[k])
	}
	for _, k := range slices.Sorted(maps.Keys(st.Remarks)) {
		fmt.Fprintf(&b, "; remark %q %d", k, st.Remarks[k])
	}
	return b.String()
}

// compareCells reports every cell in which a JSON file's table differs
// from its -P twin's, and a difference of counts.
func compareCells(t testing.TB, psv, js cellTable) {
	t.Helper()
	if psv.err != nil || js.err != nil {
		t.Fatalf("-P: %v; JSON: %v", psv.err, js.err)
	}
	if a, b := statsText(psv.stats), statsText(js.stats); a != b {
		t.Errorf("counts differ:\n-P:   %s\nJSON: %s", a, b)
	}
	if !slices.Equal(psv.cols, js.cols) {
		t.Fatalf("columns differ:\n-P:   %v\nJSON: %v", psv.cols, js.cols)
	}
	if len(psv.rows) != len(js.rows) {
		t.Errorf("%d rows from -P, %d from JSON", len(psv.rows), len(js.rows))
	}
	bad := 0
	for i := range min(len(psv.rows), len(js.rows)) {
		for k, col := range psv.cols {
			if p, j := psv.rows[i][k], js.rows[i][k]; p != j && bad < 40 {
				bad++
				t.Errorf("row %d (job %s) %s: -P %q, JSON %q", i, psv.rows[i][1], col, p, j)
			}
		}
	}
}

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
			res := readCells(t, "x.json", []byte(c.doc), SacctOptions{})
			if res.err == nil || !strings.Contains(res.err.Error(), c.want) {
				t.Fatalf("err = %v, want it to hold %q", res.err, c.want)
			}
			if !strings.HasPrefix(res.err.Error(), "ingest x.json") {
				t.Errorf("err = %v, want it to name the file", res.err)
			}
			var fe *FileError
			var pe *ParseError
			if !errors.As(res.err, &fe) && !errors.As(res.err, &pe) {
				t.Errorf("err is %T", res.err)
			}
		})
	}
}
