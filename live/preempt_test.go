package live

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brigadesim/brigade/policies"
)

// preemptOnce wraps a policy and preempts job 0 once, when told.
type preemptOnce struct {
	policies.Policy
	now  atomic.Bool
	done bool
}

func (p *preemptOnce) Schedule(v policies.View) []policies.Decision {
	ds := p.Policy.Schedule(v)
	if p.now.Load() && !p.done {
		p.done = true
		ds = append(ds, policies.Decision{Kind: policies.Preempt, Job: 0})
	}
	return ds
}

// checkpointingJob counts to 20 in steps of 50 ms, resuming from the
// step its checkpoint holds, and saves its step when it gets SIGTERM.
const checkpointingJob = `n=$(cat "$BRIGADE_CHECKPOINT_DIR/step" 2>/dev/null || echo 0)
echo "attempt $BRIGADE_ATTEMPT resumes at $n"
trap 'echo $n > "$BRIGADE_CHECKPOINT_DIR/step"; echo "saved $n"; exit 143' TERM
while [ "$n" -lt 20 ]; do sleep 0.05; n=$((n+1)); done
echo "finished at $n"`

// A preempted job gets SIGTERM (its wrapper does not), saves a
// checkpoint within its grace, goes back to the queue with its retries
// unspent, and its next attempt resumes from the checkpoint; the attempt
// is recorded as preempted.
func TestPreemptionCheckpointsAndResumes(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(Config{GPUs: FakeGPUs(1), Policy: "fcfs", State: filepath.Join(dir, "state.db"),
		LogDir: filepath.Join(dir, "logs"), Grace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p := &preemptOnce{Policy: d.policy}
	d.policy = p
	if _, err := d.Submit([]JobSpec{{Name: "train", Command: checkpointingJob, Shell: true, GPUs: 1}}); err != nil {
		t.Fatal(err)
	}
	r := d.recs[0]
	deadline := time.Now().Add(30 * time.Second)
	for r.State != Succeeded && r.State != Failed {
		if time.Now().After(deadline) {
			t.Fatalf("job still %s after 30 s", r.State)
		}
		if !p.now.Load() && r.State == Running && time.Since(time.UnixMicro(d.epoch+r.Start)) > 400*time.Millisecond {
			p.now.Store(true)
			d.host.Unblocked(policies.GPURef{}) // a call now, with nothing else new
		}
		if err := d.round(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r.State != Succeeded {
		t.Fatalf("job %s: %s", r.State, r.Reason)
	}
	if len(r.Attempts) != 2 || !r.Attempts[0].Preempted || r.Attempts[0].Reason != ReasonPreempted || r.Attempts[1].Preempted {
		t.Fatalf("attempts %+v, want a preempted one then a finished one", r.Attempts)
	}
	if r.Attempts[0].Exit != 143 {
		t.Errorf("preempted attempt exited %d, want 143 (its own SIGTERM handler, not SIGKILL)", r.Attempts[0].Exit)
	}
	if r.Preemptions != 1 || r.Attempt != 2 {
		t.Errorf("preemptions %d, attempt %d", r.Preemptions, r.Attempt)
	}
	log, err := os.ReadFile(filepath.Join(dir, "logs", "train.log"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(log)
	if !strings.Contains(text, "attempt 1 resumes at 0") || !strings.Contains(text, "finished at 20") {
		t.Fatalf("log:\n%s", text)
	}
	i := strings.Index(text, "saved ")
	j := strings.Index(text, "attempt 2 resumes at ")
	if i < 0 || j < 0 {
		t.Fatalf("no checkpoint saved or no second attempt:\n%s", text)
	}
	saved := strings.Fields(text[i+len("saved "):])[0]
	resumed := strings.Fields(text[j+len("attempt 2 resumes at "):])[0]
	if saved != resumed || saved == "0" {
		t.Fatalf("saved %s, resumed at %s:\n%s", saved, resumed, text)
	}
}

// A preemptive order runs live as in the simulator: under
// priority+preempt on one GPU, a priority-5 job submitted while a
// priority-0 job runs evicts it (SIGTERM; the job saves its step), runs,
// and the evicted job then resumes from its checkpoint and finishes.
func TestPreemptiveOrderLive(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(Config{GPUs: FakeGPUs(1), Policy: "priority+preempt", State: filepath.Join(dir, "state.db"),
		LogDir: filepath.Join(dir, "logs"), Grace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Submit([]JobSpec{{Name: "low", Command: checkpointingJob, Shell: true, GPUs: 1}}); err != nil {
		t.Fatal(err)
	}
	low := d.recs[0]
	submitted := false
	deadline := time.Now().Add(30 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("jobs not done after 30 s: low %s", low.State)
		}
		if !submitted && low.State == Running && time.Since(time.UnixMicro(d.epoch+low.Start)) > 300*time.Millisecond {
			if _, err := d.Submit([]JobSpec{{Name: "high", Command: "sleep 0.2", Shell: true, GPUs: 1, Priority: 5}}); err != nil {
				t.Fatal(err)
			}
			submitted = true
		}
		if err := d.round(); err != nil {
			t.Fatal(err)
		}
		if submitted && low.State == Succeeded && d.recs[1].State == Succeeded {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	high := d.recs[1]
	if len(low.Attempts) != 2 || !low.Attempts[0].Preempted || low.Preemptions != 1 {
		t.Fatalf("low: attempts %+v, %d preemptions; want one preempted, then one finished", low.Attempts, low.Preemptions)
	}
	if len(high.Attempts) != 1 || high.Attempts[0].Start < low.Attempts[0].End || low.Attempts[1].Start < high.Attempts[0].End {
		t.Fatalf("high ran %+v between low's attempts %+v: want low, high, low", high.Attempts, low.Attempts)
	}
	log, err := os.ReadFile(filepath.Join(dir, "logs", "low.log"))
	if err != nil {
		t.Fatal(err)
	}
	if text := string(log); !strings.Contains(text, "saved ") || strings.Contains(text, "attempt 2 resumes at 0") || !strings.Contains(text, "finished at 20") {
		t.Fatalf("low's log shows no resumption from its checkpoint:\n%s", text)
	}
}

// gavel runs live through the same policy code: on one GPU with a 250 ms
// round, a job submitted while another runs gets the GPU at a round
// boundary (it has received none of its share), the running one is
// preempted, saves its step and later resumes from it, and both finish.
func TestGavelLive(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(Config{GPUs: FakeGPUs(1), Policy: "gavel+round=250ms", State: filepath.Join(dir, "state.db"),
		LogDir: filepath.Join(dir, "logs"), Grace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Submit([]JobSpec{{Name: "first", Command: checkpointingJob, Shell: true, GPUs: 1}}); err != nil {
		t.Fatal(err)
	}
	first := d.recs[0]
	submitted := false
	deadline := time.Now().Add(30 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("jobs not done after 30 s: first %s", first.State)
		}
		if !submitted && first.State == Running && time.Since(time.UnixMicro(d.epoch+first.Start)) > 300*time.Millisecond {
			if _, err := d.Submit([]JobSpec{{Name: "second", Command: "sleep 0.2", Shell: true, GPUs: 1}}); err != nil {
				t.Fatal(err)
			}
			submitted = true
		}
		if err := d.round(); err != nil {
			t.Fatal(err)
		}
		if submitted && first.State == Succeeded && d.recs[1].State == Succeeded {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if first.Preemptions < 1 || !first.Attempts[0].Preempted {
		t.Fatalf("first: attempts %+v, %d preemptions; want its first attempt preempted", first.Attempts, first.Preemptions)
	}
	log, err := os.ReadFile(filepath.Join(dir, "logs", "first.log"))
	if err != nil {
		t.Fatal(err)
	}
	if text := string(log); !strings.Contains(text, "saved ") || strings.Contains(text, "attempt 2 resumes at 0") || !strings.Contains(text, "finished at 20") {
		t.Fatalf("first's log shows no resumption from its checkpoint:\n%s", text)
	}
}
