//go:build !unix

package runner

import "time"

// processUsage reports nothing where getrusage is missing.
func processUsage() (cpu time.Duration, peakRSS int64, ok bool) { return 0, 0, false }
