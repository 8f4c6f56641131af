package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
)

// fakeMIGMachine is two H200s: GPU 0 in MIG mode with a 3g.71gb, a 2g.35gb
// and two 1g.18gb instances (listed out of placement order, as NVML may),
// GPU 1 whole.
func fakeMIGMachine(t *testing.T) []GPU {
	t.Helper()
	m, ok := hwmodel.LookupModel("H200-141GB")
	if !ok {
		t.Fatal("no H200 in the catalogue")
	}
	g := func(i int) GPU {
		return GPU{Index: i, Model: "fake H200", Catalogue: m.Name, ModelID: m.ID, Known: true,
			UUID: "GPU-fake-h200-" + string(rune('0'+i)), MemoryTotalMiB: m.MemoryMiB}
	}
	g0, g1 := g(0), g(1)
	g0.MIGEnabled = true
	g0.Instances = []GPUInstance{
		{Profile: "3g.71gb", ID: 2, UUID: "MIG-3g-a", Start: 4, Size: 4},
		{Profile: "2g.35gb", ID: 3, UUID: "MIG-2g-a", Start: 0, Size: 2},
		{Profile: "1g.18gb", ID: 9, UUID: "MIG-1g-a", Start: 2, Size: 1},
		{Profile: "1g.18gb", ID: 10, UUID: "MIG-1g-b", Start: 3, Size: 1},
	}
	return []GPU{g0, g1}
}

// MIG jobs run on existing instances of their profile with
// CUDA_VISIBLE_DEVICES set to the instance's UUID; at most as many run at
// once as there are instances; whole-GPU jobs never land on the MIG GPU; a
// profile the machine does not have fails at submission.
func TestLiveMIGJobs(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(Config{GPUs: fakeMIGMachine(t), Policy: "fcfs", State: filepath.Join(dir, "state.db"),
		LogDir: filepath.Join(dir, "logs"), Clock: &fakeClock{time.Unix(1000, 0)}, Tick: 5 * time.Millisecond, ExitWhenDone: true, Backoff: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Each job records its devices and the time window it ran in.
	script := `echo "CVD=$CUDA_VISIBLE_DEVICES"; date +%s%N; sleep 0.3; date +%s%N`
	specs := []JobSpec{
		{Name: "small-1", Command: script, Shell: true, MIGProfile: "1g.18gb"},
		{Name: "small-2", Command: script, Shell: true, MIGProfile: "1g.18gb"},
		{Name: "small-3", Command: script, Shell: true, MIGProfile: "1g.18gb"},
		{Name: "mid", Command: script, Shell: true, MIGProfile: "3g.71gb"},
		{Name: "whole", Command: script, Shell: true, GPUs: 1},
		{Name: "whole-2", Command: script, Shell: true, GPUs: 2},
		{Name: "all", Command: "true", MIGProfile: "7g.141gb"},
	}
	if _, err := d.Submit(specs); err != nil {
		t.Fatal(err)
	}
	run(t, d)
	d.Close()
	recs, err := ReadState(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	cvd := map[string]string{}
	for _, r := range recs {
		switch r.Spec.Name {
		case "all", "whole-2":
			if r.State != Failed || r.Runs != 0 || !strings.Contains(r.Reason, "never fits") {
				t.Errorf("%s: %s after %d runs (%s); want failed at submission", r.Spec.Name, r.State, r.Runs, r.Reason)
			}
			continue
		}
		if r.State != Succeeded || r.Runs != 1 {
			t.Errorf("%s: %s after %d runs (%s)", r.Spec.Name, r.State, r.Runs, r.Reason)
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, "logs", r.Spec.Name+".log"))
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "CVD="); ok {
				cvd[r.Spec.Name] = v
			}
		}
	}
	for name, want := range map[string][]string{
		"small-1": {"MIG-1g-a", "MIG-1g-b"}, "small-2": {"MIG-1g-a", "MIG-1g-b"}, "small-3": {"MIG-1g-a", "MIG-1g-b"},
		"mid": {"MIG-3g-a"}, "whole": {"GPU-fake-h200-1"},
	} {
		got := cvd[name]
		found := false
		for _, w := range want {
			found = found || got == w
		}
		if !found {
			t.Errorf("%s ran with CUDA_VISIBLE_DEVICES=%q, want one of %v", name, got, want)
		}
	}
	if cvd["small-1"] == cvd["small-2"] {
		t.Errorf("small-1 and small-2 (started together) share instance %s", cvd["small-1"])
	}
}

// Live mode takes the machine's MIG layout as it is: a profile Brigade
// does not know, a missing instance UUID or a layout that cannot exist are
// errors naming the GPU; a MIG GPU without instances is left unused.
func TestLiveMIGLayoutErrors(t *testing.T) {
	cases := []struct {
		name string
		edit func(g *GPU)
		want string
	}{
		{"unknown profile", func(g *GPU) { g.Instances[0].Profile = "5g.99gb" }, `MIG profile "5g.99gb"`},
		{"no uuid", func(g *GPU) { g.Instances[1].UUID = "" }, "no UUID"},
		{"overlap", func(g *GPU) { g.Instances[2].Start = 0 }, "do not form a layout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gpus := fakeMIGMachine(t)
			tc.edit(&gpus[0])
			var node hwmodel.Node
			node.GPUs = len(gpus)
			_, _, err := migLayouts(&node, gpus)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "GPU 0") {
				t.Fatalf("error %v, want one naming GPU 0 and %q", err, tc.want)
			}
		})
	}
	gpus := fakeMIGMachine(t)
	gpus[0].Instances = nil
	var node hwmodel.Node
	_, empty, err := migLayouts(&node, gpus)
	if err != nil || len(empty) != 1 || empty[0] != 0 {
		t.Fatalf("MIG GPU without instances: empty %v, err %v", empty, err)
	}
}

// A MIG GPU that goes down takes its instances out of service: the MIG job
// on it is killed and, with no other instance of its profile, waits; a
// 1g.18gb job queued behind cannot use the down GPU's free instance either.
func TestLiveMIGGPUDown(t *testing.T) {
	dir := t.TempDir()
	fh := NewFakeHealth(2)
	d := openHealthDriver(t, dir, fakeMIGMachine(t), fh)
	d.Submit([]JobSpec{{Name: "mid", Command: "sleep", Args: []string{"30"}, MIGProfile: "3g.71gb"}})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	pid := d.recs[0].PID
	d.pushHealth(GPUHealth{Index: 0, Down: true, Critical: true, Reason: "XID 79"})
	if err := d.healthRound(); err != nil {
		t.Fatal(err)
	}
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	d.Submit([]JobSpec{{Name: "small", Command: "true", MIGProfile: "1g.18gb"}})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for !gone(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !gone(pid) {
		t.Errorf("the MIG job's process %d survived its GPU going down", pid)
	}
	for _, r := range d.recs {
		if r.State != Failed && r.State != Queued {
			t.Errorf("%s: %s on a down MIG GPU", r.Spec.Name, r.State)
		}
	}
	for k := 0; k < d.cluster.MIGInstanceCount(0, 0); k++ {
		if d.cluster.MIGInstanceFree(0, 0, k) {
			t.Errorf("instance %d of the down GPU is free", k)
		}
	}
	d.Close()
}
