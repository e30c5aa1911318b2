package query

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/internal/deadpid"
)

// TestTempLimit: a query whose spill files would pass TempLimitMiB fails
// with a *LimitError naming the spill limit and its setting, without
// DuckDB's advice (PRAGMA max_temp_directory_size), which the locked
// session refuses; the session runs the next statement, and Close leaves
// no spill file.
func TestTempLimit(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	d, err := OpenDuckDBWith(ctx, t.TempDir(), DuckDBOptions{MemoryLimitMiB: 64, TempLimitMiB: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// About 150 MB of rows to sort: past 64 MiB of memory they spill, past
	// 1 MiB of spill files the query fails.
	_, err = d.Stream(ctx, "SELECT i, md5(i::VARCHAR) AS h FROM range(3000000) t(i) ORDER BY h")
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("error %v, want a *LimitError", err)
	}
	if le.Limit != LimitTemp || le.LimitMiB != 1 {
		t.Errorf("limit %s %d MiB, want %s 1 MiB", le.Limit, le.LimitMiB, LimitTemp)
	}
	if msg := err.Error(); !strings.Contains(msg, "failed to offload data block") ||
		strings.Contains(msg, "PRAGMA") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want DuckDB's first line only, without its advice", msg)
	}
	if !OutOfMemory(err) {
		t.Error("OutOfMemory(err) = false")
	}
	if _, rows := streamAll(t, d, "SELECT 42"); len(rows) != 1 || rows[0][0] != int32(42) {
		t.Errorf("next statement: %v, want 42", rows)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("left after Close: %v", left)
	}
}

// TestMemoryLimitAdvice: running out of the memory limit is a *LimitError
// naming it, without DuckDB's advice (SET threads, SET memory_limit).
func TestMemoryLimitAdvice(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()
	d, err := OpenDuckDBWith(ctx, t.TempDir(), DuckDBOptions{MemoryLimitMiB: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// A list aggregate holds its lists in memory and cannot spill.
	_, err = d.Stream(ctx, "SELECT i % 2 AS k, list(md5(i::VARCHAR)) AS l FROM range(2000000) t(i) GROUP BY k")
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("error %v, want a *LimitError", err)
	}
	if le.Limit != LimitMemory || le.LimitMiB != 16 {
		t.Errorf("limit %s %d MiB, want %s 16 MiB", le.Limit, le.LimitMiB, LimitMemory)
	}
	if msg := err.Error(); strings.Contains(msg, "SET ") || strings.Contains(msg, "Possible solutions") {
		t.Errorf("error %q keeps DuckDB's advice", msg)
	}
}

// TestOpenRemovesDeadSessions: a session directory left by a killed
// process (its pid dead) is removed when the next session opens; one of a
// live process stays.
func TestOpenRemovesDeadSessions(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if deadpid.Alive(cmd.Process.Pid) {
		t.Skipf("pid %d reused already", cmd.Process.Pid)
	}
	dead := filepath.Join(tmp, deadpid.Name(SessionPrefix, cmd.Process.Pid)+"123")
	live := filepath.Join(tmp, deadpid.Name(SessionPrefix, os.Getppid())+"456")
	for _, dir := range []string{dead, live} {
		if err := os.MkdirAll(filepath.Join(dir, "spill"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "spill", "duckdb_temp_storage_S256K-0.tmp"), make([]byte, 1024), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenDuckDB(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("%s, left by a dead process, is still there (%v)", dead, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s, of a live process, removed: %v", live, err)
	}
	if !strings.HasPrefix(filepath.Base(d.tmp), deadpid.Name(SessionPrefix, os.Getpid())) {
		t.Errorf("session directory %s is not named by this process's pid", d.tmp)
	}
}

// TestStreamWideRows: a result of wide rows larger than the memory limit
// (16,000 rows of 20 kB, 320 MB, under a 128 MiB limit) spills and comes
// back whole, in order: the pages it is read back in are sized by the
// rows' width, not a fixed count (a page of StreamPageRows such rows is a
// 320 MB result DuckDB must hold at once, which ran out of memory).
func TestStreamWideRows(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()
	d, err := OpenDuckDBWith(ctx, t.TempDir(), DuckDBOptions{MemoryLimitMiB: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const n, width = 16000, 20_000
	r, err := d.Stream(ctx, "SELECT i, repeat(chr(97 + (i % 26)::INTEGER), 20000) AS s FROM range(16000) t(i)")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for k := 0; ; k++ {
		row, err := r.Next()
		if err == io.EOF {
			if k != n {
				t.Errorf("%d rows, want %d", k, n)
			}
			break
		}
		if err != nil {
			t.Fatalf("row %d: %v", k, err)
		}
		s, _ := row[1].(string)
		if row[0] != int64(k) || len(s) != width || s[0] != byte('a'+k%26) {
			t.Fatalf("row %d = %v, %d bytes of %q, want %d, %d bytes of %c", k, row[0], len(s), s[:1], k, width, rune('a'+k%26))
		}
	}
}

// TestResultWriterTableHoldsBounded: a table of wide rows is aligned on
// the rows that fit TableWidthBytes, not on TableWidthRows of them: the
// first rows are written once they pass it.
func TestResultWriterTableHoldsBounded(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	rw, err := NewResultWriter(&out, FormatTable, []string{"s"}, []string{"VARCHAR"})
	if err != nil {
		t.Fatal(err)
	}
	wide := strings.Repeat("x", 1<<20) // 1 MiB: 16 rows make TableWidthBytes
	for i := range TableWidthBytes >> 20 {
		if out.Len() > 0 {
			t.Fatalf("written after %d rows of 1 MiB, want after %d", i, TableWidthBytes>>20)
		}
		if err := rw.Write([]any{wide}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.Write([]any{"y"}); err != nil { // any row after them
		t.Fatal(err)
	}
	if rw.held != nil || out.Len() < TableWidthBytes {
		t.Errorf("%d rows held, %d bytes written: want the first %d MiB written", len(rw.held), out.Len(), TableWidthBytes>>20)
	}
}
