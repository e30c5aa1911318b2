package ingest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/ingest/ingesttest"
)

// jsonJobsDoc is a document of n jobs of jsonJobText (8 lines each, job k
// starting on line 3+8k), the job ids 100+k, meta after the jobs; bad maps
// a job's index to the text that replaces it.
func jsonJobsDoc(n int, bad map[int]string) string {
	var b strings.Builder
	b.WriteString("{\n\"jobs\": [\n")
	for k := range n {
		if k > 0 {
			b.WriteString(",\n")
		}
		if s, ok := bad[k]; ok {
			b.WriteString(s)
			continue
		}
		job := fmt.Sprintf(jsonJobText, fmt.Sprint(100+k), `["COMPLETED"]`, "1795168805", "4")
		// Names that a splitter counting braces and quotes naively would
		// cut in the wrong place, and one spanning two -P lines.
		name := []string{`"j{[\"}]\\"`, `"}}]]\"\\\"{"`, `"a\nb"`, `"\u007d\u005d"`}[k%4]
		job = strings.Replace(job, `"name": "j"`, `"name": `+name+`, "comment": {"x": "}", "y": [{"z": "\"]"}]}`, 1)
		b.WriteString(job)
	}
	b.WriteString("\n],\n\"meta\": {\"plugin\": {\"data_parser\": \"data_parser/v0.0.42\"}}\n}\n")
	return b.String()
}

// TestSacctJSONBatches: however the jobs array is cut into batches for
// the decode workers and into blocks for the -P workers (one job per batch
// and block on three workers, a few jobs on two, the whole array on one),
// a document reads to the same rows, counts, rejections in the same order
// and the same error; the rejections and errors name the lines the jobs
// start on (job k on line 3+8k). The large document spans several of the
// decoder's reads and of the walk's batches.
func TestSacctJSONBatches(t *testing.T) {
	t.Parallel()
	typeErr := func(k int) string {
		return fmt.Sprintf(jsonJobText, fmt.Sprint(100+k), `["COMPLETED"]`, `"soon"`, "4")
	}
	endBefore := func(k int) string {
		return fmt.Sprintf(jsonJobText, fmt.Sprint(100+k), `["COMPLETED"]`, "1795172406", "4")
	}
	for _, c := range []struct {
		name    string
		doc     string
		read    int64 // jobs and steps
		ingest  int64
		rejects []string
		err     string
	}{
		{"small", jsonJobsDoc(40, map[int]string{10: typeErr(10), 25: endBefore(25)}), 80, 38, []string{
			`x.json:83: job 110: time.start="\"soon\""`,
			`x.json:203: job 125: time.end="1795172405": before Start`,
		}, ""},
		{"large", jsonJobsDoc(4000, map[int]string{2900: typeErr(2900), 3999: endBefore(3999)}), 8000, 3998, []string{
			`x.json:23203: job 3000: time.start="\"soon\""`,
			`x.json:31995: job 4099: time.end="1795172405": before Start`,
		}, ""},
		{"syntax", jsonJobsDoc(3000, map[int]string{7: typeErr(7), 2950: `{"job_id": 6,, }`}), 0, 0, []string{
			`x.json:59: job 107: time.start="\"soon\""`,
		}, `x.json:23603: not valid JSON`},
		{"cut", jsonJobsDoc(3000, nil)[:2000000], 0, 0, nil, `the JSON document ends early`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var first ingesttest.Table
			for i, opt := range []ingest.SacctOptions{{Workers: 1}, {Workers: 3, ChunkBytes: 64}, {Workers: 2, ChunkBytes: 3000}} {
				res := ingesttest.Cells(t, "x.json", []byte(c.doc), opt)
				if c.err != "" {
					if res.Err == nil || !strings.Contains(res.Err.Error(), c.err) {
						t.Fatalf("workers %d: err = %v, want it to hold %q", opt.Workers, res.Err, c.err)
					}
				} else {
					if res.Err != nil {
						t.Fatalf("workers %d: %v", opt.Workers, res.Err)
					}
					st := res.Stats
					if st.Read != c.read || st.Ingested != c.ingest || st.Rejected != int64(len(c.rejects)) || st.Skipped[ingest.SkipJobStep] != c.read/2 {
						t.Errorf("workers %d: stats %s", opt.Workers, ingesttest.StatsText(st))
					}
					if int64(len(res.Rows)) != c.ingest {
						t.Errorf("workers %d: %d rows, want %d", opt.Workers, len(res.Rows), c.ingest)
					}
				}
				if len(res.Rejects) < len(c.rejects) {
					t.Fatalf("workers %d: rejects %q, want %q", opt.Workers, res.Rejects, c.rejects)
				}
				for k, want := range c.rejects {
					if !strings.Contains(res.Rejects[k], want) {
						t.Errorf("workers %d: reject %d = %q, want it to hold %q", opt.Workers, k, res.Rejects[k], want)
					}
				}
				if i == 0 {
					first = res
					continue
				}
				// Before an error, how far the reading got depends on the
				// block size, as it does for a -P file: only the error and
				// the rejections are compared then.
				if fmt.Sprint(res.Err) != fmt.Sprint(first.Err) || !slices.Equal(res.Rejects, first.Rejects) ||
					c.err == "" && (ingesttest.StatsText(res.Stats) != ingesttest.StatsText(first.Stats) || len(res.Rows) != len(first.Rows)) {
					t.Fatalf("workers %d, block %d: err %v, rejects %q, %s; one batch: err %v, rejects %q, %s", opt.Workers, opt.ChunkBytes,
						res.Err, res.Rejects, ingesttest.StatsText(res.Stats), first.Err, first.Rejects, ingesttest.StatsText(first.Stats))
				}
				for r := range min(len(res.Rows), len(first.Rows)) {
					if !slices.Equal(res.Rows[r], first.Rows[r]) {
						t.Fatalf("workers %d: row %d = %q, one batch: %q", opt.Workers, r, res.Rows[r], first.Rows[r])
					}
				}
			}
		})
	}
}
