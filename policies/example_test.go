package policies_test

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// view is the smallest driver: the View a policy reads, plus reservations
// that last for one call.
type view struct {
	now      policies.Time
	cluster  *hwmodel.Cluster
	jobs     []policies.Job
	tenants  []policies.Tenant
	events   policies.Events
	reserved []hwmodel.Placement
}

func (v *view) Now() policies.Time                  { return v.now }
func (v *view) Cluster() *hwmodel.Cluster           { return v.cluster }
func (v *view) Job(id policies.JobID) *policies.Job { return &v.jobs[id] }
func (v *view) Tenants() []policies.Tenant          { return v.tenants }
func (v *view) Events() *policies.Events            { return &v.events }
func (v *view) Reserve(p hwmodel.Placement) error {
	if err := v.cluster.Allocate(p); err != nil {
		return err
	}
	v.reserved = append(v.reserved, p)
	return nil
}

func Example() {
	cluster, _ := hwmodel.NewCluster([]hwmodel.Node{
		{Name: "a", Model: 1, GPUs: 4, CPUMilli: 32000, MemoryMiB: 256 << 10},
		{Name: "b", Model: 1, GPUs: 8, CPUMilli: 64000, MemoryMiB: 512 << 10},
	})
	v := &view{cluster: cluster, tenants: []policies.Tenant{{Name: "lab", Weight: 1}}}
	for i, gpus := range []int{8, 4, 2} {
		v.jobs = append(v.jobs, policies.Job{
			ID: policies.JobID(i), Submit: policies.Time(i), Estimate: hwmodel.Hour,
			Req: hwmodel.Request{GPUs: gpus, GPUMilli: 1000, CPUMilli: int64(gpus) * 4000},
		})
		v.events.Queued = append(v.events.Queued, policies.JobID(i))
	}

	p, err := policies.New("fcfs", policies.Options{Placement: "bestfit", Backfill: true})
	if err != nil {
		panic(err)
	}
	decisions := p.Schedule(v)

	// The driver drops the reservations, then applies the decisions and
	// reports what it accepted at the next call.
	for _, r := range v.reserved {
		v.cluster.Release(r)
	}
	v.reserved = v.reserved[:0]
	v.events.Reset()
	fmt.Println(p.Name())
	for _, d := range decisions {
		if err := v.cluster.Allocate(d.Placement); err != nil {
			v.events.Rejected = append(v.events.Rejected, policies.Rejection{Decision: d, Reason: err.Error()})
			continue
		}
		v.events.Started = append(v.events.Started, d.Job)
		for _, s := range d.Placement {
			fmt.Printf("%s job %d on node %s GPUs %08b\n", d.Kind, d.Job, cluster.Node(s.Node).Name, s.GPUs)
		}
	}
	// Output:
	// fcfs+bf/bestfit
	// start job 0 on node b GPUs 11111111
	// start job 1 on node a GPUs 00001111
}
