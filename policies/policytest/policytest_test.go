package policytest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"

	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/policies/policytest"
)

// The reference driver keeps the contract.
func TestReferenceDriver(t *testing.T) {
	policytest.TestDriver(t, func(t *testing.T, sc policytest.Scenario, p policies.Policy) policytest.Outcome {
		out, err := policytest.Reference(sc, p)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}, policytest.DriverOptions{Deterministic: true})
}

// Every built-in policy spec keeps its half of the contract.
func TestEveryBuiltInPolicy(t *testing.T) {
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	for _, spec := range policies.AllSpecs() {
		if spec.MIGReconfigure {
			continue // the scenarios hold no MIG GPU: the same policy as static
		}
		t.Run(spec.String(), func(t *testing.T) { policytest.TestPolicy(t, spec, seeds) })
	}
}

// brokenDriver runs every job of a scenario for one round per attempt
// on a Host, with one deliberate fault, so the Checker can be seen to
// catch each.
// A driver calls only when it has news; "chatty" and "silent" call every
// round.
func brokenDriver(fault string, sc policytest.Scenario, p policies.Policy) error {
	cluster, err := hwmodel.NewCluster(sc.Nodes)
	if err != nil {
		return err
	}
	var h policies.Host
	if err := h.Init(cluster, sc.Tenants, nil); err != nil {
		return err
	}
	for _, j := range sc.Jobs {
		h.Queue(h.AddJob(policies.Job{Name: j.Name, Tenant: j.Tenant, Estimate: 1, Req: j.Req}))
	}
	placed := map[policies.JobID]hwmodel.Placement{}
	for now := policies.Time(0); now < 50; now++ {
		h.SetNow(now)
		news := h.HasNews()
		for id, pl := range placed {
			if fault == "leak" {
				h.Events().Ended = append(h.Events().Ended, id) // reported, never released
				news = true
			} else {
				h.Stop(id, pl)
			}
			delete(placed, id)
		}
		if !news && !h.HasNews() && fault != "chatty" && fault != "silent" {
			continue
		}
		h.Schedule(p, func(d policies.Decision) string {
			switch {
			case fault == "silent":
				return "" // neither applied nor rejected
			case fault == "unbooked":
				if err := cluster.Allocate(d.Placement); err != nil {
					return err.Error()
				}
				h.Events().Started = append(h.Events().Started, d.Job)
			case fault == "double":
				if err := h.Start(d.Job, d.Placement); err != nil {
					return err.Error()
				}
				h.Events().Started = append(h.Events().Started, d.Job)
			default:
				if err := h.Start(d.Job, d.Placement); err != nil {
					return err.Error()
				}
			}
			placed[d.Job] = d.Placement
			return ""
		})
	}
	return nil
}

func TestCheckerCatchesBrokenDrivers(t *testing.T) {
	sc := policytest.Scenarios()[1]
	for _, tc := range []struct{ fault, want string }{
		{"", ""},
		{"silent", "neither applied nor rejected"},
		{"unbooked", "books"},
		{"double", "without a Start decision"},
		{"leak", "were not released"},
		{"chatty", "called without news"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			c := policytest.Wrap(policies.MustParseSpec("fcfs").MustNew(), policytest.CheckerOptions{})
			if err := brokenDriver(tc.fault, sc, c); err != nil {
				t.Fatal(err)
			}
			err := c.Err()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("a correct driver flagged: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("fault %s: err = %v, want one saying %q", tc.fault, err, tc.want)
			}
		})
	}
}

// A policy that starts without reserving is caught.
func TestCheckerCatchesUnreservedStarts(t *testing.T) {
	c := policytest.Wrap(unreserved{}, policytest.CheckerOptions{})
	_, _ = policytest.Reference(policytest.Scenarios()[0], c) // it stalls: it forgets jobs that did not fit
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "without reserving it") {
		t.Fatalf("err = %v", err)
	}
}

// unreserved starts each queued job on first fit without Reserve.
type unreserved struct{}

func (unreserved) Name() string { return "unreserved" }
func (unreserved) Schedule(v policies.View) []policies.Decision {
	var ds []policies.Decision
	for _, id := range v.Events().Queued {
		if p, ok := new(policies.FirstFit).Place(nil, v.Cluster(), v.Job(id).Req); ok {
			ds = append(ds, policies.Decision{Kind: policies.Start, Job: id, Placement: p})
		}
	}
	return ds
}

// The kueue order keeps the contract over ClusterQueues that borrow,
// lend and preempt, with quotas that add up to the scenario's GPUs (16
// H100s, 4 A100s): x, y and z share a cohort (so a 12-GPU gang can
// borrow), x and y reclaim, z preempts lower or newer equal priorities
// in its own queue.
func TestKueuePolicy(t *testing.T) {
	h100, _ := hwmodel.LookupModel("H100-80GB")
	a100, _ := hwmodel.LookupModel("A100-80GB")
	quota := func(f int, gpus int64) policies.Quota {
		q := policies.Quota{Flavor: f}
		for r := range policies.NumRes {
			q.BorrowingLimit[r], q.LendingLimit[r] = policies.NoLimit, policies.NoLimit
		}
		q.Covered[policies.ResGPU] = true
		q.Nominal[policies.ResGPU] = gpus * hwmodel.MilliPerGPU
		return q
	}
	pre := policies.Preemption{WithinClusterQueue: policies.PreemptLowerPriority, ReclaimWithinCohort: policies.PreemptAny}
	for _, fair := range []bool{false, true} {
		cfg := &policies.Kueue{
			Flavors: []policies.KueueFlavor{{Name: "h100", Model: h100.ID}, {Name: "a100", Model: a100.ID}},
			Queues: []policies.ClusterQueue{
				{Name: "x", Cohort: "org", Strategy: policies.BestEffortFIFO, Preemption: pre, Weight: 1, Flavors: []policies.Quota{quota(0, 6), quota(1, 1)}},
				{Name: "y", Cohort: "org", Strategy: policies.StrictFIFO, Preemption: pre, Weight: 2, Flavors: []policies.Quota{quota(0, 6), quota(1, 1)}},
				{Name: "z", Cohort: "org", Strategy: policies.StrictFIFO, Preemption: policies.Preemption{WithinClusterQueue: policies.PreemptLowerOrNewerEqualPriority}, Weight: 1, Flavors: []policies.Quota{quota(1, 2), quota(0, 4)}},
			},
			Local:       []policies.LocalQueue{{Name: "x", Queue: 0}, {Name: "y", Queue: 1}, {Name: "z", Queue: 2}},
			FairSharing: fair,
		}
		for _, placement := range []string{"firstfit", "bestfit"} {
			spec := policies.Spec{Order: "kueue", Options: policies.Options{Placement: placement, Kueue: cfg}}
			t.Run(fmt.Sprintf("%s/fair=%v", spec, fair), func(t *testing.T) { policytest.TestPolicy(t, spec, 5) })
		}
	}
}
