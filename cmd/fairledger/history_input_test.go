package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/schemas"
)

// rejectEverySacctRow rewrites the sacct file of a generated site so that
// no allocation row is ingested: the first ones are rejected (AllocCPUS
// "x"; steps are skipped before their fields are read), fewer than
// ingest.AllRejectedMin (more, with not one ingested, would make the file
// an error: nothing would be committed), and the others never started
// (Start None), skipped.
func rejectEverySacctRow(t *testing.T, site string) {
	t.Helper()
	rejectSacctRows(t, site, 1)
}

// rejectSacctRows makes every nth row of site/sacct.psv rejected (AllocCPUS
// "x"), from the first on.
func rejectSacctRows(t *testing.T, site string, nth int) {
	t.Helper()
	file := filepath.Join(site, "sacct.psv")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	col, start := -1, -1
	for i, h := range strings.Split(lines[0], "|") {
		switch h {
		case "AllocCPUS":
			col = i
		case "Start":
			start = i
		}
	}
	if col < 0 || start < 0 {
		t.Fatalf("%s: no AllocCPUS or Start column in %q", file, lines[0])
	}
	for i := 1; i < len(lines); i += nth {
		f := strings.Split(lines[i], "|")
		if i < ingest.AllRejectedMin {
			f[col] = "x"
		} else {
			f[start] = "None"
		}
		lines[i] = strings.Join(f, "|")
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHistoryOfRejectedRows: two nights whose rows were all rejected leave
// a history with fair-share snapshots and runs but no jobs or usage file.
// Every view answers (0 jobs, 0 usage rows); sshare prints the tree with
// zero usage, as sshare does for a cluster nobody used; report writes a
// lab's report.
func TestHistoryOfRejectedRows(t *testing.T) {
	site, inputs := genSite(t)
	rejectEverySacctRow(t, site)
	hist := filepath.Join(t.TempDir(), "hist")
	for _, to := range []string{"2025-02-01", "2025-02-03"} {
		if code, _, errs := runCLI(t, append([]string{"run", "--history", hist, "--to", to}, inputs...)...); code != exitRejected {
			t.Fatalf("run --to %s: exit %d, want %d (rows rejected)\n%s", to, code, exitRejected, errs)
		}
	}
	counts := sqlCSV(t, hist, "SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM usage), (SELECT count(*) > 0 FROM fairshare), (SELECT count(*) FROM runs)")
	if got := strings.Join(counts[0], ","); got != "0,0,true,2" {
		t.Errorf("jobs, usage, fairshare > 0, runs = %s, want 0,0,true,2", got)
	}

	code, out, errs := runCLI(t, "sshare", "--history", hist, "-a", "-P")
	if code != 0 {
		t.Fatalf("sshare: exit %d\n%s", code, errs)
	}
	r := csv.NewReader(strings.NewReader(out))
	r.Comma = '|'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 3 || strings.Join(recs[0], "|") != "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare" {
		t.Fatalf("sshare -a -P:\n%s", out)
	}
	for _, rec := range recs[1:] {
		if rec[4] != "0" {
			t.Errorf("sshare line %v: RawUsage %s, want 0", rec, rec[4])
		}
	}

	lab := sqlCSV(t, hist, "SELECT account FROM fairshare WHERE account <> 'root' AND \"user\" = '' ORDER BY account LIMIT 1")[0][0]
	code, out, errs = runCLI(t, "report", "--history", hist, "--account", lab, "--format", "md")
	if code != 0 || !strings.Contains(out, "# Fair-share report: ") {
		t.Errorf("report --account %s: exit %d\n%s\n%s", lab, code, out, errs)
	}
}

// TestHistoryFileNotParquet: a committed file replaced by bytes that are
// not Parquet (of the same size, or not) is named in one line that says
// how to check the history, by each command that reads the history: sql,
// report, sshare (which reads the fair-share file), and run, which refuses
// to build on it (even on a file it would only carry over) and writes
// nothing.
func TestHistoryFileNotParquet(t *testing.T) {
	_, inputs := genSite(t)
	clean := filepath.Join(t.TempDir(), "hist")
	if code, _, errs := runCLI(t, append([]string{"run", "--history", clean, "--to", "2025-02-05"}, inputs...)...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	for _, sameSize := range []bool{true, false} {
		hist := filepath.Join(t.TempDir(), "hist")
		if err := os.CopyFS(hist, os.DirFS(clean)); err != nil {
			t.Fatal(err)
		}
		// os.CopyFS makes current a directory: make it the symlink again.
		if err := os.RemoveAll(filepath.Join(hist, "current")); err != nil {
			t.Fatal(err)
		}
		target, err := os.Readlink(filepath.Join(clean, "current"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(hist, "current")); err != nil {
			t.Fatal(err)
		}
		h, err := history.Open(hist)
		if err != nil {
			t.Fatal(err)
		}
		v, err := h.View()
		if err != nil {
			t.Fatal(err)
		}
		files := v.Files(schemas.TableFairshare, "")
		if len(files) == 0 {
			t.Fatal("no fairshare file")
		}
		p := files[len(files)-1] // the latest snapshot's month: sshare reads it
		file := v.Path(p)
		v.Close()
		bad := []byte("this is not a Parquet file\n")
		if sameSize {
			bad = []byte(strings.Repeat("x", int(p.Bytes)))
		}
		if err := os.WriteFile(file, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		before, err := os.ReadFile(filepath.Join(hist, "gen", filepath.Base(target), "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"sql", "--history", hist, "SELECT count(*) FROM jobs"},
			{"report", "--history", hist, "--account", "root"},
			{"sshare", "--history", hist, "-a"},
			append([]string{"run", "--history", hist, "--to", "2025-02-10"}, inputs...),
			append([]string{"run", "--dry-run", "--history", hist, "--to", "2025-02-10"}, inputs...),
		} {
			code, out, errs := runCLI(t, args...)
			var naming []string
			for _, l := range strings.Split(errs, "\n") {
				if strings.Contains(l, p.Path) {
					naming = append(naming, l)
				}
			}
			if code != exitError || out != "" || len(naming) != 1 || !strings.Contains(naming[0], "is damaged: ") ||
				!strings.Contains(naming[0], "run fairledger verify --history "+hist) {
				t.Errorf("%s (same size %v): exit %d, stdout %q, stderr:\n%s\nwant exit 1 and one line naming %s and fairledger verify",
					args[0], sameSize, code, out, errs, p.Path)
			}
		}
		gens, err := os.ReadDir(filepath.Join(hist, "gen"))
		if err != nil {
			t.Fatal(err)
		}
		after, err := os.ReadFile(filepath.Join(hist, "gen", filepath.Base(target), "manifest.json"))
		if err != nil || len(gens) != 1 || string(after) != string(before) {
			t.Errorf("same size %v: the refused runs changed the history: generations %v (%v)", sameSize, gens, err)
		}
	}
}
