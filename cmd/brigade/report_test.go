package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brigadesim/brigade/report"
)

// simDir runs a small synthetic comparison into a fresh folder.
func simDir(t *testing.T, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"sim", "--quiet", "--synthetic", "300", "--policy", "fcfs,sjf", "--out", dir}, extra...)
	if code, _, stderr := brigade(t, args...); code != exitOK {
		t.Fatalf("sim exit %d: %s", code, stderr)
	}
	return dir
}

// TestSimPlots: sim draws every figure as PNG and SVG, the same bytes on a
// second run; --no-plots draws none.
func TestSimPlots(t *testing.T) {
	a, b := simDir(t), simDir(t)
	for _, name := range report.FigureNames {
		for _, ext := range []string{".png", ".svg"} {
			x, err := os.ReadFile(filepath.Join(a, "plots", name+ext))
			if err != nil {
				t.Fatal(err)
			}
			y, err := os.ReadFile(filepath.Join(b, "plots", name+ext))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(x, y) {
				t.Errorf("plots/%s%s differs between two runs of the same inputs", name, ext)
			}
		}
	}
	c := simDir(t, "--no-plots")
	if _, err := os.Stat(filepath.Join(c, "plots")); !os.IsNotExist(err) {
		t.Errorf("--no-plots still made plots/ (%v)", err)
	}
}

func TestReportAndCompare(t *testing.T) {
	a := simDir(t, "--no-plots")
	b := simDir(t, "--no-plots", "--backfill")
	// fcfs,sjf against fcfs+bf,sjf+bf: paired in order
	code, _, stderr := brigade(t, "report", "--quiet", a)
	if code != exitOK {
		t.Fatalf("report exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(filepath.Join(a, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(page, []byte("<svg")); n != len(report.FigureNames) {
		t.Errorf("report.html has %d inline SVGs, want %d", n, len(report.FigureNames))
	}
	if !bytes.Contains(page, []byte("@font-face")) {
		t.Error("report.html's SVGs do not embed their fonts")
	}

	html := filepath.Join(t.TempDir(), "cmp.html")
	code, stdout, stderr := brigade(t, "compare", "--html", html, a, b)
	if code != exitOK {
		t.Fatalf("compare exit %d: %s", code, stderr)
	}
	for _, want := range []string{"A: " + a, "B: " + b, "fcfs→fcfs+bf", "sjf→sjf+bf", "wait_s.mean", "large moves over", "paired in the order"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(html); err != nil {
		t.Error(err)
	}
	code, stdout, _ = brigade(t, "compare", a, a)
	if code != exitOK || !strings.Contains(stdout, "\n0 large moves") {
		t.Errorf("a run compared with itself: exit %d, output:\n%s", code, stdout)
	}

	for _, args := range [][]string{{"compare", a}, {"report"}, {"report", a, b}, {"compare", "--threshold", "-1", a, b}} {
		if code, _, _ := brigade(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _, _ := brigade(t, "report", t.TempDir()); code != exitError {
		t.Errorf("report of a folder without summary.json: exit %d, want %d", code, exitError)
	}
	for _, cmd := range []string{"report", "compare"} {
		code, stdout, _ := brigade(t, cmd, "--help")
		if code != exitOK || !strings.Contains(stdout, "Examples:") {
			t.Errorf("%s --help: exit %d:\n%s", cmd, code, stdout)
		}
	}
}

// TestReportBrowser renders report.html in a real headless chromium and
// checks that every plot is there with a visible size; it saves a
// screenshot into $BRIGADE_ARTIFACTS (default: the test's temp folder).
// It runs only with BRIGADE_BROWSER=1 (.ci/run sets it), so go test passes
// on a machine without chromium.
func TestReportBrowser(t *testing.T) {
	if os.Getenv("BRIGADE_BROWSER") != "1" {
		t.Skip("set BRIGADE_BROWSER=1 to render the report in headless chromium")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("BRIGADE_BROWSER=1 but no chromium: %v", err)
	}
	dir := t.TempDir()
	if code, _, stderr := brigade(t, "sim", "--quiet", "--out", dir); code != exitOK {
		t.Fatalf("sim exit %d: %s", code, stderr)
	}
	if code, _, stderr := brigade(t, "report", "--quiet", dir); code != exitOK {
		t.Fatalf("report exit %d: %s", code, stderr)
	}
	abs, err := filepath.Abs(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	artefacts := os.Getenv("BRIGADE_ARTIFACTS")
	if artefacts == "" {
		artefacts = t.TempDir()
	}
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(artefacts, "report-screenshot.png")
	_ = os.Remove(shot)
	chromium := func(extra ...string) []byte {
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
			"--user-data-dir=" + t.TempDir(), "--window-size=1400,4000", "--virtual-time-budget=5000"}, extra...)
		cmd := exec.Command(bin, append(args, "file://"+abs)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("chromium %v: %v\n%s", extra, err, errb.String())
			}
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
			t.Fatalf("chromium %v did not finish in 2 minutes", extra)
		}
		return out.Bytes()
	}
	dom := chromium("--dump-dom")
	m := regexp.MustCompile(`data-plots="(\d+)" data-plots-visible="(\d+)"`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the rendered page lacks the plot check's marks (did its script run?); DOM starts:\n%.2000s", dom)
	}
	want := len(report.FigureNames)
	if string(m[1]) != itoa(want) || string(m[2]) != itoa(want) {
		t.Errorf("rendered page: %s plots, %s with a visible size; want %d and %d", m[1], m[2], want, want)
	}
	// At 1400 px the summary table fits the page, with no scroll bar.
	if !bytes.Contains(dom, []byte(`data-summary-fits="yes"`)) {
		t.Error(`rendered page at 1400 px: the summary table does not fit (want data-summary-fits="yes" on <body>)`)
	}
	chromium("--screenshot=" + shot)
	b, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) || len(b) < 10000 {
		t.Fatalf("no screenshot at %s (%d bytes, %v)", shot, len(b), err)
	}
	t.Logf("screenshot of the report: %s", shot)
}

func itoa(n int) string { return strconv.Itoa(n) }
