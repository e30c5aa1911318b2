package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rs/zerolog"
)

// Exit codes, documented in --help, docs/cli/fairledger.md and the README.
const (
	exitOK       = 0 // success
	exitError    = 1 // the command failed
	exitUsage    = 2 // bad command line
	exitRejected = 3 // finished, but some input rows were rejected
	exitMetrics  = 4 // nightly: the nights committed, but metrics_file was not written
	// A run stopped by a signal exits 128 + its number (interruptError).
)

const exitCodesHelp = `EXIT CODES:
   0  success
   1  error (bad input file, I/O error, ...)
   2  usage error (unknown flag or command, missing argument)
   3  finished, but some input rows were rejected (see the log and --rejects)
   4  nightly: the nights committed, but metrics_file could not be written
   130, 143  run stopped by SIGINT, SIGTERM (the history stays readable; the next run recomputes the night)`

// usageError marks command-line mistakes (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// errRejected is returned by commands that finished but rejected rows.
var errRejected = errors.New("some input rows were rejected")

// errMetrics is returned by nightly when its nights committed but the
// metrics file could not be written.
var errMetrics = errors.New("the nights committed, but the metrics file was not written")

// exitCode maps an error returned by a command to the process exit code and
// prints it, in the one place that decides both: a plain "fairledger: ..."
// line, or with jsonLog one JSON log line in the logger's shape
// ({"level":"error","exit_code":N,"time":...,"message":...}), so that a
// cron log of JSON lines stays parseable to its end.
func exitCode(err error, stderr io.Writer, jsonLog bool) int {
	if err == nil {
		return exitOK
	}
	code, msg := exitError, err.Error()
	var ue *usageError
	var ie *interruptError
	switch {
	case errors.Is(err, errRejected):
		return exitRejected // the summary and the log said it
	case errors.Is(err, errMetrics):
		code = exitMetrics
	case errors.As(err, &ue), isMissingFlag(err):
		code, msg = exitUsage, msg+" (see fairledger --help)"
	case errors.As(err, &ie):
		code = 128 + int(ie.sig)
	}
	if jsonLog {
		log := zerolog.New(stderr).With().Timestamp().Logger()
		log.Error().Int("exit_code", code).Msg(msg)
	} else {
		fmt.Fprintf(stderr, "fairledger: %s\n", msg)
	}
	return code
}

// isMissingFlag recognises urfave/cli's error for a required flag that was
// not given (it has no error type of its own): a usage error.
func isMissingFlag(err error) bool {
	m := err.Error()
	return strings.HasPrefix(m, "Required flag ") || strings.HasPrefix(m, "Required flags ")
}
