package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"
)

// FuzzSacctJSON feeds the sacct reader JSON documents: whatever the bytes,
// it never panics, and a document read to its end accounts for every job
// and step (Read == Ingested + Rejected + skipped, Ingested the rows of the
// batches) and names each rejected job's line and id.
//
//	go test ./ingest -run '^$' -fuzz '^FuzzSacctJSON$' -fuzztime 60s -fuzzminimizetime 5s
//
// (each input starts the reader's goroutines: minimizing one takes the
// default minute without -fuzzminimizetime).
func FuzzSacctJSON(f *testing.F) {
	meta := `"meta": {"plugin": {"data_parser": "data_parser\/v0.0.42"}}`
	job := func(id, task, state, start, tres string) string {
		return fmt.Sprintf(`{"job_id": %s, "account": "a", "user": "u", "partition": "p", "name": "n|x",
"array": {"job_id": 3, "task_id": %s, "task": ""}, "state": {"current": %s},
"time": {"submission": 1795168800, "start": %s, "end": 1795172405, "elapsed": 3600, "limit": {"set": true, "infinite": false, "number": 60}},
"tres": {"allocated": [%s]}, "steps": [{"step": {"id": "%[1]s.batch"}}, {"step": {"id": "%[1]s.0"}}]}`, id, task, state, start, tres)
	}
	cpu := `{"type": "cpu", "name": "", "id": 1, "count": 2}, {"type": "mem", "name": "", "id": 2, "count": 1024}, {"type": "gres", "name": "gpu", "id": 1001, "count": 1}`
	f.Add([]byte("{\n\"jobs\": [\n" + job("4", `{"set": true, "number": 1}`, `["COMPLETED"]`, "1795168805", cpu) + ",\n" +
		job("5", `{"set": false}`, `["CANCELLED"]`, "4294967294", "") + "],\n" + meta + "}\n"))
	f.Add([]byte("{" + meta + ", \"jobs\": [" + job("6", `{"set": false}`, `["PENDING"]`, "0", cpu) + "], \"errors\": [], \"warnings\": [{\"description\": \"w\"}]}"))
	f.Add([]byte(`{"jobs": [{"job_id": 1, "array": {"job_id": 1, "task": "0x3F0", "limits": {"max": {"running": {"tasks": 2}}}}, "state": {"current": "PENDING"}}], ` + meta + `}`))
	f.Add([]byte(`{"jobs": [{"job_id": {"set": true, "number": 1e1}, "time": {"start": "x"}}], ` + meta + `}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		opt := SacctOptions{ChunkBytes: 64, Workers: 2, KeepPending: true, RequestColumns: true}
		var rejects []*ParseError
		opt.OnReject = func(e *ParseError, _ string) { rejects = append(rejects, e) }
		r, err := NewSacctReader("f.json", bytes.NewReader(data), opt)
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
		if !st.Balanced() || st.Ingested != rows || st.Rejected != int64(len(rejects)) {
			t.Fatalf("stats %s; %d rows, %d rejects", st.String(), rows, len(rejects))
		}
		if !isJSONText(bufioOf(data)) {
			return
		}
		for _, e := range rejects {
			if e.Line < 1 || e.File != "f.json" {
				t.Fatalf("reject without a position: %v", e)
			}
		}
	})
}

func bufioOf(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
