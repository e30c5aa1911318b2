package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestWhatIfDocs runs each `whatif` command of docs/whatif.md's
// questions on the demo history and checks that every line the document
// quotes after it is a line of the command's output.
func TestWhatIfDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/whatif.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(\\./bin/fairledger whatif [^\n]*)\n```\n\n```text\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) != 5 {
		t.Fatalf("docs/whatif.md has %d command and output blocks, want 5", len(blocks))
	}
	hist := demoHistory(t)
	for _, b := range blocks {
		args := shellWords(strings.TrimPrefix(b[1], "./bin/fairledger "))
		for i, a := range args {
			if a == ".demo" {
				args[i] = hist
			}
		}
		code, out, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", b[1], code, stderr)
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			lines[l] = true
		}
		for _, want := range strings.Split(strings.TrimSpace(b[2]), "\n") {
			if !lines[want] {
				t.Errorf("%s: the output has no line\n%s", b[1], want)
			}
		}
	}
}

// shellWords splits a command line at spaces outside single quotes, as a
// shell does, the quotes removed.
func shellWords(s string) []string {
	var out []string
	var w strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				out = append(out, w.String())
			}
			w.Reset()
			inWord = false
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, w.String())
	}
	return out
}
