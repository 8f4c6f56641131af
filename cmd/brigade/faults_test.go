package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimFaultFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--node-mtbf", "soon"}, "--node-mtbf"},
		{[]string{"sim", "--node-mtbf", "0"}, "--node-mtbf"},
		{[]string{"sim", "--node-mtbf", "30d", "--failure-dist", "gamma"}, "gamma"},
		{[]string{"sim", "--gpu-mtbf", "30d", "--failure-dist", "weibull", "--weibull-shape", "0"}, "shape"},
		{[]string{"sim", "--fail", "nowhere@1h+1m"}, "no node named"},
		{[]string{"sim", "--fail", "p100x8-0@1h"}, "TIME+REPAIR"},
		{[]string{"sim", "--retry", "sometimes"}, "--retry"},
		{[]string{"sim", "--max-retries", "-1"}, "--max-retries"},
		{[]string{"sim", "--checkpoint-cost", "10s"}, "--checkpoint-every"},
		{[]string{"sim", "--heartbeat-timeout", "0s"}, "--heartbeat-timeout"},
	} {
		if code, _, stderr := brigade(t, tc.args...); code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want a usage error about %s", tc.args, code, stderr, tc.want)
		}
	}
	if code, stdout, _ := brigade(t, "sim", "--help"); code != exitOK || !strings.Contains(stdout, "--node-mtbf") || !strings.Contains(stdout, "--fail dgx-h100-007@3h+30m") {
		t.Errorf("--help does not show the fault flags and an example:\n%s", stdout)
	}
}

// TestSimFaults: named failures, a failure trace and random failures reach
// the summary and the table.
func TestSimFaults(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "faults.csv")
	os.WriteFile(trace, []byte("time_s,node,gpu,duration_s\n7200,dgx-h100-001,,3600\n9000,dgx-h100-002,3,600\n"), 0o644)
	code, stdout, stderr := brigade(t, "sim", "--synthetic", "300", "--policy", "fcfs", "--quiet", "--out", filepath.Join(dir, "out"),
		"--fail", "dgx-h100-000@1h+30m", "--fail-trace", trace, "--node-mtbf", "20d", "--checkpoint-every", "5m", "--checkpoint-cost", "10s",
		"--retry", "fixed", "--max-retries", "5", "--restart-time", "2m")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "goodput") || !strings.Contains(stdout, "lost") {
		t.Errorf("table without fault columns:\n%s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s []struct {
		Faults struct {
			Count int `json:"count"`
		} `json:"faults"`
		Goodput float64 `json:"goodput"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s[0].Faults.Count < 3 || !(s[0].Goodput > 0 && s[0].Goodput < 1) {
		t.Errorf("summary %+v: want at least the 3 named failures and goodput in (0, 1)", s)
	}
}
