package sim_test

// The scenario harness's argument parsing: each command's KEY=VALUE
// arguments, read with located errors (datadriven_test.go has the
// harness and its commands).

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/sim"
	"github.com/cockroachdb/datadriven"
)

// lines parses d's input lines, each as a name followed by arguments.
func lines(d *datadriven.TestData) ([]parsedLine, error) {
	var out []parsedLine
	for k, l := range strings.Split(d.Input, "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		name, args, err := datadriven.ParseLine(l)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", at(d, k), err)
		}
		out = append(out, parsedLine{pos: at(d, k), name: name, args: args})
	}
	return out, nil
}

type parsedLine struct {
	pos  string
	name string
	args []datadriven.CmdArg
}

// argParser reads one line's key=value arguments, each at most once, and
// reports unknown keys.
type argParser struct {
	pos  string
	args []datadriven.CmdArg
	used []bool
	err  error
}

func newArgs(pos string, args []datadriven.CmdArg) *argParser {
	return &argParser{pos: pos, args: args, used: make([]bool, len(args))}
}

func (p *argParser) fail(field, format string, a ...any) {
	if p.err == nil {
		p.err = fieldError(p.pos, field, format, a...)
	}
}

// vals returns key's values and whether it is there.
func (p *argParser) vals(key string) ([]string, bool) {
	var out []string
	found := false
	for k, a := range p.args {
		if a.Key != key {
			continue
		}
		if found {
			p.fail(key, "given twice")
		}
		found, p.used[k], out = true, true, a.Vals
	}
	return out, found
}

// one returns key's single value.
func (p *argParser) one(key string) (string, bool) {
	v, ok := p.vals(key)
	if ok && len(v) != 1 {
		p.fail(key, "want one value, got %d", len(v))
		return "", false
	}
	if !ok {
		return "", false
	}
	return v[0], true
}

func (p *argParser) time(key string, dst *hwmodel.Time) bool {
	v, ok := p.one(key)
	if !ok {
		return false
	}
	t, err := hwmodel.ParseDuration(v)
	if err != nil || t < 0 {
		p.fail(key, "want a duration >= 0 such as 90s, 5m or 1h, got %q", v)
		return false
	}
	*dst = t
	return true
}

func (p *argParser) int(key string, lo, hi int, dst *int) bool {
	v, ok := p.one(key)
	if !ok {
		return false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		p.fail(key, "want an integer in %d..%d, got %q", lo, hi, v)
		return false
	}
	*dst = n
	return true
}

func (p *argParser) float(key string, lo, hi float64, dst *float64) bool {
	v, ok := p.one(key)
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= lo && f <= hi) {
		p.fail(key, "want a number in %g..%g, got %q", lo, hi, v)
		return false
	}
	*dst = f
	return true
}

// cores reads a CPU amount in cores (0.5 is 500 milli-CPU).
func (p *argParser) cores(key string, dst *int64) bool {
	var f float64
	if !p.float(key, 0, 1e9, &f) {
		return false
	}
	*dst = int64(math.Round(f * 1000))
	return true
}

// memory reads a size with its unit: MiB, GiB or TiB.
func (p *argParser) memory(key string, dst *int64) bool {
	v, ok := p.one(key)
	if !ok {
		return false
	}
	for _, u := range []struct {
		suffix string
		mib    float64
	}{{"MiB", 1}, {"GiB", 1 << 10}, {"TiB", 1 << 20}} {
		if num, found := strings.CutSuffix(v, u.suffix); found {
			f, err := strconv.ParseFloat(num, 64)
			if err == nil && f >= 0 && f*u.mib <= 1<<40 {
				*dst = int64(math.Round(f * u.mib))
				return true
			}
		}
	}
	p.fail(key, "want a size such as 512MiB, 64GiB or 1TiB, got %q", v)
	return false
}

func (p *argParser) checkpoint(key string, dst *sim.Checkpoint) bool {
	v, ok := p.vals(key)
	if !ok {
		return false
	}
	var c sim.Checkpoint
	if len(v) == 2 {
		var err1, err2 error
		c.Every, err1 = hwmodel.ParseDuration(v[0])
		c.Cost, err2 = hwmodel.ParseDuration(v[1])
		if err1 == nil && err2 == nil && c.Every > 0 && c.Cost >= 0 {
			*dst = c
			return true
		}
	}
	p.fail(key, "want (EVERY, COST), two durations with EVERY > 0, got %q", strings.Join(v, ", "))
	return false
}

// done reports an unknown key, or the first error.
func (p *argParser) done() error {
	if p.err != nil {
		return p.err
	}
	for k, a := range p.args {
		if !p.used[k] {
			return fieldError(p.pos, a.Key, "unknown argument")
		}
	}
	return nil
}
