package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Value parsers for sacct fields. They work on []byte without allocating
// in the common case, because they run once per field of every row.

// jobKind classifies a sacct JobID.
type jobKind uint8

const (
	jobPlain        jobKind = iota // 123
	jobArrayTask                   // 123_4
	jobHetComponent                // 123+1
	jobStep                        // 123.batch, 123_4.0, 123+1.0, 123.0+1
	jobArrayPending                // 123_[1-3,9%2]
)

// jobID is a parsed sacct JobID.
type jobID struct {
	kind   jobKind
	id     int64 // the job number before any _ or +
	task   int64 // array task id or het offset
	hasNum bool
}

var (
	errJobIDSyntax = errors.New("not a Slurm job id (want 123, 123_4, 123+1, 123.batch or 123_[1-3])")
	errEmpty       = errors.New("empty")
	// errNeedJobIDRaw rejects an array task of a file without JobIDRaw.
	//lint:ignore ST1005 the message ends with the sacct command line to run, whose "..." stands for the other fields
	errNeedJobIDRaw = errors.New("an array task's own job id is only in JobIDRaw: dump with sacct -o JobIDRaw,...")
)

// parseJobID classifies and parses a JobID as sacct prints it (§10).
func parseJobID(b []byte) (jobID, error) {
	var j jobID
	if len(b) == 0 {
		return j, errEmpty
	}
	for _, c := range b {
		if c == '.' {
			j.kind = jobStep
			return j, nil
		}
	}
	n, i, ok := leadingInt(b)
	if !ok {
		return j, errJobIDSyntax
	}
	j.id = n
	j.hasNum = true
	if i == len(b) {
		j.kind = jobPlain
		return j, nil
	}
	switch b[i] {
	case '_':
		rest := b[i+1:]
		if len(rest) > 0 && rest[0] == '[' {
			if rest[len(rest)-1] != ']' {
				return j, errJobIDSyntax
			}
			j.kind = jobArrayPending
			return j, nil
		}
		t, k, ok := leadingInt(rest)
		if !ok || k != len(rest) {
			return j, errJobIDSyntax
		}
		j.kind, j.task = jobArrayTask, t
		return j, nil
	case '+':
		rest := b[i+1:]
		t, k, ok := leadingInt(rest)
		if !ok || k != len(rest) {
			return j, errJobIDSyntax
		}
		j.kind, j.task = jobHetComponent, t
		return j, nil
	}
	return j, errJobIDSyntax
}

// leadingInt parses the decimal digits at the start of b. It returns the
// value, the number of bytes consumed and whether there was at least one
// digit and no overflow.
func leadingInt(b []byte) (int64, int, bool) {
	var n int64
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		if n > (1<<62)/10 {
			return 0, i, false
		}
		n = n*10 + int64(b[i]-'0')
		i++
	}
	return n, i, i > 0
}

// parseInt parses a whole field as a non-negative decimal integer.
func parseInt(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, errEmpty
	}
	n, i, ok := leadingInt(b)
	if !ok || i != len(b) {
		return 0, errors.New("not a non-negative integer")
	}
	return n, nil
}

// timeKind says what a sacct time field held.
type timeKind uint8

const (
	timeSet     timeKind = iota
	timeUnknown          // "Unknown" (value 0) or empty
	timeNone             // "None" (NO_VAL: e.g. Start of a job cancelled before it started)
)

var errTimeSyntax = errors.New("not a time (want 2024-01-02T03:04:05, Unix seconds, Unknown or None)")

// localClock converts wall-clock times of one zone to Unix seconds. It
// caches the zone offset per local hour, because time.Date with a zone is
// too slow to call four times per row. Not safe for concurrent use: each
// parsing goroutine has its own.
//
// It also remembers the last two dates it parsed and the last hour's
// offset: the timestamps of a row, and of neighbouring rows, mostly share
// them (Submit and Start on one day, End on the next).
type localClock struct {
	loc   *time.Location
	utc   bool
	cache map[int64]int64 // naive hour (naive Unix/3600) → offset seconds

	dates   [2]civilDate // validated dates, dates[mru] the last one used
	mru     int
	hourOK  bool  // hour and hourOff hold a cached offset
	hour    int64 // naive hour of the last offset looked up
	hourOff int64 // its offset
}

// civilDate is a validated date as parseISO read it.
type civilDate struct {
	ok       bool
	text     uint64 // the first 8 bytes of "YYYY-MM-DD", little-endian
	text2    uint16 // its last 2 bytes
	y, mo, d int
	days     int64 // daysFromCivil(y, mo, d)
}

func newLocalClock(loc *time.Location) *localClock {
	if loc == nil {
		loc = time.UTC
	}
	return &localClock{loc: loc, utc: loc == time.UTC, cache: make(map[int64]int64)}
}

// parseTime parses a sacct timestamp: local %FT%T in the clock's zone, Unix
// seconds (SLURM_TIME_FORMAT=%s), Unknown, None, or empty (treated as
// Unknown).
func (c *localClock) parseTime(b []byte) (int64, timeKind, error) {
	switch len(b) {
	case 0:
		return 0, timeUnknown, nil
	case 4:
		if string(b) == "None" {
			return 0, timeNone, nil
		}
	case 7:
		if string(b) == "Unknown" {
			return 0, timeUnknown, nil
		}
	case 19:
		if b[4] == '-' && b[7] == '-' && (b[10] == 'T' || b[10] == ' ') && b[13] == ':' && b[16] == ':' {
			return c.parseISO(b)
		}
	}
	n, i, ok := leadingInt(b)
	if !ok || i != len(b) {
		return 0, timeUnknown, errTimeSyntax
	}
	if n == 0 {
		return 0, timeUnknown, nil
	}
	return n, timeSet, nil
}

func digits2(b []byte) (int, bool) {
	d0, d1 := b[0]-'0', b[1]-'0'
	if d0 > 9 || d1 > 9 {
		return 0, false
	}
	return int(d0)*10 + int(d1), true
}

// parseISO parses a timestamp of the form YYYY-MM-DDTHH:MM:SS (the
// separators already checked). When the date is one of the last two
// parsed, only the time of day is read.
func (c *localClock) parseISO(b []byte) (int64, timeKind, error) {
	_ = b[18]
	text, text2 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint16(b[8:])
	dt := &c.dates[c.mru]
	if !dt.ok || dt.text != text || dt.text2 != text2 {
		dt = &c.dates[1-c.mru]
		if !dt.ok || dt.text != text || dt.text2 != text2 {
			return c.parseISOFull(b)
		}
		c.mru = 1 - c.mru
	}
	h, mi, s, ok := clockDigits(b[11:19])
	if !ok {
		return 0, timeUnknown, errTimeSyntax
	}
	switch {
	case h > 23:
		return 0, timeUnknown, errors.New("hour out of range")
	case mi > 59:
		return 0, timeUnknown, errors.New("minute out of range")
	case s > 60:
		return 0, timeUnknown, errors.New("second out of range")
	}
	return c.toUnix(dt.days*86400+int64(h*3600+mi*60+s), dt.y, dt.mo, dt.d, h)
}

// parseISOFull is parseISO for a date not seen lately: it checks and
// converts the whole timestamp and remembers the date, if it is valid, in
// place of the one used less recently.
func (c *localClock) parseISOFull(b []byte) (int64, timeKind, error) {
	y1, ok1 := digits2(b[0:2])
	y2, ok2 := digits2(b[2:4])
	mo, ok3 := digits2(b[5:7])
	d, ok4 := digits2(b[8:10])
	h, ok5 := digits2(b[11:13])
	mi, ok6 := digits2(b[14:16])
	s, ok7 := digits2(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		return 0, timeUnknown, errTimeSyntax
	}
	y := y1*100 + y2
	switch {
	case mo < 1 || mo > 12:
		return 0, timeUnknown, errors.New("month out of range")
	case d < 1 || d > daysIn(y, mo):
		return 0, timeUnknown, errors.New("day out of range")
	}
	days := daysFromCivil(y, mo, d)
	c.mru = 1 - c.mru
	c.dates[c.mru] = civilDate{ok: true, text: binary.LittleEndian.Uint64(b), text2: binary.LittleEndian.Uint16(b[8:]), y: y, mo: mo, d: d, days: days}
	switch {
	case h > 23:
		return 0, timeUnknown, errors.New("hour out of range")
	case mi > 59:
		return 0, timeUnknown, errors.New("minute out of range")
	case s > 60:
		return 0, timeUnknown, errors.New("second out of range")
	}
	return c.toUnix(days*86400+int64(h*3600+mi*60+s), y, mo, d, h)
}

// toUnix converts naive seconds (the wall-clock time y-mo-d h:..:.. read
// as if in UTC) to Unix seconds in the clock's zone.
func (c *localClock) toUnix(naive int64, y, mo, d, h int) (int64, timeKind, error) {
	if c.utc {
		return naive, timeSet, nil
	}
	hour := naive / 3600
	if c.hourOK && hour == c.hour {
		return naive - c.hourOff, timeSet, nil
	}
	off, ok := c.cache[hour]
	if !ok {
		t := time.Date(y, time.Month(mo), d, h, 0, 0, 0, c.loc)
		off = hour*3600 - t.Unix()
		if len(c.cache) > 1<<16 {
			clear(c.cache)
		}
		c.cache[hour] = off
	}
	c.hourOK, c.hour, c.hourOff = true, hour, off
	return naive - off, timeSet, nil
}

// readings returns the two instants the local time of u reads as when that
// time came twice (a clock set back, as at the end of summer time): early
// is its first pass, late its second, one of them u. Otherwise both are u.
// It is called only for rows whose times disagree (see resolveFold), not
// per row.
func (c *localClock) readings(u int64) (early, late int64) {
	if c.utc {
		return u, u
	}
	t := time.Unix(u, 0).In(c.loc)
	_, off := t.Zone()
	naive := u + int64(off)
	from, to := t.ZoneBounds()
	if !to.IsZero() {
		// The next zone sets the clock back: its first minutes repeat
		// the wall clock of this zone's last ones.
		if _, off2 := to.Zone(); off2 < off {
			if alt := naive - int64(off2); alt >= to.Unix() {
				return u, alt
			}
		}
	}
	if !from.IsZero() {
		if _, off0 := from.Add(-time.Second).Zone(); off0 > off {
			if alt := naive - int64(off0); alt < from.Unix() {
				return alt, u
			}
		}
	}
	return u, u
}

// daysFromCivil returns the number of days since 1970-01-01 of a proleptic
// Gregorian date (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

var errDurationSyntax = errors.New("not a duration (want [D-]HH:MM:SS)")

// parseElapsed parses sacct's secs2time_str output: HH:MM:SS or D-HH:MM:SS
// (days unpadded), also MM:SS and MM:SS.mmm as sacct prints short CPU times
// (fractions are dropped). Hours must be below 24 and minutes and seconds
// below 60, as sacct never prints anything else.
func parseElapsed(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, errEmpty
	}
	if v, ok, err := parseHMS(b); ok {
		return v, err // the usual HH:MM:SS
	}
	var days int64
	for i, c := range b {
		if c == '-' {
			d, k, ok := leadingInt(b[:i])
			if !ok || k != i {
				return 0, errDurationSyntax
			}
			days = d
			b = b[i+1:]
			break
		}
	}
	if v, ok, err := parseHMS(b); ok {
		if err != nil {
			return 0, err
		}
		return days*86400 + v, nil
	}
	// Drop a fractional part on the seconds.
	for i, c := range b {
		if c == '.' {
			b = b[:i]
			break
		}
	}
	var parts [3]int64
	n := 0
	for len(b) > 0 {
		if n == 3 {
			return 0, errDurationSyntax
		}
		v, k, ok := leadingInt(b)
		if !ok {
			return 0, errDurationSyntax
		}
		parts[n] = v
		n++
		b = b[k:]
		if len(b) > 0 {
			if b[0] != ':' || len(b) == 1 {
				return 0, errDurationSyntax
			}
			b = b[1:]
		}
	}
	var h, m, s int64
	switch n {
	case 3:
		h, m, s = parts[0], parts[1], parts[2]
	case 2:
		m, s = parts[0], parts[1]
	default:
		return 0, errDurationSyntax
	}
	switch {
	case h > 23:
		return 0, errors.New("hour out of range")
	case m > 59:
		return 0, errors.New("minute out of range")
	case s > 59:
		return 0, errors.New("second out of range")
	}
	return days*86400 + h*3600 + m*60 + s, nil
}

// parseHMS parses b when it has the fixed layout HH:MM:SS (eight bytes,
// two digits in each part), in straight-line code. ok is false when b has
// another layout; otherwise the result is parseElapsed's, the range errors
// included (and then v is 0).
func parseHMS(b []byte) (v int64, ok bool, err error) {
	if len(b) != 8 || b[2] != ':' || b[5] != ':' {
		return 0, false, nil
	}
	h, m, s, ok := clockDigits(b)
	if !ok {
		return 0, false, nil
	}
	switch {
	case h > 23:
		return 0, true, errors.New("hour out of range")
	case m > 59:
		return 0, true, errors.New("minute out of range")
	case s > 59:
		return 0, true, errors.New("second out of range")
	}
	return int64(h*3600 + m*60 + s), true, nil
}

// clockDigits reads the two-digit hour, minute and second of b, which holds
// HH:MM:SS (the separators are not checked). The callers' ranges differ: a
// timestamp allows second 60, a duration does not.
//
// It works on the eight bytes as one word: each digit byte must be 0x30 to
// 0x39 (high nibble 3, low nibble plus 6 not carrying into bit 4), and ten
// times the word plus the word shifted down a byte leaves 10*tens+units in
// the first byte of each pair, no byte ever carrying into the next.
func clockDigits(b []byte) (h, m, s int, ok bool) {
	const (
		digitBytes = 0xffff00ffff00ffff // HH, MM and SS, not the ':'
		highNibble = 0xf0f000f0f000f0f0
		lowNibble  = 0x0f0f000f0f000f0f
	)
	w := binary.LittleEndian.Uint64(b) & digitBytes
	if w&highNibble != 0x3030003030003030 || (w&lowNibble+0x0606000606000606)&0x1010001010001010 != 0 {
		return 0, 0, 0, false
	}
	v := w & lowNibble
	t := v*10 + v>>8
	return int(t & 0xff), int(t >> 24 & 0xff), int(t >> 48 & 0xff), true
}

// isMemTRES reports whether a TRES counts memory in MiB and therefore takes
// unit suffixes relative to MiB (§10: mem, bb/*, gres/gpumem).
func isMemTRES(name []byte) bool {
	s := string(name) // no allocation: used in comparisons only
	return s == "mem" || s == "gres/gpumem" || len(s) > 3 && s[:3] == "bb/"
}

var errTRESValue = errors.New("not a TRES count")

// parseTRESValue parses one AllocTRES count. Memory-like TRES are returned in
// MiB (K divides by 1024, G multiplies, ...; "1.50G" = 1536); a unit on any
// other TRES multiplies by 1024 per step, as Slurm's convert_num_unit does
// for unit-less counts.
func parseTRESValue(name, v []byte) (float64, error) {
	if len(v) == 0 {
		return 0, errTRESValue
	}
	unit := 0 // power of 1024 relative to the base
	last := v[len(v)-1]
	hasUnit := true
	switch last | 0x20 {
	case 'k':
		unit = 1
	case 'm':
		unit = 2
	case 'g':
		unit = 3
	case 't':
		unit = 4
	case 'p':
		unit = 5
	default:
		hasUnit = false
	}
	num := v
	if hasUnit {
		num = v[:len(v)-1]
	}
	f, err := parseDecimal(num)
	if err != nil {
		return 0, errTRESValue
	}
	if !hasUnit {
		return f, nil
	}
	if isMemTRES(name) {
		unit -= 2 // the base unit is MiB
	}
	for ; unit > 0; unit-- {
		f *= 1024
	}
	for ; unit < 0; unit++ {
		f /= 1024
	}
	return f, nil
}

// MaxTRESCount bounds every count of a job's TRES lists (AllocTRES,
// ReqTRES, and AllocCPUS and NNodes, which stand in for the cpu and node
// TRES): a count, in the TRES's base unit (MiB for memory), must be below
// it. 2^40 is a hundred thousand times the cores and more than a hundred
// times the memory of the largest machine built, and decay's bound on a
// job's billing rate (maxRate): a count beyond it is a damaged row (Slurm's
// own counts are uint64, whose top values are INFINITE64 and NO_VAL64,
// never a job's allocation), not a job.
const MaxTRESCount = 1 << 40

// billingCount reads sacct's billing= count, given parseTRESValue's
// result for it. slurmctld stores a job's billing (a double) in a uint64
// (job_set_alloc_tres, src/slurmctld/job_mgr.c, 22.05–26.05); a negative
// billing (negative TRESBillingWeights) is undefined there in C, and on
// x86-64 keeps the two's-complement bits of its truncation. sacct prints
// the count as it comes (_print_tres_field →
// slurmdb_make_tres_string_from_simple, src/common/slurmdb_defs.c): −3.5
// as 18446744073709551613, −1.x as INFINITE64, which it prints "NONE";
// −2.x is NO_VAL64, which it leaves out, and (−1, 0) is 0, also left
// out. Those counts read back as the negative integer Slurm truncated the
// billing to (the jobs table's billing_slurm holds the same), so the row
// is not refused as damaged.
func billingCount(v []byte, val float64, err error) (float64, error) {
	if string(v) == "NONE" {
		return -1, nil
	}
	if u, perr := strconv.ParseUint(string(v), 10, 64); perr == nil && u >= 1<<63 {
		return float64(int64(u)), nil
	}
	return val, err
}

// checkCount rejects a TRES count of MaxTRESCount or more.
func checkCount(v float64) error {
	if v >= MaxTRESCount {
		return fmt.Errorf("a count of %v is 2^40 or more: no job holds that much; the row is damaged", v)
	}
	return nil
}

// parseDecimal parses a non-negative decimal number (digits with an optional
// fraction) exactly as strconv would, with a fast path for integers.
func parseDecimal(b []byte) (float64, error) {
	n, i, ok := leadingInt(b)
	if ok && i == len(b) && n < 1<<53 {
		return float64(n), nil
	}
	if len(b) == 0 || b[0] == '-' || b[0] == '+' {
		return 0, errTRESValue
	}
	for _, c := range b {
		if (c < '0' || c > '9') && c != '.' {
			return 0, errTRESValue
		}
	}
	return strconv.ParseFloat(string(b), 64)
}
