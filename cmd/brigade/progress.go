package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress draws a one-line bar with the time left on a terminal:
//
//	brigade sim  [##########..........]  3/6 policies  ETA 1m05s
//
// It writes only to stderr and only when stderr is a terminal (and the
// command was not given --quiet); otherwise every method does nothing, so
// no output file and no stdout can depend on it. The estimate is the
// elapsed time per finished unit times the units left; a bar redraws at
// most every 100ms, and runs shorter than 300ms draw nothing. Safe for concurrent use (runs finish on many
// goroutines).
//
// It is hand-written on purpose: a carriage return and a few characters
// are all it needs, and terminal detection needs no dependency (see
// isTerminal).
type progress struct {
	mu    sync.Mutex
	w     io.Writer // nil: off
	label string
	unit  string
	total int
	done  int
	start time.Time
	last  time.Time
	now   func() time.Time // the wall clock; tests replace it
	drawn bool
}

// newProgress returns a bar over total units on w, or a silent one when
// quiet is set, total < 1 or w is not a terminal.
func newProgress(w io.Writer, quiet bool, label, unit string, total int) *progress {
	p := &progress{label: label, unit: unit, total: total, now: time.Now}
	if !quiet && total > 0 && terminal(w) {
		p.w = w
	}
	p.start = p.now()
	return p
}

// terminal is isTerminal; tests replace it to draw on a buffer.
var terminal = isTerminal

// isTerminal tells whether w is a character device other than /dev/null,
// which is what a terminal looks like to Stat on every Unix (pipes,
// files and /dev/null are not terminals for this purpose). A Windows
// console also reports a character device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return os.Getenv("TERM") != "dumb"
}

// Set records that done of the total units are finished and redraws.
func (p *progress) Set(done int) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = min(max(done, p.done), p.total)
	p.draw()
}

// progressDelay is how long a bar waits before it first draws, so that
// runs shorter than that show no bar at all; tests set it to 0.
var progressDelay = 300 * time.Millisecond

// progressRedraw is the least time between two draws of a bar; tests set
// it to 0 to see every step.
var progressRedraw = 100 * time.Millisecond

// draw redraws the bar, not before progressDelay has passed, at most every
// progressRedraw but always at the end; p.mu is held.
func (p *progress) draw() {
	now := p.now()
	if !p.drawn && now.Sub(p.start) < progressDelay {
		return
	}
	if p.drawn && p.done < p.total && now.Sub(p.last) < progressRedraw {
		return
	}
	p.last = now
	p.drawn = true
	fmt.Fprintf(p.w, "\r%s\x1b[K", p.line(now))
}

// Add records one more finished unit.
func (p *progress) Add() {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = min(p.done+1, p.total)
	p.draw()
}

// Func returns Set as a callback of the shape runner.Spec, sweep and
// fill.Experiment take; the callback ignores total (the bar has its own).
func (p *progress) Func() func(done, total int) {
	return func(done, _ int) { p.Set(done) }
}

// Done clears the bar's line, so messages printed afterwards start clean.
func (p *progress) Done() {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

func (p *progress) line(now time.Time) string {
	const width = 24
	filled := width * p.done / p.total
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	eta := "ETA --"
	if p.done > 0 && p.done < p.total {
		left := now.Sub(p.start) * time.Duration(p.total-p.done) / time.Duration(p.done)
		eta = "ETA " + shortDuration(left)
	} else if p.done == p.total {
		eta = "took " + shortDuration(now.Sub(p.start))
	}
	return fmt.Sprintf("%s [%s] %d/%d %s  %s", p.label, bar, p.done, p.total, p.unit, eta)
}

// shortDuration rounds d for a human: 4s, 1m05s, 2h03m.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	default:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
}
