package live

import (
	"fmt"

	"github.com/brigadesim/brigade/policies"
)

// newPolicy builds the policy a live run names by its spec (the grammar
// brigade sim takes). Two kinds of spec cannot run here: MIG
// reconfiguration, because live mode never changes a GPU's settings, and
// fgd placement, whose target workload is a trace's requests that a live
// run does not have before its jobs arrive.
func newPolicy(text string) (policies.Policy, policies.Spec, error) {
	spec, err := policies.ParseSpec(text)
	if err != nil {
		return nil, spec, err
	}
	switch {
	case spec.MIGReconfigure:
		return nil, spec, fmt.Errorf("policy %q: live mode never repartitions MIG GPUs (it never changes GPU settings); run it with the MIG layouts the GPUs have", text)
	case spec.NeedsTarget():
		return nil, spec, fmt.Errorf("policy %q: fgd placement needs a target workload, which a live run does not have; use another placement", text)
	}
	pol, err := spec.New()
	return pol, spec, err
}
