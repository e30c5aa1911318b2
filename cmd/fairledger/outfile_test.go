package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fairledger/fairledger/internal/deadpid"
)

// readDir lists dir's names, hidden ones included (a leftover temporary
// file is hidden).
func readDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A symlink to a regular file is written through: the link stays the same
// link, the file it names is replaced (new inode, in its own directory,
// with its permissions), and no temporary file is left in either
// directory.
func TestOutputSymlinkWrittenThrough(t *testing.T) {
	root := t.TempDir()
	linkDir, fileDir := filepath.Join(root, "links"), filepath.Join(root, "files")
	for _, d := range []string{linkDir, fileDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(fileDir, "report.html")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(target)
	link := filepath.Join(linkDir, "latest.html")
	rel := "../files/report.html"
	if err := os.Symlink(rel, link); err != nil {
		t.Fatal(err)
	}
	// A link to the link: the chain is followed to the file.
	link2 := filepath.Join(linkDir, "chain.html")
	if err := os.Symlink("latest.html", link2); err != nil {
		t.Fatal(err)
	}

	if err := writeOutputBytes(link2, nil, []byte("new")); err != nil {
		t.Fatal(err)
	}
	for l, want := range map[string]string{link: rel, link2: "latest.html"} {
		fi, err := os.Lstat(l)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a symlink (%v, %v)", l, fi.Mode(), err)
		}
		if got, _ := os.Readlink(l); got != want {
			t.Errorf("Readlink(%s) = %q, want %q", l, got, want)
		}
	}
	if got := readString(t, target); got != "new" {
		t.Errorf("target holds %q, want %q", got, "new")
	}
	after, _ := os.Stat(target)
	if os.SameFile(before, after) {
		t.Error("target written in place; want replaced by rename")
	}
	if after.Mode().Perm() != 0o600 {
		t.Errorf("target mode %v, want the replaced file's 0600", after.Mode().Perm())
	}
	if got := readDir(t, fileDir); len(got) != 1 {
		t.Errorf("%s holds %q, want only report.html", fileDir, got)
	}
	if got := readDir(t, linkDir); len(got) != 2 {
		t.Errorf("%s holds %q, want the two links only", linkDir, got)
	}
}

// A FIFO is opened and written as it is: a reader gets the bytes, and the
// FIFO is still a FIFO with nothing created beside it.
func TestOutputFIFOWrittenDirectly(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			got <- "read: " + err.Error()
			return
		}
		got <- string(b)
	}()
	payload := strings.Repeat("report line\n", 10000) // more than a pipe buffer
	if err := writeOutput(fifo, nil, func(w io.Writer) error {
		_, err := io.WriteString(w, payload)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Checked before waiting for the reader, which waits for ever on a
	// FIFO that was replaced.
	fi, err := os.Lstat(fifo)
	if err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		t.Fatalf("after the write %s is %v (%v), want a FIFO", fifo, fi.Mode(), err)
	}
	if s := <-got; s != payload {
		t.Errorf("reader got %d bytes (%.40q), want %d", len(s), s, len(payload))
	}
	if names := readDir(t, dir); len(names) != 1 {
		t.Errorf("%s holds %q, want the FIFO only", dir, names)
	}
}

// A character device (looked at only: nothing is written to /dev/null
// here) and a symlink to one are written directly, never replaced.
func TestClassifyOutputCharDevice(t *testing.T) {
	if _, err := os.Stat("/dev/null"); err != nil {
		t.Skip("no /dev/null")
	}
	got, err := classifyOutput("/dev/null")
	if err != nil || got.kind != outDirect || got.path != "/dev/null" || got.follow {
		t.Errorf("classifyOutput(/dev/null) = %+v, %v; want outDirect on /dev/null, no-follow", got, err)
	}
	link := filepath.Join(t.TempDir(), "null")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	got, err = classifyOutput(link)
	if err != nil || got.kind != outDirect || got.path != link || !got.follow {
		t.Errorf("classifyOutput(link to /dev/null) = %+v, %v; want outDirect through the link", got, err)
	}
	if got, err := classifyOutput("-"); err != nil || got.kind != outStdout {
		t.Errorf("classifyOutput(-) = %+v, %v; want outStdout", got, err)
	}
}

// A directory, a symlink to one, a dangling symlink, a missing directory
// and a socket are refused with an error naming the path, and left as they
// were.
func TestOutputRefused(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	toDir := filepath.Join(dir, "todir")
	dangling := filepath.Join(dir, "dangling")
	for link, target := range map[string]string{toDir: "sub", dangling: "nowhere.html"} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	type refusal struct{ path, want string }
	cases := []refusal{
		{sub, sub + " is a directory: only a regular file, a character device or a FIFO can be written"},
		{toDir, toDir + " is a symlink to sub, which is a directory: "},
		{dangling, dangling + " is a symlink to nowhere.html, which does not exist: create the file it names or remove the link"},
		{filepath.Join(dir, "no", "r.html"), filepath.Join(dir, "no", "r.html") + ": directory " + filepath.Join(dir, "no") + ": "},
		{"", "empty output path"},
	}
	// A socket, where its path fits a sockaddr_un.
	if sock := filepath.Join(dir, "s"); len(sock) < 100 {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, refusal{sock, sock + " is a socket: "})
	}
	for _, tc := range cases {
		err := writeOutputBytes(tc.path, nil, []byte("x"))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("writeOutputBytes(%q) = %v, want an error starting %q", tc.path, err, tc.want)
		}
	}
	if got := readDir(t, sub); len(got) != 0 {
		t.Errorf("%s holds %q, want nothing", sub, got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere.html")); err == nil {
		t.Error("the dangling link's target was created")
	}
}

// A new path gets mode 0644; an existing file keeps its permissions and is
// replaced whole; a read-only file is refused (unless root, whom access(2)
// lets write anything); a discarded output leaves the path as it was.
func TestOutputRegularFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.csv")
	if err := writeOutputBytes(p, nil, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode() != 0o644 {
		t.Errorf("new file mode %v, want -rw-r--r--", fi.Mode())
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := writeOutputBytes(p, nil, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode() != 0o640 || readString(t, p) != "two" {
		t.Errorf("replaced file: mode %v, content %q; want -rw-r----- and %q", fi.Mode(), readString(t, p), "two")
	}

	o, err := createOutput(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(o, "half")
	o.Discard()
	if got := readString(t, p); got != "two" {
		t.Errorf("after Discard the file holds %q, want %q", got, "two")
	}
	if got := readDir(t, dir); len(got) != 1 {
		t.Errorf("after Discard %s holds %q, want r.csv only", dir, got)
	}

	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "kept.csv")
		if err := os.WriteFile(ro, []byte("keep"), 0o444); err != nil {
			t.Fatal(err)
		}
		err := writeOutputBytes(ro, nil, []byte("x"))
		if err == nil || !strings.HasPrefix(err.Error(), ro+" is not writable: ") {
			t.Errorf("writing a read-only file: %v, want refused", err)
		}
		if got := readString(t, ro); got != "keep" {
			t.Errorf("read-only file now holds %q", got)
		}
	}

	var stdout bytes.Buffer
	if err := writeOutputBytes("-", &stdout, []byte("to stdout")); err != nil || stdout.String() != "to stdout" {
		t.Errorf("writing -: %v, stdout %q", err, stdout.String())
	}
}

// The temporary file's name is bounded whatever the final name's length:
// a 250-byte file name (the longest name most file systems allow is 255
// bytes) is written, where a temporary name of the final name plus 14
// bytes failed with "file name too long".
func TestOutputLongName(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("é", 122) + ".html" // 249 bytes; byte 64 is inside an é
	p := filepath.Join(dir, name)
	if err := writeOutputBytes(p, nil, []byte("long")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, p); got != "long" {
		t.Errorf("%s holds %q", name, got)
	}
	if got := readDir(t, dir); len(got) != 1 {
		t.Errorf("%s holds %d names, want 1", dir, len(got))
	}
	if pat := tempPattern(name); len(tempPrefix(name)) > 1+maxTempPrefix+len(".tmp-") || !strings.HasPrefix(pat, "."+strings.Repeat("é", 32)+".tmp-") {
		t.Errorf("tempPattern = %q (%d bytes), want the name cut at 64 bytes on a rune boundary", pat, len(pat))
	}
}

// A symlink into /proc (a process's descriptor, like /dev/stdout) writes to
// the file the descriptor has open, appending, without replacing it.
func TestOutputProcDescriptor(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(p, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fdPath := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	if _, err := os.Lstat(fdPath); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	before, _ := os.Stat(p)
	got, err := classifyOutput(fdPath)
	if err != nil || got.kind != outAppend {
		t.Fatalf("classifyOutput(%s) = %+v, %v; want outAppend", fdPath, got, err)
	}
	if err := writeOutputBytes(fdPath, nil, []byte("report\n")); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) {
		t.Error("the descriptor's file was replaced")
	}
	if got := readString(t, p); got != "before\nreport\n" {
		t.Errorf("file holds %q, want the report appended", got)
	}
}

// A temporary file a killed writer left (named by its dead pid) is removed
// by the next write of the same name; one of a live process stays, and so
// does a name without a pid.
func TestOutputRemovesDeadTemp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "lab.html")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if deadpid.Alive(dead.Process.Pid) {
		t.Skipf("pid %d reused already", dead.Process.Pid)
	}
	left := filepath.Join(dir, deadpid.Name(".lab.html.tmp-", dead.Process.Pid)+"123")
	live := filepath.Join(dir, deadpid.Name(".lab.html.tmp-", os.Getppid())+"456")
	other := filepath.Join(dir, ".lab.html.tmp-789")
	for _, f := range []string{left, live, other} {
		if err := os.WriteFile(f, []byte("half a report"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeOutputBytes(p, nil, []byte("report")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("%s, left by a dead process, is still there (%v)", left, err)
	}
	for _, f := range []string{live, other} {
		if _, err := os.Lstat(f); err != nil {
			t.Errorf("%s removed: %v", f, err)
		}
	}
	if got := readString(t, p); got != "report" {
		t.Errorf("%s holds %q", p, got)
	}
}
