package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
)

var updateCLIDocs = flag.Bool("update-cli-docs", false, "rewrite docs/cli.md from the app's commands and flags")

// cliDocs is the CLI reference, generated from the app newApp builds.
const cliDocs = "../../docs/cli.md"

// TestCLIDocs checks that docs/cli.md is what the app's commands and flags
// generate (urfave/cli's ToMarkdown), so the reference never drifts from
// --help; -update-cli-docs rewrites it.
func TestCLIDocs(t *testing.T) {
	body, err := newApp(io.Discard, io.Discard).ToMarkdown()
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- Generated from the fairledger CLI by `go test ./cmd/fairledger -run TestCLIDocs -update-cli-docs`; do not edit. -->\n\n" + body
	if *updateCLIDocs {
		if err := os.WriteFile(filepath.FromSlash(cliDocs), []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(filepath.FromSlash(cliDocs))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s drifted from the CLI's commands and flags; run go test ./cmd/fairledger -run TestCLIDocs -update-cli-docs", cliDocs)
	}
}
