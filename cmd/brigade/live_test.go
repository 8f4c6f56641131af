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

// --out never replaces a folder that holds the run's inputs (here ".",
// which holds the job file, the state file and the logs), nor a folder of
// the user's; brigade live refuses before it runs a job, and brigade live
// export refuses too, leaving everything in place.
func TestLiveOutKeepsUserFiles(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("jobs.yaml", []byte("jobs:\n  - {name: a, command: \"true\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	base := []string{"live", "--jobs", "jobs.yaml", "--gpus-fake", "1", "--tick", "10ms", "--exit-when-done"}
	code := mainWithArgs(append(base, "--out", "."), &stdout, &stderr)
	if code == exitOK || !strings.Contains(stderr.String(), "refusing") {
		t.Errorf("live --out .: exit %d, stderr %q; want a refusal", code, stderr.String())
	}
	if _, err := os.Stat("jobs.yaml"); err != nil {
		t.Fatalf("the job file is gone: %v", err)
	}
	if _, err := os.Stat("brigade-state.db"); err == nil {
		t.Errorf("live --out . ran jobs before refusing")
	}
	// A user's folder: refused, untouched.
	os.Mkdir("mine", 0o755)
	os.WriteFile(filepath.Join("mine", "notes.txt"), []byte("precious"), 0o644)
	stderr.Reset()
	if code := mainWithArgs(append(base, "--out", "mine"), &stdout, &stderr); code == exitOK || !strings.Contains(stderr.String(), "notes.txt") {
		t.Errorf("live --out mine: exit %d, stderr %q; want a refusal naming notes.txt", code, stderr.String())
	}
	// A real run, then an export over "." and over the logs' parent.
	stderr.Reset()
	if code := mainWithArgs(append(base, "--out", "out"), &stdout, &stderr); code != exitOK {
		t.Fatalf("live: exit %d: %s", code, stderr.String())
	}
	for _, out := range []string{".", dir, "mine"} {
		stderr.Reset()
		if code := mainWithArgs([]string{"live", "export", "--out", out}, &stdout, &stderr); code == exitOK || !strings.Contains(stderr.String(), "refusing") {
			t.Errorf("live export --out %s: exit %d, stderr %q; want a refusal", out, code, stderr.String())
		}
	}
	for _, f := range []string{"jobs.yaml", "brigade-state.db", filepath.Join("brigade-logs", "a.log"), filepath.Join("mine", "notes.txt"), filepath.Join("out", "run.json")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The earlier results folder is replaced.
	stderr.Reset()
	if code := mainWithArgs([]string{"live", "export", "--out", "out"}, &stdout, &stderr); code != exitOK {
		t.Errorf("live export --out out (an earlier export): exit %d: %s", code, stderr.String())
	}
}
