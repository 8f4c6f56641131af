package live

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The kill -9 campaign: a driver in a process of its own (this test
// binary, through TestMain), killed with SIGKILL again and again at random
// moments and at the delicate points of its loop (crashHook, exportFault),
// its jobs' processes and wrappers killed too, until a few hundred jobs
// have run; then every job's outcome, every attempt in the jobs' own
// journal, and every file outside the results folder are checked.

const (
	campaignEnv      = "BRIGADE_LIVE_CAMPAIGN_CHILD" // the workspace of a child driver
	campaignModeEnv  = "BRIGADE_LIVE_CAMPAIGN_MODE"  // run or export
	campaignCrashEnv = "BRIGADE_LIVE_CAMPAIGN_CRASH" // point:n, where the child kills itself
	campaignGPUs     = 8
)

// campaignChild is one life of the driver: brigade live --exit-when-done
// and its export, or brigade live export alone.
func campaignChild() int {
	ws := os.Getenv(campaignEnv)
	die := func() {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	if point, n, ok := strings.Cut(os.Getenv(campaignCrashEnv), ":"); ok {
		nth, _ := strconv.Atoi(n)
		if point == "export" {
			exportFault = func(k int) error {
				if k == nth {
					die()
				}
				return nil
			}
		} else {
			seen := 0
			crashHook = func(p string) {
				if p == point {
					if seen++; seen == nth {
						die()
					}
				}
			}
		}
	}
	state, logs, jobs := filepath.Join(ws, "state.db"), filepath.Join(ws, "logs"), filepath.Join(ws, "jobs.yaml")
	if os.Getenv(campaignModeEnv) == "run" {
		d, err := Open(Config{GPUs: FakeGPUs(campaignGPUs), Policy: "fcfs", State: state, LogDir: logs, JobsFile: jobs,
			Tick: 10 * time.Millisecond, ExitWhenDone: true, Backoff: 10 * time.Millisecond, BackoffFactor: 1.3, Log: os.Stderr})
		if err != nil {
			fmt.Fprintln(os.Stderr, "open:", err)
			return 2
		}
		err = d.Run(context.Background())
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "run:", err)
			return 2
		}
	}
	if err := ExportState(state, ExportOptions{JobsFile: jobs, Keep: []string{logs}, Command: []string{"campaign"}},
		filepath.Join(ws, "out")); err != nil {
		fmt.Fprintln(os.Stderr, "export:", err)
		return 3
	}
	return 0
}

// campaignJob is a job of the campaign and the outcome its spec implies.
type campaignJob struct {
	spec   JobSpec
	victim bool  // its processes are killed at random: outcome not fixed
	state  State // expected, unless victim
	exit   int
	runs   int
}

// campaignScript is a job's command. It takes an exclusive lock per job
// and, on each of its GPUs, an exclusive lock (a whole GPU) or a shared
// one (a share of it): any attempt that runs beside another attempt of
// its job, or beside a job it should not share a GPU with, finds the lock
// taken (the locks die with the processes that hold them, daemons
// included) and writes "overlap" to the journal. It writes "start" and
// "end" lines (O_APPEND, one write each) around its work. (flock -E 99
// tells a lock held by another from a flock the campaign killed.)
func campaignScript(ws string, gpuShared bool, secs float64, exit string, victim bool) string {
	mode := "-x"
	if gpuShared {
		mode = "-s"
	}
	sleep := fmt.Sprintf("sleep %.3f", secs)
	if victim {
		sleep += " || exit 7" // a killed sleep fails the attempt
	}
	return fmt.Sprintf(`J=%[1]s/journal; L=%[1]s/locks
holders() { for p in /proc/[0-9]*; do ls -l $p/fd 2>/dev/null | grep -q " $1\$" && echo "[holder ${p#/proc/} $(tr '\0' '\n' < $p/environ | grep -E '^BRIGADE_(JOB_NAME|ATTEMPT)=' | tr '\n' ' ')$(cut -d' ' -f3-5 $p/stat)]"; done; }
exec 8>>"$L/job-$BRIGADE_JOB_NAME"
flock -n -E 99 -x 8 || { [ $? = 99 ] && echo "overlap-job $BRIGADE_JOB_NAME $BRIGADE_ATTEMPT" >> "$J"; exit 97; }
fd=3; IFS=,
for g in $CUDA_VISIBLE_DEVICES; do
  eval "exec $fd>>\"\$L/\$g\""
  flock -n -E 99 %[2]s $fd || { [ $? = 99 ] && echo "overlap-gpu $BRIGADE_JOB_NAME $BRIGADE_ATTEMPT $g $(holders "$L/$g")" >> "$J"; exit 98; }
  fd=$((fd+1))
done
IFS=' '
echo "start $BRIGADE_JOB_NAME $BRIGADE_ATTEMPT $CUDA_VISIBLE_DEVICES" >> "$J"
%[3]s
c=%[4]s
echo "end $BRIGADE_JOB_NAME $BRIGADE_ATTEMPT $c" >> "$J"
exit $c`, ws, mode, sleep, exit)
}

// campaignJobs draws n jobs: whole GPUs, gangs of 2 and 4, shares of a
// GPU, CPU-only jobs; jobs that succeed, fail every attempt, or fail
// until their k-th; a few that can never fit; and victims, whose
// processes the campaign kills.
func campaignJobs(ws string, rng *rand.Rand, n int) []campaignJob {
	out := make([]campaignJob, n)
	for i := range out {
		j := &out[i]
		s := &j.spec
		s.Shell = true
		x := rng.IntN(100)
		switch {
		case x < 40:
			s.GPUs = 1
		case x < 55:
			s.GPUs = 2
		case x < 63:
			s.GPUs = 4
		case x < 83:
			s.GPUMilli = []int32{250, 500}[rng.IntN(2)]
		}
		secs := 0.1 + 0.5*rng.Float64()
		j.state, j.runs = Succeeded, 1
		exit := "0"
		switch k := rng.IntN(100); {
		case k < 15:
			j.victim = true
			s.Name = fmt.Sprintf("v%04d", i)
			s.Retries = 20
			secs = 0.4 + 0.6*rng.Float64()
		case k < 28:
			s.Name = fmt.Sprintf("fail%04d", i)
			s.Retries = rng.IntN(3)
			exit, j.state, j.exit, j.runs = "3", Failed, 3, s.Retries+1
		case k < 41:
			s.Name = fmt.Sprintf("flaky%04d", i)
			succeedAt := 2 + rng.IntN(2)
			s.Retries = succeedAt - 1 + rng.IntN(2)
			exit = fmt.Sprintf(`$([ "$BRIGADE_ATTEMPT" -ge %d ] && echo 0 || echo 5)`, succeedAt)
			j.runs = succeedAt
		case k < 44:
			s.Name = fmt.Sprintf("huge%04d", i)
			s.GPUs, s.GPUMilli = campaignGPUs+1, 0
			j.state, j.exit, j.runs = Failed, -1, 0
		default:
			s.Name = fmt.Sprintf("ok%04d", i)
			s.Retries = rng.IntN(2)
		}
		s.Command = campaignScript(ws, s.GPUMilli > 0, secs, exit, j.victim)
		s.Estimate = fmt.Sprintf("%dms", int(secs*1000)+1)
	}
	return out
}

func writeJobFile(t *testing.T, path string, jobs []campaignJob) {
	t.Helper()
	var b strings.Builder
	b.WriteString("jobs:\n")
	for _, j := range jobs {
		s := j.spec
		fmt.Fprintf(&b, "  - name: %s\n    shell: true\n    retries: %d\n    estimate: %s\n    command: %q\n", s.Name, s.Retries, s.Estimate, s.Command)
		if s.GPUs > 0 {
			fmt.Fprintf(&b, "    gpus: %d\n", s.GPUs)
		}
		if s.GPUMilli > 0 {
			fmt.Fprintf(&b, "    gpu_milli: %d\n", s.GPUMilli)
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// victimProcs lists the live processes of victim jobs of workspace ws:
// pid, and whether it is its group's leader (the wrapper).
func victimProcs(ws string) (out [][2]int) {
	all, _ := pids()
	want := []byte("BRIGADE_EXIT_FILE=" + filepath.Join(ws, "logs"))
	for _, pid := range all {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !bytes.Contains(b, want) || !bytes.Contains(b, []byte("BRIGADE_JOB_NAME=v")) {
			continue
		}
		if p, ok, err := readStat(pid); err == nil && ok && p.alive() {
			leader := 0
			if p.pgrp == pid {
				leader = 1
			}
			out = append(out, [2]int{pid, leader})
		}
	}
	return out
}

// jobProcs counts the live processes of workspace ws's jobs.
func jobProcs(ws string) int {
	all, _ := pids()
	want := []byte("BRIGADE_EXIT_FILE=" + filepath.Join(ws, "logs"))
	n := 0
	for _, pid := range all {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !bytes.Contains(b, want) {
			continue
		}
		if p, ok, err := readStat(pid); err == nil && ok && p.alive() {
			n++
		}
	}
	return n
}

// treeHash maps every file under dir to its sha256.
func treeHash(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLiveKillCampaign: at least 200 kill -9s of the driver (by default;
// BRIGADE_LIVE_CAMPAIGN=N sets the number, with more jobs), seeded by
// BRIGADE_LIVE_CAMPAIGN_SEED (default 1): the same seed draws the same
// jobs, kill points, delays and victims (what a kill at a given time hits
// depends on timing). A quarter of the lives are killed right after a
// round's starts are committed, a fifth after a launch whose PID is not
// committed yet, a tenth after a round's ends are committed, a tenth are
// export-only lives killed between two files or at a random moment, the
// rest at a random moment of their run; in about a third of the lives a
// victim job's wrapper or command is SIGKILLed too. Jobs are added to the
// job file in batches as the campaign goes.
func TestLiveKillCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1)")
	}
	target, njobs := 200, 300
	s := os.Getenv("BRIGADE_LIVE_CAMPAIGN")
	if s == "" && raceEnabled {
		t.Skip("under -race only with BRIGADE_LIVE_CAMPAIGN=N (a run without -race has it by default)")
	}
	if s != "" {
		var err error
		if target, err = strconv.Atoi(s); err != nil || target < 1 {
			t.Fatalf("BRIGADE_LIVE_CAMPAIGN=%q", s)
		}
		njobs = max(300, target*3/2)
	}
	seed := uint64(1)
	if s := os.Getenv("BRIGADE_LIVE_CAMPAIGN_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	t0 := time.Now()

	root := t.TempDir()
	if keep := os.Getenv("BRIGADE_LIVE_CAMPAIGN_DIR"); keep != "" {
		root = keep // kept for a look after a failure
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(root, "ws")
	precious := filepath.Join(root, "precious") // beside the workspace: never touched
	for _, d := range []string{filepath.Join(ws, "locks"), precious} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		os.WriteFile(filepath.Join(precious, fmt.Sprintf("f%d", i)), []byte(strings.Repeat("x", i*100)), 0o644)
	}
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("the user's, beside the results"), 0o644)
	before := treeHash(t, precious)
	notes := treeHash(t, filepath.Join(ws, "notes.txt"))

	jobs := campaignJobs(ws, rng, njobs)
	const batches = 8
	added := 0
	addBatch := func() {
		added++
		writeJobFile(t, filepath.Join(ws, "jobs.yaml"), jobs[:len(jobs)*added/batches])
	}
	addBatch()

	stderr, err := os.Create(filepath.Join(root, "drivers.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	child := func(mode, crash string, wall time.Duration, victim time.Duration) (killed bool, victims int) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), campaignEnv+"="+ws, campaignModeEnv+"="+mode, campaignCrashEnv+"="+crash)
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		if wall > 0 {
			go func() {
				select {
				case <-time.After(wall):
					_ = cmd.Process.Signal(syscall.SIGKILL)
				case <-done:
				}
			}()
		}
		vc := make(chan int, 1)
		if victim > 0 {
			pick := rng.Uint64()
			go func() {
				n := 0
				select {
				case <-time.After(victim):
					if ps := victimProcs(ws); len(ps) > 0 {
						p := ps[pick%uint64(len(ps))]
						if syscall.Kill(p[0], syscall.SIGKILL) == nil {
							n = 1 + p[1] // 1: a command, 2: a wrapper
						}
					}
				case <-done:
				}
				vc <- n
			}()
		} else {
			vc <- 0
		}
		err := cmd.Wait()
		close(done)
		victims = <-vc
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				return true, victims
			}
			b, _ := os.ReadFile(stderr.Name())
			t.Fatalf("driver (%s, crash %q) failed: %v\n%s", mode, crash, err, tail(b, 3000))
		}
		if err != nil {
			t.Fatal(err)
		}
		return false, victims
	}

	kinds := map[string]int{}
	kills, lives, idles, wrappers, commands := 0, 0, 0, 0, 0
	idle := false // the last life ran out of jobs
	for kills < target {
		lives++
		if lives > 30*target {
			t.Fatalf("%d lives for %d kills", lives, kills)
		}
		if added < batches && (idle || kills >= target*added/batches) {
			addBatch()
		}
		mode, crash, wall, kind := "run", "", time.Duration(0), ""
		x := rng.IntN(100)
		if _, err := os.Stat(filepath.Join(ws, "state.db")); err != nil {
			x = 99 // nothing to export yet
		} else if idle && added == batches {
			x = 0 // no job left to run: the remaining kills go to exports
		}
		switch {
		case x < 5:
			mode, crash, kind = "export", fmt.Sprintf("export:%d", rng.IntN(10)), "export, between two files"
		case x < 10:
			mode, wall, kind = "export", time.Duration(rng.IntN(80))*time.Millisecond, "export, at a random moment"
		case x < 35:
			crash, kind = fmt.Sprintf("starts:%d", 1+rng.IntN(2)), "run, starts committed, none launched"
		case x < 55:
			crash, kind = fmt.Sprintf("launched:%d", 1+rng.IntN(4)), "run, launched, PID not committed"
		case x < 65:
			crash, kind = fmt.Sprintf("ended:%d", 1+rng.IntN(2)), "run, ends committed, exit files not removed"
		default:
			wall, kind = time.Duration(5+rng.IntN(195))*time.Millisecond, "run, at a random moment"
		}
		victim := time.Duration(0)
		if mode == "run" && rng.IntN(3) == 0 {
			victim = time.Duration(20+rng.IntN(180)) * time.Millisecond
		}
		killed, v := child(mode, crash, wall, victim)
		if mode == "run" {
			idle = !killed
			if idle {
				idles++
			}
		}
		switch v {
		case 1:
			commands++
		case 2:
			wrappers++
		}
		if killed {
			kills++
			kinds[kind]++
		}
	}
	for added < batches {
		addBatch()
	}
	// The last life runs to the end, with its export.
	if killed, _ := child("run", "", 0, 0); killed {
		t.Fatal("the last driver was killed")
	}
	elapsed := time.Since(t0)

	// No process of the campaign's jobs is left.
	if n := jobProcs(ws); n > 0 {
		t.Errorf("%d job processes still run after the last driver ended", n)
	}
	recs, err := ReadState(filepath.Join(ws, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(jobs) {
		t.Fatalf("%d records for %d jobs", len(recs), len(jobs))
	}
	// The journal: every attempt that ran wrote one "start"; none ran
	// beside another attempt of its job or a job it may not share a GPU
	// with.
	starts := map[string][]int{}
	f, err := os.Open(filepath.Join(ws, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		switch {
		case len(w) >= 3 && w[0] == "start":
			a, _ := strconv.Atoi(w[2])
			starts[w[1]] = append(starts[w[1]], a)
		case len(w) >= 1 && strings.HasPrefix(w[0], "overlap"):
			t.Errorf("journal: %s", sc.Text())
		}
	}
	f.Close()
	byName := map[string]*campaignJob{}
	for i := range jobs {
		byName[jobs[i].spec.Name] = &jobs[i]
	}
	outcome := map[string]int{}
	attempts := 0
	for _, r := range recs {
		j := byName[r.Spec.Name]
		s := starts[r.Spec.Name]
		attempts += len(s)
		// No attempt ran twice; none ran after the job ended (no rerun of
		// a finished job): the attempts that ran are distinct and within
		// those the record counts.
		sorted := slices.Sorted(slices.Values(s))
		if len(slices.Compact(slices.Clone(sorted))) != len(s) {
			t.Errorf("%s: an attempt ran twice: %v", r.Spec.Name, s)
		}
		if len(s) > 0 && sorted[len(sorted)-1] > r.Attempt {
			t.Errorf("%s: attempt %d ran, the record counts %d", r.Spec.Name, sorted[len(sorted)-1], r.Attempt)
		}
		if r.Runs != r.Attempt || len(r.Attempts) != r.Attempt {
			t.Errorf("%s: runs %d, attempt %d, %d attempts recorded", r.Spec.Name, r.Runs, r.Attempt, len(r.Attempts))
		}
		key := string(r.State)
		switch {
		case j.victim:
			switch {
			case r.State == Succeeded:
			case r.State == Failed && r.Reason == ReasonExitLost:
				key = "failed, exit status lost"
			case r.State == Failed && r.Attempt == r.Spec.Retries+1:
				key = "failed, retries spent"
			default:
				t.Errorf("victim %s: %s attempt %d (%s)", r.Spec.Name, r.State, r.Attempt, r.Reason)
			}
			key = "victim " + key
		default:
			if r.State != j.state || r.Exit != j.exit || r.Runs != j.runs || len(s) != j.runs {
				t.Errorf("%s: %s exit %d runs %d (%d started, %s); want %s exit %d runs %d",
					r.Spec.Name, r.State, r.Exit, r.Runs, len(s), r.Reason, j.state, j.exit, j.runs)
			}
			// A job that never ran is never failed: each failure above ran.
		}
		outcome[key]++
	}
	// The results folder is whole; nothing else was touched.
	ents, _ := os.ReadDir(filepath.Join(ws, "out"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := slices.Sorted(slices.Values(ExportFiles)); !slices.Equal(names, want) {
		t.Errorf("out holds %v, want %v", names, want)
	}
	if rows := csvRows(t, filepath.Join(ws, "out", "jobs.csv")); rows != len(jobs) {
		t.Errorf("jobs.csv: %d rows, want %d", rows, len(jobs))
	}
	after := treeHash(t, precious)
	if len(after) != len(before) {
		t.Errorf("precious: %d files, was %d", len(after), len(before))
	}
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s changed", p)
		}
	}
	if n := treeHash(t, filepath.Join(ws, "notes.txt")); len(n) != 1 || n[filepath.Join(ws, "notes.txt")] != notes[filepath.Join(ws, "notes.txt")] {
		t.Errorf("notes.txt changed")
	}
	top, _ := os.ReadDir(ws)
	for _, e := range top {
		if !slices.Contains([]string{"jobs.yaml", "state.db", "logs", "locks", "journal", "out", "notes.txt"}, e.Name()) {
			t.Errorf("left in the workspace: %s", e.Name())
		}
	}
	if left, _ := os.ReadDir(filepath.Join(ws, "logs", ".exit")); len(left) > 0 {
		t.Errorf("%d exit files left", len(left))
	}
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%s: %d", k, n))
	}
	slices.Sort(ks)
	var os_ []string
	for k, n := range outcome {
		os_ = append(os_, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(os_)
	t.Logf("seed %d: %d kill -9s of the driver in %d lives, %d of which ran out of jobs (%s); %d victim processes killed (%d wrappers, %d commands); %d jobs, %d attempts ran; outcomes: %s; %v",
		seed, kills, lives+1, idles, strings.Join(ks, "; "), wrappers+commands, wrappers, commands, len(jobs), attempts, strings.Join(os_, ", "), elapsed.Round(time.Second))
}

func csvRows(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return len(rows) - 1
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
