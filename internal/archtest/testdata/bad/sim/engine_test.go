package sim

import (
	"testing"
	"time"
)

// Tests may read the clock: only the engine's own files are held to the
// core's bans.
func TestClock(t *testing.T) { _ = time.Now() }
