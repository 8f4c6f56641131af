package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProgressQuietOffTerminal: buffers, files and /dev/null are not
// terminals, so the bar prints nothing on them; --quiet silences it too.
func TestProgressQuietOffTerminal(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer pw.Close()
	var buf bytes.Buffer
	for name, w := range map[string]io.Writer{"buffer": &buf, "file": file, "devnull": null, "pipe": pw} {
		if isTerminal(w) {
			t.Errorf("%s: isTerminal = true", name)
		}
		p := newProgress(w, false, "x", "runs", 3)
		p.Add()
		p.Func()(2, 3)
		p.Set(3)
		p.Done()
	}
	if buf.Len() != 0 {
		t.Errorf("bar wrote %q to a buffer", buf.String())
	}
	if fi, _ := file.Stat(); fi.Size() != 0 {
		t.Errorf("bar wrote %d bytes to a file", fi.Size())
	}
	// --quiet wins even on a terminal.
	defer func(f func(io.Writer) bool) { terminal = f }(terminal)
	terminal = func(io.Writer) bool { return true }
	p := newProgress(&buf, true, "x", "runs", 3)
	p.Set(1)
	p.Done()
	if buf.Len() != 0 {
		t.Errorf("quiet bar wrote %q", buf.String())
	}
	// A run shorter than progressDelay draws nothing, not even its end.
	p = newProgress(&buf, false, "x", "runs", 2)
	start := p.start
	p.now = func() time.Time { return start.Add(progressDelay / 2) }
	p.Set(1)
	p.Set(2)
	p.Done()
	if buf.Len() != 0 {
		t.Errorf("a short run drew %q", buf.String())
	}
	var nilBar *progress
	nilBar.Set(1)
	nilBar.Done()
}

// TestProgressLine draws on a pretend terminal with a fake clock.
func TestProgressLine(t *testing.T) {
	defer func(f func(io.Writer) bool) { terminal = f }(terminal)
	terminal = func(io.Writer) bool { return true }
	var buf bytes.Buffer
	p := newProgress(&buf, false, "brigade sim", "policies", 4)
	t0 := p.start
	p.now = func() time.Time { return t0.Add(30 * time.Second) }
	p.Set(1)
	if got, want := buf.String(), "\rbrigade sim [######..................] 1/4 policies  ETA 1m30s\x1b[K"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	buf.Reset()
	p.now = func() time.Time { return t0.Add(30*time.Second + 50*time.Millisecond) }
	p.Set(2) // within 100ms of the last draw: skipped
	if buf.Len() != 0 {
		t.Errorf("redrew within 100ms: %q", buf.String())
	}
	p.now = func() time.Time { return t0.Add(2 * time.Minute) }
	p.Set(4)
	if !strings.Contains(buf.String(), "4/4 policies  took 2m00s") {
		t.Errorf("final line %q", buf.String())
	}
	buf.Reset()
	p.Done()
	if buf.String() != "\r\x1b[K" {
		t.Errorf("Done wrote %q", buf.String())
	}
	for d, want := range map[time.Duration]string{4 * time.Second: "4s", 65 * time.Second: "1m05s", 2*time.Hour + 3*time.Minute: "2h03m"} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestSimProgressChangesNoOutput: with the bar drawing (a pretend
// terminal), stdout and every results file are what they are without it,
// and with a file as stderr no bar is drawn.
func TestSimProgressChangesNoOutput(t *testing.T) {
	args := func(dir string) []string {
		return []string{"sim", "--synthetic", "150", "--policy", "fcfs,sjf,fair", "--out", dir}
	}
	a, b := t.TempDir(), t.TempDir()
	errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	var outA bytes.Buffer
	if code := mainWithArgs(args(a), &outA, errFile); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	logged, _ := os.ReadFile(errFile.Name())
	if bytes.ContainsAny(logged, "\r\x1b") {
		t.Errorf("a bar was drawn on a file: %q", logged)
	}

	defer func(f func(io.Writer) bool, d, r time.Duration) { terminal, progressDelay, progressRedraw = f, d, r }(terminal, progressDelay, progressRedraw)
	terminal, progressDelay, progressRedraw = func(io.Writer) bool { return true }, 0, 0
	var outB, errB bytes.Buffer
	if code := mainWithArgs(args(b), &outB, &errB); code != exitOK {
		t.Fatalf("exit %d: %s", code, errB.String())
	}
	// The bar counts jobs, so it moves within each policy's run, not once
	// per policy; then a second bar counts the files written.
	within := false
	for _, line := range strings.Split(errB.String(), "\r") {
		var done int
		if _, err := fmt.Sscanf(line[strings.Index(line, "] ")+2:], "%d/450 jobs", &done); err == nil && done%150 != 0 {
			within = true
		}
	}
	if !within || !strings.Contains(errB.String(), "450/450 jobs") {
		t.Errorf("no bar moving within a policy's run on a pretend terminal: %q", errB.String())
	}
	if !strings.Contains(errB.String(), "10/10 files") {
		t.Errorf("no bar while the results are written: %q", errB.String())
	}
	if outA.String() != outB.String() {
		t.Errorf("stdout differs with the bar on")
	}
	n := 0
	err = filepath.WalkDir(a, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "run.json" { // run.json records the command line, which names --out
			return err
		}
		rel, _ := filepath.Rel(a, path)
		x, _ := os.ReadFile(path)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs with the bar on (%v)", rel, err)
		}
		n++
		return nil
	})
	if err != nil || n < 3 {
		t.Errorf("compared %d files (%v)", n, err)
	}
}
