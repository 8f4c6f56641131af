package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/live"
)

// TestGPUsNoDriver runs brigade gpus against this machine's real NVML. Where
// there is no NVIDIA driver (the CI container) it must exit 1 with exactly
// one sentence on stderr and nothing on stdout.
func TestGPUsNoDriver(t *testing.T) {
	if _, err := live.DiscoverLocal(); !errors.Is(err, live.ErrNoDriver) {
		t.Skipf("this machine has an NVIDIA driver or no cgo (%v)", err)
	}
	for _, args := range [][]string{{"gpus"}, {"gpus", "--json"}} {
		var stdout, stderr bytes.Buffer
		code := mainWithArgs(args, &stdout, &stderr)
		const want = "brigade gpus: no NVIDIA driver found on this machine (NVML library not found); live mode needs one\n"
		if code != exitError || stdout.Len() != 0 || stderr.String() != want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1, stderr %q", args, code, stdout.String(), stderr.String(), want)
		}
	}
}

func TestGPUsOutput(t *testing.T) {
	fake := []live.GPU{
		{Index: 0, Model: "NVIDIA H200 141GB HBM3e", Catalogue: "H200-141GB", Known: true, UUID: "GPU-aaaa",
			MemoryTotalMiB: 143771, MemoryUsedMiB: 512, UtilisationPct: 37},
		{Index: 1, Model: "NVIDIA H200 141GB HBM3e", Catalogue: "H200-141GB", Known: true, UUID: "GPU-bbbb",
			MemoryTotalMiB: 143771, UtilisationPct: -1, MIGEnabled: true, Instances: []live.GPUInstance{
				{Profile: "1g.18gb", ProfileID: 19, ID: 3, UUID: "MIG-cccc", Start: 0, Size: 1},
				{Profile: "3g.71gb", ProfileID: 9, ID: 1, UUID: "MIG-dddd", Start: 4, Size: 4},
			}},
	}
	tests := []struct {
		name   string
		gpus   []live.GPU
		err    error
		args   []string
		code   int
		stdout []string // substrings
		stderr string
	}{
		{name: "table", gpus: fake, args: []string{"gpus"}, code: exitOK, stdout: []string{
			"GPU", "MODEL", "UUID", "MEMORY USED/TOTAL", "UTIL", "MIG",
			"NVIDIA H200 141GB HBM3e (H200-141GB)", "GPU-aaaa", "512/143771 MiB", "37%", "off",
			"GPU-bbbb", "n/a", "on, 2 instance(s)",
			"1g.18gb (profile 19, GI 3)", "MIG-cccc", "placement 0:1",
			"3g.71gb (profile 9, GI 1)", "MIG-dddd", "placement 4:4"}},
		{name: "json", gpus: fake, args: []string{"gpus", "--json"}, code: exitOK, stdout: []string{
			`"uuid": "GPU-bbbb"`, `"mig_enabled": true`, `"profile": "3g.71gb"`, `"profile_id": 9`, `"start": 4`, `"size": 4`, `"utilisation_pct": -1`}},
		{name: "no GPUs", args: []string{"gpus"}, code: exitOK, stdout: []string{"NVML reports no GPUs on this machine."}},
		{name: "no GPUs json", args: []string{"gpus", "--json"}, code: exitOK, stdout: []string{"[]"}},
		{name: "no cgo", err: live.ErrNoCgo, args: []string{"gpus"}, code: exitError,
			stderr: "brigade gpus: this binary was built without cgo: NVML unavailable; rebuild it with CGO_ENABLED=1 for live mode\n"},
		{name: "GPU error", err: errors.New("GPU 3: GetMemoryInfo: ERROR_GPU_IS_LOST"), args: []string{"gpus"}, code: exitError,
			stderr: "brigade gpus: GPU 3: GetMemoryInfo: ERROR_GPU_IS_LOST\n"},
		{name: "help", args: []string{"gpus", "--help"}, code: exitOK, stdout: []string{"Usage: brigade gpus", "--json", "Examples:", "brigade gpus --json"}},
		{name: "bad flag", args: []string{"gpus", "--reset"}, code: exitUsage, stderr: "brigade gpus: unknown flag: --reset\nRun 'brigade gpus --help' for the flags.\n"},
	}
	defer func(f func() ([]live.GPU, error)) { discoverGPUs = f }(discoverGPUs)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			discoverGPUs = func() ([]live.GPU, error) { return tc.gpus, tc.err }
			var stdout, stderr bytes.Buffer
			code := mainWithArgs(tc.args, &stdout, &stderr)
			if code != tc.code || stderr.String() != tc.stderr {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr.String(), tc.code, tc.stderr)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			if len(tc.args) > 1 && tc.args[1] == "--json" && tc.code == exitOK {
				var back []live.GPU
				if err := json.Unmarshal(stdout.Bytes(), &back); err != nil || len(back) != len(tc.gpus) {
					t.Errorf("JSON does not read back: %v (%d GPUs)", err, len(back))
				}
			}
		})
	}
}
