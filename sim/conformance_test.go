package sim_test

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/policies/policytest"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// The engine keeps the policy contract: the conformance suite's scenarios
// under built-in, preempting and adversarial policies.
func TestDriverConformance(t *testing.T) {
	policytest.TestDriver(t, runScenario, policytest.DriverOptions{Deterministic: true, MIG: true})
}

func runScenario(t *testing.T, sc policytest.Scenario, p policies.Policy) policytest.Outcome {
	w := &workloads.Workload{}
	for _, tn := range sc.Tenants {
		w.Tenants = append(w.Tenants, workloads.Tenant{Name: tn.Name, Weight: tn.Weight})
	}
	for _, j := range sc.Jobs {
		w.Jobs = append(w.Jobs, workloads.Job{Name: j.Name, Tenant: sc.Tenants[j.Tenant].Name, Priority: j.Priority,
			Submit: j.Submit, Duration: j.Duration, Estimate: j.Estimate, Req: j.Req,
			FailedAttempts: j.Fails, MaxRetries: j.Fails})
	}
	c, err := hwmodel.NewCluster(sc.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	e, err := sim.New(sim.Config{Cluster: c, Workload: w, Policy: p, CheckInvariants: true,
		MIGReconfigure: sc.MIGReconfigure, MIGConvertWhole: sc.MIGReconfigure, MIGReconfigTime: hwmodel.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	var out policytest.Outcome
	for _, o := range res.Jobs {
		switch o.State {
		case sim.Succeeded:
			out.Succeeded++
		case sim.Failed:
			out.Failed++
		}
	}
	return out
}
