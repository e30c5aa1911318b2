package ingest

import (
	"errors"
	"io"
	"testing"
)

// A sacct path that is a directory is refused before it is read; the error
// names the file once.
func TestSacctDirectoryNamedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, c, err := OpenSacct(dir, SacctOptions{})
	if err == nil {
		c.Close()
		_ = r
		t.Fatal("OpenSacct(directory) succeeded")
	}
	if got, want := err.Error(), "sacct file "+dir+" is a directory, not a regular file or a named pipe"; got != want {
		t.Errorf("OpenSacct(directory) = %q, want %q", got, want)
	}
}

// Errors that do not name the file get the "read <name>" context.
func TestReadErrorAddsName(t *testing.T) {
	t.Parallel()
	err := readError("sacct.txt", io.ErrUnexpectedEOF)
	if got, want := err.Error(), "read sacct.txt: unexpected EOF"; got != want {
		t.Errorf("readError = %q, want %q", got, want)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("readError lost the wrapped error")
	}
}
