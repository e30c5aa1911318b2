package ingest

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/fairledger/fairledger/schemas"
)

// requestRead reads data with opt (a checked allocator, small blocks and
// two workers, so that rows cross blocks), validates every batch and
// returns the named columns' cells row by row ("null" for a null), the
// rejects and the stats.
func requestRead(t *testing.T, data string, opt SacctOptions, cols ...string) ([]map[string]string, []*ParseError, Stats) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Allocator = mem
	opt.ChunkBytes = 256
	opt.Workers = 2
	var rejects []*ParseError
	opt.OnReject = func(err *ParseError, _ string) { rejects = append(rejects, err) }
	r, err := NewSacctReader("req.psv", strings.NewReader(data), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows []map[string]string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Schema().Equal(r.Schema()) {
			t.Errorf("batch schema %s, reader's %s", rec.Schema(), r.Schema())
		}
		checkBatch(t, rec)
		for i := 0; i < int(rec.NumRows()); i++ {
			row := map[string]string{}
			for _, c := range cols {
				row[c] = cellAt(t, rec, c, i)
			}
			rows = append(rows, row)
		}
		rec.Release()
	}
	return rows, rejects, r.Stats()
}

// checkBatch checks the structure of every column of rec: its length, its
// type against the schema, its null count against its validity bitmap,
// and every value as a scalar.
func checkBatch(t *testing.T, rec arrow.RecordBatch) {
	t.Helper()
	for i, f := range rec.Schema().Fields() {
		a := rec.Column(i)
		if int64(a.Len()) != rec.NumRows() || !arrow.TypeEqual(a.DataType(), f.Type) {
			t.Errorf("column %s: %d rows of %s, want %d of %s", f.Name, a.Len(), a.DataType(), rec.NumRows(), f.Type)
			continue
		}
		nulls := 0
		for j := 0; j < a.Len(); j++ {
			if a.IsNull(j) {
				nulls++
			}
			s, err := scalar.GetScalar(a, j)
			if err != nil {
				t.Errorf("column %s row %d: %v", f.Name, j, err)
				continue
			}
			if err := s.ValidateFull(); err != nil {
				t.Errorf("column %s row %d: %v", f.Name, j, err)
			}
			if r, ok := s.(scalar.Releasable); ok {
				r.Release()
			}
		}
		if nulls != a.NullN() || nulls > 0 && !f.Nullable {
			t.Errorf("column %s: %d null rows, NullN %d, nullable %v", f.Name, nulls, a.NullN(), f.Nullable)
		}
	}
}

// cellAt renders row i of the named column: a number, a string, true or
// false, a map as "k=v,..." in key order, or "null".
func cellAt(t *testing.T, rec arrow.RecordBatch, name string, i int) string {
	t.Helper()
	k, err := schemas.Index(rec.Schema(), name)
	if err != nil {
		t.Fatal(err)
	}
	a := rec.Column(k)
	if a.IsNull(i) {
		return "null"
	}
	switch a := a.(type) {
	case *array.Int64:
		return fmt.Sprint(a.Value(i))
	case *array.Timestamp:
		return fmt.Sprint(int64(a.Value(i)))
	case *array.String:
		return a.Value(i)
	case *array.Boolean:
		return fmt.Sprint(a.Value(i))
	case *array.Dictionary:
		return a.Dictionary().(*array.String).Value(a.GetValueIndex(i))
	case *array.Map:
		lo, hi := a.ValueOffsets(i)
		keys := a.Keys().(*array.String)
		vals := a.Items().(*array.Float64)
		var kv []string
		for j := lo; j < hi; j++ {
			kv = append(kv, fmt.Sprintf("%s=%v", keys.Value(int(j)), vals.Value(int(j))))
		}
		sort.Strings(kv)
		return strings.Join(kv, ",")
	}
	t.Fatalf("column %s: unexpected type %s", name, a.DataType())
	return ""
}

const reqHeader = "JobID|JobIDRaw|User|Account|Partition|Submit|Eligible|Start|End|State|AllocTRES|ReqCPUS|ReqNodes|ReqTRES|Timelimit|Priority|SubmitLine\n"

// reqFile has one record of each kind the request columns read; the
// expected values below are read off the lines by hand.
var reqFile = reqHeader +
	// line 2: every column
	"10|10|u1|a1|gpu|1700000000|1700000100|1700000200|1700003800|COMPLETED|billing=4,cpu=4,mem=16G,node=1|4|1|billing=4,cpu=4,mem=16G,node=1|01:00:00|12345|sbatch --nice=50 -p gpu,cpu job.sh\n" +
	// line 3: 2048 nodes print as 2K; blank Priority and SubmitLine
	"11|11|u1|a1|cpu|1700000000|1700000000|1700000200|1700000300|COMPLETED|cpu=2048,node=2048|2048|2K|cpu=2048,gres/gpu:a100=2,mem=1.50G,node=2048|UNLIMITED||\n" +
	// lines 4-5: the components of a het job take their part of the line
	"12+0|12|u2|a1|a|1700000000|1700000000|1700000200|1700000300|COMPLETED|cpu=1|1|1|cpu=1|00:10:00|7|srun -p a hostname : -p b --nice=3 hostname\n" +
	"12+1|13|u2|a1|b|1700000000|1700000000|1700000200|1700000300|COMPLETED|cpu=1|1|1|cpu=1|00:10:00|7|srun -p a hostname : -p b --nice=3 hostname\n" +
	// line 6: a SubmitLine from no submit command (NordicHPC/slurm2sql,
	// tests/test-data1.csv): a remark, not a reject
	"13|14|u2|a1|a|1700000000|1700000000|1700000200|1700000300|COMPLETED|cpu=1||||||test_submit_line2\n" +
	// line 7: held, with --begin
	"14|15|u2|a1|a|1700000000|1700003600|1700003700|1700003800|COMPLETED|cpu=1|1|1|cpu=1|00:10:00|0|sbatch -H --begin=now+1hour x.sh\n" +
	// lines 8-10: bad values, each rejected
	"15|16|u2|a1|a|1700000000|1700000000|1700000200|1700000300|COMPLETED|cpu=1|1|abc|cpu=1|00:10:00|0|sbatch x.sh\n" +
	"16|17|u2|a1|a|1700000000|1700000000|1700000200|1700000300|COMPLETED|cpu=1|1|1|cpu=1|00:10:00|0|sbatch --nice=2147483646 x.sh\n" +
	"17|18|u2|a1|a|1700000000|1700000000|1700000200|1700000300|COMPLETED|cpu=1|1|1|cpu|00:10:00|0|sbatch x.sh\n" +
	// line 11: a step
	"10.batch|10.batch|||||1700000200|1700000200|1700003800|COMPLETED|cpu=4||||||\n"

var reqCols = []string{schemas.ColJobID, schemas.ColTimelimitMin, schemas.ColReqCPUs, schemas.ColReqNodes, schemas.ColReqTRES,
	schemas.ColPrioritySacct, schemas.ColNice, schemas.ColReqPartitions, schemas.ColBeginRequested, schemas.ColHoldRequested}

func TestSacctRequestColumns(t *testing.T) {
	t.Parallel()
	rows, rejects, st := requestRead(t, reqFile, SacctOptions{RequestColumns: true}, reqCols...)
	row := func(id, tl, cpus, nodes, tres, prio, nice, parts, begin, hold string) map[string]string {
		return map[string]string{schemas.ColJobID: id, schemas.ColTimelimitMin: tl, schemas.ColReqCPUs: cpus,
			schemas.ColReqNodes: nodes, schemas.ColReqTRES: tres, schemas.ColPrioritySacct: prio, schemas.ColNice: nice,
			schemas.ColReqPartitions: parts, schemas.ColBeginRequested: begin, schemas.ColHoldRequested: hold}
	}
	want := []map[string]string{
		row("10", "60", "4", "1", "billing=4,cpu=4,mem=16384,node=1", "12345", "50", "gpu,cpu", "false", "false"),
		row("11", "null", "2048", "2048", "cpu=2048,gres/gpu:a100=2,mem=1536,node=2048", "null", "null", "null", "null", "null"),
		row("12+0", "10", "1", "1", "cpu=1", "7", "0", "a", "false", "false"),
		row("12+1", "10", "1", "1", "cpu=1", "7", "3", "b", "false", "false"),
		row("13", "null", "null", "null", "null", "null", "null", "null", "null", "null"),
		row("14", "10", "1", "1", "cpu=1", "0", "0", "null", "true", "true"),
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows:\n%v\nwant\n%v", rows, want)
	}
	wantRejects := []string{
		`ingest req.psv:8: ReqNodes="abc": not a node count (want a whole number, as sacct prints it: 16, 1K, 1.50K)`,
		`ingest req.psv:9: SubmitLine="sbatch --nice=2147483646 x.sh": --nice=2147483646: out of range (at most ±2147483645)`,
		`ingest req.psv:10: ReqTRES="cpu": TRES entry is not name=count`,
	}
	var got []string
	for _, e := range rejects {
		got = append(got, e.Error())
	}
	if !reflect.DeepEqual(got, wantRejects) {
		t.Errorf("rejects:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantRejects, "\n"))
	}
	if st.Read != 10 || st.Ingested != 6 || st.Rejected != 3 || st.Skipped[SkipJobStep] != 1 || !st.Balanced() ||
		st.Remarks[RemarkSubmitLine] != 1 || st.NeverStarted != 0 {
		t.Errorf("stats %s, remarks %v, never started %d; want read=10 ingested=6 rejected=3 skipped[job step]=1, one SubmitLine remark",
			st.String(), st.Remarks, st.NeverStarted)
	}
}

// TestSacctRequestColumnsOff reads the same file without RequestColumns:
// the request columns are neither in the schema nor checked, so the rows
// with bad request values are ingested as they always were.
func TestSacctRequestColumnsOff(t *testing.T) {
	t.Parallel()
	rows, rejects, st := requestRead(t, reqFile, SacctOptions{}, schemas.ColJobID)
	// Lines 6 to 10 give plain jobs a JobIDRaw one past their JobID: each
	// is counted under RemarkJobIDRaw (RequestColumns' test checks only
	// its own remark).
	if len(rows) != 9 || len(rejects) != 0 || st.Ingested != 9 || st.Skipped[SkipJobStep] != 1 || !st.Balanced() ||
		len(st.Remarks) != 1 || st.Remarks[RemarkJobIDRaw] != 5 {
		t.Errorf("%d rows, %d rejects, stats %s remarks %v; want 9 rows, no rejects", len(rows), len(rejects), st.String(), st.Remarks)
	}
	r, err := NewSacctReader("req.psv", strings.NewReader(reqFile), SacctOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Schema().Equal(schemas.Jobs(nil)) {
		t.Errorf("schema without RequestColumns = %s, want schemas.Jobs(nil)", r.Schema())
	}
}

// TestSacctRequestColumnsAbsent reads a file without any request column:
// the columns are there, null in every row.
func TestSacctRequestColumnsAbsent(t *testing.T) {
	t.Parallel()
	data := "JobID|User|Account|Partition|Start|End|State|AllocTRES\n" +
		"1|u|a|p|1700000000|1700000100|COMPLETED|cpu=1\n"
	rows, _, st := requestRead(t, data, SacctOptions{RequestColumns: true}, reqCols...)
	want := map[string]string{schemas.ColJobID: "1"}
	for _, c := range reqCols[1:] {
		want[c] = "null"
	}
	if len(rows) != 1 || !reflect.DeepEqual(rows[0], want) || st.Ingested != 1 {
		t.Errorf("rows %v, stats %s; want %v", rows, st.String(), want)
	}
}

// TestSacctRequestSubmitLinePipe: a '|' that could belong to SubmitLine
// or to a free-text column fairledger does not read (WorkDir) keeps the
// record, as it did before SubmitLine was read, and leaves SubmitLine
// unread.
func TestSacctRequestSubmitLinePipe(t *testing.T) {
	t.Parallel()
	data := "JobID|User|Account|Partition|Start|End|State|AllocTRES|SubmitLine|WorkDir\n" +
		"1|u|a|p|1700000000|1700000100|COMPLETED|cpu=1|sbatch -p x job.sh|/home/u|x\n"
	cols := []string{schemas.ColJobID, schemas.ColNice, schemas.ColReqPartitions}
	rows, rejects, st := requestRead(t, data, SacctOptions{RequestColumns: true}, cols...)
	want := []map[string]string{{schemas.ColJobID: "1", schemas.ColNice: "null", schemas.ColReqPartitions: "null"}}
	if !reflect.DeepEqual(rows, want) || len(rejects) != 0 || st.Remarks[RemarkSubmitLine] != 1 {
		t.Errorf("rows %v, rejects %v, remarks %v; want %v, no reject, one SubmitLine remark", rows, rejects, st.Remarks, want)
	}
	if rows, rejects, _ := requestRead(t, data, SacctOptions{}, schemas.ColJobID); len(rows) != 1 || len(rejects) != 0 {
		t.Errorf("without RequestColumns: rows %v, rejects %v; want the row", rows, rejects)
	}
}

const pendHeader = "JobID|JobIDRaw|User|Account|Partition|Submit|Eligible|Start|End|State|AllocTRES\n"

// pendFile has a job that ran and one of each kind of job that never
// started.
var pendFile = pendHeader +
	"20|20|u|a|p|1700000000|1700000000|1700000100|1700000200|COMPLETED|cpu=1\n" + // ran
	"21|21|u|a|gpu,cpu|1700000000|1700000050|Unknown|Unknown|PENDING|\n" + // pending when sacct looked
	"22|22|u|a|p|1700000000|1700000000|None|1700000500|CANCELLED by 1000|\n" + // cancelled while pending
	"23_[1-5%2]|23|u|a|p|1700000000|Unknown|Unknown|Unknown|PENDING|\n" + // a throttled array's pending remainder
	"25|25|u|a|p|1700000000|1700000000|1700000100|1700000000|PENDING|\n" + // XDMoD-style: End = Submit, and a Start
	"26|26||a|p|1700000000|1700000000|Unknown|Unknown|PENDING|\n" + // no user
	"20.batch|20.batch|||||1700000100|1700000100|1700000200|COMPLETED|cpu=1\n"

func TestSacctKeepPendingOff(t *testing.T) {
	t.Parallel()
	rows, rejects, st := requestRead(t, pendFile, SacctOptions{}, schemas.ColJobID)
	wantSkip := map[string]int64{SkipPending: 3, SkipNeverStarted: 1, SkipPendingArray: 1, SkipJobStep: 1}
	if len(rows) != 1 || len(rejects) != 0 || st.Read != 7 || st.Ingested != 1 || !reflect.DeepEqual(st.Skipped, wantSkip) ||
		st.NeverStarted != 0 || !st.Balanced() {
		t.Errorf("%d rows, %d rejects, stats %s never started %d; want 1 row, skipped %v", len(rows), len(rejects), st.String(), st.NeverStarted, wantSkip)
	}
}

func TestSacctKeepPending(t *testing.T) {
	t.Parallel()
	cols := []string{schemas.ColJobID, schemas.ColJobIDRaw, schemas.ColArrayJobID, schemas.ColArrayTaskID, schemas.ColPartition,
		schemas.ColState, schemas.ColCancelledBy, schemas.ColSubmit, schemas.ColEligible, schemas.ColStart, schemas.ColEnd}
	rows, rejects, st := requestRead(t, pendFile, SacctOptions{KeepPending: true}, cols...)
	row := func(v ...string) map[string]string {
		m := map[string]string{}
		for i, c := range cols {
			m[c] = v[i]
		}
		return m
	}
	want := []map[string]string{
		row("20", "20", "null", "null", "p", "COMPLETED", "null", "1700000000", "1700000000", "1700000100", "1700000200"),
		row("21", "21", "null", "null", "gpu,cpu", "PENDING", "null", "1700000000", "1700000050", "null", "null"),
		row("22", "22", "null", "null", "p", "CANCELLED", "1000", "1700000000", "1700000000", "null", "1700000500"),
		row("23_[1-5%2]", "23", "23", "null", "p", "PENDING", "null", "1700000000", "null", "null", "null"),
		row("25", "25", "null", "null", "p", "PENDING", "null", "1700000000", "1700000000", "null", "null"),
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows:\n%v\nwant\n%v", rows, want)
	}
	if len(rejects) != 1 || rejects[0].Line != 7 || rejects[0].Field != "User" {
		t.Errorf("rejects %v, want the row without a user (line 7)", rejects)
	}
	if st.Read != 7 || st.Ingested != 5 || st.Rejected != 1 || st.NeverStarted != 4 ||
		!reflect.DeepEqual(st.Skipped, map[string]int64{SkipJobStep: 1}) || !st.Balanced() ||
		st.Remarks[RemarkPendingStart] != 1 {
		t.Errorf("stats %s never started %d remarks %v; want read=7 ingested=5 rejected=1 skipped[job step]=1, 4 never started, one pending-start remark",
			st.String(), st.NeverStarted, st.Remarks)
	}
	r, err := NewSacctReader("p.psv", strings.NewReader(pendFile), SacctOptions{KeepPending: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if f, _ := r.Schema().FieldsByName(schemas.ColStart); len(f) != 1 || !f[0].Nullable {
		t.Errorf("start field %v, want one, nullable", f)
	}
}

// TestSacctKeepPendingNoJobIDRaw: without JobIDRaw the pending remainder
// of an array is the array's own job.
func TestSacctKeepPendingNoJobIDRaw(t *testing.T) {
	t.Parallel()
	data := "JobID|User|Account|Partition|Start|End|State|AllocTRES\n" +
		"40_[3-9]|u|a|p|Unknown|Unknown|PENDING|\n" +
		"40_2|u|a|p|Unknown|Unknown|PENDING|\n"
	rows, rejects, st := requestRead(t, data, SacctOptions{KeepPending: true}, schemas.ColJobIDRaw, schemas.ColArrayJobID)
	want := []map[string]string{{schemas.ColJobIDRaw: "40", schemas.ColArrayJobID: "40"}}
	if !reflect.DeepEqual(rows, want) || len(rejects) != 1 || !errors.Is(rejects[0], errNeedJobIDRaw) || !st.Balanced() {
		t.Errorf("rows %v rejects %v stats %s; want %v and the array task rejected for its JobIDRaw", rows, rejects, st.String(), want)
	}
}

// TestSacctKeepPendingRequest reads a pending job's request, the purpose
// of keeping it: what it asked for while it waited.
func TestSacctKeepPendingRequest(t *testing.T) {
	t.Parallel()
	data := "JobID|User|Account|Partition|Submit|Eligible|Start|End|State|AllocTRES|ReqCPUS|ReqNodes|ReqTRES|Priority|SubmitLine\n" +
		"50|u|a|a,b|1700000000|1700000000|Unknown|Unknown|PENDING||8|2|billing=8,cpu=8,mem=8G,node=2|4294|sbatch --nice=100 -p a,b -N2 -n8 x.sh\n"
	rows, _, st := requestRead(t, data, SacctOptions{KeepPending: true, RequestColumns: true},
		schemas.ColStart, schemas.ColReqCPUs, schemas.ColReqNodes, schemas.ColReqTRES, schemas.ColPrioritySacct, schemas.ColNice, schemas.ColReqPartitions)
	want := []map[string]string{{schemas.ColStart: "null", schemas.ColReqCPUs: "8", schemas.ColReqNodes: "2",
		schemas.ColReqTRES: "billing=8,cpu=8,mem=8192,node=2", schemas.ColPrioritySacct: "4294", schemas.ColNice: "100", schemas.ColReqPartitions: "a,b"}}
	if !reflect.DeepEqual(rows, want) || st.NeverStarted != 1 {
		t.Errorf("rows %v, stats %s never started %d; want %v", rows, st.String(), st.NeverStarted, want)
	}
}

// TestSacctRequestTRESMemoBounded: ReqTRES shares AllocTRES's memo and
// adds to it without emptying it mid-row; the memo is emptied between
// rows, so that many distinct ReqTRES under one AllocTRES stay bounded and
// every row keeps its own values.
func TestSacctRequestTRESMemoBounded(t *testing.T) {
	t.Parallel()
	n := 2*maxTRESMemo + 10
	var b strings.Builder
	b.WriteString("JobID|User|Account|Partition|Start|End|State|AllocTRES|ReqTRES\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d|u|a|p|1700000000|1700000100|COMPLETED|cpu=1|cpu=%d\n", i+1, i+1)
	}
	hdr, data, _ := strings.Cut(b.String(), "\n")
	lay := &sacctLayout{dense: schemas.DenseTRESList(nil), request: true}
	if err := lay.init(strings.Split(hdr, "|")); err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt := SacctOptions{Allocator: mem, RequestColumns: true}
	p := newSacctParser("memo.psv", lay, opt, schemas.JobsWith(schemas.JobsOptions{Request: true}))
	res := p.parseChunk(chunk{line: 2, data: []byte(data)})
	if res.rec == nil || res.stats.Ingested != int64(n) {
		t.Fatalf("stats %s, want %d ingested", res.stats.String(), n)
	}
	defer res.rec.Release()
	if items := len(p.tresMemo.items); items > maxTRESMemo+1 {
		t.Errorf("memo holds %d items, want at most %d", items, maxTRESMemo+1)
	}
	for _, i := range []int{0, 1, maxTRESMemo - 1, maxTRESMemo, maxTRESMemo + 1, n - 1} {
		if got, want := cellAt(t, res.rec, schemas.ColReqTRES, i), fmt.Sprintf("cpu=%d", i+1); got != want {
			t.Errorf("row %d req_tres = %s, want %s", i, got, want)
		}
		if got := cellAt(t, res.rec, schemas.ColAllocTRES, i); got != "cpu=1" {
			t.Errorf("row %d alloc_tres = %s, want cpu=1", i, got)
		}
	}
	checkBatch(t, res.rec)
}
