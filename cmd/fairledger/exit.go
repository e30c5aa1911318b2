package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Exit codes, documented in --help and the README.
const (
	exitOK       = 0 // success
	exitError    = 1 // the command failed
	exitUsage    = 2 // bad command line
	exitRejected = 3 // finished, but some input rows were rejected
)

const exitCodesHelp = `EXIT CODES:
   0  success
   1  error (bad input file, I/O error, ...)
   2  usage error (unknown flag or command, missing argument)
   3  finished, but some input rows were rejected (see the log and --rejects)`

// usageError marks command-line mistakes (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// errRejected is returned by commands that finished but rejected rows.
var errRejected = errors.New("some input rows were rejected")

// exitCode maps an error returned by a command to the process exit code and
// prints it, in the one place that decides both.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	switch {
	case errors.Is(err, errRejected):
		return exitRejected
	case errors.As(err, &ue), isMissingFlag(err):
		fmt.Fprintf(stderr, "fairledger: %v (see fairledger --help)\n", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "fairledger: %v\n", err)
	return exitError
}

// isMissingFlag recognises urfave/cli's error for a required flag that was
// not given (it has no error type of its own): a usage error.
func isMissingFlag(err error) bool {
	m := err.Error()
	return strings.HasPrefix(m, "Required flag ") || strings.HasPrefix(m, "Required flags ")
}
