package slurmtime

import "testing"

func TestFormat(t *testing.T) {
	for sec, want := range map[int64]string{0: "00:00:00", 59: "00:00:59", 300: "00:05:00", 86399: "23:59:59",
		86400: "1-00:00:00", 302400: "3-12:00:00", 604800 + 3661: "7-01:01:01"} {
		if got := Format(sec); got != want {
			t.Errorf("Format(%d) = %q, want %q", sec, got, want)
		}
	}
}
