package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/live"
)

// TestLiveHealthFakeGPU: with a health source whose GPU 0 does not answer,
// brigade live runs every job on GPU 1 and prints GPU 0 as down.
func TestLiveHealthFakeGPU(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	jobs := filepath.Join(dir, "jobs.yaml")
	os.WriteFile(jobs, []byte("jobs:\n- name: a\n  command: \"true\"\n  gpus: 1\n- name: b\n  command: \"true\"\n  gpus: 1\n"), 0o644)
	defer func(h func([]live.GPU) live.HealthSource) { liveHealthHook = h }(liveHealthHook)
	liveHealthHook = func(gpus []live.GPU) live.HealthSource {
		fh := live.NewFakeHealth(len(gpus))
		fh.Lose(0, "NVML did not answer within 10ms")
		return fh
	}
	state := filepath.Join(dir, "s.db")
	var stdout, stderr bytes.Buffer
	args := []string{"live", "--jobs", jobs, "--gpus-fake", "2", "--state", state, "--logs", filepath.Join(dir, "logs"),
		"--tick", "10ms", "--heartbeat-interval", "10ms", "--exit-when-done"}
	if code := mainWithArgs(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "jobs: 2 succeeded, 0 failed") ||
		!strings.Contains(stdout.String(), "GPU 0 GPU-fake-0000 down: NVML did not answer within 10ms") {
		t.Errorf("stdout %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "live: GPU 0 GPU-fake-0000 down:") {
		t.Errorf("stderr %q", stderr.String())
	}
	recs, err := live.ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Runs != 1 || len(r.GPUs) != 1 || r.GPUs[0] != 1 {
			t.Errorf("%s: runs %d on %v, want once on GPU 1", r.Spec.Name, r.Runs, r.GPUs)
		}
	}
	// Without a health source (--heartbeat-interval 0) the down state kept
	// in the state file still holds GPU 0 out, until --gpu-up clears it.
	stdout.Reset()
	args[len(args)-2] = "0"
	if code := mainWithArgs(args, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "GPU 0 GPU-fake-0000 down") {
		t.Errorf("restart: exit %d %q", code, stdout.String())
	}
	stdout.Reset()
	if code := mainWithArgs(append(args, "--gpu-up", "0"), &stdout, &stderr); code != exitOK || strings.Contains(stdout.String(), "down") {
		t.Errorf("--gpu-up 0: exit %d %q", code, stdout.String())
	}
}
