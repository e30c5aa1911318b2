// Package ingesttest holds test support shared by the tests of ingest
// and of the commands that read sacct files: a reader's output as a table
// of cells, and the cell-for-cell comparison of two such tables (a sacct
// --json file and its -P twin).
package ingesttest

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/schemas"
)

// Table is what a sacct reader gave for a file: every cell of every
// column but the two naming the file and line (which differ between a
// JSON file and its -P twin by construction), row by row, and the Stats.
type Table struct {
	Cols    []string
	Rows    [][]string
	Stats   ingest.Stats
	Rejects []string
	Err     error
}

// Cells reads data with opt into a Table.
func Cells(t testing.TB, name string, data []byte, opt ingest.SacctOptions) Table {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Allocator = mem
	var res Table
	opt.OnReject = func(e *ingest.ParseError, raw string) { res.Rejects = append(res.Rejects, e.Error()) }
	r, err := ingest.NewSacctReader(name, bytes.NewReader(data), opt)
	if err != nil {
		res.Err = err
		return res
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			res.Err = err
			break
		}
		res.addBatch(rec)
		rec.Release()
	}
	res.Stats = r.Stats()
	if res.Err == nil && !res.Stats.Balanced() {
		t.Errorf("%s: stats do not add up: %s", name, res.Stats.String())
	}
	return res
}

// addBatch appends a batch's rows.
func (c *Table) addBatch(rec arrow.RecordBatch) {
	if c.Cols == nil {
		for _, f := range rec.Schema().Fields() {
			c.Cols = append(c.Cols, f.Name)
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
		c.Rows = append(c.Rows, row)
	}
}

// StatsText is the counts of st that a JSON file and its -P twin share.
func StatsText(st ingest.Stats) string {
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

// Compare reports every cell in which a JSON file's table differs
// from its -P twin's, and a difference of counts. runningSlack is the
// number of seconds between the two dumps when they were taken from a live
// cluster one after the other: sacct prints a running job's elapsed time
// as of its own clock, so the later JSON dump's elapsed_sec of a job with
// no end yet may exceed the -P dump's by up to that many seconds (never
// less). Every other cell must be equal.
func Compare(t testing.TB, psv, js Table, runningSlack int64) {
	t.Helper()
	if psv.Err != nil || js.Err != nil {
		t.Fatalf("-P: %v; JSON: %v", psv.Err, js.Err)
	}
	if a, b := StatsText(psv.Stats), StatsText(js.Stats); a != b {
		t.Errorf("counts differ:\n-P:   %s\nJSON: %s", a, b)
	}
	if !slices.Equal(psv.Cols, js.Cols) {
		t.Fatalf("columns differ:\n-P:   %v\nJSON: %v", psv.Cols, js.Cols)
	}
	if len(psv.Rows) != len(js.Rows) {
		t.Errorf("%d rows from -P, %d from JSON", len(psv.Rows), len(js.Rows))
	}
	end, elapsed := slices.Index(psv.Cols, schemas.ColEnd), slices.Index(psv.Cols, schemas.ColElapsedSec)
	bad := 0
	for i := range min(len(psv.Rows), len(js.Rows)) {
		for k, col := range psv.Cols {
			p, j := psv.Rows[i][k], js.Rows[i][k]
			if k == elapsed && end >= 0 && psv.Rows[i][end] == "(null)" && laterBy(p, j, runningSlack) {
				continue
			}
			if p != j && bad < 40 {
				bad++
				t.Errorf("row %d (job %s) %s: -P %q, JSON %q", i, psv.Rows[i][1], col, p, j)
			}
		}
	}
}

// laterBy tells whether the elapsed seconds j exceed p by 0 to slack.
func laterBy(p, j string, slack int64) bool {
	a, errA := strconv.ParseInt(p, 10, 64)
	b, errB := strconv.ParseInt(j, 10, 64)
	return errA == nil && errB == nil && b >= a && b-a <= slack
}
