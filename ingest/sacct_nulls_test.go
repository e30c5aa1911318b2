package ingest

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"
)

// TestSacctNullsDeclared checks that every column of a jobs batch that holds
// a null is declared nullable in the batch's schema: a file without a QOS
// column leaves qos null, and so may any file in testdata/sacct. Without a
// JobIDRaw column job_id_raw is still never null (an array task is
// rejected, a het component's id derived), as its schema declares.
func TestSacctNullsDeclared(t *testing.T) {
	t.Parallel()
	inputs := map[string][]byte{
		"no-qos-no-raw.psv": []byte("JobID|Partition|Account|User|Start|End|State|AllocTRES\n" +
			"7_3|p|a|u|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|cpu=1\n" +
			"8+1|p|a|u|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|cpu=1\n"),
	}
	files, err := filepath.Glob("../testdata/sacct/*") // real sites' files among them
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		inputs[f] = mustRead(t, f)
	}
	nulls := map[string]bool{}
	for name, data := range inputs {
		r, err := NewSacctReader(name, bytes.NewReader(data), SacctOptions{OnReject: func(*ParseError, string) {}})
		if err != nil {
			continue // a headerless fixture: its own tests give it fields
		}
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for i, f := range rec.Schema().Fields() {
				if n := rec.Column(i).NullN(); n > 0 {
					nulls[f.Name] = true
					if !f.Nullable {
						t.Errorf("%s: column %s holds %d nulls but is declared non-null", name, f.Name, n)
					}
				}
			}
			rec.Release()
		}
		r.Close()
	}
	for _, c := range []string{"qos"} {
		if !nulls[c] {
			t.Errorf("no input left %s null: the test does not cover it", c)
		}
	}
}
