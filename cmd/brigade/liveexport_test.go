package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/results"
)

// liveJobsYAML: real sleep jobs on 2 fake GPUs: a whole GPU, pairs, two
// halves sharing one GPU, and one that fails its first attempt at once and
// succeeds on its retry.
const liveJobsYAML = `jobs:
  - {name: a, command: sleep, args: ["0.3"], gpus: 1}
  - {name: pair, command: sleep, args: ["0.2"], gpus: 2}
  - {name: half1, command: sleep, args: ["0.2"], gpu_milli: 500}
  - {name: half2, command: sleep, args: ["0.2"], gpu_milli: 500}
  - name: flaky
    command: '[ "$BRIGADE_ATTEMPT" -ge 2 ] || exit 7; sleep 0.2'
    shell: true
    gpus: 1
    retries: 1
  - {name: pair2, command: sleep, args: ["0.2"], gpus: 2, tenant: bob}
`

// TestLiveExportReplayFidelity runs real processes under brigade live,
// exports them, replays the folder with brigade sim --replay and compares
// the two with brigade fidelity: same jobs, same start order under fcfs,
// JCT errors of at most process start-up and polling (tolerances, since
// wall time varies).
func TestLiveExportReplayFidelity(t *testing.T) {
	dir := t.TempDir()
	jobs := filepath.Join(dir, "jobs.yaml")
	if err := os.WriteFile(jobs, []byte(liveJobsYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	liveOut, simOut, state := filepath.Join(dir, "live-out"), filepath.Join(dir, "sim-out"), filepath.Join(dir, "s.db")
	var stdout, stderr bytes.Buffer
	args := []string{"live", "--jobs", jobs, "--gpus-fake", "2", "--policy", "fcfs", "--state", state,
		"--logs", filepath.Join(dir, "logs"), "--tick", "10ms", "--exit-when-done", "--out", liveOut,
		"--backoff", "0"} // the replay has no retries, so no back-off before them
	if code := mainWithArgs(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("live: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "jobs: 6 succeeded") || !strings.Contains(stdout.String(), "results: "+liveOut) {
		t.Errorf("live stdout %q", stdout.String())
	}
	if code := mainWithArgs([]string{"sim", "--replay", liveOut, "--policy", "fcfs", "--out", simOut, "--quiet", "--no-plots"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("sim --replay: exit %d: %s", code, stderr.String())
	}
	lj, sj := readJobs(t, liveOut), readJobs(t, simOut)
	if len(lj) != 6 || len(sj) != 6 {
		t.Fatalf("jobs: live %d, replay %d", len(lj), len(sj))
	}
	for k, l := range lj {
		s, ok := sj[k]
		if !ok {
			t.Fatalf("%s not replayed", k)
		}
		if s.GPUs != l.GPUs || s.GPUMilli != l.GPUMilli || s.SubmitS != l.SubmitS || s.Nodes != l.Nodes {
			t.Errorf("%s: live %+v replay %+v", k, l, s)
		}
	}
	startOrder := func(m map[string]results.JobRow) []string {
		var names []string
		for k := range m {
			names = append(names, k)
		}
		sort.Slice(names, func(a, b int) bool {
			x, y := m[names[a]], m[names[b]]
			if x.StartS != y.StartS {
				return x.StartS < y.StartS
			}
			return x.ID < y.ID
		})
		return names
	}
	if lo, so := startOrder(lj), startOrder(sj); !slices.Equal(lo, so) {
		t.Errorf("start order: live %v, replay %v", lo, so)
	}
	stdout.Reset()
	if code := mainWithArgs([]string{"fidelity", liveOut, simOut}, &stdout, &stderr); code != exitOK {
		t.Fatalf("fidelity: exit %d: %s", code, stderr.String())
	}
	rows, err := fidelity(liveOut, simOut)
	if err != nil || len(rows) != 1 {
		t.Fatalf("fidelity: %v %v", rows, err)
	}
	r := rows[0]
	t.Logf("fidelity: %+v\n%s", r, stdout.String())
	// The flaky job's failed attempt is not replayed, and live adds process
	// start-up and exit detection to every job: allow 0.25 s per job.
	if r.Jobs != 6 || !r.SameOrder || r.KendallTau != 1 || r.StartErrP95 > 0.25 || r.JCTErrP95 > 0.25 || r.JCTRelP50 > 0.15 {
		t.Errorf("fidelity %+v", r)
	}
	if r.UtilLive <= 0 || r.UtilLive > 1 || r.UtilSim-r.UtilLive > 0.2 || r.UtilLive-r.UtilSim > 0.2 {
		t.Errorf("utilisation live %v sim %v", r.UtilLive, r.UtilSim)
	}
	// brigade live export writes the same jobs from the state file.
	again := filepath.Join(dir, "again")
	if code := mainWithArgs([]string{"live", "export", "--state", state, "--out", again, "--jobs", jobs}, &stdout, &stderr); code != exitOK {
		t.Fatalf("live export: exit %d: %s", code, stderr.String())
	}
	for _, f := range []string{"jobs.csv", "events.csv", "summary.json", "cluster.yaml"} {
		a, _ := os.ReadFile(filepath.Join(liveOut, f))
		b, _ := os.ReadFile(filepath.Join(again, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between --out and live export", f)
		}
	}
}

// Under sjf, the replay orders jobs by the estimates the live run's
// policy saw (estimates.csv), so the start orders agree.
func TestLiveExportReplaySJF(t *testing.T) {
	dir := t.TempDir()
	jobs := filepath.Join(dir, "jobs.yaml")
	y := "jobs:\n"
	for i, est := range []string{"50s", "40s", "30s", "20s", "10s"} {
		y += "  - {name: j" + string(rune('0'+i)) + ", command: sleep, args: [\"0.1\"], gpus: 1, estimate: " + est + "}\n"
	}
	if err := os.WriteFile(jobs, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	liveOut, simOut := filepath.Join(dir, "live-out"), filepath.Join(dir, "sim-out")
	var stdout, stderr bytes.Buffer
	if code := mainWithArgs([]string{"live", "--jobs", jobs, "--gpus-fake", "1", "--policy", "sjf", "--state", filepath.Join(dir, "s.db"),
		"--logs", filepath.Join(dir, "logs"), "--tick", "10ms", "--exit-when-done", "--out", liveOut,
		"--backoff", "0"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("live: exit %d: %s", code, stderr.String())
	}
	if code := mainWithArgs([]string{"sim", "--replay", liveOut, "--out", simOut, "--quiet", "--no-plots"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("sim --replay: exit %d: %s", code, stderr.String())
	}
	rows, err := fidelity(liveOut, simOut)
	if err != nil || len(rows) != 1 || rows[0].Policy != "sjf" || !rows[0].SameOrder || rows[0].Jobs != 5 {
		t.Fatalf("fidelity %+v %v", rows, err)
	}
	lj := readJobs(t, liveOut)
	if lj["sjf/j4"].StartS > lj["sjf/j3"].StartS || lj["sjf/j1"].StartS > lj["sjf/j0"].StartS {
		t.Errorf("live did not run shortest first: %+v", lj)
	}
}
