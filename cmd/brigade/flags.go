package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/spf13/pflag"
)

// flagSet is a command's flags plus the text its --help prints.
type flagSet struct {
	*pflag.FlagSet
	usage, examples string
	// grammar, when set, is printed after the flags (the policy spec
	// grammar of commands that take specs).
	grammar string
}

func newFlagSet(name, usage, examples string) *flagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by mainWithArgs
	fs.Usage = func() {}
	fs.SortFlags = false
	return &flagSet{FlagSet: fs, usage: usage, examples: examples}
}

// printHelp writes the command's --help text.
func (fs *flagSet) printHelp(w io.Writer) {
	fmt.Fprintf(w, "%s\n\nFlags:\n%s\n", fs.usage, fs.FlagUsages())
	if fs.grammar != "" {
		fmt.Fprintf(w, "%s\n", fs.grammar)
	}
	fmt.Fprintf(w, "Examples:\n%s", fs.examples)
}

// parse reads args; on --help it prints the usage to stdout and returns
// pflag.ErrHelp. An unknown flag's error suggests the nearest known one.
func (fs *flagSet) parse(args []string, stdout io.Writer) error {
	if err := fs.parseFlags(args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// parseFlags is parse for commands that take arguments besides flags.
func (fs *flagSet) parseFlags(args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pflag.ErrHelp):
		fs.printHelp(stdout)
		return err
	}
	return usageError{fs.withSuggestion(err)}
}

// withSuggestion adds "did you mean --x?" to an unknown-flag error when a
// flag of the set is within a small edit distance of the one given.
func (fs *flagSet) withSuggestion(err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if s := nearest(name, names); s != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, s)
	}
	return err
}

// nearest is the candidate closest to s by hwmodel.EditDistance, if it is
// close enough to be a slip (at most 2 edits, and fewer than half of s),
// or "" (ties: the first in candidates).
func nearest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		d := hwmodel.EditDistance(s, c)
		if strings.HasPrefix(c, s) && len(s) >= 3 {
			d = min(d, 1) // a prefix of a flag is a good guess too
		}
		if d < bestD && 2*d < max(len(s), 2) {
			best, bestD = c, d
		}
	}
	return best
}

// durationRule says which durations a flag accepts.
type durationRule int

const (
	nonNegative durationRule = iota // 0 and up
	positive                        // above 0
)

// durationValue is a duration flag read by hwmodel.ParseDuration ("90s",
// "2h", "7d", plain seconds) into a hwmodel.Time. Every duration flag of
// every command is one, so that --help shows them all as "duration".
type durationValue struct {
	t    *hwmodel.Time
	text string
	rule durationRule
}

func (d *durationValue) Set(s string) error {
	t, err := hwmodel.ParseDuration(s)
	if err != nil {
		return err
	}
	switch {
	case d.rule == positive && t <= 0:
		return fmt.Errorf("want a positive duration such as 30s or 2h, got %q", s)
	case t < 0:
		return fmt.Errorf("want a duration >= 0 such as 30s or 2h, got %q", s)
	}
	*d.t, d.text = t, s
	return nil
}

func (d *durationValue) Type() string { return "duration" }

func (d *durationValue) String() string {
	if d.text == "" {
		return "0"
	}
	return d.text
}

// duration defines a duration flag filling t. def is its default as the
// user would write it; "" leaves t 0 (the flag unset: "none" or "pick one
// for me", as the usage says), and a positive flag then still refuses an
// explicit 0.
func (fs *flagSet) duration(t *hwmodel.Time, name, def string, rule durationRule, usage string) {
	v := &durationValue{t: t, rule: rule}
	if def != "" {
		if err := v.Set(def); err != nil {
			panic(fmt.Sprintf("flag --%s: default %q: %v", name, def, err))
		}
	}
	fs.Var(v, name, usage)
}

// wallDuration is a duration flag filling a time.Duration (live mode's
// wall-clock settings), read and shown like durationValue.
type wallDuration struct {
	d *time.Duration
	durationValue
	t hwmodel.Time
}

func (w *wallDuration) Set(s string) error {
	if err := w.durationValue.Set(s); err != nil {
		return err
	}
	*w.d = time.Duration(w.t) * time.Microsecond
	return nil
}

// wallDurationFlag defines a wall-clock duration flag with default def.
func (fs *flagSet) wallDuration(d *time.Duration, name string, def time.Duration, rule durationRule, usage string) {
	w := &wallDuration{d: d}
	w.durationValue = durationValue{t: &w.t, rule: rule}
	if err := w.Set(wallText(def)); err != nil {
		panic(fmt.Sprintf("flag --%s: default %v: %v", name, def, err))
	}
	fs.Var(w, name, usage)
}

// wallText writes d as a duration flag takes it: 1h, 10m, 5s, or plain
// seconds with a fraction.
func wallText(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%g", d.Seconds())
}
