package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runAll runs a driver's rounds on real processes until no job is queued,
// pending or running.
func runAll(t *testing.T, d *Driver) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := d.round(); err != nil {
			t.Fatal(err)
		}
		busy := false
		for _, r := range d.recs {
			busy = busy || r.State == Queued || r.State == Running || r.State == Pending
		}
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("jobs still busy after 20 s")
		}
		for _, id := range d.later {
			d.host.Queue(id)
		}
		d.later = d.later[:0]
		d.nextDue = d.dueWaiting()
		time.Sleep(10 * time.Millisecond)
	}
}

func openTest(t *testing.T, gpus int, m Machine) *Driver {
	t.Helper()
	dir := t.TempDir()
	d, err := Open(Config{GPUs: FakeGPUs(gpus), Policy: "fcfs", State: filepath.Join(dir, "state.db"),
		LogDir: filepath.Join(dir, "logs"), Backoff: -1, Machine: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// A DAG: a task starts only after its parents succeed; a failed parent
// fails its dependants, transitively, without running them.
func TestDepsRunInOrderAndFailuresPropagate(t *testing.T) {
	specs, err := ParseJobs("dag.yaml", []byte(`jobs:
  - {name: a, command: 'sleep 0.2; echo a >> "$ORDER"', shell: true}
  - {name: b, command: 'echo b >> "$ORDER"', shell: true, deps: [a]}
  - {name: c, command: 'echo c >> "$ORDER"', shell: true, deps: [a, b]}
  - {name: bad, command: 'exit 3', shell: true}
  - {name: child, command: 'echo child >> "$ORDER"', shell: true, deps: [bad]}
  - {name: grandchild, command: 'echo grandchild >> "$ORDER"', shell: true, deps: [child, a]}
`))
	if err != nil {
		t.Fatal(err)
	}
	d := openTest(t, 2, Machine{})
	order := filepath.Join(t.TempDir(), "order")
	for i := range specs {
		specs[i].Env = map[string]string{"ORDER": order}
	}
	if _, err := d.Submit(specs); err != nil {
		t.Fatal(err)
	}
	if st := d.recs[d.names["c"]].State; st != Pending {
		t.Fatalf("c is %s at submission, want pending", st)
	}
	runAll(t, d)
	want := map[string]State{"a": Succeeded, "b": Succeeded, "c": Succeeded, "bad": Failed, "child": Failed, "grandchild": Failed}
	for name, st := range want {
		r := d.recs[d.names[name]]
		if r.State != st {
			t.Errorf("%s: %s (%s), want %s", name, r.State, r.Reason, st)
		}
	}
	for name, parent := range map[string]string{"child": "bad", "grandchild": "child"} {
		r := d.recs[d.names[name]]
		if !r.DepFailed || r.Reason != ReasonDependencyPrefix+parent+" failed" || r.Runs != 0 {
			t.Errorf("%s: dep failed %v, reason %q, runs %d", name, r.DepFailed, r.Reason, r.Runs)
		}
	}
	got := strings.Fields(readFile(t, order))
	if strings.Join(got, " ") != "a b c" {
		t.Errorf("ran in order %v, want a b c (and nothing that depends on bad)", got)
	}
}

// CPU and memory are booked against the machine: two jobs that together
// need more CPU than it has run one after the other, though GPUs are
// free; a job that can never fit fails at submission, saying why.
func TestCPUAndMemoryAreBooked(t *testing.T) {
	d := openTest(t, 2, Machine{CPUMilli: 4000, MemoryMiB: 8192})
	if _, err := d.Submit([]JobSpec{
		{Name: "x", Command: "sleep", Args: []string{"0.3"}, GPUs: 1, CPUMilli: 3000, MemoryMiB: 1024},
		{Name: "y", Command: "sleep", Args: []string{"0.3"}, GPUs: 1, CPUMilli: 3000, MemoryMiB: 1024},
		{Name: "huge", Command: "true", MemoryMiB: 9000},
	}); err != nil {
		t.Fatal(err)
	}
	huge := d.recs[2]
	if huge.State != Failed || !strings.Contains(huge.Reason, "never fits this machine") {
		t.Fatalf("huge: %s %q", huge.State, huge.Reason)
	}
	runAll(t, d)
	x, y := d.recs[0], d.recs[1]
	if x.State != Succeeded || y.State != Succeeded {
		t.Fatalf("x %s (%q %+v), y %s (%q)", x.State, x.Reason, x.Attempts, y.State, y.Reason)
	}
	if y.Start < x.End {
		t.Errorf("y started at %d before x ended at %d: 6000 milli-CPU booked on a 4000 machine", y.Start, x.End)
	}
}

// The deadline-aware retry rule of brigade sim: a job whose estimate no
// longer fits before its deadline is given up, not retried.
func TestDeadlineAwareRetries(t *testing.T) {
	d := openTest(t, 1, Machine{})
	if _, err := d.Submit([]JobSpec{
		{Name: "late", Command: "sleep 0.3; exit 1", Shell: true, Retries: 5, Estimate: "1s", Deadline: "1s"},
		{Name: "roomy", Command: "exit 1", Shell: true, Retries: 2, Estimate: "1ms", Deadline: "1h"},
	}); err != nil {
		t.Fatal(err)
	}
	runAll(t, d)
	late, roomy := d.recs[0], d.recs[1]
	if late.State != Failed || !late.DeadlineMissed || late.Attempt != 1 || !strings.HasPrefix(late.Reason, "deadline: ") {
		t.Errorf("late: %s, deadline missed %v, attempts %d, reason %q; want given up after one attempt", late.State, late.DeadlineMissed, late.Attempt, late.Reason)
	}
	if roomy.State != Failed || roomy.DeadlineMissed || roomy.Attempt != 3 || roomy.Granted != 2 {
		t.Errorf("roomy: %s, deadline missed %v, attempts %d, granted %d; want its 2 retries spent", roomy.State, roomy.DeadlineMissed, roomy.Attempt, roomy.Granted)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
