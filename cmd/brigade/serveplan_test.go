package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServePlanSmall(t *testing.T) {
	tmp := t.TempDir()
	const targets = "interactive.ttft_p99<=1s,interactive.e2e_p99<=20s,errors<=0.001"
	var tables, csvs []string
	for _, out := range []string{filepath.Join(tmp, "a"), filepath.Join(tmp, "b", "nested")} {
		code, stdout, stderr := serve(t, "testdata/serve-small.yaml", "--plan", targets, "--seeds", "1-2", "--out", out, "--quiet")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if stderr != "" {
			t.Errorf("--quiet printed %q", stderr)
		}
		if got := servedFiles(t, out); strings.Join(got, ",") != "plan.csv,plan.png" {
			t.Errorf("wrote %v", got)
		}
		csv, err := os.ReadFile(filepath.Join(out, "plan.csv"))
		if err != nil {
			t.Fatal(err)
		}
		tables, csvs = append(tables, stdout), append(csvs, string(csv))
	}
	if tables[0] != tables[1] || csvs[0] != csvs[1] {
		t.Fatalf("two runs differ:\n%s\n%s", tables[0], tables[1])
	}
	t.Log("\n" + tables[0])
	lines := strings.Split(strings.TrimSpace(tables[0]), "\n")
	if !strings.HasPrefix(lines[0], "service chat: ") || !strings.Contains(lines[0], "each on 2 seed(s); 2 GPUs of H100-80GB per replica") {
		t.Errorf("first line %q", lines[0])
	}
	head := strings.Fields(lines[1])
	want := []string{"replicas", "gpus", "gpu_h_per_h", "requests", "interactive.ttft_p99", "interactive.ttft_p99<=1s",
		"interactive.e2e_p99", "interactive.e2e_p99<=20s", "errors", "errors<=0.001", "all_pass", "chosen"}
	if strings.Join(head, " ") != strings.Join(want, " ") {
		t.Fatalf("header %q", lines[1])
	}
	answer := lines[len(lines)-1]
	var chosen []string
	for _, l := range lines[2 : len(lines)-1] {
		f := strings.Fields(l)
		if f[len(f)-1] == "*" {
			chosen = f
		}
	}
	if chosen == nil || chosen[len(chosen)-2] != "pass" {
		t.Fatalf("no passing row marked *:\n%s", tables[0])
	}
	n := chosen[0]
	if !strings.HasPrefix(answer, "smallest replica count meeting every target: "+n+" replicas of chat = "+chosen[1]+" GPUs of H100-80GB") {
		t.Errorf("answer %q, chosen row %v", answer, chosen)
	}
	// plan.csv holds the same rows, latencies in seconds.
	rows := strings.Split(strings.TrimSpace(csvs[0]), "\n")
	if rows[0] != strings.Join(want, ",") || len(rows) != len(lines)-2 {
		t.Fatalf("plan.csv:\n%s", csvs[0])
	}
	found := false
	for _, r := range rows[1:] {
		f := strings.Split(r, ",")
		if f[len(f)-1] == "*" {
			found = f[0] == n
		}
	}
	if !found {
		t.Errorf("plan.csv marks no row %s:\n%s", n, csvs[0])
	}
}

func TestServePlanErrors(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--plan", "ttft_p99<=soon"}, exitUsage, `--plan: target "ttft_p99<=soon": bound "soon" is not a duration`},
		{[]string{"--plan", "ttft_p99"}, exitUsage, `--plan: target "ttft_p99" has no comparison: want [CLASS.]METRIC<=VALUE`},
		{[]string{"--plan", "p99<=1s"}, exitUsage, `unknown metric "p99" (known: ttft_mean`},
		{[]string{"--plan", "chat.ttft_p99<=1s"}, exitError, `target chat.ttft_p99<=1s: service chat has no class "chat" (classes: interactive, batch-api)`},
		{[]string{"--plan", "ttft_p99<=1s", "--plan-service", "llm"}, exitError, `no service "llm" (services: chat)`},
		{[]string{"--plan", "ttft_p99<=1s", "--plan-max", "0"}, exitUsage, "--plan-max must be >= 1"},
		{[]string{"--plan", "ttft_p99<=1s", "--seeds", "3-1"}, exitUsage, "--seeds: want a range a-b with a <= b"},
		{[]string{"--plan-rate", "5"}, exitUsage, "--plan-rate is for planning: give --plan TARGETS too"},
		// Unreachable: the evidence is written, the error says why.
		{[]string{"--plan", "ttft_p99<=1ms", "--plan-max", "2"}, exitError, "no replica count in 1..2 meets every target; at 2 replicas (4 GPUs): ttft_p99<=1ms fails with ttft_p99 = "},
	}
	for _, tc := range cases {
		code, _, stderr := serve(t, append([]string{"testdata/serve-small.yaml", "--out", out, "--quiet"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
		if tc.code == exitUsage || strings.Contains(tc.want, "no class") {
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("%v: wrote %s", tc.args, out)
			}
		}
	}
}

// The capacity-planning table docs/serving.md shows is what the command
// it names prints.
func TestServePlanExampleMatchesDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("plans the example at 500 rps (12 runs of 2.7 M requests, about 20 s)")
	}
	code, stdout, stderr := serve(t, "../../examples/serving/burst.yaml", "--plan", "interactive.ttft_p99<=1s,interactive.e2e_p99<=20s,errors<=0.001",
		"--plan-rate", "500", "--out", filepath.Join(t.TempDir(), "out"), "--quiet", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	doc, err := os.ReadFile("../../docs/serving.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), stdout) {
		t.Fatalf("docs/serving.md does not show the plan's table; update it (and its reading) from the command in its Capacity planning section:\n%s", stdout)
	}
}
