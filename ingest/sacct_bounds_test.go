package ingest

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// Rows of hdr's 19 columns: a finished job and a running one.
const (
	boundsDone = "100|100|c1|gpu|normal|labA|alice|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|2024-01-01T02:00:00|01:00:00|00:00:00|COMPLETED|1|4|cpu=4,mem=16G,node=1|1-00:00:00|train"
	boundsRun  = "101|101|c1|gpu|normal|labA|alice|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|Unknown|01:00:00|00:00:00|RUNNING|1|4|cpu=4,mem=16G,node=1|1-00:00:00|eval"
)

// withoutField drops field i of a '|'-separated line.
func withoutField(line string, i int) string {
	f := strings.Split(line, "|")
	return strings.Join(append(f[:i:i], f[i+1:]...), "|")
}

// A header whose column count is not the rows' is refused at once, naming
// the file: before, each 18-field row was glued to the next (18+18-1 = 35
// fields) and the pairs were rejected or, worse, half of them shifted.
func TestSacctHeaderRowsMismatch(t *testing.T) {
	t.Parallel()
	var short strings.Builder
	short.WriteString(hdr)
	for i := 0; i < 40; i++ {
		short.WriteString(withoutField(boundsDone, 12) + "\n") // Suspended dropped from the rows only
	}
	var pRows strings.Builder // sacct -p rows under a -P header
	pRows.WriteString(hdr)
	for i := 0; i < 3; i++ {
		pRows.WriteString(boundsDone + "|\n")
	}
	tests := []struct {
		name, in, want string
	}{
		{"rows have one field less", short.String(), "ingest m.psv:1: the header has 19 columns, rows have 18: was the header edited?"},
		// A file of two rows is enough when they are all it has.
		{"two rows", hdr + withoutField(boundsDone, 3) + "\n" + withoutField(boundsRun, 3) + "\n", "ingest m.psv:1: the header has 19 columns, rows have 18: was the header edited?"},
		{"header -p, rows -P", strings.TrimSuffix(hdr, "\n") + "|\n" + boundsDone + "\n" + boundsRun + "\n", "ingest m.psv:1: the header ends in '|' (sacct -p) and the rows do not (sacct -P): was the header edited?"},
		{"header -P, rows -p", pRows.String(), "ingest m.psv:1: the rows end in '|' (sacct -p) and the header does not (sacct -P): was the header edited?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(t, "m.psv", []byte(tt.in), SacctOptions{})
			if res.err == nil || res.err.Error() != tt.want {
				t.Errorf("%s: err = %v, want %q", tt.name, res.err, tt.want)
			}
		})
	}
}

// What the mismatch check lets through: rows whose counts differ (a
// multi-line record), a single row, and rows of one job array whose shared
// JobName holds a '|' (one field more on every row, which recoverPipes
// places in the free-text JobName).
func TestSacctHeaderRowsMismatchPasses(t *testing.T) {
	t.Parallel()
	var arr strings.Builder
	arr.WriteString(hdr)
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&arr, "%d|%d|c1|gpu|normal|labA|alice|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|2024-01-01T02:00:00|01:00:00|00:00:00|COMPLETED|1|4|cpu=4,mem=16G,node=1|1-00:00:00|prep|train\n", 200+i, 200+i)
	}
	res := readAll(t, "arr.psv", []byte(arr.String()), SacctOptions{})
	if res.err != nil || res.stats.Ingested != 20 || res.jobs[0].JobName != "prep|train" {
		t.Errorf("array with '|' in JobName: err %v, stats %s", res.err, res.stats.String())
	}
	res = readAll(t, "one.psv", []byte(hdr+withoutField(boundsDone, 3)+"\n"), SacctOptions{})
	if res.err != nil || res.stats.Rejected != 1 || len(res.rejects) != 1 || !strings.Contains(res.rejects[0], "too few fields: 18 of 19") {
		t.Errorf("one short row: err %v, stats %s, rejects %q", res.err, res.stats.String(), res.rejects)
	}
	// With sacct -P, a row whose last column is empty ends in '|'.
	empty := strings.TrimSuffix(boundsDone, "train")
	res = readAll(t, "e.psv", []byte(hdr+empty+"\n"+empty+"\n"), SacctOptions{})
	if res.err != nil || res.stats.Ingested != 2 {
		t.Errorf("empty last column: err %v, stats %s", res.err, res.stats.String())
	}
}

// Stats count physical lines: every line after the header is a record's
// first line, a continuation of one, or blank.
func TestSacctStatsLines(t *testing.T) {
	t.Parallel()
	h := "JobID|User|Account|Partition|Start|End|State|AllocTRES|SubmitLine\n"
	in := h + "1|u|a|p|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|cpu=1|bash -c if true\n  then echo 1\nfi\n" +
		"\n" +
		"2|u|a|p|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|cpu=2|sbatch x.sh\n"
	for _, chunk := range []int{0, 16, 64} {
		t.Run(fmt.Sprintf("chunk %d", chunk), func(t *testing.T) {
			res := readAll(t, "l.txt", []byte(in), SacctOptions{ChunkBytes: chunk})
			// 5 lines after the header: 2 records, 2 continuations, 1 blank.
			if res.stats.Lines != 5 || res.stats.Read != 2 || res.stats.Continued != 2 {
				t.Errorf("chunk %d: lines %d, read %d, continued %d; want 5, 2, 2", chunk, res.stats.Lines, res.stats.Read, res.stats.Continued)
			}
		})
	}
}

// A file cut in its last field (no final newline; sacct ends every line
// with one) is read, with a warning naming the file and its last line.
func TestSacctNoFinalNewline(t *testing.T) {
	t.Parallel()
	cut := boundsDone[:len(boundsDone)-2] // "...|trai"
	for _, chunk := range []int{0, 32} {
		t.Run(fmt.Sprintf("chunk %d", chunk), func(t *testing.T) {
			res := readAll(t, "cut.psv", []byte(hdr+boundsRun+"\n"+cut), SacctOptions{ChunkBytes: chunk})
			want := []string{"cut.psv:3: the file ends without a newline, which sacct always prints: the last line may be cut (a truncated copy?)"}
			if res.err != nil || !reflect.DeepEqual(res.stats.Warnings, want) {
				t.Errorf("chunk %d: err %v, warnings %q, want %q", chunk, res.err, res.stats.Warnings, want)
			}
			if res.stats.Read != 2 || res.stats.Lines != 2 {
				t.Errorf("chunk %d: stats %s lines %d", chunk, res.stats.String(), res.stats.Lines)
			}
		})
	}
	res := readAll(t, "ok.psv", []byte(hdr+boundsRun+"\n"), SacctOptions{})
	if len(res.stats.Warnings) != 0 {
		t.Errorf("complete file: warnings %q", res.stats.Warnings)
	}
	res = readAll(t, "h.psv", []byte(strings.TrimSuffix(hdr, "\n")), SacctOptions{})
	if want := []string{"h.psv:1: the file ends without a newline, which sacct always prints: the last line may be cut (a truncated copy?)"}; !reflect.DeepEqual(res.stats.Warnings, want) {
		t.Errorf("header only, cut: warnings %q, want %q", res.stats.Warnings, want)
	}
}

// A record over MaxRecordBytes is rejected with its file, line, longest
// field and size, and the records after it are read as usual, whatever the
// block size: whether the record comes whole in a block (parseChunk) or is
// skipped in pieces by the producer (sacctSkip).
func TestSacctRecordOverBound(t *testing.T) {
	t.Parallel()
	long := strings.Replace(boundsDone, "|train", "|"+strings.Repeat("x", 1000), 1)
	long = strings.Replace(long, "100|100|", "102|102|", 1)
	multi := strings.Replace(boundsDone, "100|100|", "103|103|", 1) + strings.Repeat("\nyyyyyyyyy", 30) // JobName runs on over 30 lines
	in := hdr + boundsDone + "\n" + long + "\n" + boundsRun + "\n" + multi + "\n\n" + strings.Replace(boundsRun, "101|101|", "104|104|", 1) + "\n"
	// long: 19 fields, JobName 1000 bytes; multi: 31 lines of 147+30*10
	// bytes with their 30 newlines.
	wantRejects := []string{
		fmt.Sprintf(`ingest o.psv:3: JobName="%s…": record of %d bytes, longer than the 256 bytes a sacct record may have: skipped`, strings.Repeat("x", 40), len(long)),
		fmt.Sprintf(`ingest o.psv:5: record of 31 lines of %d bytes, longer than the 256 bytes a sacct record may have: skipped`, len(multi)),
	}
	if len(long) != len(boundsDone)-5+1000 || len(multi) != len(boundsDone)+300 {
		t.Fatalf("inputs: %d, %d bytes", len(long), len(multi))
	}
	for _, chunk := range []int{0, 1, 16, 100, 255, 256, 257, 300, 511, 4096} {
		t.Run(fmt.Sprintf("chunk %d", chunk), func(t *testing.T) {
			res := readAll(t, "o.psv", []byte(in), SacctOptions{ChunkBytes: chunk, MaxRecordBytes: 256})
			if res.err != nil {
				t.Fatalf("chunk %d: %v", chunk, res.err)
			}
			if !reflect.DeepEqual(res.rejects, wantRejects) {
				t.Errorf("chunk %d: rejects\n%q\nwant\n%q", chunk, res.rejects, wantRejects)
			}
			var ids []string
			var lines []int64
			for _, j := range res.jobs {
				ids, lines = append(ids, j.JobID), append(lines, j.Line)
			}
			if !reflect.DeepEqual(ids, []string{"100", "101", "104"}) || !reflect.DeepEqual(lines, []int64{2, 4, 37}) {
				t.Errorf("chunk %d: jobs %v at lines %v, want 100, 101, 104 at 2, 4, 37", chunk, ids, lines)
			}
			// 36 lines after the header: 5 records, 30 continuations, 1 blank.
			st := res.stats
			if st.Read != 5 || st.Ingested != 3 || st.Rejected != 2 || st.Lines != 36 || st.Continued != 30 {
				t.Errorf("chunk %d: stats %s lines %d continued %d", chunk, st.String(), st.Lines, st.Continued)
			}
		})
	}
}

// A line of 12 MiB under the default bound (1 MiB) and block size (4 MiB):
// the producer reads it in pieces, rejects it and goes on, whether the
// line is the record (a JobName of 12 MiB) or a line that continues one.
func TestSacctLongLineStreamed(t *testing.T) {
	t.Parallel()
	const n = 12 << 20
	prefix := strings.TrimSuffix(boundsDone, "train")
	in := func(long string) []byte {
		var b strings.Builder
		b.WriteString(hdr + boundsRun + "\n" + long)
		b.WriteString(strings.Repeat("z", n))
		b.WriteString("\n" + boundsDone + "\n")
		return []byte(b.String())
	}
	tests := []struct {
		name, long, want string
		size             int
	}{
		{"the record", strings.Replace(prefix, "100|100|", "102|102|", 1), `ingest big.psv:3: JobName="zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz…": record of %d bytes, longer than the 1 MiB a sacct record may have: skipped`, len(prefix) + n},
		{"a line without fields", "", `ingest big.psv:3: record of %d bytes, longer than the 1 MiB a sacct record may have: skipped`, n},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(t, "big.psv", in(tt.long), SacctOptions{})
			want := []string{fmt.Sprintf(tt.want, tt.size)}
			if res.err != nil || !reflect.DeepEqual(res.rejects, want) {
				t.Errorf("%s: err %v, rejects %q, want %q", tt.name, res.err, res.rejects, want)
			}
			if len(res.jobs) != 2 || res.jobs[1].JobID != "100" || res.jobs[1].Line != 4 || res.stats.Lines != 3 {
				t.Errorf("%s: stats %s, lines %d, jobs %d", tt.name, res.stats.String(), res.stats.Lines, len(res.jobs))
			}
		})
	}
}

// The start of an over-long value, cut at a byte count, never ends in half
// a character.
func TestTrimPartialRune(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"abc", "abc"},
		{"ab\xc3", "ab"},             // é cut after its first byte
		{"ab\xc3\xa9", "ab\xc3\xa9"}, // é whole
		{"a\xe2\x82", "a"},           // € cut after two of its three bytes
		{"a\xf0\x9f\x98", "a"},       // an emoji cut after three of four
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			if got := string(trimPartialRune([]byte(tt.in))); got != tt.want {
				t.Errorf("trimPartialRune(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// A sacct file may be a named pipe that sacct writes into: it is opened
// (and so waits for its writer), not refused.
func TestSacctNamedPipeStreams(t *testing.T) {
	t.Parallel()
	fifo := mkfifo(t, t.TempDir(), "sacct.fifo")
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		io.WriteString(w, hdr+boundsDone+"\n")
		w.Close()
	}()
	var rows int64
	st, err := ReadSacct(fifo, SacctOptions{}, func(rec arrow.RecordBatch) error { rows += rec.NumRows(); return nil })
	if err != nil || st.Ingested != 1 || rows != 1 {
		t.Errorf("ReadSacct(fifo) = %s, %v; want 1 row ingested", st.String(), err)
	}
}
