package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

var updateCLIDocs = flag.Bool("update-cli-docs", false, "rewrite docs/cli/fairledger.md from the app's commands and flags")

// cliDocs is the CLI reference, generated from the app newApp builds.
const cliDocs = "../../docs/cli/fairledger.md"

// TestCLIDocs checks that docs/cli/fairledger.md is what the app's commands
// and flags generate (cliMarkdown), so the reference never drifts from
// --help; -update-cli-docs rewrites it.
func TestCLIDocs(t *testing.T) {
	want := cliMarkdown(newApp(io.Discard, io.Discard))
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

// TestCLIDocsMachineIndependent: the reference names no path or zone of the
// machine that generated it (its defaults come from the code, not from $TZ,
// $HOME or the working directory).
func TestCLIDocsMachineIndependent(t *testing.T) {
	body := cliMarkdown(newApp(io.Discard, io.Discard))
	wd, _ := os.Getwd()
	for _, s := range []string{wd, os.TempDir(), os.Getenv("HOME")} {
		if len(s) > 1 && strings.Contains(body, s) {
			t.Errorf("the CLI reference contains %q, a path of this machine", s)
		}
	}
	t.Setenv("TZ", "Pacific/Chatham")
	if other := cliMarkdown(newApp(io.Discard, io.Discard)); other != body {
		t.Error("the CLI reference changes with $TZ")
	}
}

// cliMarkdown renders the CLI reference: the global flags, then for each
// command (in the app's order) its usage line, description and a table of
// its flags sorted by name, and the exit codes as --help prints them.
// urfave/cli's own ToMarkdown leaves out the descriptions, the arguments and
// the exit codes and prints every flag as if it took a string.
func cliMarkdown(app *cli.App) string {
	var b strings.Builder
	b.WriteString("<!-- Generated from the fairledger CLI by `go test ./cmd/fairledger -run TestCLIDocs -update-cli-docs`; do not edit. -->\n\n")
	fmt.Fprintf(&b, "# %s\n\n%s.\n\n", app.Name, capitalize(app.Usage))
	fmt.Fprintf(&b, "```\n%s [global options] command [command options]\n```\n\n", app.Name)
	b.WriteString("Every command and flag, as `fairledger --help` and `fairledger COMMAND --help` print them. " +
		"Global options go before the command.\n\n")
	b.WriteString("Commands:")
	for i, c := range visibleCommands(app) {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " [%s](#%s)", c.Name, c.Name)
	}
	b.WriteString(".\n\n## Global options\n\n")
	writeFlags(&b, app.Flags)
	for _, c := range visibleCommands(app) {
		fmt.Fprintf(&b, "## %s\n\n%s.\n\n", c.Name, capitalize(c.Usage))
		args := strings.TrimSpace(c.ArgsUsage)
		if args != "" {
			args = " " + args
		}
		fmt.Fprintf(&b, "```\n%s %s [options]%s\n```\n\n", app.Name, c.Name, args)
		if d := strings.TrimSpace(c.Description); d != "" {
			b.WriteString(strings.Join(strings.Fields(d), " ") + "\n\n")
		}
		writeFlags(&b, c.Flags)
	}
	fmt.Fprintf(&b, "## Exit codes\n\n```\n%s\n```\n", strings.TrimPrefix(exitCodesHelp, "EXIT CODES:\n"))
	return b.String()
}

// writeFlags writes one table row per flag, sorted by name: the flag and
// its aliases, its default as --help shows it, and its usage.
func writeFlags(b *strings.Builder, flags []cli.Flag) {
	if len(flags) == 0 {
		return
	}
	sorted := append([]cli.Flag(nil), flags...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Names()[0] < sorted[j].Names()[0] })
	b.WriteString("| flag | default | meaning |\n|---|---|---|\n")
	for _, f := range sorted {
		var names []string
		for _, n := range f.Names() {
			if len(n) == 1 {
				names = append(names, "`-"+n+"`")
			} else {
				names = append(names, "`--"+n+"`")
			}
		}
		d, ok := f.(cli.DocGenerationFlag)
		if !ok {
			fmt.Fprintf(b, "| %s | | |\n", strings.Join(names, ", "))
			continue
		}
		def := ""
		if d.TakesValue() {
			def = d.GetDefaultText()
			if def == `""` {
				def = ""
			}
		}
		if def != "" {
			def = "`" + def + "`"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", strings.Join(names, ", "), cell(def), cell(d.GetUsage()))
	}
	b.WriteString("\n")
}

// cell escapes a table cell: a pipe would end it, a newline the row.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
