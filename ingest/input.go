package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Bounds on the input files. Every reader refuses a file that is not a
// regular one (a device such as /dev/zero never ends) and, for the files
// read into memory whole or nearly so, one larger than its bound; every
// line reader keeps at most MaxLineBytes of one line.
const (
	// MaxConfBytes bounds slurm.conf and each file it includes: a real one
	// is some KiB, the largest some MiB with one NodeName line per node.
	MaxConfBytes = 64 << 20
	// MaxAssocBytes bounds an association dump or script: 10⁶
	// associations of 500 bytes each (sacctmgr's full default format with
	// a long QOS list) fit.
	MaxAssocBytes = 512 << 20
	// MaxQOSBytes bounds a QOS dump: a site has hundreds of QOS.
	MaxQOSBytes = 64 << 20
	// MaxLineBytes bounds one line of every input, and one sacct record
	// (all its lines): a real sacct row with a long SubmitLine is a few
	// KiB, a NodeName line or an association's limits some more.
	MaxLineBytes = 1 << 20
	// DefaultPipeTimeout is the commands' default SacctOptions.PipeTimeout
	// (--input-timeout): longer than a sacct of a year takes to print its
	// first row, short enough that a nightly run whose feeding sacct hangs
	// fails the same night.
	DefaultPipeTimeout = time.Hour
)

// fileKind names the kind of a file that is not a regular one, for errors.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file"
}

// openInput opens path for reading after checking that it is a regular
// file (or, with pipeOK, a named pipe, which is streamed) of at most
// maxBytes (0: any size); a symlink is followed. what names the input in
// errors ("slurm.conf", "QOS dump"), plural the inputs of its kind. The
// check is made again on the opened file, so that a path replaced in
// between is caught too.
func openInput(path, what, plural string, maxBytes int64, pipeOK bool) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if err := checkInput(path, what, plural, fi, maxBytes, pipeOK); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if fi, err = f.Stat(); err == nil {
		err = checkInput(path, what, plural, fi, maxBytes, pipeOK)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkInput is openInput's check of one file's mode and size.
func checkInput(path, what, plural string, fi fs.FileInfo, maxBytes int64, pipeOK bool) error {
	m := fi.Mode()
	if !m.IsRegular() && !(pipeOK && m&fs.ModeNamedPipe != 0) {
		want := "a regular file"
		if pipeOK {
			want = "a regular file or a named pipe"
		}
		return fmt.Errorf("%s %s is %s, not %s", what, path, fileKind(m), want)
	}
	if maxBytes > 0 && m.IsRegular() && fi.Size() > maxBytes {
		return fmt.Errorf("%s %s is %s (%d bytes), over the %s limit for %s",
			what, path, formatBytes(fi.Size()), fi.Size(), formatBytes(maxBytes), plural)
	}
	return nil
}

// openBounded opens a file read whole or nearly so, as openInput, and
// returns a reader of it that fails past maxBytes should the file grow
// while it is read.
func openBounded(path, what, plural string, maxBytes int64) (*boundedFile, error) {
	f, err := openInput(path, what, plural, maxBytes, false)
	if err != nil {
		return nil, err
	}
	return &boundedFile{boundedReader: boundedReader{r: f, left: maxBytes, max: maxBytes}, f: f}, nil
}

// boundedFile is an open input file read through a boundedReader.
type boundedFile struct {
	boundedReader
	f *os.File
}

// Close closes the file.
func (b *boundedFile) Close() error { return b.f.Close() }

// Stat describes the file (see os.File.Stat): the include-cycle check of
// slurm.conf tells files apart by it.
func (b *boundedFile) Stat() (fs.FileInfo, error) { return b.f.Stat() }

// formatBytes writes n in the largest binary unit that keeps it at least 1,
// with one decimal ("64 MiB", "1.5 GiB").
func formatBytes(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), units[u])
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

// boundedReader reads at most max bytes of r and fails past them, so that
// a file that grows while it is read (or lies about its size) is never
// read without end.
type boundedReader struct {
	r         io.Reader
	left, max int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("the file grew past %s while it was read", formatBytes(b.max))
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// lineReader reads the physical lines of an input, keeping at most max
// bytes of each: a longer line is read to its end without being kept, and
// reported by its length. It is the line reader of slurm.conf and of the
// association and QOS dumps.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
	// n is the physical line number of the last line next returned.
	n int
	// newline reports whether that line ended with '\n'.
	newline bool
}

func newLineReader(r io.Reader, max int) *lineReader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 64<<10 {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &lineReader{br: br, max: max}
}

// next returns the next line without its "\n" (a "\r" before it is kept)
// and its whole length. When that length is more than max, line holds
// only its first max bytes. The last line of an input need not end with a
// newline (see newline). At the end of the input next returns io.EOF; a
// read error ends the input too, and is returned with whatever of the
// line was read.
func (r *lineReader) next() (line []byte, length int, err error) {
	r.buf = r.buf[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		length += len(frag)
		if room := r.max - len(r.buf); room > 0 {
			r.buf = append(r.buf, frag[:min(room, len(frag))]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == nil:
			r.n++
			r.newline = true
			length--
			if len(r.buf) > length {
				r.buf = r.buf[:length]
			}
			return r.buf, length, nil
		case err == io.EOF && length > 0:
			r.n++
			r.newline = false
			return r.buf, length, nil
		case err == io.EOF:
			return nil, 0, io.EOF
		default:
			if length > 0 {
				r.n++
			}
			return r.buf, length, err
		}
	}
}

// tooLong is the error of a line over the lineReader's bound.
func tooLong(length, max int) error {
	return fmt.Errorf("line of %d bytes, longer than the %s a line may have: skipped", length, formatBytes(int64(max)))
}

// noFinalNewline is the warning for an input whose last line, line, does
// not end with a newline: sacct and sacctmgr end every line with one, so
// the file is most likely a copy cut short.
func noFinalNewline(file string, line int, tool string) string {
	return fmt.Sprintf("%s:%d: the file ends without a newline, which %s always prints: the last line may be cut (a truncated copy?)", file, line, tool)
}

// trimCR drops the "\r" of a "\r\n" line end.
func trimCR(b []byte) []byte { return bytes.TrimSuffix(b, []byte{'\r'}) }

// OpenSacctStream opens a sacct file as OpenSacctFile does. When it is a
// named pipe and stall is positive, opening it waits at most stall for a
// writer, and each read at most stall for data: a writer that never
// starts, or stops writing without closing the pipe, fails the read with
// an error naming the file and the time waited (wrapping
// os.ErrDeadlineExceeded) instead of hanging the run. A regular file is
// returned as OpenSacctFile returns it: reading a file does not stall.
func OpenSacctStream(path string, stall time.Duration) (io.ReadCloser, error) {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&fs.ModeNamedPipe == 0 || stall <= 0 {
		return OpenSacctFile(path)
	}
	f, err := openPipe(path, stall)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = checkInput(path, "sacct file", "sacct files", fi, 0, true)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.Mode()&fs.ModeNamedPipe == 0 {
		return f, nil // replaced by a regular file in between
	}
	return &stallReader{f: f, path: path, stall: stall}, nil
}

// openPipe opens the named pipe path for reading, waiting at most stall
// for a writer (open(2) of a pipe blocks until one comes). When none
// comes, it opens the pipe's writing end itself, without blocking, to
// release the waiting open, and closes both ends.
func openPipe(path string, stall time.Duration) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	timer := time.NewTimer(stall)
	defer timer.Stop()
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, fmt.Errorf("read sacct file: %w", o.err)
		}
		return o.f, nil
	case <-timer.C:
	}
	if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
	select {
	case o := <-ch:
		if o.f != nil {
			o.f.Close()
		}
	case <-time.After(time.Second):
		// The open stays blocked (the pipe was replaced?): leave it to
		// its goroutine, which closes nothing it never got.
	}
	return nil, fmt.Errorf("sacct file %s: no writer opened the named pipe in %s (did the sacct feeding it start?): see --input-timeout", path, stall)
}

// stallReader reads a named pipe, failing a read that gets no data for
// stall (see OpenSacctStream).
type stallReader struct {
	f     *os.File
	path  string
	stall time.Duration
}

func (r *stallReader) Read(p []byte) (int, error) {
	if err := r.f.SetReadDeadline(time.Now().Add(r.stall)); err != nil {
		// Not pollable: read without a deadline, as before.
		return r.f.Read(p)
	}
	n, err := r.f.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return n, fmt.Errorf("sacct file %s: the named pipe gave no data for %s (its writer stalled?): see --input-timeout: %w", r.path, r.stall, err)
	}
	return n, err
}

// Close closes the pipe.
func (r *stallReader) Close() error { return r.f.Close() }
