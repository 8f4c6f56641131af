package scheduler

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/results"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// preemptCluster is one node of 8 GPUs running low (priority 0,
// brigade.sim/job low) under a priority+preempt scheduler whose clock
// the test moves (at 10 s), evictions that leave a pod terminating, and
// Bindings whose annotations reach their pods.
func preemptCluster(t *testing.T) (*cluster, *Scheduler, *time.Time) {
	t.Helper()
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 8), gpuPod("low", 8, 0, prio(0), jobName("low")))
	c.graceful, c.bindingAnnotations = true, true
	clock := t0.Add(10 * time.Second)
	s, err := New(Config{Policy: "priority+preempt", Now: func() time.Time { return clock }}, c.cs, nil,
		APISource{Client: c.cs, Ctx: context.Background()})
	if err != nil {
		t.Fatal(err)
	}
	return c, s, &clock
}

func jobName(name string) podOpt { return func(p *corev1.Pod) { p.Labels[LabelJob] = name } }

func prio(v int32) podOpt { return func(p *corev1.Pod) { p.Spec.Priority = &v } }

// A preemption, as the simulator makes it: the policy hears the victim
// stop at the call's instant and places the preemptor on its GPUs in the
// same round, but the Binding waits until the victim's pod is gone; the
// victim, a pod with brigade.sim/job, is the same job when its
// controller creates it again under another name, and its next Binding
// carries its first submission and its preempted attempt, which the
// export turns into a preempted attempt before the one that succeeded.
func TestPreemptionInTheBooksThenBound(t *testing.T) {
	c, s, clock := preemptCluster(t)
	round(t, s) // low starts at 10 s
	*clock = t0.Add(20 * time.Second)
	c.add(t, gpuPod("urgent", 8, 19*time.Second, prio(1000)))
	round(t, s) // preempts low, places urgent, binds nothing yet
	if !slices.Equal(c.evicts, []string{"low grace=nil"}) || !slices.Equal(c.binds, []string{"low->n0"}) {
		t.Fatalf("evictions %v, binds %v: want low evicted and urgent not bound while low's pod is on n0", c.evicts, c.binds)
	}
	*clock = t0.Add(21 * time.Second)
	round(t, s) // low's pod still terminating
	if len(c.binds) != 1 {
		t.Fatalf("binds %v: urgent bound onto a node still holding its victim", c.binds)
	}
	if err := c.cs.Tracker().Delete(podsGVR, "team-a", "low"); err != nil {
		t.Fatal(err)
	}
	*clock = t0.Add(22 * time.Second)
	round(t, s)
	if !slices.Equal(c.binds, []string{"low->n0", "urgent->n0"}) {
		t.Fatalf("binds %v: want urgent bound once low's pod is gone", c.binds)
	}
	if got := c.pod(t, "team-a", "urgent").Annotations[AnnoBoundAt]; got != t0.Add(20*time.Second).Format(time.RFC3339Nano) {
		t.Errorf("urgent bound-at %s, want the round that decided it (20 s)", got)
	}

	// The controller creates low again; it starts when urgent ends.
	again := gpuPod("low-r1", 8, 23*time.Second, prio(0), jobName("low"))
	again.UID = types.UID("uid-low-r1")
	c.add(t, again)
	*clock = t0.Add(24 * time.Second)
	round(t, s)
	c.finish(t, "team-a", "urgent")
	*clock = t0.Add(30 * time.Second)
	round(t, s)
	if !slices.Equal(c.binds, []string{"low->n0", "urgent->n0", "low-r1->n0"}) {
		t.Fatalf("binds %v: want low's new pod bound after urgent", c.binds)
	}
	var note attemptsNote
	if err := json.Unmarshal([]byte(c.pod(t, "team-a", "low-r1").Annotations[AnnoAttempts]), &note); err != nil {
		t.Fatal(err)
	}
	if !note.Submitted.Equal(t0) || len(note.Preempted) != 1 || !note.Preempted[0].Start.Equal(t0.Add(10*time.Second)) ||
		!note.Preempted[0].End.Equal(t0.Add(20*time.Second)) {
		t.Errorf("attempts note %+v: want submitted at 0 s, one attempt 10-20 s", note)
	}
	if len(s.jobs) != 2 {
		t.Errorf("%d policy jobs, want 2: the recreated pod is the same job", len(s.jobs))
	}

	c.finish(t, "team-a", "low-r1")
	*clock = t0.Add(40 * time.Second)
	round(t, s)
	dir := filepath.Join(t.TempDir(), "out")
	if err := Export(t.Context(), APISource{Client: c.cs, Ctx: t.Context()}, ExportOptions{Policy: "priority+preempt", Now: *clock}, dir); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(dir, "jobs.csv"))
	low := rows["team-a/low"]
	// It reached the policy at the first round (10 s) and started then;
	// its first attempt ran 10-20 s and was lost (it starts over), the
	// second 30-40 s, after 10 s queued again.
	for k, want := range map[string]string{"submit_s": "10.000000", "start_s": "10.000000", "end_s": "40.000000", "attempts": "2",
		"preemptions": "1", "preempt_lost_s": "10.000000", "run_s": "20.000000", "wait_s": "10.000000", "state": "succeeded"} {
		if low[k] != want {
			t.Errorf("low %s = %s, want %s (row %v)", k, low[k], want, low)
		}
	}
}

// readCSV reads a results CSV into rows by name, each a map by column.
func readCSV(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	header := strings.Split(lines[0], ",")
	out := map[string]map[string]string{}
	for _, l := range lines[1:] {
		row := map[string]string{}
		for i, v := range strings.Split(l, ",") {
			row[header[i]] = v
		}
		out[row["name"]] = row
	}
	return out
}

// What a pod's AnnoAttempts says is read back as far as it makes sense:
// the scheduler writes it, but anyone may edit a pod.
func TestReadAttempts(t *testing.T) {
	at := func(s int) string { return t0.Add(time.Duration(s) * time.Second).Format(time.RFC3339Nano) }
	for _, tc := range []struct {
		name, note string
		ok         bool
		spans      int
	}{
		{"two attempts", `{"submitted":"` + at(0) + `","preempted":[{"start":"` + at(1) + `","end":"` + at(2) + `"},{"start":"` + at(3) + `","end":"` + at(4) + `"}]}`, true, 2},
		{"backwards span cut there", `{"submitted":"` + at(0) + `","preempted":[{"start":"` + at(1) + `","end":"` + at(2) + `"},{"start":"` + at(5) + `","end":"` + at(4) + `"}]}`, true, 1},
		{"before its submission", `{"submitted":"` + at(3) + `","preempted":[{"start":"` + at(1) + `","end":"` + at(2) + `"}]}`, true, 0},
		{"no submission", `{"preempted":[]}`, false, 0},
		{"not JSON", `{"submitted":`, false, 0},
		{"too long", `{"submitted":"` + at(0) + `","x":"` + strings.Repeat("a", maxAttemptsNote) + `"}`, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnoAttempts: tc.note}}}
			n, ok := readAttempts([]*corev1.Pod{p})
			if ok != tc.ok || len(n.Preempted) != tc.spans {
				t.Errorf("ok %v with %d spans, want %v with %d", ok, len(n.Preempted), tc.ok, tc.spans)
			}
		})
	}
}

// withPreempted puts a job's preempted attempts before its last one:
// what they ran is lost when the job starts over, kept when its policy
// suspends it, and the waits between them add up.
func TestWithPreempted(t *testing.T) {
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	at := func(tm time.Time) hwmodel.Time { return hwmodel.Time(tm.Sub(t0).Microseconds()) }
	spans := []attemptSpan{{sec(1), sec(3)}, {sec(4), sec(4.5)}}
	for _, tc := range []struct {
		suspends bool
		lost     hwmodel.Time
	}{{false, 2_500_000}, {true, 0}} {
		last := results.AttemptRecord{Start: at(sec(6)), End: at(sec(9)), Wait: at(sec(6)), Ended: results.AttemptSucceeded}
		jr := results.JobRecord{Submit: 0, Start: last.Start, End: last.End, Run: last.End - last.Start, Attempts: 1,
			AttemptLog: []results.AttemptRecord{last}}
		withPreempted(&jr, spans, at, tc.suspends)
		got := []hwmodel.Time{jr.Start, jr.Run, jr.Wait, jr.PreemptLost, jr.Lost}
		want := []hwmodel.Time{1_000_000, 5_500_000, 3_500_000, tc.lost, tc.lost}
		if !slices.Equal(got, want) || jr.Attempts != 3 || jr.Preemptions != 2 {
			t.Errorf("suspends=%v: start, run, wait, preempt lost, lost = %v, attempts %d, preemptions %d; want %v, 3, 2",
				tc.suspends, got, jr.Attempts, jr.Preemptions, want)
		}
		ends := []string{jr.AttemptLog[0].Ended, jr.AttemptLog[1].Ended, jr.AttemptLog[2].Ended}
		if !slices.Equal(ends, []string{results.AttemptPreempted, results.AttemptPreempted, results.AttemptSucceeded}) ||
			jr.AttemptLog[1].Wait != 1_000_000 || jr.AttemptLog[2].Wait != 1_500_000 {
			t.Errorf("attempts %+v", jr.AttemptLog)
		}
	}
}

// A start whose Binding still waits for its victim's pods, preempted in
// turn, ran in the policy's books: its attempt rides on its next
// Binding, as the replay makes that attempt too.
func TestPreemptedBeforeBound(t *testing.T) {
	c, s, clock := preemptCluster(t)
	round(t, s)
	*clock = t0.Add(20 * time.Second)
	c.add(t, gpuPod("mid", 8, 19*time.Second, prio(500), jobName("mid")))
	round(t, s) // low preempted; mid waits for low's pod
	*clock = t0.Add(21 * time.Second)
	c.add(t, gpuPod("high", 8, 21*time.Second, prio(1000)))
	round(t, s) // mid, never bound, preempted for high
	if err := c.cs.Tracker().Delete(podsGVR, "team-a", "low"); err != nil {
		t.Fatal(err)
	}
	*clock = t0.Add(22 * time.Second)
	round(t, s)
	c.finish(t, "team-a", "high")
	*clock = t0.Add(30 * time.Second)
	round(t, s)
	if !slices.Equal(c.binds, []string{"low->n0", "high->n0", "mid->n0"}) {
		t.Fatalf("binds %v: want high, then mid once high ended", c.binds)
	}
	var note attemptsNote
	if err := json.Unmarshal([]byte(c.pod(t, "team-a", "mid").Annotations[AnnoAttempts]), &note); err != nil {
		t.Fatal(err)
	}
	if len(note.Preempted) != 1 || !note.Preempted[0].Start.Equal(t0.Add(20*time.Second)) || !note.Preempted[0].End.Equal(t0.Add(21*time.Second)) {
		t.Errorf("mid's attempts %+v: want the one from 20 s to 21 s that the books ran", note.Preempted)
	}
}
