package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// brigade sim --policy kueue reads the manifests --kueue names, records
// them in run.json, and refuses a kueue policy without them, manifests
// without a kueue policy, and a tenant that names no LocalQueue.
func TestSimKueue(t *testing.T) {
	dir := t.TempDir()
	ex := func(f string) string { return filepath.Join("..", "..", "examples", f) }
	base := []string{"sim", "--quiet", "--no-plots", "--trace", ex("kueue/jobs.csv"), "--cluster", ex("kueue/cluster.yaml")}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := brigade(t, append(base, "--policy", "kueue,kueue/bestfit", "--kueue", ex("kueue/baseline.yaml"), "--out", out)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "kueue/bestfit") || !strings.Contains(stdout, "1998/1998") {
		t.Errorf("table lacks the kueue rows or its jobs:\n%s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"role": "kueue"`) || !strings.Contains(string(b), "baseline.yaml") {
		t.Errorf("run.json does not record the manifests:\n%s", b)
	}
	bad := filepath.Join(dir, "bad.yaml")
	src, err := os.ReadFile(ex("kueue/baseline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(strings.Replace(string(src), "name: team-d\n", "name: team-e\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "kueue"}, "the kueue order needs Kueue manifests: give --kueue FILE"},
		{[]string{"--policy", "fcfs", "--kueue", ex("kueue/baseline.yaml")}, "no policy of the kueue order reads it"},
		{[]string{"--policy", "kueue+bf", "--kueue", ex("kueue/baseline.yaml")}, "the kueue order takes no option but a placement"},
		{[]string{"--policy", "kueue", "--kueue", bad}, `tenant "team-d" names no LocalQueue`},
	} {
		code, _, stderr := brigade(t, append(append(base, "--out", filepath.Join(dir, "x")), tc.args...)...)
		if code == exitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %s; want an error with %q", tc.args, code, stderr, tc.want)
		}
	}
}
