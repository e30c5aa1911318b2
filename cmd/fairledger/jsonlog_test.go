package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genSite writes a small synthetic cluster and returns its directory and the
// run flags that read it.
func genSite(t *testing.T) (dir string, inputs []string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "site")
	var out, errs bytes.Buffer
	if code := run([]string{"fairledger", "gen", "--dir", dir, "--jobs", "300", "--labs", "4",
		"--from", "2025-01-20", "--to", "2025-02-10", "--unix-times"}, &out, &errs); code != 0 {
		t.Fatalf("gen exit %d: %s", code, errs.String())
	}
	return dir, []string{"--slurm-conf", filepath.Join(dir, "slurm.conf"), "--assoc", filepath.Join(dir, "assoc.psv"),
		"--qos", filepath.Join(dir, "qos.psv"), "--sacct", filepath.Join(dir, "sacct.psv")}
}

// jsonLines parses every line of a JSON log; any line that is not one JSON
// object fails the test.
func jsonLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stderr line %d is not JSON (%v): %q", i+1, err, line)
		}
		recs = append(recs, m)
	}
	return recs
}

// A failing command ends a JSON log with a JSON error line, in the logger's
// shape, and a console log with the plain line.
func TestFinalErrorJSON(t *testing.T) {
	dir, in := genSite(t)
	blocker := filepath.Join(dir, "afile")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(blocker, "h") // under a regular file: mkdir fails
	wantMsg := "open history: mkdir " + blocker + ": not a directory"

	tests := []struct {
		name     string
		args     []string
		code     int
		msg      string
		jsonLine bool
	}{
		{"auto, not a terminal", append(append([]string{"fairledger", "run"}, in...), "--history", hist), 1, wantMsg, true},
		{"json", append(append([]string{"fairledger", "--log-format", "json", "run"}, in...), "--history", hist), 1, wantMsg, true},
		{"console", append(append([]string{"fairledger", "--log-format", "console", "run"}, in...), "--history", hist), 1, wantMsg, false},
		{"usage error", []string{"fairledger", "run", "--bogus"}, 2,
			"flag provided but not defined: -bogus (see fairledger --help)", true},
		{"usage error, console", []string{"fairledger", "--log-format", "console", "run", "--bogus"}, 2,
			"flag provided but not defined: -bogus (see fairledger --help)", false},
	}
	for _, tt := range tests {
		var out, errs bytes.Buffer
		code := run(tt.args, &out, &errs)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d; stderr:\n%s", tt.name, code, tt.code, errs.String())
			continue
		}
		if !tt.jsonLine {
			lines := strings.Split(strings.TrimSuffix(errs.String(), "\n"), "\n")
			if got, want := lines[len(lines)-1], "fairledger: "+tt.msg; got != want {
				t.Errorf("%s: last stderr line %q, want %q", tt.name, got, want)
			}
			continue
		}
		recs := jsonLines(t, errs.String())
		last := recs[len(recs)-1]
		if last["level"] != "error" || last["message"] != tt.msg || last["exit_code"] != float64(tt.code) || last["time"] == nil {
			t.Errorf("%s: last log record %v, want level error, exit_code %d, a time and message %q", tt.name, last, tt.code, tt.msg)
		}
	}
}
