package live

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func openHealthDriver(t *testing.T, dir string, gpus []GPU, h HealthSource, up ...string) *Driver {
	t.Helper()
	d, err := Open(Config{GPUs: gpus, Policy: "fcfs", State: filepath.Join(dir, "state.db"),
		LogDir: filepath.Join(dir, "logs"), Clock: &fakeClock{time.Unix(1000, 0)}, Tick: 5 * time.Millisecond,
		ExitWhenDone: true, Health: h, HeartbeatInterval: 10 * time.Millisecond, GPUsUp: up, Backoff: -1})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// gone reports whether pid has been reaped (no such process).
func gone(pid int) bool {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// TestLiveGPUDownRequeues: two jobs share GPU 0; GPU 0 stops answering
// the heartbeat. Both are killed at once; the one with a retry reruns on
// GPU 1 and succeeds, the one without ends Failed with the reason. The GPU
// stays down across a restart until the operator clears it.
func TestLiveGPUDownRequeues(t *testing.T) {
	dir := t.TempDir()
	fh := NewFakeHealth(2)
	d := openHealthDriver(t, dir, FakeGPUs(2), fh)
	d.Submit([]JobSpec{
		{Name: "retry", Command: `[ "$BRIGADE_ATTEMPT" = 1 ] && exec sleep 30; exit 0`, Shell: true, GPUMilli: 500, Retries: 1},
		{Name: "once", Command: "sleep", Args: []string{"30"}, GPUMilli: 500},
	})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, r := range d.recs {
		if r.State != Running || len(r.GPUs) != 1 || r.GPUs[0] != 0 {
			t.Fatalf("%s: %s on %v, want running on GPU 0", r.Spec.Name, r.State, r.GPUs)
		}
		pids = append(pids, r.PID)
	}
	fh.Lose(0, "NVML GetUtilizationRates: GPU is lost")
	t0 := time.Now()
	run(t, d)
	el := time.Since(t0)
	if el > 2*time.Second {
		t.Errorf("took %v", el)
	}
	for _, p := range pids {
		if !gone(p) {
			t.Errorf("pid %d still alive", p)
		}
	}
	r, o := d.recs[0], d.recs[1]
	if r.State != Succeeded || r.Runs != 2 || len(r.GPUs) != 1 || r.GPUs[0] != 1 {
		t.Errorf("retry: %s runs %d GPUs %v", r.State, r.Runs, r.GPUs)
	}
	// The second attempt started after the first was killed.
	if r.Start < o.End {
		t.Errorf("retry restarted at %d before the kill at %d", r.Start, o.End)
	}
	want := "GPU 0 GPU-fake-0000 down: NVML GetUtilizationRates: GPU is lost"
	if o.State != Failed || o.Runs != 1 || o.Reason != want {
		t.Errorf("once: %s runs %d reason %q, want Failed %q", o.State, o.Runs, o.Reason, want)
	}
	if dg := d.DownGPUs(); len(dg) != 1 || dg[0].Index != 0 || dg[0].UUID != "GPU-fake-0000" || dg[0].Critical {
		t.Errorf("down: %+v", dg)
	}
	if d.cluster.FreeMilli(0, 0) != 0 {
		t.Errorf("down GPU 0 has %d milli free", d.cluster.FreeMilli(0, 0))
	}
	t.Logf("GPU down to both jobs ended: %v", el)
	d.Close()

	// A restart keeps GPU 0 down: a new whole-GPU job goes to GPU 1.
	d2 := openHealthDriver(t, dir, FakeGPUs(2), nil)
	if dg := d2.DownGPUs(); len(dg) != 1 || dg[0].Index != 0 {
		t.Errorf("after restart: down %+v", dg)
	}
	d2.Submit([]JobSpec{{Name: "later", Command: "true", GPUs: 1}})
	run(t, d2)
	if l := d2.recs[2]; l.State != Succeeded || l.GPUs[0] != 1 {
		t.Errorf("later: %s on %v", l.State, l.GPUs)
	}
	d2.Close()
	// The operator clears it.
	d3 := openHealthDriver(t, dir, FakeGPUs(2), nil, "GPU-fake-0000")
	if dg := d3.DownGPUs(); len(dg) != 0 || d3.cluster.FreeMilli(0, 0) != 1000 {
		t.Errorf("after clearing: down %+v", dg)
	}
	d3.Close()
	d4 := openHealthDriver(t, dir, FakeGPUs(2), nil)
	if dg := d4.DownGPUs(); len(dg) != 0 {
		t.Errorf("clearing was not persisted: %+v", dg)
	}
	d4.Close()
}

// TestLiveXIDDown: a critical XID on GPU 1 takes it down for good; XID 13
// is ignored.
func TestLiveXIDDown(t *testing.T) {
	dir := t.TempDir()
	fh := NewFakeHealth(2)
	d := openHealthDriver(t, dir, FakeGPUs(2), fh)
	d.Submit([]JobSpec{
		{Name: "zero", Command: "sleep", Args: []string{"30"}, GPUs: 1},
		{Name: "one", Command: "sleep", Args: []string{"30"}, GPUs: 1},
	})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	if fh.XID(0, 13) {
		t.Errorf("XID 13 counted as critical")
	}
	if !fh.XID(1, 79) {
		t.Errorf("XID 79 not critical")
	}
	t0 := time.Now()
	for d.recs[1].State == Running && time.Since(t0) < 2*time.Second {
		select {
		case e := <-fh.Events():
			d.pushHealth(e)
		case <-time.After(100 * time.Millisecond):
		}
		if err := d.round(); err != nil {
			t.Fatal(err)
		}
	}
	one := d.recs[1]
	if one.State != Failed || one.Reason != "GPU 1 GPU-fake-0001 down: XID 79 (GPU has fallen off the bus)" {
		t.Errorf("one: %s %q", one.State, one.Reason)
	}
	if d.recs[0].State != Running {
		t.Errorf("zero: %s", d.recs[0].State)
	}
	// Answered heartbeats do not bring back a GPU down for a critical XID.
	for range RecoverBeats + 1 {
		d.pushHealth(fh.Poll()...)
		if err := d.round(); err != nil {
			t.Fatal(err)
		}
	}
	if dg := d.DownGPUs(); len(dg) != 1 || dg[0].Index != 1 || !dg[0].Critical {
		t.Errorf("down: %+v", dg)
	}
	pid := d.recs[0].PID
	syscall.Kill(-pid, syscall.SIGKILL)
	d.Close()
}

// TestLiveGPUComesBack: a GPU down for missed heartbeats returns after
// RecoverBeats answered ones in a row, and a job waiting for it starts.
func TestLiveGPUComesBack(t *testing.T) {
	dir := t.TempDir()
	fh := NewFakeHealth(1)
	d := openHealthDriver(t, dir, FakeGPUs(1), fh)
	fh.Lose(0, "NVML did not answer within 5s")
	beat := func() {
		t.Helper()
		d.pushHealth(fh.Poll()...)
		if err := d.round(); err != nil {
			t.Fatal(err)
		}
	}
	beat()
	d.Submit([]JobSpec{{Name: "wait", Command: "true", GPUs: 1}})
	beat()
	if d.recs[0].State != Queued {
		t.Fatalf("wait: %s on a down GPU", d.recs[0].State)
	}
	fh.Answer(0)
	beat()
	fh.Lose(0, "again") // a miss restarts the count
	beat()
	fh.Answer(0)
	for k := 1; k < RecoverBeats; k++ {
		beat()
		if len(d.DownGPUs()) != 1 || d.recs[0].State != Queued {
			t.Fatalf("back after %d answered beats", k)
		}
	}
	beat()
	if len(d.DownGPUs()) != 0 || d.recs[0].State != Running {
		t.Fatalf("after %d answered beats: down %+v, wait %s", RecoverBeats, d.DownGPUs(), d.recs[0].State)
	}
	run(t, d)
	if d.recs[0].State != Succeeded {
		t.Errorf("wait: %s", d.recs[0].State)
	}
	d.Close()
	if recs, _ := ReadState(filepath.Join(dir, "state.db")); !strings.Contains(recs[0].Spec.Name, "wait") {
		t.Errorf("state: %+v", recs)
	}
}

func TestCriticalXIDs(t *testing.T) {
	for _, x := range []uint64{13, 31, 43, 45} {
		if _, ok := CriticalXID(x); ok {
			t.Errorf("XID %d counted as critical", x)
		}
	}
	for _, x := range []uint64{48, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120} {
		if r, ok := CriticalXID(x); !ok || !strings.HasPrefix(r, "XID ") {
			t.Errorf("XID %d: %q %v", x, r, ok)
		}
	}
}
