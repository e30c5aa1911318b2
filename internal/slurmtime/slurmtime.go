// Package slurmtime prints durations as Slurm prints its time strings.
package slurmtime

import "fmt"

// Format prints seconds as Slurm prints a time string
// (secs2time_str, src/common/parse_time.c): [days-]hh:mm:ss.
func Format(sec int64) string {
	d, h, m, s := sec/86400, sec/3600%24, sec/60%60, sec%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}
