package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --slurm-conf adds the multifactor policy its priority keys name, after
// --policy's specs or alone; a bad key fails with its file, line and key.
func TestSimSlurmConf(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte("ClusterName=c\nPriorityWeightAge=1000\nPriorityWeightFairshare=10000\nPriorityDecayHalfLife=1-0\nPriorityCalcPeriod=5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const label = "multifactor+age=1000+fs=10000+halflife=1d"
	for _, tc := range []struct {
		args []string
		want string // the policies line of stderr
	}{
		{nil, "policies " + label},
		{[]string{"--policy", "fcfs,fair"}, "policies fcfs,fair," + label},
		{[]string{"--backfill"}, "policies multifactor+bf+age=1000+fs=10000+halflife=1d"},
	} {
		args := append([]string{"sim", "--no-plots", "--synthetic", "30", "--slurm-conf", conf, "--out", filepath.Join(t.TempDir(), "o")}, tc.args...)
		code, _, stderr := brigade(t, args...)
		if code != exitOK || !strings.Contains(stderr, tc.want+"\n") {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
	bad := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(bad, []byte("PriorityWeightAge=1000\n\nPriorityWeightTres=CPU=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := brigade(t, "sim", "--synthetic", "10", "--slurm-conf", bad, "--out", filepath.Join(t.TempDir(), "o"))
	if want := bad + ":3: PriorityWeightTres: not a priority key Brigade models"; code == exitOK || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want %q", code, stderr, want)
	}
}
