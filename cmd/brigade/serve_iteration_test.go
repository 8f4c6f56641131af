package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The shipped iteration-level example: brigade serve runs BLIS's first
// 600 rate-14 requests through one engine simulated step by step, and
// the summary carries the engine's books. BLIS ran these requests without
// a preemption; the cache's peak (0.60 of 15,909 blocks) is far from full.
func TestServeIterationExample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := serve(t, "../../examples/serving/iteration.yaml", "--out", out, "--quiet", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "serving_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Variants []struct {
			Services []struct {
				All struct {
					Completed int64 `json:"completed"`
				} `json:"all"`
				Engine *struct {
					Steps       int64   `json:"steps"`
					Preemptions int64   `json:"preemptions"`
					KVBlocks    int64   `json:"kv_blocks"`
					KVUtilPeak  float64 `json:"kv_util_peak"`
				} `json:"engine"`
			} `json:"services"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	s := sum.Variants[0].Services[0]
	if s.All.Completed != 600 {
		t.Errorf("completed %d, want the trace's 600", s.All.Completed)
	}
	if e := s.Engine; e == nil || e.Steps == 0 || e.Preemptions != 0 || e.KVBlocks != 15909 || !(e.KVUtilPeak > 0.3 && e.KVUtilPeak < 0.9) {
		t.Errorf("engine books %+v; want steps, no preemptions, 15,909 blocks, a peak well below full", e)
	}
}
