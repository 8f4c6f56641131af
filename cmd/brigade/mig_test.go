package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimMIGFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "--mig", "sometimes"},
		{"sim", "--mig", "dynamic", "--mig-reconfig-time", "-5s"},
		{"sim", "--mig-reconfig-time", "soon"},
	} {
		if code, _, stderr := brigade(t, args...); code != exitUsage || !strings.Contains(stderr, "--mig") {
			t.Errorf("%q: exit %d, stderr %q; want a usage error about --mig", args, code, stderr)
		}
	}
}

// TestSimMIGTrace replays a small Brigade trace of MIG jobs on h200x8-mig:
// statically, and with dynamic reconfiguration, which the summary, the
// table and jobs.csv report.
func TestSimMIGTrace(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "mig.csv")
	var b strings.Builder
	b.WriteString("name,submit_s,duration_s,gpus,mig_profile,mig_min_slices\n")
	// Twenty 3-slice jobs at once: balanced has eight 3g instances.
	for i := 0; i < 20; i++ {
		b.WriteString("big" + string(rune('a'+i)) + ",0,600,1,,3\n")
	}
	b.WriteString("small,10,60,1,1g.18gb,\n")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Policy         string  `json:"policy"`
		Done           int     `json:"jobs_succeeded"`
		SliceUtil      float64 `json:"mig_slice_utilisation"`
		Frag           float64 `json:"mig_fragmentation"`
		Reconfigs      int64   `json:"mig_reconfigurations"`
		ReconfigGPUS   float64 `json:"mig_reconfig_gpu_s"`
		GPUUtilisation float64 `json:"gpu_utilisation"`
	}
	run := func(mode string) (summary, string, string) {
		out := filepath.Join(dir, mode)
		code, stdout, stderr := brigade(t, "sim", "--quiet", "--trace", trace, "--cluster", "h200x8-mig", "--policy", "fcfs",
			"--backfill", "--mig", mode, "--mig-reconfig-time", "45s", "--check-invariants", "--out", out)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", mode, code, stderr)
		}
		raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var s []summary
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		jobs, err := os.ReadFile(filepath.Join(out, "jobs.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return s[0], stdout, string(jobs)
	}
	static, table, jobs := run("static")
	if static.Done != 21 || static.Reconfigs != 0 || static.SliceUtil <= 0 || static.Frag <= 0 {
		t.Errorf("static: %+v", static)
	}
	if !strings.Contains(table, "mig") || !strings.Contains(table, "reconf") {
		t.Errorf("table without MIG columns:\n%s", table)
	}
	if !strings.Contains(jobs, ",3g.71gb,") || !strings.Contains(jobs, ",429,") {
		t.Errorf("jobs.csv does not name the 3g.71gb instances and their 429 milli:\n%s", jobs)
	}
	dynamic, _, _ := run("dynamic")
	if dynamic.Done != 21 || dynamic.Reconfigs == 0 || dynamic.ReconfigGPUS != 45*float64(dynamic.Reconfigs) {
		t.Errorf("dynamic: %+v; want reconfigurations costing 45 s each", dynamic)
	}
	// On whole GPUs, MIG jobs can only run with conversion.
	code, _, stderr := brigade(t, "sim", "--trace", trace, "--cluster", "h200x8", "--policy", "fcfs", "--out", filepath.Join(dir, "w"))
	if code != exitOK || !strings.Contains(stderr, "21 jobs can never fit") {
		t.Errorf("whole GPUs, static: exit %d, stderr %q; want a warning that the 21 MIG jobs never fit", code, stderr)
	}
}
