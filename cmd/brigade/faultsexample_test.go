package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// TestFaultsExampleSmall runs the example small: checkpoints bound what
// each failure costs the training job, and without checkpoints it fails.
func TestFaultsExampleSmall(t *testing.T) {
	md := filepath.Join(t.TempDir(), "faults.md")
	f := faultsExampleFlags{batch: 300, load: 0.8, seed: 2, nodeMTBF: "10d", nodeRepair: "2h", trainDays: 4, trainGPUs: 128,
		ckptEvery: "5m", ckptCost: "10s", restart: "2m", maxRetries: 10, md: md, check: true}
	ex, err := runFaultSetups(f)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]faultRow{}
	for _, r := range ex.rows {
		byName[r.setup.name] = r
	}
	base, ck, none := byName["no-faults"], byName["checkpoints"], byName["no-checkpoints"]
	if base.sum.Faults.Count != 0 || base.train.HardwareFailures != 0 || base.sum.LostGPUHours != 0 {
		t.Errorf("no-faults: %+v", base.sum.Faults)
	}
	if ck.train.HardwareFailures == 0 || ck.train.State != "succeeded" {
		t.Fatalf("checkpoints: training job %s with %d failures; want it hit and done", ck.train.State, ck.train.HardwareFailures)
	}
	// Each failure costs at most one checkpoint interval and its cost, the
	// detection delay (≤ interval + timeout = 35 s) and the restart.
	perFailure := 5*hwmodel.Minute + 10*hwmodel.Second + 35*hwmodel.Second + 2*hwmodel.Minute
	if ck.train.Lost > hwmodel.Time(ck.train.HardwareFailures)*perFailure {
		t.Errorf("training job lost %v s over %d failures; want at most %v s each", ck.train.Lost.Seconds(), ck.train.HardwareFailures, perFailure.Seconds())
	}
	if none.train.Lost <= ck.train.Lost || none.sum.Goodput >= ck.sum.Goodput {
		t.Errorf("no checkpoints lost %v s, goodput %v; checkpoints %v s, %v", none.train.Lost.Seconds(), none.sum.Goodput, ck.train.Lost.Seconds(), ck.sum.Goodput)
	}
	var b strings.Builder
	writeFaultsMarkdown(&b, f, ex)
	if !strings.Contains(b.String(), "| checkpoints |") || strings.Contains(b.String(), "%!") {
		t.Errorf("markdown:\n%s", b.String())
	}
	code, stdout, stderr := brigade(t, "faults-example", "--batch-jobs", "200", "--train-days", "2", "--md", md, "--png", filepath.Join(filepath.Dir(md), "f.png"))
	if code != exitOK || !strings.Contains(stdout, "no-backfill") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "--batch-jobs 200") {
		t.Errorf("%s does not name its non-default command: %v", md, err)
	}
}
