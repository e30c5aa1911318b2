package synth

import (
	"strconv"
	"time"
)

// Sentinels for the two spellings of an absent sacct time
// (docs/slurm-semantics.md §10): Unknown (value 0: not started yet, not ended yet, held) and None
// (NO_VAL: a job cancelled before it ever started).
const (
	timeUnknown int64 = -1 << 62
	timeNone    int64 = timeUnknown + 1
)

// appendMem appends a MiB count the way sacct prints mem in AllocTRES
// (convert_num_unit with CONVERT_NUM_UNIT_EXACT, docs/slurm-semantics.md §10 and
// §11.5): divide by 1024 while the value is at least 1024 and its integer
// part is a multiple of 512, then print an integer or two decimals followed
// by the unit: 16384 → 16G, 1536 → 1.50G, 4000 → 4000M, 0 → 0.
func appendMem(b []byte, mib int64) []byte {
	if mib == 0 {
		return append(b, '0')
	}
	const units = "MGTPE"
	v := float64(mib)
	i := 0
	for v >= 1024 && uint64(v)%512 == 0 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v == float64(uint64(v)) {
		b = strconv.AppendUint(b, uint64(v), 10)
	} else {
		b = strconv.AppendFloat(b, v, 'f', 2, 64)
	}
	return append(b, units[i])
}

// appendElapsed appends a duration in seconds as sacct's secs2time_str does
// (docs/slurm-semantics.md §11.5): HH:MM:SS below one day, D-HH:MM:SS from one day
// on, days unpadded: 3600 → 01:00:00, 90061 → 1-01:01:01.
func appendElapsed(b []byte, sec int64) []byte {
	if sec < 0 {
		sec = 0
	}
	days := sec / 86400
	sec %= 86400
	if days > 0 {
		b = strconv.AppendInt(b, days, 10)
		b = append(b, '-')
	}
	b = append2(b, int(sec/3600))
	b = append(b, ':')
	b = append2(b, int(sec/60%60))
	b = append(b, ':')
	return append2(b, int(sec%60))
}

// appendTime appends a sacct timestamp: Unknown, None, Unix seconds
// (SLURM_TIME_FORMAT=%s) or local time %FT%T in loc.
func appendTime(b []byte, sec int64, unix bool, loc *time.Location) []byte {
	switch {
	case sec == timeUnknown:
		return append(b, "Unknown"...)
	case sec == timeNone:
		return append(b, "None"...)
	case unix:
		return strconv.AppendInt(b, sec, 10)
	}
	t := time.Unix(sec, 0).In(loc)
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, '-')
	b = append2(b, int(mo))
	b = append(b, '-')
	b = append2(b, d)
	b = append(b, 'T')
	b = append2(b, h)
	b = append(b, ':')
	b = append2(b, mi)
	b = append(b, ':')
	return append2(b, s)
}

// append2 appends n (0 ≤ n) with at least two digits.
func append2(b []byte, n int) []byte {
	if n < 100 {
		return append(b, byte('0'+n/10), byte('0'+n%10))
	}
	return strconv.AppendInt(b, int64(n), 10)
}
