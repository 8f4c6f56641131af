package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Subcommands refuse what they cannot use before any connection, and say
// what they expected.
func TestSubcommandArguments(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("name,submit_s,duration_s,gpus\nj1,0,ten,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"submit"}, "submit needs --jobs"},
		{[]string{"submit", "--jobs", bad}, "bad.csv:2"},
		{[]string{"bench", "--kubeconfig=/nonexistent"}, "bench needs --namespace"},
		{[]string{"--node-selector", "zone"}, `"zone" is not label=value`},
		{[]string{"--kube-api-qps", "0"}, "--kube-api-qps and --kube-api-burst must be > 0"},
	} {
		err := run(append(tc.args, "--metrics="))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
