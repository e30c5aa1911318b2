// Package benchtest is support for benchmarks shared by several packages.
package benchtest

import (
	"syscall"
	"time"
)

// CPUTime is the user and system CPU time the process has used, garbage
// collection and every goroutine included; 0 when the system does not say.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
