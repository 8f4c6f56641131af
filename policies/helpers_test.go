package policies

import (
	"fmt"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// Builders and a tiny driver for tests and benchmarks.

func model(tb testing.TB, name string) hwmodel.ModelID {
	tb.Helper()
	m, ok := hwmodel.LookupModel(name)
	if !ok {
		tb.Fatalf("unknown model %q", name)
	}
	return m.ID
}

// node is a node spec: n GPUs of a model, with CPU and memory.
func node(m hwmodel.ModelID, gpus int, cpu, mem int64) hwmodel.Node {
	return hwmodel.Node{Model: m, GPUs: gpus, CPUMilli: cpu, MemoryMiB: mem}
}

// newCluster names the nodes n0, n1, ... and builds the cluster.
func newCluster(tb testing.TB, nodes ...hwmodel.Node) *hwmodel.Cluster {
	tb.Helper()
	for i := range nodes {
		nodes[i].Name = fmt.Sprintf("n%d", i)
	}
	c, err := hwmodel.NewCluster(nodes)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// whole is a request for g whole GPUs with 1 CPU and 1 GiB per GPU.
func whole(g int) hwmodel.Request {
	return hwmodel.Request{GPUs: g, GPUMilli: hwmodel.MilliPerGPU, CPUMilli: int64(g) * 1000, MemoryMiB: int64(g) * 1024}
}

func frac(milli int32) hwmodel.Request {
	return hwmodel.Request{GPUs: 1, GPUMilli: milli, CPUMilli: 500, MemoryMiB: 512}
}

func cpuOnly(cpu int64) hwmodel.Request {
	return hwmodel.Request{CPUMilli: cpu, MemoryMiB: 1024}
}

// busy takes capacity on a node: the GPUs in mask, milli each, and CPU.
func busy(tb testing.TB, c *hwmodel.Cluster, nodeIdx int, mask uint64, milli int32, cpu int64) hwmodel.Placement {
	tb.Helper()
	if mask == 0 {
		milli = 0
	}
	p := hwmodel.Placement{{Node: nodeIdx, GPUs: mask, Milli: milli, CPUMilli: cpu}}
	if err := c.Allocate(p); err != nil {
		tb.Fatal(err)
	}
	return p
}

// fakeView is the test driver: the shared Host plus jobs whose ends the
// test decides, checking that every Start matches its job's request.
type fakeView struct {
	Host
	tb      testing.TB
	placed  []hwmodel.Placement // by job ID, while running
	running []bool
	reject  map[JobID]bool // Start decisions to refuse once
	rejects int
	queued  int // jobs waiting, as the driver sees it
}

func newFakeView(tb testing.TB, c *hwmodel.Cluster, tenants ...Tenant) *fakeView {
	if len(tenants) == 0 {
		tenants = []Tenant{{Name: "default", Weight: 1}}
	}
	f := &fakeView{tb: tb}
	if err := f.Init(c, tenants, nil); err != nil {
		tb.Fatal(err)
	}
	return f
}

// add creates a job (ID = next index) and reports it queued now. Estimate
// defaults to one hour.
func (f *fakeView) add(j Job) JobID {
	if j.Estimate == 0 {
		j.Estimate = hwmodel.Hour
	}
	if j.Queued == 0 {
		j.Queued = j.Submit
	}
	id := f.AddJob(j)
	f.placed = append(f.placed, nil)
	f.running = append(f.running, false)
	f.Queue(id)
	f.queued++
	return id
}

// requeue puts a job that is not running back in the queue now.
func (f *fakeView) requeue(id JobID) {
	j := f.Job(id)
	j.Submit, j.Queued = f.now, f.now
	f.Queue(id)
	f.queued++
}

// call runs one scheduling point and returns a copy of the decisions.
func (f *fakeView) call(p Policy) []Decision {
	out := f.callNoCopy(p)
	return append([]Decision(nil), out...)
}

func (f *fakeView) callNoCopy(p Policy) []Decision {
	ds := f.Schedule(p, f.apply)
	f.rejects += len(f.events.Rejected)
	return ds
}

func (f *fakeView) apply(d Decision) string {
	if d.Kind != Start {
		return "unsupported"
	}
	if f.reject[d.Job] {
		delete(f.reject, d.Job)
		return "refused by test"
	}
	if f.running[d.Job] {
		f.tb.Fatalf("job %d started twice", d.Job)
	}
	j := f.Job(d.Job)
	var cpu, mem int64
	for _, s := range d.Placement {
		if s.GPUs != 0 && (!j.Req.Models.Accepts(f.cluster.Node(s.Node).Model) || s.Milli != j.Req.GPUMilli) {
			f.tb.Fatalf("job %d: placement %+v does not match request %+v", d.Job, d.Placement, j.Req)
		}
		cpu += s.CPUMilli
		mem += s.MemoryMiB
	}
	if d.Placement.GPUCount() != j.Req.GPUs || cpu != j.Req.CPUMilli || mem != j.Req.MemoryMiB {
		f.tb.Fatalf("job %d: placement %+v does not match request %+v", d.Job, d.Placement, j.Req)
	}
	if err := f.Start(d.Job, d.Placement); err != nil {
		return err.Error()
	}
	j.Start = f.now
	f.queued--
	f.placed[d.Job] = d.Placement
	f.running[d.Job] = true
	return ""
}

// end stops a running job and reports it.
func (f *fakeView) end(id JobID) {
	if !f.running[id] {
		f.tb.Fatalf("job %d is not running", id)
	}
	f.Stop(id, f.placed[id])
	f.placed[id] = nil
	f.running[id] = false
}

func ids(ds []Decision) []JobID {
	out := make([]JobID, len(ds))
	for i, d := range ds {
		out[i] = d.Job
	}
	return out
}

func mustNew(tb testing.TB, name string, opt Options) Policy {
	tb.Helper()
	p, err := New(name, opt)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
