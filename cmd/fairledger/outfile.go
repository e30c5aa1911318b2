package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/internal/deadpid"
)

// Every file the CLI writes for a user goes through createOutput:
// report --out, the reports and index.html of report --out-dir, check's
// and run's --rejects, the files of gen --dir and of demo's input. An
// output path is never replaced by something else than what it names:
//
//   - "-" is stdout;
//   - an existing character device or FIFO (a terminal, /dev/null, a named
//     pipe) is opened for writing as it is: no create, no truncation, no
//     rename;
//   - a regular file, or a path that does not exist yet, is written to a
//     temporary file in the same directory, fsynced, given the permissions
//     of the file it replaces (0644 for a new one), renamed over the path,
//     and the directory fsynced: a reader sees the old file or the whole
//     new one, and after a crash the path holds one of the two;
//   - a symlink is written through and stays a symlink: a link to a regular
//     file replaces that file as above, in the file's own directory; a link
//     to a character device or FIFO writes to it directly; a link to an
//     open descriptor of a process (/dev/stdout, /dev/fd/N,
//     /proc/self/fd/N) writes to that descriptor's file directly,
//     appending, as a shell's redirection set it up; a dangling link, or
//     one to anything else, is refused;
//   - a directory, a socket or a block device is refused.
//
// The history store (export/history) writes files of its own, but they
// are the content-addressed files of a generation stage (named by their
// hash, made durable once at commit, published by the commit's rename of
// the current symlink) rather than a path a user named, which is replaced
// in place: this file's one writer serves the CLI, and nothing else
// replaces a user's path.

// outKind is how createOutput writes to a path.
type outKind int

const (
	outStdout  outKind = iota // "-": the command's stdout
	outDirect                 // an existing device or FIFO: opened and written as it is
	outAppend                 // a process's descriptor (/dev/stdout): opened, appended to
	outReplace                // a regular file or a new path: temp file renamed into place
)

// outTarget is what classifyOutput decided for a path.
type outTarget struct {
	kind outKind
	// path is what to open (outDirect, outAppend) or to rename the
	// temporary file onto (outReplace: the symlink's target for a link).
	path string
	// follow says path is a symlink that open must follow (no O_NOFOLLOW).
	follow bool
	// mode is the permission of the replacement file (outReplace).
	mode fs.FileMode
}

// newFileMode is the permission of a new output file, as most tools
// write a report: readable by all, writable by its owner.
const newFileMode fs.FileMode = 0o644

// classifyOutput decides how to write name without writing anything.
func classifyOutput(name string) (outTarget, error) {
	if name == "-" {
		return outTarget{kind: outStdout}, nil
	}
	if name == "" {
		return outTarget{}, errors.New("empty output path")
	}
	fi, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(name)
		if di, derr := os.Stat(dir); derr != nil {
			return outTarget{}, fmt.Errorf("%s: directory %s: %w", name, dir, derr)
		} else if !di.IsDir() {
			return outTarget{}, fmt.Errorf("%s: %s is not a directory", name, dir)
		}
		return outTarget{kind: outReplace, path: name, mode: newFileMode}, nil
	case err != nil:
		return outTarget{}, err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		switch t := fi.Mode().Type(); {
		case t == 0:
			return replaceTarget(name, fi.Mode().Perm())
		case isDeviceOrFIFO(t):
			return outTarget{kind: outDirect, path: name}, nil
		default:
			return outTarget{}, fmt.Errorf("%s is %s: only a regular file, a character device or a FIFO can be written", name, kindName(t))
		}
	}

	// A symlink: written through, never replaced.
	ti, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		link, _ := os.Readlink(name)
		return outTarget{}, fmt.Errorf("%s is a symlink to %s, which does not exist: create the file it names or remove the link", name, link)
	} else if err != nil {
		return outTarget{}, err
	}
	t := ti.Mode().Type()
	switch {
	case isDeviceOrFIFO(t):
		return outTarget{kind: outDirect, path: name, follow: true}, nil
	case t == 0 && viaProc(name):
		return outTarget{kind: outAppend, path: name, follow: true}, nil
	case t == 0:
		real, err := filepath.EvalSymlinks(name)
		if err != nil {
			return outTarget{}, err
		}
		return replaceTarget(real, ti.Mode().Perm())
	}
	link, _ := os.Readlink(name)
	return outTarget{}, fmt.Errorf("%s is a symlink to %s, which is %s: only a regular file, a character device or a FIFO can be written", name, link, kindName(t))
}

// replaceTarget is an existing regular file to replace: refused when the
// user may not write it (a read-only report is one to keep, and the
// rename would replace it all the same).
func replaceTarget(path string, perm fs.FileMode) (outTarget, error) {
	if err := unix.Access(path, unix.W_OK); err != nil {
		return outTarget{}, fmt.Errorf("%s is not writable: %w", path, err)
	}
	return outTarget{kind: outReplace, path: path, mode: perm}, nil
}

// isDeviceOrFIFO reports whether a file type is one written as it is: a
// character device (a terminal, /dev/null) or a named pipe.
func isDeviceOrFIFO(t fs.FileMode) bool {
	return t&fs.ModeNamedPipe != 0 || t&fs.ModeDevice != 0 && t&fs.ModeCharDevice != 0
}

// kindName names a file type that cannot be written, for an error.
func kindName(t fs.FileMode) string {
	switch {
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0 && t&fs.ModeCharDevice == 0:
		return "a block device"
	}
	return "not a regular file"
}

// viaProc reports whether the symlink name resolves through /proc: a
// process's open descriptor (/dev/stdout -> /proc/self/fd/1, /dev/fd/N).
// Such a link names the file the descriptor has open, not a path to
// replace: the file may be unlinked, or opened for appending by a shell.
func viaProc(name string) bool {
	p := name
	for range 40 { // as many links as the kernel follows
		dir, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err != nil {
			return false
		}
		if dir == "/proc" || strings.HasPrefix(dir, "/proc/") {
			return true
		}
		p = filepath.Join(dir, filepath.Base(p))
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return false
		}
		t, err := os.Readlink(p)
		if err != nil {
			return false
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(dir, t)
		}
		p = t
	}
	return false
}

// outFile is an output being written: Write to it, then Commit (or
// Discard on failure).
type outFile struct {
	name   string // as the user gave it
	w      io.Writer
	f      *os.File // the temporary file or the opened device; nil for stdout
	tmp    string   // the temporary file, renamed to target by Commit
	target string
	mode   fs.FileMode
}

// createOutput opens name for writing as the comment at the top of this
// file says; stdout is the command's stdout, for "-".
func createOutput(name string, stdout io.Writer) (*outFile, error) {
	t, err := classifyOutput(name)
	if err != nil {
		return nil, err
	}
	o := &outFile{name: name}
	switch t.kind {
	case outStdout:
		o.w = stdout
		return o, nil
	case outDirect, outAppend:
		flag := os.O_WRONLY
		if t.kind == outAppend {
			flag |= os.O_APPEND
		}
		if !t.follow {
			flag |= syscall.O_NOFOLLOW
		}
		f, err := os.OpenFile(t.path, flag, 0)
		if err != nil {
			return nil, err
		}
		// The path may have changed between the look and the open: write
		// only to what was looked at.
		fi, err := f.Stat()
		if err == nil && !isDeviceOrFIFO(fi.Mode().Type()) && !(t.kind == outAppend && fi.Mode().IsRegular()) {
			err = fmt.Errorf("%s changed while opened (now %s)", name, fi.Mode().Type())
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		o.f, o.w = f, f
		return o, nil
	}
	dir, base := filepath.Split(t.path)
	// A killed process leaves its temporary file: the next writer of the
	// same name removes it, once its pid is dead.
	if _, err := deadpid.Remove(filepath.Clean(dir), tempPrefix(base)); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, tempPattern(base))
	if err != nil {
		return nil, err
	}
	o.f, o.w, o.tmp, o.target, o.mode = f, f, f.Name(), t.path, t.mode
	return o, nil
}

// maxTempPrefix bounds the part of a temporary file's name taken from the
// final name, so that the temporary name (this + ".tmp-", a pid, "-" and
// up to 10 digits) fits any file system whatever the length of the final
// name.
const maxTempPrefix = 64

// tempPattern is the os.CreateTemp pattern of a temporary file for base:
// hidden, recognisably base's, named by this process's pid (so that the
// next writer can tell a killed process's file from a live one's), and at
// most 1+64+5+11+10 bytes long.
func tempPattern(base string) string {
	return deadpid.Name(tempPrefix(base), os.Getpid()) + "*"
}

// tempPrefix is the name of base's temporary files up to the pid.
func tempPrefix(base string) string {
	if len(base) > maxTempPrefix {
		n := maxTempPrefix
		for n > 0 && !utf8.RuneStart(base[n]) {
			n--
		}
		base = base[:n]
	}
	return "." + strings.ReplaceAll(base, "*", "_") + ".tmp-"
}

// Write writes to the output.
func (o *outFile) Write(p []byte) (int, error) { return o.w.Write(p) }

// Commit finishes the output: a replaced file is fsynced, renamed into
// place and its directory fsynced; a device is closed; stdout is left
// open. On error nothing replaces the path.
func (o *outFile) Commit() error {
	if o.f == nil {
		return nil
	}
	if o.tmp == "" {
		return o.f.Close()
	}
	err := o.f.Sync()
	if err == nil {
		err = o.f.Chmod(o.mode)
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.tmp, o.target)
	}
	if err != nil {
		os.Remove(o.tmp)
		return err
	}
	return syncDirOf(o.target)
}

// Discard abandons the output: a temporary file is removed (the path is
// left as it was), a device closed.
func (o *outFile) Discard() {
	if o.f == nil {
		return
	}
	o.f.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
}

// syncDirOf fsyncs the directory holding path, so that a rename into it
// is durable.
func syncDirOf(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", filepath.Dir(path), err)
	}
	return nil
}

// writeOutput writes name (see createOutput) with write, buffered.
func writeOutput(name string, stdout io.Writer, write func(io.Writer) error) error {
	o, err := createOutput(name, stdout)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(o, 1<<16)
	if err := write(bw); err != nil {
		o.Discard()
		return err
	}
	if err := bw.Flush(); err != nil {
		o.Discard()
		return err
	}
	return o.Commit()
}

// writeOutputBytes writes data to name (see createOutput).
func writeOutputBytes(name string, stdout io.Writer, data []byte) error {
	o, err := createOutput(name, stdout)
	if err != nil {
		return err
	}
	if _, err := o.Write(data); err != nil {
		o.Discard()
		return err
	}
	return o.Commit()
}

// outputDir makes sure dir is a directory to write output files into
// (report --out-dir, gen --dir, demo's input), creating it and its parents
// if needed. A symlink to a directory is used as it is; a dangling one is
// refused rather than its target created somewhere else.
func outputDir(dir string) error {
	if dir == "" {
		return errors.New("empty directory path")
	}
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		return nil
	}
	fi, lerr := os.Lstat(dir)
	switch {
	case lerr != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		link, _ := os.Readlink(dir)
		if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			return fmt.Errorf("%s is a symlink to %s, which does not exist: create the directory it names or remove the link", dir, link)
		}
		return fmt.Errorf("%s is a symlink to %s, which is not a directory", dir, link)
	case !fi.IsDir():
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	return err
}

// Nothing but a run writes into a history: every output path a user names
// (report --out and --out-dir, check's and run's --rejects, gen --dir) is
// checked with outsideHistory before anything is written. A file dropped
// into a history is at best a stray that verify reports, at worst one of
// its files replaced (report --out H/current/manifest.json).

// outsideHistory returns a usage error when name, the value of flag,
// lies inside a fairledger history: when its path, every symlink
// resolved (current included), is a history's directory or below one.
// own are the command's own --history directories, refused as histories
// even before their first commit. "-" (stdout) is never refused.
func outsideHistory(flag, name string, own ...string) error {
	if name == "-" || name == "" {
		return nil
	}
	resolved, err := resolvePath(name)
	if err != nil {
		return usagef("--%s %s: %v", flag, name, err)
	}
	owned := map[string]string{}
	for _, h := range own {
		if h == "" {
			continue
		}
		if r, err := resolvePath(h); err == nil {
			owned[r] = h
		}
	}
	for d := resolved; ; d = filepath.Dir(d) {
		hist, ok := owned[d]
		if !ok && history.IsHistory(d) {
			hist, ok = d, true
		}
		if ok {
			via := ""
			if abs, _ := filepath.Abs(name); resolved != abs {
				via = " (it resolves to " + resolved + ")"
			}
			return usagef("--%s %s%s is inside the fairledger history %s: only `fairledger run` writes into a history "+
				"(a file put there is a stray for verify to report, or replaces one of the history's own files); nothing was written: "+
				"give a path outside %s", flag, name, via, hist, hist)
		}
		if parent := filepath.Dir(d); parent == d {
			return nil
		}
	}
}

// resolvePath is name as an absolute path with every symlink resolved, as
// the kernel would open it: component by component, ".." taken after the
// symlink before it is followed. Components that do not exist yet are
// kept as named; a dangling symlink is resolved to where it points.
func resolvePath(name string) (string, error) {
	cur := string(filepath.Separator)
	if !filepath.IsAbs(name) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		if cur, err = filepath.EvalSymlinks(wd); err != nil {
			return "", err
		}
	}
	comps := strings.Split(filepath.ToSlash(name), "/")
	for links := 0; len(comps) > 0; {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > 40 { // as many as the kernel follows
			return "", fmt.Errorf("%s: too many levels of symbolic links", name)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		comps = append(strings.Split(filepath.ToSlash(target), "/"), comps...)
	}
	return cur, nil
}
