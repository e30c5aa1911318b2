package ingest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fairledger/fairledger/schemas"
)

// testJob is a flattened view of one ingested row, for assertions.
type testJob struct {
	Cluster, JobID, User, Account, Partition, QOS, State, CancelledBy string
	Raw, ArrayJob, ArrayTask, HetJob, HetOffset                       string // "" for null
	Start, End                                                        string // Unix seconds, "" for null
	Elapsed, Suspended, Timelimit                                     string
	NNodes, CPUs                                                      int64
	JobName                                                           string
	TRES                                                              map[string]float64
	CPU, MemMB, Node, GPU                                             float64
	BillingSacct                                                      string
	Line                                                              int64
}

func strAt(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return ""
	}
	switch a := a.(type) {
	case *array.Dictionary:
		return a.Dictionary().(*array.String).Value(a.GetValueIndex(i))
	case *array.String:
		return a.Value(i)
	case *array.Int64:
		return fmt.Sprint(a.Value(i))
	case *array.Timestamp:
		return fmt.Sprint(int64(a.Value(i)))
	case *array.Float64:
		return fmt.Sprint(a.Value(i))
	}
	return a.ValueStr(i)
}

func col(rec arrow.RecordBatch, name string) arrow.Array {
	i, err := schemas.Index(rec.Schema(), name)
	if err != nil {
		panic(err)
	}
	return rec.Column(i)
}

func flatten(rec arrow.RecordBatch) []testJob {
	var out []testJob
	m := col(rec, schemas.ColAllocTRES).(*array.Map)
	keys := m.Keys().(*array.String)
	vals := m.Items().(*array.Float64)
	for i := 0; i < int(rec.NumRows()); i++ {
		j := testJob{
			Cluster: strAt(col(rec, schemas.ColCluster), i), JobID: strAt(col(rec, schemas.ColJobID), i),
			User: strAt(col(rec, schemas.ColUser), i), Account: strAt(col(rec, schemas.ColAccount), i),
			Partition: strAt(col(rec, schemas.ColPartition), i), QOS: strAt(col(rec, schemas.ColQOS), i),
			State: strAt(col(rec, schemas.ColState), i), CancelledBy: strAt(col(rec, schemas.ColCancelledBy), i),
			Raw: strAt(col(rec, schemas.ColJobIDRaw), i), ArrayJob: strAt(col(rec, schemas.ColArrayJobID), i),
			ArrayTask: strAt(col(rec, schemas.ColArrayTaskID), i), HetJob: strAt(col(rec, schemas.ColHetJobID), i),
			HetOffset: strAt(col(rec, schemas.ColHetJobOffset), i), Start: strAt(col(rec, schemas.ColStart), i),
			End: strAt(col(rec, schemas.ColEnd), i), Elapsed: strAt(col(rec, schemas.ColElapsedSec), i),
			Suspended: strAt(col(rec, schemas.ColSuspendedSec), i), Timelimit: strAt(col(rec, schemas.ColTimelimitMin), i),
			NNodes:       col(rec, schemas.ColNNodes).(*array.Int64).Value(i),
			CPUs:         col(rec, schemas.ColAllocCPUs).(*array.Int64).Value(i),
			JobName:      strAt(col(rec, schemas.ColJobName), i),
			CPU:          col(rec, schemas.DenseTRESColumn("cpu")).(*array.Float64).Value(i),
			MemMB:        col(rec, schemas.DenseTRESColumn("mem")).(*array.Float64).Value(i),
			Node:         col(rec, schemas.DenseTRESColumn("node")).(*array.Float64).Value(i),
			GPU:          col(rec, schemas.DenseTRESColumn("gres/gpu")).(*array.Float64).Value(i),
			BillingSacct: strAt(col(rec, schemas.ColBillingSacct), i),
			Line:         col(rec, schemas.ColSourceLine).(*array.Int64).Value(i),
			TRES:         map[string]float64{},
		}
		s, e := m.ValueOffsets(i)
		for k := s; k < e; k++ {
			j.TRES[keys.Value(int(k))] = vals.Value(int(k))
		}
		out = append(out, j)
	}
	return out
}

type readResult struct {
	jobs    []testJob
	stats   Stats
	rejects []string
	err     error
}

func readAll(t testing.TB, name string, data []byte, opt SacctOptions) readResult {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Allocator = mem
	var res readResult
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
		res.jobs = append(res.jobs, flatten(rec)...)
		rec.Release()
	}
	res.stats = r.Stats()
	if !res.stats.Balanced() {
		t.Errorf("%s: stats do not add up: %s", name, res.stats.String())
	}
	return res
}

func readFile(t testing.TB, file string, opt SacctOptions) readResult {
	t.Helper()
	data := mustRead(t, filepath.Join("..", "testdata", "sacct", file))
	return readAll(t, file, data, opt)
}

const hdr = "JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Eligible|Start|End|Elapsed|Suspended|State|NNodes|AllocCPUS|AllocTRES|Timelimit|JobName\n"

func TestSacctRowKinds(t *testing.T) {
	t.Parallel()
	in := hdr +
		"100|100|c1|gpu|normal|labA|alice|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|2024-01-01T02:00:00|01:00:00|00:00:00|COMPLETED|1|4|billing=4,cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|1-00:00:00|train\n" +
		"100.batch|100.batch|c1||||||2024-01-01T01:00:00|2024-01-01T01:00:00|2024-01-01T02:00:00|01:00:00|00:00:00|COMPLETED|1|4|cpu=4,mem=16G,node=1||batch\n" +
		"100.extern|100.extern|c1||||||2024-01-01T01:00:00|2024-01-01T01:00:00|2024-01-01T02:00:00|01:00:00|00:00:00|COMPLETED|1|4|billing=4,cpu=4,mem=16G,node=1||extern\n" +
		"200_4|204|c1|cpu|normal|labA|bob|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:10:00|00:10:00|00:00:00|CANCELLED by 1234|1|2|billing=2,cpu=2,mem=1.50G,node=1|UNLIMITED|arr\n" +
		"200_[5-9%2]|200|c1|cpu|normal|labA|bob|2024-01-01T00:00:00|Unknown|Unknown|Unknown|00:00:00|00:00:00|PENDING|1|0||01:00:00|arr\n" +
		"300+0|300|c1|cpu|normal|labB|carol|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|00:01:00|00:00:00|COMPLETED|1|1|cpu=1,mem=100M,node=1|00:05:00|het\n" +
		"300+1|301|c1|gpu|normal|labB|carol|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|00:01:00|00:00:00|COMPLETED|1|8|cpu=8,gres/gpu:v100=2,license/matlab=1,mem=0,node=1|00:05:00|het\n" +
		"300+1.0|301.0|c1||||||2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|00:01:00|00:00:00|COMPLETED|1|8|cpu=8,mem=0,node=1||step\n" +
		"400|400|c1|cpu|normal|labB|dave|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T05:00:00|04:00:00|01:00:00|REQUEUED|1|1|billing=1,cpu=1,mem=1000M,node=1|1-00:00:00|rq\n" +
		"400|400|c1|cpu|normal|labB|dave|2024-01-01T00:00:00|2024-01-01T05:10:00|2024-01-01T05:10:00|2024-01-01T06:00:00|00:50:00|00:00:00|COMPLETED|1|1|billing=1,cpu=1,mem=1000M,node=1|1-00:00:00|rq\n" +
		"500|500|c1|cpu|normal|labB|erin|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T23:00:00|Unknown|01:00:00|00:00:00|RUNNING|2|64|billing=70,cpu=64,gres/gpu=8,license/lic1=2,mem=1.50T,node=2|2-00:00:00|long\n" +
		"600|600|c1|cpu|normal|labB|erin|2024-01-01T00:00:00|2024-01-01T00:00:00|None|2024-01-01T00:05:00|00:00:00|00:00:00|CANCELLED by 42|1|0||01:00:00|never\n" +
		"700|700|c1|cpu|normal|labB|erin|2024-01-01T00:00:00|Unknown|Unknown|Unknown|00:00:00|00:00:00|PENDING|1|0||01:00:00|wait\n"
	res := readAll(t, "kinds.txt", []byte(in), SacctOptions{})
	if res.err != nil {
		t.Fatal(res.err)
	}
	st := res.stats
	if st.Read != 13 || st.Ingested != 7 || st.Rejected != 0 || st.Skipped[SkipJobStep] != 3 ||
		st.Skipped[SkipPendingArray] != 1 || st.Skipped[SkipNeverStarted] != 1 || st.Skipped[SkipPending] != 1 {
		t.Fatalf("stats = %s", st.String())
	}
	j := res.jobs
	if got := j[0]; got.JobID != "100" || got.Raw != "100" || got.CPU != 4 || got.MemMB != 16384 || got.GPU != 1 ||
		got.TRES["gres/gpu:a100"] != 1 || got.BillingSacct != "4" || got.Start != "1704070800" || got.End != "1704074400" ||
		got.Timelimit != "1440" || got.Line != 2 || got.Cluster != "c1" {
		t.Errorf("plain job = %+v", got)
	}
	if got := j[1]; got.ArrayJob != "200" || got.ArrayTask != "4" || got.Raw != "204" || got.State != "CANCELLED" ||
		got.CancelledBy != "1234" || got.MemMB != 1536 || got.Timelimit != "" {
		t.Errorf("array task = %+v", got)
	}
	if got := j[2]; got.HetJob != "300" || got.HetOffset != "0" || got.ArrayJob != "" {
		t.Errorf("het component 0 = %+v", got)
	}
	// Typed GPUs without an untyped total: the GPU column sums the typed ones.
	if got := j[3]; got.HetOffset != "1" || got.GPU != 2 || got.TRES["license/matlab"] != 1 || got.MemMB != 0 || got.BillingSacct != "" {
		t.Errorf("het component 1 = %+v", got)
	}
	// Both runs of a requeued job are kept, each with its own Start.
	if a, b := j[4], j[5]; a.JobID != "400" || b.JobID != "400" || a.State != "REQUEUED" || b.State != "COMPLETED" ||
		a.Start == b.Start || a.Suspended != "3600" {
		t.Errorf("requeued runs = %+v / %+v", a, b)
	}
	if got := j[6]; got.State != "RUNNING" || got.End != "" || got.MemMB != 1572864 || got.GPU != 8 || got.NNodes != 2 || got.TRES["license/lic1"] != 2 {
		t.Errorf("running job = %+v", got)
	}
}

func TestSacctErrorFormat(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(hdr)
	good := "1|1|c|cpu|normal|a|u|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|00:00:00|COMPLETED|1|1|cpu=1,mem=1G,node=1|01:00:00|j\n"
	for i := 2; i < 1832; i++ {
		b.WriteString(good)
	}
	b.WriteString("2|2|c|cpu|normal|a|u|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-02T01:00:00|1-25:00:00|00:00:00|COMPLETED|1|1|cpu=1,mem=1G,node=1|01:00:00|j\n")
	b.WriteString(good)
	res := readAll(t, "sacct.txt", []byte(b.String()), SacctOptions{ChunkBytes: 8 << 10})
	want := `ingest sacct.txt:1832: Elapsed="1-25:00:00": hour out of range`
	if len(res.rejects) != 1 || res.rejects[0] != want {
		t.Fatalf("rejects = %q, want [%q]", res.rejects, want)
	}
	if res.stats.Read != 1832 || res.stats.Ingested != 1831 || res.stats.Rejected != 1 {
		t.Errorf("stats = %s", res.stats.String())
	}
}

func TestSacctRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, row, want string
	}{
		{"bad start", "1|1|c|p|q|a|u|||2024-13-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|1|cpu=1|01:00:00|j", `Start="2024-13-01T00:00:00": month out of range`},
		{"empty user", "1|1|c|p|q|a||||2024-01-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|1|cpu=1|01:00:00|j", `User="": empty`},
		{"empty account", "1|1|c|p|q||u|||2024-01-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|1|cpu=1|01:00:00|j", `Account="": empty`},
		{"bad tres", "1|1|c|p|q|a|u|||2024-01-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|1|cpu=1,mem=lots|01:00:00|j", `AllocTRES="mem=lots": not a TRES count`},
		{"tres without =", "1|1|c|p|q|a|u|||2024-01-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|1|cpu|01:00:00|j", `AllocTRES="cpu": TRES entry is not name=count`},
		{"end before start", "1|1|c|p|q|a|u|||2024-01-02T00:00:00|2024-01-01T00:00:00|00:00:00|00:00:00|COMPLETED|1|1|cpu=1|01:00:00|j", `End="2024-01-01T00:00:00": before Start`},
		{"bad job id", "x1|1|c|p|q|a|u|||2024-01-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|1|cpu=1|01:00:00|j", `JobID="x1": not a Slurm job id (want 123, 123_4, 123+1, 123.batch or 123_[1-3])`},
		{"too few fields", "1|1|c|p", "too few fields: 4 of 19"},
		{"bad cpus", "1|1|c|p|q|a|u|||2024-01-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|many|cpu=1|01:00:00|j", `AllocCPUS="many": not a non-negative integer`},
		{"bad timelimit", "1|1|c|p|q|a|u|||2024-01-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|1|cpu=1|soon|j", `Timelimit="soon": not a duration (want [D-]HH:MM:SS)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(t, "r.txt", []byte(hdr+tt.row+"\n"), SacctOptions{})
			want := "ingest r.txt:2: " + tt.want
			if len(res.rejects) != 1 || res.rejects[0] != want || res.stats.Rejected != 1 {
				t.Errorf("%s: rejects = %q, want %q", tt.name, res.rejects, want)
			}
		})
	}
}

func TestSacctHeaderless(t *testing.T) {
	t.Parallel()
	row := "1|1|c|p|q|a|u|||2024-01-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|1|cpu=1|01:00:00|j\n"
	if _, err := NewSacctReader("n.txt", strings.NewReader(row), SacctOptions{}); err == nil ||
		!strings.Contains(err.Error(), "no header line") {
		t.Errorf("headerless without fields: err = %v", err)
	}
	fields := strings.Split(strings.TrimSpace(hdr), "|")
	res := readAll(t, "n.txt", []byte(row), SacctOptions{Fields: fields})
	if res.err != nil || len(res.jobs) != 1 || res.jobs[0].Line != 1 {
		t.Errorf("headerless with fields: %+v", res)
	}
	// sacct -p: a trailing '|' on every line, header included.
	trailing := strings.ReplaceAll(hdr+row, "\n", "|\n")
	res = readAll(t, "p.txt", []byte(trailing), SacctOptions{})
	if res.err != nil || len(res.jobs) != 1 || res.jobs[0].JobName != "j" {
		t.Errorf("trailing delimiter: %+v", res)
	}
}

func TestSacctMultiline(t *testing.T) {
	t.Parallel()
	h := "JobID|User|Account|Partition|Start|End|State|AllocTRES|SubmitLine\n"
	in := h + "1|u|a|p|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|cpu=1|bash -c if true\n  then echo 1\nfi\n" +
		"2|u|a|p|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|cpu=2|sbatch x.sh\n"
	for _, chunk := range []int{0, 16, 64} {
		t.Run(fmt.Sprintf("chunk %d", chunk), func(t *testing.T) {
			res := readAll(t, "m.txt", []byte(in), SacctOptions{ChunkBytes: chunk})
			if res.stats.Read != 2 || res.stats.Ingested != 2 || len(res.jobs) != 2 || res.jobs[1].Line != 5 {
				t.Errorf("chunk %d: stats %s, jobs %+v", chunk, res.stats.String(), res.jobs)
			}
		})
	}
}

// TestSacctChunkingInvariant parses the same file with one worker and
// one block and with many workers and tiny blocks: the batches may differ
// but the rows and the counts must not.
func TestSacctChunkingInvariant(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(hdr)
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "%d|%d|c|p%d|q|acct%d|user%d|1704067200|1704067200|%d|%d|00:10:00|00:00:00|COMPLETED|1|%d|billing=%d,cpu=%d,mem=%dM,node=1|01:00:00|job %d\n",
			i, i, i%3, i%7, i%11, 1704067200+i, 1704067200+i+600, i%16+1, i%16+1, i%16+1, (i%5)*1000, i)
		if i%10 == 0 {
			fmt.Fprintf(&b, "%d.batch|%d.batch|c|||||||%d|%d|00:10:00|00:00:00|COMPLETED|1|1|cpu=1|01:00:00|batch\n", i, i, 1704067200+i, 1704067200+i+600)
		}
		if i%97 == 0 {
			b.WriteString("garbage|line\n")
		}
	}
	data := []byte(b.String())
	one := readAll(t, "inv.txt", data, SacctOptions{Workers: 1, ChunkBytes: 1 << 30})
	many := readAll(t, "inv.txt", data, SacctOptions{Workers: 4, ChunkBytes: 2048})
	if one.stats.String() != many.stats.String() {
		t.Fatalf("stats differ: %s vs %s", one.stats.String(), many.stats.String())
	}
	if one.stats.Ingested != 3000 || one.stats.Skipped[SkipJobStep] != 300 || one.stats.Rejected != 31 {
		t.Errorf("stats = %s", one.stats.String())
	}
	if fmt.Sprint(one.jobs) != fmt.Sprint(many.jobs) || fmt.Sprint(one.rejects) != fmt.Sprint(many.rejects) {
		t.Error("rows or rejects differ between chunkings")
	}
}

func TestSacctDenseExtra(t *testing.T) {
	t.Parallel()
	in := hdr + "1|1|c|p|q|a|u|||2024-01-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|1|cpu=1,gres/gpu:A100=2,gres/gpu=2,license/lic1=3|01:00:00|j\n"
	res := readAll(t, "d.txt", []byte(in), SacctOptions{DenseTRES: []string{"GRES/gpu:a100", "license/lic1"}})
	if len(res.jobs) != 1 || res.jobs[0].TRES["gres/gpu:a100"] != 2 {
		t.Fatalf("jobs = %+v", res.jobs)
	}
	r, err := NewSacctReader("d.txt", strings.NewReader(in), SacctOptions{DenseTRES: []string{"GRES/gpu:a100", "license/lic1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if v := col(rec, "tres:gres/gpu:a100").(*array.Float64).Value(0); v != 2 {
		t.Errorf("tres:gres/gpu:a100 = %v, want 2", v)
	}
	if v := col(rec, "tres:license/lic1").(*array.Float64).Value(0); v != 3 {
		t.Errorf("tres:license/lic1 = %v, want 3", v)
	}
}

func FuzzSacct(f *testing.F) {
	f.Add([]byte(hdr + "1|1|c|p|q|a|u|||2024-01-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|1|cpu=1|01:00:00|j\n"))
	f.Add([]byte(hdr + "1.batch|x|||\n2_[1-3]|\n|||||\n"))
	f.Add([]byte("JobID|AllocTRES\n1|cpu=1,mem=1.5G\n1.0|\n"))
	f.Add([]byte(hdr + "1|1|c|p|q|a|u|||2024-01-01T00:00:00|Unknown|00:00:00|00:00:00|RUNNING|1|1|cpu=1|01:00:00|" + strings.Repeat("j", 200) + "\n2|2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// A small MaxRecordBytes makes the producer skip records in
		// pieces (sacctSkip) on small inputs too.
		r, err := NewSacctReader("f.txt", bytes.NewReader(data), SacctOptions{ChunkBytes: 64, Workers: 2, MaxRecordBytes: 96})
		if err != nil {
			return
		}
		defer r.Close()
		var rows int64
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			rows += rec.NumRows()
			rec.Release()
		}
		st := r.Stats()
		if !st.Balanced() || st.Ingested != rows {
			t.Fatalf("stats %s, rows %d", st.String(), rows)
		}
		// Every physical line after the header is counted once.
		first, body := data, []byte(nil)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			first, body = data[:i+1], data[i+1:]
		}
		if !looksLikeHeader(string(first)) {
			body = data
		}
		lines := int64(bytes.Count(body, []byte{'\n'}))
		if len(body) > 0 && body[len(body)-1] != '\n' {
			lines++
		}
		if st.Lines != lines || st.Read+st.Continued > st.Lines {
			t.Fatalf("lines %d (continued %d, read %d), want %d", st.Lines, st.Continued, st.Read, lines)
		}
	})
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
