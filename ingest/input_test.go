package ingest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mkfifo makes a named pipe in a test's directory. No reader in these tests
// opens it: the readers refuse it on its mode, before opening, so nothing
// blocks.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// sparse makes a file of size bytes that takes no room on disk.
func sparse(t *testing.T, dir, name string, size int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every input that is read whole, or whose rows are all kept, is refused
// when it is not a regular file or is larger than its bound: before, a
// named pipe blocked, a device such as /dev/zero was read until memory ran
// out, and so was a huge file.
func TestInputFilesRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := mkfifo(t, dir, "fifo")
	bigConf := sparse(t, dir, "big.conf", MaxConfBytes+1)
	bigAssoc := sparse(t, dir, "big.psv", MaxAssocBytes+1)
	bigQOS := sparse(t, dir, "qos.psv", 70<<20)
	readers := map[string]func(string) error{
		"slurm.conf":     func(p string) error { _, err := ReadSlurmConf(p); return err },
		"association":    func(p string) error { _, _, err := ReadAssocFile(p); return err },
		"assoc dump":     func(p string) error { _, _, err := ReadAssoc(p); return err },
		"assoc script":   func(p string) error { _, _, err := ReadAssocScript(p); return err },
		"QOS dump":       func(p string) error { _, _, err := ReadQOS(p); return err },
		"sacct (opened)": func(p string) error { f, err := OpenSacctFile(p); closeIf(f); return err },
	}
	tests := []struct {
		name, reader, path, want string
	}{
		{"slurm.conf named pipe", "slurm.conf", fifo, "slurm.conf " + fifo + " is a named pipe, not a regular file"},
		{"slurm.conf device", "slurm.conf", "/dev/zero", "slurm.conf /dev/zero is a character device, not a regular file"},
		{"slurm.conf directory", "slurm.conf", dir, "slurm.conf " + dir + " is a directory, not a regular file"},
		{"slurm.conf over its limit", "slurm.conf", bigConf, "slurm.conf " + bigConf + " is 64.0 MiB (67108865 bytes), over the 64 MiB limit for slurm.conf files"},
		{"association named pipe", "association", fifo, "association file " + fifo + " is a named pipe, not a regular file"},
		{"association over its limit", "association", bigAssoc, "association file " + bigAssoc + " is 512.0 MiB (536870913 bytes), over the 512 MiB limit for association files"},
		{"assoc dump device", "assoc dump", "/dev/zero", "association file /dev/zero is a character device, not a regular file"},
		{"assoc script named pipe", "assoc script", fifo, "association file " + fifo + " is a named pipe, not a regular file"},
		{"QOS dump device", "QOS dump", "/dev/zero", "QOS dump /dev/zero is a character device, not a regular file"},
		{"QOS dump over its limit", "QOS dump", bigQOS, "QOS dump " + bigQOS + " is 70 MiB (73400320 bytes), over the 64 MiB limit for QOS dumps"},
		// sacct is streamed: any size, and a named pipe is read as sacct
		// writes into it; a device is not.
		{"sacct device", "sacct (opened)", "/dev/zero", "sacct file /dev/zero is a character device, not a regular file or a named pipe"},
		{"sacct of any size", "sacct (opened)", bigAssoc, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := readers[tt.reader](tt.path)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("%s(%s) = %q, want %q", tt.reader, tt.path, got, tt.want)
			}
		})
	}
	// A missing file is still os.ErrNotExist.
	if _, _, err := ReadQOS(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadQOS(missing) = %v, want os.ErrNotExist", err)
	}
}

func closeIf(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// An Include of a device, a named pipe, a directory or a huge file is an
// error of the Include line; the rest of the file is read.
func TestSlurmConfIncludeRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := mkfifo(t, dir, "fifo.conf")
	big := sparse(t, dir, "big.conf", MaxConfBytes+1)
	conf := filepath.Join(dir, "slurm.conf")
	text := fmt.Sprintf("ClusterName=c\nInclude /dev/zero\nInclude %s\nInclude %s\nInclude %s\nPriorityWeightAge=3\n", fifo, dir, big)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ReadSlurmConf(conf)
	var got []string
	for _, e := range confParseErrors(t, err) {
		got = append(got, e.Error())
	}
	want := []string{
		"ingest " + conf + `:2: Include="/dev/zero": open /dev/zero: included file /dev/zero is a character device, not a regular file`,
		"ingest " + conf + `:3: Include="` + fifo + `": open ` + fifo + ": included file " + fifo + " is a named pipe, not a regular file",
		"ingest " + conf + `:4: Include="` + dir + `": open ` + dir + ": included file " + dir + " is a directory, not a regular file",
		"ingest " + conf + `:5: Include="` + big + `": open ` + big + ": included file " + big + " is 64.0 MiB (67108865 bytes), over the 64 MiB limit for slurm.conf files",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c == nil || c.PriorityWeightAge != 3 {
		t.Errorf("config %+v: want PriorityWeightAge 3 read after the refused includes", c)
	}
}

// The include-cycle check knows a file by its absolute path and by its
// identity: before, a.conf read by a relative name and included back by its
// absolute path (or through a symlink) was read again and again until the
// include depth limit.
func TestSlurmConfIncludeCycleOtherPath(t *testing.T) {
	dir := t.TempDir()
	abs := func(n string) string { return filepath.Join(dir, n) }
	files := map[string]string{
		"a.conf":    "ClusterName=c\nInclude " + abs("b.conf") + "\n",
		"b.conf":    "PriorityWeightAge=5\nInclude " + abs("a.conf") + "\n",
		"self.conf": "ClusterName=c\nInclude link.conf\n",
		"x.conf":    "ClusterName=c\nInclude sub/../y.conf\n",
		"y.conf":    "Include x.conf\n",
	}
	assocWriteFiles(t, dir, files)
	if err := os.Symlink("self.conf", abs("link.conf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(abs("sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	tests := []struct {
		name string
		top  string
		want string
	}{
		{"relative top", "a.conf", "ingest " + abs("b.conf") + `:2: Include="` + abs("a.conf") + `": include cycle: a.conf -> ` + abs("b.conf") + " -> " + abs("a.conf")},
		{"absolute top", abs("a.conf"), "ingest " + abs("b.conf") + `:2: Include="` + abs("a.conf") + `": include cycle: ` + abs("a.conf") + " -> " + abs("b.conf") + " -> " + abs("a.conf")},
		{"through a symlink to itself", "self.conf", `ingest self.conf:2: Include="link.conf": include cycle: self.conf -> link.conf`},
		{"included by another spelling", "x.conf", `ingest y.conf:1: Include="x.conf": include cycle: x.conf -> y.conf -> x.conf`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadSlurmConf(tt.top)
			errs := confParseErrors(t, err)
			if len(errs) != 1 || errs[0].Error() != tt.want {
				t.Errorf("ReadSlurmConf(%s) = %v, want %q", tt.top, err, tt.want)
			}
		})
	}
}

// A line longer than MaxLineBytes is an error of its line in slurm.conf,
// rejects its row in the association and QOS dumps and its statement in a
// sacctmgr script; the lines around it are read.
func TestLineOverBound(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxLineBytes+1)
	conf, err := ParseSlurmConf("s.conf", strings.NewReader("ClusterName=c\nNodeName="+long+"\nPriorityWeightAge=4\n"), nil)
	if errs := confParseErrors(t, err); len(errs) != 1 || errs[0].Error() != fmt.Sprintf("ingest s.conf:2: line of %d bytes, longer than the 1 MiB a line may have: skipped", MaxLineBytes+10) {
		t.Errorf("slurm.conf: %v", err)
	}
	if conf == nil || conf.PriorityWeightAge != 4 {
		t.Errorf("slurm.conf: the line after the long one was not read: %+v", conf)
	}
	a, st, err := ParseAssoc("a.psv", strings.NewReader(assocDirDump+"c|"+long+"|||root|1\nc|b|||root|2\n"))
	if want := fmt.Sprintf("ingest a.psv:5: line of %d bytes, longer than the 1 MiB a line may have: skipped", MaxLineBytes+12); err == nil || err.Error() != want {
		t.Errorf("assoc: err %v, want %q", err, want)
	}
	if a == nil || len(a.Rows) != 4 || st.Read != 5 || st.Rejected != 1 || st.Lines != 5 {
		t.Errorf("assoc: %v rows, stats %s lines %d", a, st.String(), st.Lines)
	}
	_, st, err = ParseAssocScript("a.sacctmgr", strings.NewReader("add cluster c\nadd account a \\\n"+long+"\nadd account b\n"))
	if want := fmt.Sprintf("ingest a.sacctmgr:2: statement of %d bytes, longer than the 1 MiB a line may have: skipped", len("add account a  ")+MaxLineBytes+1); err == nil || err.Error() != want {
		t.Errorf("script: err %v, want %q", err, want)
	}
	if st.Read != 3 || st.Ingested != 2 || st.Rejected != 1 || st.Lines != 4 || st.Continued != 1 {
		t.Errorf("script: stats %s lines %d continued %d", st.String(), st.Lines, st.Continued)
	}
	q, st, err := ParseQOS("q.psv", strings.NewReader("Name|UsageFactor|Flags\n"+long+"\nnormal|1|\n"))
	if want := fmt.Sprintf("ingest q.psv:2: line of %d bytes, longer than the 1 MiB a line may have: skipped", MaxLineBytes+1); err == nil || err.Error() != want {
		t.Errorf("QOS: err %v, want %q", err, want)
	}
	if len(q.Rows) != 1 || st.Read != 2 || st.Rejected != 1 {
		t.Errorf("QOS: %d rows, stats %s", len(q.Rows), st.String())
	}
}

// An association dump cut in its last line (sacctmgr ends every line with a
// newline) is read, with a warning naming the file and the line.
func TestAssocNoFinalNewline(t *testing.T) {
	t.Parallel()
	_, st, err := ParseAssoc("cut.psv", strings.NewReader(strings.TrimSuffix(assocDirDump, "\n")))
	want := []string{"cut.psv:4: the file ends without a newline, which sacctmgr always prints: the last line may be cut (a truncated copy?)"}
	if err != nil || !reflect.DeepEqual(st.Warnings, want) {
		t.Errorf("ParseAssoc = %v, warnings %q; want %q", err, st.Warnings, want)
	}
	if _, st, _ = ParseAssoc("ok.psv", strings.NewReader(assocDirDump)); len(st.Warnings) != 0 {
		t.Errorf("complete dump: warnings %q", st.Warnings)
	}
}

// The dated dumps of an association directory are read through the same
// checks: a named pipe named like a dump is refused, not waited on.
func TestReadAssocDirNamedPipe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	assocWriteFiles(t, dir, map[string]string{"assoc-2025-01-01.psv": assocDirDump})
	fifo := mkfifo(t, dir, "assoc-2025-02-01.psv")
	_, _, err := ReadAssocDir(dir, time.UTC)
	if want := "association file " + fifo + " is a named pipe, not a regular file"; err == nil || err.Error() != want {
		t.Errorf("ReadAssocDir = %v, want %q", err, want)
	}
}

// A file that grows past its bound while it is read fails instead of being
// read on.
func TestBoundedReaderGrew(t *testing.T) {
	t.Parallel()
	b := &boundedReader{r: strings.NewReader("abcdef"), left: 4, max: 4}
	got, err := io.ReadAll(b)
	if string(got) != "abcd" || err == nil || err.Error() != "the file grew past 4 bytes while it was read" {
		t.Errorf("ReadAll = %q, %v", got, err)
	}
	b = &boundedReader{r: strings.NewReader("abcd"), left: 4, max: 4}
	if got, err := io.ReadAll(b); string(got) != "abcd" || err != nil {
		t.Errorf("ReadAll(exactly the bound) = %q, %v", got, err)
	}
}
