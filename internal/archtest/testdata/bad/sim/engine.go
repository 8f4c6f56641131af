// Package sim is the fixture's engine, with its package comment in the
// wrong file and no doc.go.
package sim

import (
	"example.com/bad/hwmodel"
	"example.com/bad/live"
	"example.com/plot"
)

// Run imports a driver, which the core never does, and a module the
// table allows only to live.
func Run() { live.Drive(); plot.Draw(); _, _ = hwmodel.Seeded(1) }
