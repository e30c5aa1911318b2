package pipeline_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/pipeline"
)

// rewriteSacct writes a copy of the headered sacct file in to out with
// edit applied to its lines split into fields (the header is lines[0]).
func rewriteSacct(t *testing.T, in, out string, edit func(lines [][]string) [][]string) {
	t.Helper()
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]string
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		lines = append(lines, strings.Split(l, "|"))
	}
	var b strings.Builder
	for _, f := range edit(lines) {
		b.WriteString(strings.Join(f, "|") + "\n")
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFileErrorLeavesHistory: a file-level mistake in tonight's sacct file
// (a column missing, a headerless file read with the wrong preset, every
// row rejected), given alone or after a good file, fails the run and the
// dry run with one *ingest.FileError and leaves every byte of the history
// as it was. Before, the night was committed without its jobs and the
// checkpoint advanced, and the decayed usage of those jobs was lost for
// good: feeding the right file the next night restored the jobs but not
// the decay.
func TestFileErrorLeavesHistory(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 1500)
	hist := t.TempDir()
	nights(t, dir, hist, from, from.AddDate(0, 0, 2))
	before := dirState(t, hist)
	n := from.AddDate(0, 0, 3)
	night := nightFile(dir, n)
	sacctAsOf(t, filepath.Join(dir, "sacct.psv"), night, n.AddDate(0, 0, -1), n)
	drop := func(title string) func([][]string) [][]string {
		return func(lines [][]string) [][]string {
			i := slices.Index(lines[0], title)
			if i < 0 {
				t.Fatalf("no column %s", title)
			}
			for k := range lines {
				lines[k] = slices.Delete(lines[k], i, i+1)
			}
			return lines
		}
	}
	blank := func(title string) func([][]string) [][]string {
		return func(lines [][]string) [][]string {
			i := slices.Index(lines[0], title)
			for _, f := range lines[1:] {
				f[i] = ""
			}
			return lines
		}
	}
	headerless := func(lines [][]string) [][]string { return lines[1:] }
	for _, tc := range []struct {
		name   string
		edit   func([][]string) [][]string
		fields []string
		want   string
	}{
		{"no End", drop("End"), nil, ":1: no End column in the header"},
		{"no Account", drop("Account"), nil, ":1: no Account column in the header"},
		{"no AllocTRES", drop("AllocTRES"), nil, ":1: no AllocTRES column in the header"},
		{"wrong preset", headerless, []string{"xdmod"}, ":1: the rows have 22 fields, --sacct-fields xdmod has 26: the file was written with another -o list: try --sacct-fields fairledger"},
		{"every row rejected", blank("User"), nil, `job records rejected, none ingested (the first: ingest `},
	} {
		bad := filepath.Join(t.TempDir(), "bad.psv")
		rewriteSacct(t, night, bad, tc.edit)
		for _, files := range [][]string{{bad}, {night, bad}} {
			for _, dry := range []bool{false, true} {
				in := siteInputs(t, dir, files...)
				in.Jobs = sacctWith(files, func(o *ingest.SacctOptions) { o.Fields = tc.fields })
				opt := runOpts(hist, n)
				opt.DryRun = dry
				_, err := pipeline.Run(context.Background(), in, opt)
				var fe *ingest.FileError
				if !errors.As(err, &fe) || fe.File != bad || !strings.HasPrefix(fe.Error(), "ingest "+bad) || !strings.Contains(fe.Error(), tc.want) {
					t.Errorf("%s (files %d, dry run %v): err = %v, want a *ingest.FileError of %s containing %q", tc.name, len(files), dry, err, bad, tc.want)
				}
				unchanged(t, before, dirState(t, hist))
			}
		}
	}
	// The right file runs.
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, night), runOpts(hist, n)); err != nil {
		t.Fatal(err)
	}
}
