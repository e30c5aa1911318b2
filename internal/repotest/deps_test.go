package repotest

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportDirection enforces the pipeline's import direction: the math
// packages (billing, decay, fairshare, priority) and schemas never import os
// themselves, nor (even indirectly) a logger, cgo, DuckDB, ingest or export
// (any package of it); internal/release, which every side imports, imports
// nothing but the standard library, and not os (releasePure); DuckDB is
// linked only where it may be (noDuckDB); and the packages split out of
// pipeline keep to their own rules (splitPackages).
func TestImportDirection(t *testing.T) {
	t.Parallel()
	t.Run("no DuckDB", noDuckDB)
	t.Run("internal/release standard library only", releasePure)
	t.Run("split packages", splitPackages)
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
		for d := range deps {
			if strings.HasPrefix(d, "github.com/fairledger/fairledger/export/") {
				t.Errorf("%s imports %s (directly or not)", pkg, d)
			}
		}
	}
}

// duckDB is the DuckDB driver, the one cgo library of the module.
const duckDB = "github.com/duckdb/duckdb-go/v2"

// withoutDuckDB are the packages that must not link DuckDB: the pipeline
// and every package of export but query (the DuckDB session) and report
// (which queries the history through it). A run writes its history
// without DuckDB, so its tests and benchmarks do not wait for DuckDB's
// C++ to compile, and it builds where no C compiler is.
var withoutDuckDB = []string{"pipeline", "export", "export/record", "export/record/recordtest", "export/encode", "export/history", "export/history/historytest", "export/whatif", "export/metrics"}

// goListDeps returns the packages pkg links (go list -deps) in the
// environment env (added to the test's).
func goListDeps(t *testing.T, env []string, pkg string) map[string]bool {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "github.com/fairledger/fairledger/"+pkg)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	deps := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		deps[d] = true
	}
	return deps
}

// noDuckDB enforces where DuckDB may be linked: none of withoutDuckDB
// links it, none needs cgo (each builds with CGO_ENABLED=0), and only
// export/query imports it. With cgo enabled these packages still list
// runtime/cgo: the standard library's net links it for the system's name
// resolver, and zerolog and parquet-go (through brotli's net/http) import
// net; that is no DuckDB, and without cgo net is pure Go. Every package
// under export must be one of withoutDuckDB, export/query or
// export/report, so that a new one is checked.
func noDuckDB(t *testing.T) {
	for _, pkg := range withoutDuckDB {
		if goListDeps(t, nil, pkg)[duckDB] {
			t.Errorf("%s links %s (directly or not); only export/query and export/report may", pkg, duckDB)
		}
		if goListDeps(t, []string{"CGO_ENABLED=0"}, pkg)["runtime/cgo"] {
			t.Errorf("%s needs cgo: with CGO_ENABLED=0 it still links runtime/cgo", pkg)
		}
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/fairledger/fairledger/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/fairledger/fairledger/"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		if slices.Contains(f[1:], duckDB) && pkg != "export/query" {
			t.Errorf("%s imports %s; only export/query does (the others go through it)", pkg, duckDB)
		}
		if (pkg == "export" || strings.HasPrefix(pkg, "export/")) && !slices.Contains(withoutDuckDB, pkg) &&
			pkg != "export/query" && pkg != "export/report" {
			t.Errorf("%s: a package under export that TestImportDirection does not check: add it to withoutDuckDB", pkg)
		}
	}
}

// releasePure enforces that internal/release, the Slurm release series
// and the table of release rules that the math packages, ingest, the
// pipeline and the CLI all import, stays a leaf: every package it links is
// the standard library's, and it does not import os (or the network)
// itself.
func releasePure(t *testing.T) {
	const pkg = "github.com/fairledger/fairledger/internal/release"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, _ := strings.Cut(line, " ")
		if path != pkg && std != "true" {
			t.Errorf("internal/release links %s, which is not the standard library's", path)
		}
	}
	out, err = exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", pkg, err, out)
	}
	for _, d := range strings.Fields(string(out)) {
		if d == "os" || d == "os/exec" || d == "net" || d == "net/http" {
			t.Errorf("internal/release imports %s", d)
		}
	}
}

// splitRules are the packages split out of pipeline (issue 36), each with
// the packages of the module it may import itself (allow) and whether it
// may import os. None may link a logger, DuckDB, ingest, pipeline or any
// package of export but export/record, even indirectly, nor import Arrow
// itself: what reads Arrow batches or ingest's types stays in pipeline.
var splitRules = []struct {
	pkg   string
	os    bool
	allow []string
}{
	{"internal/spill", true, []string{"export/record"}},
	{"fairshare/live", false, []string{"decay", "fairshare", "export/record"}},
	{"priority/queue", false, []string{"priority", "fairshare", "decay", "billing", "schemas", "export/record"}},
}

// splitPackages checks splitRules.
func splitPackages(t *testing.T) {
	const module = "github.com/fairledger/fairledger/"
	for _, r := range splitRules {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", module+r.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", r.pkg, err, out)
		}
		for _, d := range strings.Fields(string(out)) {
			switch {
			case d == "os" && !r.os, d == "os/exec", d == "net", d == "net/http":
				t.Errorf("%s imports %s", r.pkg, d)
			case strings.HasPrefix(d, "github.com/apache/arrow-go/"):
				t.Errorf("%s imports %s: Arrow stays in pipeline", r.pkg, d)
			case strings.HasPrefix(d, module) && !slices.Contains(r.allow, strings.TrimPrefix(d, module)) &&
				!strings.HasPrefix(d, module+"internal/"):
				t.Errorf("%s imports %s; it may import %v", r.pkg, d, r.allow)
			}
		}
		for d := range goListDeps(t, nil, r.pkg) {
			pkg, ours := strings.CutPrefix(d, module)
			switch {
			case d == "github.com/rs/zerolog", d == duckDB,
				ours && (pkg == "ingest" || strings.HasPrefix(pkg, "ingest/") || pkg == "pipeline"),
				ours && strings.HasPrefix(pkg, "export/") && pkg != "export/record":
				t.Errorf("%s links %s (directly or not)", r.pkg, d)
			}
		}
	}
}
