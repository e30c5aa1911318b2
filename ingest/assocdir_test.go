package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// assocWriteFiles writes name → content into dir.
func assocWriteFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const assocDirDump = "Cluster|Account|User|Partition|ParentName|Share\nc|root||||1\nc|a|||root|10\nc|a|u|||1\n"

func TestReadAssocDir(t *testing.T) {
	t.Parallel()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	dir := t.TempDir()
	assocWriteFiles(t, dir, map[string]string{
		"assoc-2025-06-15.psv":     assocDirDump + "c|b|||root|5\n",
		"tree_20250301.sacctmgr":   "add cluster c\nadd account a fairshare=10\n",
		"assoc-2025-09-01.psv":     assocDirDump + "c|a|v|||1\nc|zz|||nosuch|1\n", // one bad row
		".assoc-2025-07-01.swp":    "ignored",
		"old/assoc-2020-01-01.psv": "ignored: subdirectory",
	})
	got, stats, err := ReadAssocDir(dir, loc)
	// The bad row of the last dump is reported, the dump still returned.
	wantErr := `ingest assoc-2025-09-01.psv:6: ParentName="nosuch": unknown parent account`
	assocSameStrings(t, "errors", assocErrorLines(t, err), []string{wantErr})
	if len(got) != 3 || len(stats) != 3 {
		t.Fatalf("ReadAssocDir: %d dumps, %d stats, want 3 and 3", len(got), len(stats))
	}
	wantEff := []time.Time{
		time.Date(2025, 3, 1, 0, 0, 0, 0, loc),
		time.Date(2025, 6, 15, 0, 0, 0, 0, loc),
		time.Date(2025, 9, 1, 0, 0, 0, 0, loc),
	}
	wantFile := []string{"tree_20250301.sacctmgr", "assoc-2025-06-15.psv", "assoc-2025-09-01.psv"}
	wantRows := []int{3, 4, 4} // script: root, root user, a; dump: root, a, u (+b | +v)
	for i := range got {
		if !got[i].Effective.Equal(wantEff[i]) || got[i].Effective.Location() != loc {
			t.Errorf("dump %d Effective = %v, want %v", i, got[i].Effective, wantEff[i])
		}
		if got[i].Assoc.File != wantFile[i] || stats[i].File != wantFile[i] {
			t.Errorf("dump %d file = %q (stats %q), want %q", i, got[i].Assoc.File, stats[i].File, wantFile[i])
		}
		if len(got[i].Assoc.Rows) != wantRows[i] {
			t.Errorf("dump %d has %d rows, want %d", i, len(got[i].Assoc.Rows), wantRows[i])
		}
		if !stats[i].Balanced() {
			t.Errorf("stats %d %s not balanced", i, stats[i].String())
		}
	}

	utc := time.UTC
	tests := []struct {
		name string
		t    time.Time
		want string // file of the dump in force; "" = none
	}{
		{"before the first", time.Date(2025, 2, 28, 23, 59, 59, 0, loc), ""},
		// 2025-03-01 00:00 in Berlin (CET, UTC+1) is 2025-02-28 23:00 UTC.
		{"first instant, other zone", time.Date(2025, 2, 28, 23, 0, 0, 0, utc), "tree_20250301.sacctmgr"},
		{"one ns before", time.Date(2025, 2, 28, 22, 59, 59, 999999999, utc), ""},
		{"between", time.Date(2025, 6, 14, 23, 59, 59, 0, loc), "tree_20250301.sacctmgr"},
		{"exactly second", time.Date(2025, 6, 15, 0, 0, 0, 0, loc), "assoc-2025-06-15.psv"},
		{"after the last", time.Date(2030, 1, 1, 0, 0, 0, 0, loc), "assoc-2025-09-01.psv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := AssocAt(got, tt.t)
			file := ""
			if ok {
				file = a.File
			}
			if file != tt.want || ok != (tt.want != "") {
				t.Errorf("AssocAt(%s: %v) = %q, %v; want %q", tt.name, tt.t, file, ok, tt.want)
			}
		})
	}
	if _, ok := AssocAt(nil, time.Now()); ok {
		t.Errorf("AssocAt(nil) = _, true; want false")
	}
}

func TestReadAssocDirErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  []string // substrings of the error
	}{
		{"no date", map[string]string{"assoc-2025-01-01.psv": assocDirDump, "assoc-latest.psv": assocDirDump},
			[]string{"ingest assoc-latest.psv: no date in the file name (want YYYY-MM-DD or YYYYMMDD, e.g. assoc-2025-03-01.psv)"}},
		{"duplicate date", map[string]string{"a-2025-01-01.psv": assocDirDump, "b-20250101.psv": assocDirDump},
			[]string{"ingest b-20250101.psv: same date as a-2025-01-01.psv (2025-01-01)"}},
		{"impossible date", map[string]string{"assoc-2025-02-30.psv": assocDirDump},
			[]string{"ingest assoc-2025-02-30.psv: impossible date 2025-02-30 in the file name"}},
		{"empty dir", map[string]string{}, []string{"no association dumps"}},
		// A dump expected in the directory and found as a subdirectory
		// would leave its date's tree out without a word.
		{"dated subdirectory", map[string]string{"assoc-2025-01-01.psv": assocDirDump, "assoc-2025-03-01.psv/assoc.psv": assocDirDump},
			[]string{"ingest assoc-2025-03-01.psv: a directory named like a dated dump: the dumps must be files of the directory itself (move it out, or rename it without the date)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			assocWriteFiles(t, dir, tt.files)
			got, stats, err := ReadAssocDir(dir, time.UTC)
			if err == nil || got != nil || stats != nil {
				t.Fatalf("ReadAssocDir = %d dumps, err %v; want nothing and an error", len(got), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, _, err := ReadAssocDir(t.TempDir(), nil); err == nil {
		t.Errorf("ReadAssocDir(nil location) succeeded, want an error")
	}
	if _, _, err := ReadAssocDir(filepath.Join(t.TempDir(), "missing"), time.UTC); err == nil {
		t.Errorf("ReadAssocDir(missing dir) succeeded, want an error")
	}
}

func TestAssocFileDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		y, m, d int
		ok      bool
	}{
		{"assoc-2025-03-01.psv", 2025, 3, 1, true},
		{"assoc-20250615.psv", 2025, 6, 15, true},
		{"2024-12-31", 2024, 12, 31, true},
		{"v2-assoc-2025-03-01-from-2024-01-01.psv", 2025, 3, 1, true}, // the first date
		{"x20250101-2024-05-05", 2024, 5, 5, true},                    // YYYY-MM-DD wins over YYYYMMDD
		{"assoc-123456789.psv", 0, 0, 0, false},                       // 9 digits: not a date
		{"assoc-12025-03-01.psv", 0, 0, 0, false},                     // 5-digit year
		{"assoc-2025-3-1.psv", 0, 0, 0, false},
		{"assoc.psv", 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y, m, d, ok := assocFileDate(tt.name)
			if y != tt.y || m != tt.m || d != tt.d || ok != tt.ok {
				t.Errorf("assocFileDate(%q) = %d-%d-%d %v, want %d-%d-%d %v", tt.name, y, m, d, ok, tt.y, tt.m, tt.d, tt.ok)
			}
		})
	}
}

func TestReadAssocFileSniffs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	assocWriteFiles(t, dir, map[string]string{
		"dump.txt":   "# a comment\n" + assocDirDump,
		"script.psv": "# a comment\nadd cluster c\n",
	})
	a, _, err := ReadAssocFile(filepath.Join(dir, "dump.txt"))
	if err == nil {
		t.Errorf("dump with a leading comment: err = nil, want the no-header error")
	}
	if a != nil {
		t.Errorf("dump with a comment line: got rows, want nil")
	}
	a, _, err = ReadAssocFile(filepath.Join(dir, "script.psv"))
	if err != nil || len(a.Rows) != 2 {
		t.Errorf("script.psv read as a script: rows %v, err %v; want root and root user", a, err)
	}
	if _, _, err := ReadAssocFile(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("ReadAssocFile(missing) succeeded")
	}
}
