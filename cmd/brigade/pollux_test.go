package main

import (
	"strings"
	"testing"
)

// TestPolluxGolden holds brigade pollux's table: every workload and load
// of the artifact, every job exactly equal to the published JCT.
func TestPolluxGolden(t *testing.T) {
	code, stdout, stderr := brigade(t, "pollux")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "pollux.golden.txt", []byte(stdout))
	if !strings.Contains(stdout, "\n6400 jobs of 6400 exactly equal") {
		t.Errorf("not every job is exact:\n%s", stdout)
	}
}

func TestPolluxFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"pollux", "--load", "3.0"}, exitUsage, `--load: want loads among 0.5, 1.0, 1.5, 2.0, got "3.0"`},
		{[]string{"pollux", "--load", "0.5", "--policy", "nosuch"}, exitError, "nosuch"},
		{[]string{"pollux", "--load", "0.5", "--policy", "fcfs/mostfree"}, exitOK, "0.5   mean of 8"},
	} {
		code, stdout, stderr := brigade(t, c.args...)
		if code != c.code || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("%v: exit %d, output %q%q; want exit %d and %q", c.args, code, stdout, stderr, c.code, c.want)
		}
	}
}
