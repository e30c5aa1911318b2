package ingest

import (
	"errors"
	"math"
	"strings"
)

// ErrUnlimited is returned by TimeStrToMins for "INFINITE", "UNLIMITED" and
// "-1", which Slurm's time_str2mins maps to its INFINITE sentinel rather
// than to a number. Callers decide whether an unlimited time makes sense
// for the setting they are reading; test for it with errors.Is.
var ErrUnlimited = errors.New("time is unlimited")

// tsMaxSecs is the largest time Slurm can represent: time_str2secs returns
// a C int.
const tsMaxSecs = math.MaxInt32

// TimeStrToMins converts a Slurm time string to whole minutes, the way
// Slurm's time_str2mins (src/common/parse_time.c) does for slurm.conf
// settings such as PriorityDecayHalfLife and PriorityMaxAge.
//
// Accepted forms: "min", "min:sec", "hr:min:sec", "days-hr",
// "days-hr:min" and "days-hr:min:sec" (a bare "days-" is read as whole
// days, as Slurm does). Seconds round up to the next whole minute, so
// "90:30" is 91. Fields are not range-checked against each other, again as
// in Slurm: "90:30" is 90 minutes 30 seconds and "0-48" is 48 hours.
//
// "INFINITE", "UNLIMITED" (any case) and "-1" return ErrUnlimited. Empty,
// negative, malformed strings and times above Slurm's limit of 2^31-1
// seconds return a descriptive error.
func TimeStrToMins(s string) (int64, error) {
	secs, err := tsToSecs(s)
	if err != nil {
		return 0, err
	}
	return (secs + 59) / 60, nil
}

// tsToSecs is time_str2secs: the time string in seconds, before rounding.
func tsToSecs(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("empty time string")
	}
	if s == "-1" || strings.EqualFold(s, "INFINITE") || strings.EqualFold(s, "UNLIMITED") {
		return 0, ErrUnlimited
	}
	if s[0] == '-' {
		return 0, errors.New("negative time")
	}
	var buf [4]int64
	fields, dash, err := tsSplit(s, buf[:0])
	if err != nil {
		return 0, err
	}
	var days, hrs, mins, secs int64
	switch {
	case dash:
		// days-[hr[:min[:sec]]]
		days = fields[0]
		if len(fields) > 1 {
			hrs = fields[1]
		}
		if len(fields) > 2 {
			mins = fields[2]
		}
		if len(fields) > 3 {
			secs = fields[3]
		}
	case len(fields) == 3:
		hrs, mins, secs = fields[0], fields[1], fields[2]
	case len(fields) == 2:
		mins, secs = fields[0], fields[1]
	default:
		mins = fields[0]
	}
	// Every field is at most tsMaxSecs (checked in tsSplit), so this sum
	// cannot overflow int64.
	total := days*86400 + hrs*3600 + mins*60 + secs
	if total > tsMaxSecs {
		return 0, errors.New("time out of range (more than 2147483647 seconds)")
	}
	return total, nil
}

// tsSplit validates s the way Slurm's _is_valid_timespec does (digits, at
// most one '-' before any ':', at most two ':', and a digit group on each
// side of every separator, except that "days-" may stand alone) and returns
// its numeric fields in order (appended to fields, which needs room for
// four) and whether a day part was present.
func tsSplit(s string, fields []int64) ([]int64, bool, error) {
	const bad = "not a Slurm time string (want min, min:sec, hr:min:sec, days-hr, days-hr:min or days-hr:min:sec)"
	dash := false
	colons := 0
	var cur int64
	inDigits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			cur = cur*10 + int64(c-'0')
			if cur > tsMaxSecs {
				return nil, false, errors.New("time out of range (more than 2147483647 seconds)")
			}
			inDigits = true
		case c == '-':
			if dash || colons > 0 || !inDigits {
				return nil, false, errors.New(bad)
			}
			dash = true
			fields = append(fields, cur)
			cur, inDigits = 0, false
		case c == ':':
			if !inDigits || colons == 2 {
				return nil, false, errors.New(bad)
			}
			colons++
			fields = append(fields, cur)
			cur, inDigits = 0, false
		default:
			return nil, false, errors.New(bad)
		}
	}
	if inDigits {
		fields = append(fields, cur)
	} else if !(dash && colons == 0 && s[len(s)-1] == '-') {
		// A trailing separator is only tolerated for "days-".
		return nil, false, errors.New(bad)
	}
	return fields, dash, nil
}
