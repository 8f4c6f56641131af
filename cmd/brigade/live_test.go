package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/live"
)

func TestLiveCommandFakeGPUs(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "s.db")
	logs := filepath.Join(dir, "logs")
	var stdout, stderr bytes.Buffer
	args := []string{"live", "--jobs", "../../examples/live/jobs.yaml", "--gpus-fake", "2", "--policy", "fair",
		"--state", state, "--logs", logs, "--tick", "10ms", "--exit-when-done", "--out", filepath.Join(dir, "out")}
	if code := mainWithArgs(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "jobs: 4 succeeded, 0 failed") {
		t.Errorf("stdout %q", stdout.String())
	}
	b, _ := os.ReadFile(filepath.Join(logs, "hello.log"))
	if !strings.Contains(string(b), "hello from hello on GPU-fake-000") {
		t.Errorf("hello.log %q", b)
	}
	recs, err := live.ReadState(state)
	if err != nil || len(recs) != 4 || recs[3].Runs != 2 {
		t.Errorf("state: %v %v", recs, err)
	}
	// A second run on the same state reruns nothing.
	stdout.Reset()
	if code := mainWithArgs(args, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "jobs: 4 succeeded") {
		t.Fatalf("rerun: exit %d %q %s", code, stdout.String(), stderr.String())
	}
	if recs2, _ := live.ReadState(state); recs2[0].Runs != 1 {
		t.Errorf("hello ran again")
	}
}

func TestLiveNoDriver(t *testing.T) {
	if _, err := live.DiscoverLocal(); err == nil {
		t.Skip("this machine has NVML")
	}
	var stdout, stderr bytes.Buffer
	code := mainWithArgs([]string{"live", "--jobs", "x.yaml"}, &stdout, &stderr)
	if code != exitError || !strings.Contains(stderr.String(), "--gpus-fake") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
