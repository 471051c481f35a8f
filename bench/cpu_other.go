//go:build !unix

package bench

import "time"

// processCPU is not measured where getrusage does not exist (Windows): the
// load report's CPU per call is then zero.
func processCPU() time.Duration { return 0 }
