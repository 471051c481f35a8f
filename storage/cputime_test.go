package storage

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime reports the process's CPU time per operation next to ns/op: on a
// shared machine wall time also counts the time other processes ran.
func cpuTime(b *testing.B) func() {
	b.Helper()
	start := rusage()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(rusage()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func rusage() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
