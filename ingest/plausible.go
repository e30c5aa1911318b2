package ingest

import (
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// The checks here keep out of the history values that a Parquet reader
// rejects (text that is not UTF-8) and times no Slurm cluster can have
// produced. They are the same for every input and for check and run.

// EarliestUnix is the earliest time a Slurm record can hold,
// 2002-01-01T00:00:00Z in Unix seconds: Slurm's development began in 2002,
// so a job time before that is a corrupt or hand-edited value (a start in
// 1970 is a 0 or a negative number printed as a date), not a job to charge.
const EarliestUnix int64 = 1009843200

// ClockSkew is how far after the moment of a run a job time may lie and
// still be taken as the clocks of the Slurm controller and of the host
// running fairledger disagreeing a little; anything later is a time that
// has not happened yet.
const ClockSkew = 5 * time.Minute

// errNotUTF8 rejects a value whose bytes are not UTF-8 text.
var errNotUTF8 = errors.New("not valid UTF-8 (a name in another encoding, e.g. Latin-1: convert the file with iconv -f LATIN1 -t UTF-8)")

// checkText returns a *ParseError for value v of field when v is not
// valid UTF-8, nil otherwise.
func checkText(file string, line int, field, v string) *ParseError {
	if utf8.ValidString(v) {
		return nil
	}
	return &ParseError{File: file, Line: line, Field: field, Value: v, Err: errNotUTF8}
}

// checkFileName refuses an input whose name is not valid UTF-8: the name
// is kept with every row (source_file) and the history holds only text a
// Parquet reader accepts.
func checkFileName(name string) error {
	if utf8.ValidString(name) {
		return nil
	}
	return &ParseError{File: strconv.Quote(name), Err: errors.New("the file name is not valid UTF-8: rename the file (its name is kept with every row)")}
}

// TimeBounds are the times a job record may hold, in Unix seconds,
// inclusive. A zero bound is EarliestUnix for Min and no bound for Max.
type TimeBounds struct {
	Min, Max int64
}

// min is the lower bound in force.
func (b TimeBounds) min() int64 {
	if b.Min != 0 {
		return b.Min
	}
	return EarliestUnix
}

// check returns why t is not a plausible job time, or nil.
func (b TimeBounds) check(t int64) error {
	switch {
	case t < b.min():
		return fmt.Errorf("before %s: Slurm did not exist then (a corrupt or zero time?)",
			time.Unix(b.min(), 0).UTC().Format(time.DateOnly))
	case b.Max != 0 && t > b.Max:
		return fmt.Errorf("after the moment of the run (%s): a time that has not happened yet (a wrong clock or a corrupt record?)",
			time.Unix(b.Max-int64(ClockSkew/time.Second), 0).UTC().Format(time.RFC3339))
	}
	return nil
}

// RunBounds are the time bounds of a run or check at now: from
// EarliestUnix to now plus ClockSkew.
func RunBounds(now time.Time) TimeBounds {
	return TimeBounds{Min: EarliestUnix, Max: now.Add(ClockSkew).Unix()}
}
