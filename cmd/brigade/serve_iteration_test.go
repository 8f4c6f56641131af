package main

import (
	"encoding/json"
	"math"
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

// The shipped prefix-caching example: the numbers docs/serving.md quotes
// (the engine's prefix books, the chat class's hit ratio) are the run's.
func TestServePrefixExample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := serve(t, "../../examples/serving/prefix.yaml", "--out", out, "--quiet", "--no-plots")
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
				Classes []struct {
					Completed int64   `json:"completed"`
					HitRatio  float64 `json:"prefix_cache_hit_ratio"`
				} `json:"classes"`
				Engine struct {
					Queries int64 `json:"prefix_cache_queries"`
					Hits    int64 `json:"prefix_cache_hits"`
				} `json:"engine"`
			} `json:"services"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	cached, uncached := sum.Variants[0].Services[0], sum.Variants[1].Services[0]
	if e := cached.Engine; e.Queries != 7983623 || e.Hits != 5310931 {
		t.Errorf("cached: engine found %d of %d prompt tokens; docs/serving.md says 5,310,931 of 7,983,623 (update it)", e.Hits, e.Queries)
	}
	if c := cached.Classes[0]; c.Completed != 2685 || math.Abs(c.HitRatio-0.748) > 0.0005 {
		t.Errorf("cached chat: %d completed, hit ratio %g; docs/serving.md says 2,685 and 0.748", c.Completed, c.HitRatio)
	}
	if uncached.Engine.Hits != 0 || uncached.Classes[0].HitRatio != 0 {
		t.Errorf("uncached: %d hit tokens, chat ratio %g; want none", uncached.Engine.Hits, uncached.Classes[0].HitRatio)
	}
}
