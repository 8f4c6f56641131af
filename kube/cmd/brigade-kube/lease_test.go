package main

import (
	"strings"
	"testing"
)

// Lease timings that leader election cannot use are refused before any
// connection, naming the rule.
func TestLeaseFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		bad  bool
	}{
		{[]string{"--leader-elect", "--lease-duration=2s", "--renew-deadline=2s", "--retry-period=250ms"}, true},
		{[]string{"--leader-elect", "--lease-duration=2s", "--renew-deadline=1500ms", "--retry-period=2s"}, true},
		{[]string{"--leader-elect", "--retry-period=0s"}, true},
		// Without --leader-elect the timings are not used.
		{[]string{"--lease-duration=1s", "--kubeconfig=/nonexistent/kubeconfig"}, false},
	} {
		err := run(append(tc.args, "--metrics="))
		rule := err != nil && strings.Contains(err.Error(), "--lease-duration > --renew-deadline > --retry-period > 0")
		if rule != tc.bad {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
}
