package policytest_test

import (
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
