package live

import (
	"time"

	"example.com/bad/policies"
	"example.com/plot"
	"example.com/unlisted/lib"
)

// Drive may read the clock: live is not in the core.
func Drive() { _ = time.Now(); policies.Decide(); plot.Draw(); lib.Use() }
