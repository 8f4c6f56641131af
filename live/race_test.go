//go:build race

package live

// raceEnabled: the race detector slows the campaign's drivers about
// fivefold, so the default campaign is left to runs without it.
const raceEnabled = true
