package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func ftoa(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
func atof(s string) float64 { x, _ := strconv.ParseFloat(s, 64); return x }

func TestFidelityHandMadeFolders(t *testing.T) {
	root := t.TempDir()
	live, sim := filepath.Join(root, "live"), filepath.Join(root, "sim")
	jobsCSV(t, live, [][]string{
		{"fcfs", "a", "0", "1", "11", "10", "1", "1", "succeeded", "0"},
		{"fcfs", "b", "0", "2", "12", "10", "1", "1", "succeeded", "0"},
		{"fcfs", "c", "0", "3", "13", "10", "1", "1", "succeeded", "0"},
		{"fair", "a", "0", "0", "10", "10", "1", "1", "succeeded", "0"},
		{"fair", "b", "0", "0", "10", "10", "1", "1", "succeeded", "0"},
		{"fair", "c", "0", "0", "10", "10", "1", "1", "succeeded", "0"},
	})
	// Simulated: c starts before b under fcfs; sjf is only here.
	jobsCSV(t, sim, [][]string{
		{"fcfs", "a", "0", "0", "10", "10", "1", "1", "succeeded", "0"},
		{"fcfs", "b", "0", "4", "14", "10", "1", "1", "succeeded", "0"},
		{"fcfs", "c", "0", "2", "12", "10", "1", "1", "succeeded", "0"},
		{"sjf", "a", "0", "0", "10", "10", "1", "1", "succeeded", "0"},
		{"sjf", "b", "0", "0", "10", "10", "1", "1", "succeeded", "0"},
		{"sjf", "c", "0", "0", "10", "10", "1", "1", "succeeded", "0"},
	})
	os.WriteFile(filepath.Join(live, "summary.json"), []byte(`[{"policy":"fcfs","gpu_utilisation":0.5}]`), 0o644)
	os.WriteFile(filepath.Join(sim, "summary.json"), []byte(`[{"policy":"fcfs","gpu_utilisation":0.6}]`), 0o644)
	code, stdout, stderr := brigade(t, "fidelity", live, sim)
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(stdout, "fcfs") || strings.Contains(stdout, "sjf") || strings.Contains(stdout, "fair") {
		t.Errorf("want only fcfs, the policy in both:\n%s", stdout)
	}
	data, err := os.ReadFile(filepath.Join(sim, "fidelity.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// Order live a,b,c vs sim a,c,b: one discordant pair of three, tau 1/3,
	// one job of three in place. Start errors 1,2,1: median 1, p95 1.9.
	// JCT errors the same; relative 1/11, 2/12, 1/13: median 1/11.
	want := "policy,jobs,kendall_tau,same_position_fraction,same_start_order,start_err_p50_s,start_err_p95_s,jct_err_p50_s,jct_err_p95_s,jct_rel_err_p50,util_live,util_sim,util_diff\n" +
		"fcfs,3,0.333333,0.333333,no,1.000000,1.900000,1.000000,1.900000,0.090909,0.500000,0.600000,0.100000\n"
	if string(data) != want {
		t.Errorf("fidelity.csv:\n%s\nwant:\n%s", data, want)
	}
}

func TestFidelityErrors(t *testing.T) {
	root := t.TempDir()
	a, b, c := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	jobsCSV(t, a, [][]string{{"fcfs", "x", "0", "0", "1", "1", "1", "1", "succeeded", "0"}})
	jobsCSV(t, b, [][]string{
		{"fcfs", "x", "0", "0", "1", "1", "1", "1", "succeeded", "0"},
		{"fcfs", "y", "0", "0", "1", "1", "1", "1", "succeeded", "0"},
	})
	jobsCSV(t, c, [][]string{{"sjf", "x", "0", "0", "1", "1", "1", "1", "succeeded", "0"}})
	for _, x := range []struct {
		args []string
		want string
	}{
		{[]string{a, b}, `job "y" is only in the second folder`},
		{[]string{b, a}, `job "y" is only in the first folder`},
		{[]string{a, c}, "no policy is in both folders"},
		{[]string{a, root}, "neither jobs.parquet nor jobs.csv"},
		{[]string{a}, "want two results folders"},
	} {
		code, _, stderr := brigade(t, append([]string{"fidelity"}, x.args...)...)
		if code == 0 || !strings.Contains(stderr, x.want) {
			t.Errorf("%v: want an error with %q, got %d %q", x.args, x.want, code, stderr)
		}
	}
}
