package ingest

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestWriteSacctJSONTwin writes the JSON twin of a sacct -P dump for
// BenchmarkIngestSacctJSON: FAIRLEDGER_JSON_TWIN=IN.psv:OUT.json. Each job
// line becomes a data_parser v0.0.42 job holding the fields the reader
// uses (not the comment, script, stdout and the like a real dump also
// holds), indented as sacct prints it, and each step line a step of the
// job before it. Without the variable it is skipped.
func TestWriteSacctJSONTwin(t *testing.T) {
	spec := os.Getenv("FAIRLEDGER_JSON_TWIN")
	if spec == "" {
		t.Skip("FAIRLEDGER_JSON_TWIN=IN.psv:OUT.json not set")
	}
	in, out, _ := strings.Cut(spec, ":")
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(o, 1<<20)
	if err := writeJSONTwin(w, f); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
}

// twinNum is data_parser's {"set", "infinite", "number"}.
type twinNum struct {
	Set      bool  `json:"set"`
	Infinite bool  `json:"infinite"`
	Number   int64 `json:"number"`
}

type twinTRES struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	ID    int    `json:"id"`
	Count int64  `json:"count"`
}

type twinStep struct {
	Step struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"step"`
}

type twinJob struct {
	Account         string `json:"account"`
	AllocationNodes int64  `json:"allocation_nodes"`
	Array           struct {
		JobID  int64   `json:"job_id"`
		TaskID twinNum `json:"task_id"`
		Task   string  `json:"task"`
	} `json:"array"`
	Cluster  string `json:"cluster"`
	ExitCode struct {
		Status     []string `json:"status"`
		ReturnCode twinNum  `json:"return_code"`
		Signal     struct {
			ID twinNum `json:"id"`
		} `json:"signal"`
	} `json:"exit_code"`
	Het struct {
		JobID     int64   `json:"job_id"`
		JobOffset twinNum `json:"job_offset"`
	} `json:"het"`
	JobID           int64   `json:"job_id"`
	Name            string  `json:"name"`
	Partition       string  `json:"partition"`
	Priority        twinNum `json:"priority"`
	QOS             string  `json:"qos"`
	KillRequestUser string  `json:"kill_request_user"`
	State           struct {
		Current []string `json:"current"`
		Reason  string   `json:"reason"`
	} `json:"state"`
	Steps []twinStep `json:"steps"`
	Time  struct {
		Elapsed    int64   `json:"elapsed"`
		Eligible   int64   `json:"eligible"`
		End        int64   `json:"end"`
		Start      int64   `json:"start"`
		Submission int64   `json:"submission"`
		Suspended  int64   `json:"suspended"`
		Limit      twinNum `json:"limit"`
	} `json:"time"`
	TRES struct {
		Allocated []twinTRES `json:"allocated"`
		Requested []twinTRES `json:"requested"`
	} `json:"tres"`
	User string `json:"user"`
}

// writeJSONTwin writes the JSON document of the -P dump r (headered, the
// columns of RunFields or more).
func writeJSONTwin(w io.Writer, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() {
		return sc.Err()
	}
	col := map[string]int{}
	for i, h := range strings.Split(sc.Text(), "|") {
		col[h] = i
	}
	if _, err := io.WriteString(w, "{\n  \"jobs\": ["); err != nil {
		return err
	}
	var job *twinJob
	first := true
	flush := func() error {
		if job == nil {
			return nil
		}
		b, err := json.MarshalIndent(job, "    ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n    "
		if first {
			sep, first = "\n    ", false
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(f) {
				return f[i]
			}
			return ""
		}
		id := get("JobID")
		if _, step, ok := strings.Cut(id, "."); ok && job != nil {
			s := twinStep{}
			s.Step.ID = strconv.FormatInt(job.JobID, 10) + "." + step
			s.Step.Name = step
			job.Steps = append(job.Steps, s)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		job = twinOf(get, id)
	}
	if err := flush(); err != nil {
		return err
	}
	if err := sc.Err(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n  ],\n  \"meta\": {\n    \"plugin\": {\n      \"data_parser\": \"data_parser\\/v0.0.42\"\n    }\n  },\n  \"errors\": [],\n  \"warnings\": []\n}\n")
	return err
}

func twinOf(get func(string) string, id string) *twinJob {
	j := &twinJob{Account: get("Account"), Cluster: get("Cluster"), Name: get("JobName"), Partition: get("Partition"),
		QOS: get("QOS"), User: get("User")}
	atoi := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	stamp := func(s string) int64 {
		switch s {
		case "None":
			return math.MaxUint32 - 1
		case "Unknown", "":
			return 0
		}
		return atoi(s)
	}
	j.JobID = atoi(get("JobIDRaw"))
	switch {
	case strings.Contains(id, "_["):
		a, t, _ := strings.Cut(id, "_[")
		j.Array.JobID, j.Array.Task = atoi(a), strings.TrimSuffix(t, "]")
	case strings.Contains(id, "_"):
		a, t, _ := strings.Cut(id, "_")
		j.Array.JobID, j.Array.TaskID = atoi(a), twinNum{Set: true, Number: atoi(t)}
	case strings.Contains(id, "+"):
		a, o, _ := strings.Cut(id, "+")
		j.Het.JobID, j.Het.JobOffset = atoi(a), twinNum{Set: true, Number: atoi(o)}
	}
	state := get("State")
	if s, by, ok := strings.Cut(state, " by "); ok {
		state, j.KillRequestUser = s, by
	}
	j.State.Current = []string{state}
	rc, sig, _ := strings.Cut(get("ExitCode"), ":")
	switch {
	case get("ExitCode") == "":
		j.ExitCode.Status = []string{"PENDING"}
	case atoi(sig) != 0:
		j.ExitCode.Status = []string{"SIGNALED"}
		j.ExitCode.Signal.ID = twinNum{Set: true, Number: atoi(sig)}
	case atoi(rc) != 0:
		j.ExitCode.Status = []string{"ERROR"}
		j.ExitCode.ReturnCode = twinNum{Set: true, Number: atoi(rc)}
	default:
		j.ExitCode.Status = []string{"SUCCESS"}
		j.ExitCode.ReturnCode = twinNum{Set: true}
	}
	j.AllocationNodes = atoi(get("NNodes"))
	j.Time.Submission, j.Time.Eligible = stamp(get("Submit")), stamp(get("Eligible"))
	j.Time.Start, j.Time.End = stamp(get("Start")), stamp(get("End"))
	j.Time.Elapsed = atoi(get("ElapsedRaw"))
	if d, err := parseElapsed([]byte(get("Suspended"))); err == nil {
		j.Time.Suspended = d
	}
	switch l := get("Timelimit"); l {
	case "UNLIMITED":
		j.Time.Limit = twinNum{Infinite: true}
	case "Partition_Limit":
	default:
		if d, err := parseElapsed([]byte(l)); err == nil {
			j.Time.Limit = twinNum{Set: true, Number: d / 60}
		}
	}
	j.Priority = twinNum{Set: true, Number: 0}
	j.TRES.Allocated, j.TRES.Requested = twinTRESList(get("AllocTRES")), twinTRESList(get("ReqTRES"))
	return j
}

func twinTRESList(s string) []twinTRES {
	out := []twinTRES{}
	if s == "" {
		return out
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		ty, name, _ := strings.Cut(k, "/")
		n, err := parseTRESValue([]byte(k), []byte(v))
		if err != nil {
			continue
		}
		out = append(out, twinTRES{Type: ty, Name: name, Count: int64(n)})
	}
	return out
}

// BenchmarkIngestSacctJSON reads a sacct --json document and its -P twin
// (FAIRLEDGER_BENCH_JSON and FAIRLEDGER_BENCH_PSV; the twin written by
// TestWriteSacctJSONTwin) one after the other into Arrow batches, and
// reports each one's rows/s, MB/s, CPU ns per row; the counts of the two
// must be the same.
//
//	FAIRLEDGER_BENCH_PSV=sacct.psv FAIRLEDGER_BENCH_JSON=sacct.json \
//	    go test ./ingest -run '^$' -bench IngestSacctJSON -benchtime 1x
func BenchmarkIngestSacctJSON(b *testing.B) {
	js, psv := os.Getenv("FAIRLEDGER_BENCH_JSON"), os.Getenv("FAIRLEDGER_BENCH_PSV")
	if js == "" || psv == "" {
		b.Skip("FAIRLEDGER_BENCH_JSON and FAIRLEDGER_BENCH_PSV not set")
	}
	stats := map[string]Stats{}
	for _, c := range []struct{ name, path string }{{"psv", psv}, {"json", js}, {"psv2", psv}, {"json2", js}} {
		b.Run(c.name, func(b *testing.B) {
			fi, err := os.Stat(c.path)
			if err != nil {
				b.Fatal(err)
			}
			cpu0 := cpuSeconds()
			var st Stats
			for i := 0; i < b.N; i++ {
				st, err = ReadSacct(c.path, SacctOptions{}, func(arrow.RecordBatch) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(st.Read)/sec, "rows/s")
			b.ReportMetric(float64(st.Ingested)/sec, "jobs/s")
			b.ReportMetric(float64(fi.Size())/1e6/sec, "MB/s")
			b.ReportMetric((cpuSeconds()-cpu0)*1e9/float64(st.Read)/float64(b.N), "cpu-ns/row")
			stats[c.name] = st
		})
	}
	a, j := stats["psv"], stats["json"]
	if a.Read != j.Read || a.Ingested != j.Ingested || a.Rejected != j.Rejected {
		b.Errorf("counts differ: -P %s; JSON %s", a.String(), j.String())
	}
}
