package schemas

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirection enforces the pipeline's import direction: the math
// packages (billing, decay, fairshare, priority) and schemas never import os
// themselves, nor (even indirectly) a logger, cgo, DuckDB, ingest or export.
func TestImportDirection(t *testing.T) {
	for _, pkg := range []string{"billing", "decay", "fairshare", "priority", "schemas"} {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", "github.com/fairledger/fairledger/"+pkg).CombinedOutput()
		if err != nil {
			continue // reported below
		}
		for _, d := range strings.Fields(string(out)) {
			if d == "os" || d == "os/exec" || d == "net" || d == "net/http" {
				t.Errorf("%s imports %s", pkg, d)
			}
		}
	}
	forbidden := []string{"runtime/cgo", "github.com/rs/zerolog",
		"github.com/duckdb/duckdb-go/v2", "github.com/fairledger/fairledger/ingest",
		"github.com/fairledger/fairledger/export"}
	for _, pkg := range []string{"billing", "decay", "fairshare", "priority", "schemas"} {
		out, err := exec.Command("go", "list", "-deps", "github.com/fairledger/fairledger/"+pkg).CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "no Go files") || strings.Contains(string(out), "cannot find") {
				continue // package not written yet
			}
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[d] = true
		}
		for _, f := range forbidden {
			if deps[f] {
				t.Errorf("%s imports %s (directly or not)", pkg, f)
			}
		}
	}
}
