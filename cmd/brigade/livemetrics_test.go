package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while the command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func liveMetricsArgs(t *testing.T, dir string, jobs string, extra ...string) []string {
	t.Helper()
	return append([]string{"live", "--jobs", jobs, "--gpus-fake", "2", "--state", filepath.Join(dir, "s.db"),
		"--logs", filepath.Join(dir, "logs"), "--out", filepath.Join(dir, "out"), "--tick", "10ms", "--exit-when-done"}, extra...)
}

// TestLiveMetricsRefused: a non-loopback or busy --metrics address fails
// before the driver opens the state file.
func TestLiveMetricsRefused(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"bare port", []string{"--metrics", ":9400"}, "--metrics-public"},
		{"all interfaces", []string{"--metrics", "0.0.0.0:9400"}, "--metrics-public"},
		{"busy port", []string{"--metrics", busy.Addr().String()}, "address already in use"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			code := mainWithArgs(liveMetricsArgs(t, dir, "../../examples/live/jobs.yaml", c.args...), &stdout, &stderr)
			if code != exitError || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("exit %d, stderr %q, want %q", code, stderr.String(), c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "s.db")); err == nil {
				t.Errorf("the state file was created")
			}
		})
	}
}

// TestLiveMetricsServes scrapes a running brigade live --metrics
// 127.0.0.1:0 and checks that the endpoint is gone once the run ends.
func TestLiveMetricsServes(t *testing.T) {
	dir := t.TempDir()
	jobs := filepath.Join(dir, "jobs.yaml")
	os.WriteFile(jobs, []byte("jobs:\n  - name: nap\n    command: sleep\n    args: [\"1\"]\n    gpus: 1\n  - name: ok\n    command: \"true\"\n"), 0o644)
	var stdout bytes.Buffer
	var stderr syncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- mainWithArgs(liveMetricsArgs(t, dir, jobs, "--metrics", "127.0.0.1:0"), &stdout, &stderr)
	}()
	re := regexp.MustCompile(`metrics at (http://127\.0\.0\.1:\d+/metrics)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("no metrics address on stderr: %q", stderr.String())
	}
	var body string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		if strings.Contains(body, "\nbrigade_live_running_jobs 1\n") && strings.Contains(body, `brigade_live_jobs_completed_total{result="succeeded",tenant="default"} 1`) {
			break
		}
	}
	for _, want := range []string{"\nbrigade_live_running_jobs 1\n", "\nbrigade_live_gpus_up 2\n", "\nbrigade_live_queue_length 0\n",
		`brigade_live_jobs_completed_total{result="succeeded",tenant="default"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "brigade_live_gpu_utilisation_ratio") {
		t.Errorf("per-GPU series with --gpus-fake")
	}
	if code := <-exit; code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("metrics still served after the run ended")
	}
}
