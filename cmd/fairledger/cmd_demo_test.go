package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/fairledger/fairledger/internal/synth"
)

var update = flag.Bool("update", false, "rewrite the embedded demo cluster from demoOptions")

// TestDemoData checks that the embedded demo cluster is what synth writes
// for demoOptions (so it can be regenerated and never drifts); -update
// rewrites it.
func TestDemoData(t *testing.T) {
	dir := t.TempDir()
	if _, err := synth.WriteDir(dir, demoOptions()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"slurm.conf", "assoc.psv", "qos.psv", "sacct.psv"} {
		gen, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		file := name
		if name == "sacct.psv" {
			file += ".gz"
		}
		path := filepath.Join("demodata", file)
		if *update {
			data := gen
			if file != name {
				var b bytes.Buffer
				zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
				zw.Write(gen)
				if err := zw.Close(); err != nil {
					t.Fatal(err)
				}
				data = b.Bytes()
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		out := t.TempDir()
		if err := writeDemoInput(out); err != nil {
			t.Fatal(err)
		}
		emb, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(emb, gen) {
			t.Errorf("embedded %s differs from synth's output for demoOptions; run go test ./cmd/fairledger -run TestDemoData -update", name)
		}
	}
}

func TestInvokedAs(t *testing.T) {
	for argv0, want := range map[string]string{
		"./bin/fairledger":               "./bin/fairledger", // make demo
		"/usr/local/bin/fairledger":      "/usr/local/bin/fairledger",
		"fairledger":                     "fairledger", // found on $PATH
		"/tmp/go-build1/fairledger.test": "fairledger",
	} {
		if got := invokedAs(argv0); got != want {
			t.Errorf("invokedAs(%q) = %q, want %q", argv0, got, want)
		}
	}
}
