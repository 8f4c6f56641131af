package scheduler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The export of an sjf run: jobs.csv starts the jobs in the order they
// were bound (b at 10 s, c at 11 s, a at 12 s of the fake's clock, times
// counted from a's creation), a still running is cut at Now, and
// estimates.csv carries the estimates the policy ordered by.
func TestExport(t *testing.T) {
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 1),
		gpuPod("a", 1, 0, estimate("3h")), gpuPod("b", 1, 1e9, estimate("1h")), gpuPod("c", 1, 2e9, estimate("2h")))
	s := newSched(t, c, "sjf")
	for range 3 {
		round(t, s)
		c.finish(t, "team-a", strings.Split(c.binds[len(c.binds)-1], "->")[0])
	}
	c.add(t, gpuPod("d", 1, 3e9))
	dir := filepath.Join(t.TempDir(), "out")
	if err := Export(t.Context(), APISource{Client: c.cs, Ctx: t.Context()}, ExportOptions{Policy: "sjf", Now: t0.Add(time.Minute)}, dir); err != nil {
		t.Fatal(err)
	}
	jobs, err := os.ReadFile(filepath.Join(dir, "jobs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(jobs)), "\n")
	header := strings.Split(lines[0], ",")
	col := func(row, name string) string {
		for i, h := range header {
			if h == name {
				return strings.Split(row, ",")[i]
			}
		}
		t.Fatalf("no column %s in %s", name, lines[0])
		return ""
	}
	want := map[string][2]string{"team-a/a": {"12.000000", "succeeded"}, "team-a/b": {"10.000000", "succeeded"}, "team-a/c": {"11.000000", "succeeded"}, "team-a/d": {"60.000000", "queued"}}
	if len(lines) != 5 {
		t.Fatalf("jobs.csv:\n%s", jobs)
	}
	for _, row := range lines[1:] {
		w := want[col(row, "name")]
		if col(row, "start_s") != w[0] || col(row, "state") != w[1] {
			t.Errorf("%s: start %s state %s, want %v", col(row, "name"), col(row, "start_s"), col(row, "state"), w)
		}
	}
	est, _ := os.ReadFile(filepath.Join(dir, "estimates.csv"))
	if string(est) != "name,estimate_s\nteam-a/a,10800.000000\nteam-a/b,3600.000000\nteam-a/c,7200.000000\nteam-a/d,3600.000000\n" {
		t.Errorf("estimates.csv:\n%s", est)
	}
	spec, _ := os.ReadFile(filepath.Join(dir, "cluster.yaml"))
	if !strings.Contains(string(spec), "  - name: n0\n    gpus: 1\n") {
		t.Errorf("cluster.yaml:\n%s", spec)
	}
}
