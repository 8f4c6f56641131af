package main

import (
	"bufio"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/serving/iteration"
)

// brigade serve --calibrate fits the example's coefficients to BLIS's
// first 200 rate-14 requests, writes them in the format the experiment
// file reads, and refuses to overwrite a file.
func TestServeCalibrate(t *testing.T) {
	dir := t.TempDir()
	measured := filepath.Join(dir, "measured.csv")
	f, err := os.Open("../../serving/iteration/testdata/blis/r14_head.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var head []string
	sc := bufio.NewScanner(gz)
	for sc.Scan() && len(head) < 201 {
		head = append(head, sc.Text())
	}
	if err := os.WriteFile(measured, []byte(strings.Join(head, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fitted := filepath.Join(dir, "fitted.yaml")
	code, stdout, stderr := serve(t, "../../examples/serving/iteration.yaml", "--calibrate", measured, "--calibrate-out", fitted, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"TTFT p99", "E2E mean", "RMS relative error", "200 measured requests"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	c, err := iteration.ReadCoeffs(fitted)
	if err != nil {
		t.Fatal(err)
	}
	if c.Betas != 11 || c.Alpha[0] <= 0 {
		t.Errorf("fitted coefficients %v: want 11 betas and a queueing overhead", c)
	}
	code, _, stderr = serve(t, "../../examples/serving/iteration.yaml", "--calibrate", measured, "--calibrate-out", fitted, "--quiet")
	if code == exitOK || !strings.Contains(stderr, "exists") {
		t.Errorf("exit %d, %q: want a refusal to overwrite %s", code, stderr, fitted)
	}
	code, _, stderr = serve(t, "../../examples/serving/burst.yaml", "--calibrate", measured, "--quiet")
	if code == exitOK || !strings.Contains(stderr, "no replica.iteration section") {
		t.Errorf("exit %d, %q: want an error for a token-rate service", code, stderr)
	}
}
