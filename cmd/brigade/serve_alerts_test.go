package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The alerts example's table and alerts.csv are what docs/serving.md
// shows under "Golden signals and alerts".
func TestServeAlertsExampleMatchesDocs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := serve(t, "../../examples/serving/alerts.yaml", "--out", out, "--quiet", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	doc, err := os.ReadFile("../../docs/serving.md")
	if err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(out, "alerts.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var onAlert []string
	for _, l := range strings.Split(string(csv), "\n") {
		if strings.HasPrefix(l, "on-alert,") {
			onAlert = append(onAlert, l)
		}
	}
	for _, want := range []string{stdout, strings.Join(onAlert, "\n")} {
		if len(onAlert) == 0 || !strings.Contains(string(doc), want) {
			t.Fatalf("docs/serving.md does not show the alerts example's output; update it with 'go run ./cmd/brigade serve examples/serving/alerts.yaml --no-plots':\n%s", want)
		}
	}
}
