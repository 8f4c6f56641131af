package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shipped seed example: the 50 -> 500 rps burst through a tokenizer
// and a KV lookup, interactive requests on a low-latency pool and the
// batch API on a batch pool, both autoscaled. Both pools scale out in the
// burst, every class reports both stages, and docs/serving.md shows the
// table it prints.
func TestServeSeedExample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := serve(t, "../../examples/serving/seed.yaml", "--out", out, "--quiet", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "serving_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	type latency struct{ Mean, P99, Max float64 }
	var sum struct {
		Variants []struct {
			Services []struct {
				Name    string `json:"name"`
				Classes []struct {
					Name     string `json:"name"`
					Requests int64  `json:"requests"`
					Stages   []struct {
						Name  string  `json:"name"`
						Wait  latency `json:"wait_s"`
						Total latency `json:"total_s"`
					} `json:"stages"`
				} `json:"classes"`
				ScaleOuts  int64 `json:"scale_outs"`
				MaxReplica int   `json:"max_replicas_ready"`
			} `json:"services"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	svcs := sum.Variants[0].Services
	if len(svcs) != 2 || svcs[0].Name != "llm-70b/low-latency" || svcs[1].Name != "llm-70b/batch" {
		t.Fatalf("services %+v", svcs)
	}
	// 50 rps for 70 minutes and 500 rps for 20: about 810,000 requests,
	// 70 % interactive.
	inter, bulk := svcs[0].Classes[0], svcs[1].Classes[0]
	if inter.Name != "interactive" || bulk.Name != "batch-api" {
		t.Fatalf("classes %s, %s", inter.Name, bulk.Name)
	}
	if n := inter.Requests + bulk.Requests; n < 800_000 || n > 820_000 || math.Abs(float64(inter.Requests)/float64(n)-0.7) > 0.005 {
		t.Errorf("requests: %d interactive, %d batch-api", inter.Requests, bulk.Requests)
	}
	for _, s := range svcs {
		if s.ScaleOuts == 0 || s.MaxReplica < 32 {
			t.Errorf("%s: %d scale-outs, at most %d ready: want the burst to scale it out", s.Name, s.ScaleOuts, s.MaxReplica)
		}
		st := s.Classes[0].Stages
		if len(st) != 2 || st[0].Name != "tokenizer" || st[1].Name != "kv-lookup" {
			t.Fatalf("%s stages %+v", s.Name, st)
		}
		// The lookup's 64 workers never queue: exactly its 0.5 ms. The
		// tokenizer's 4 ms mean plus waits of 4 workers at most half busy.
		if st[1].Wait.Max != 0 || st[1].Total.Mean != 0.0005 || st[1].Total.Max != 0.0005 {
			t.Errorf("%s kv-lookup %+v", s.Name, st[1])
		}
		if tok := st[0]; !(tok.Total.Mean > 0.004 && tok.Total.Mean < 0.0045) || !(tok.Wait.Max > 0) {
			t.Errorf("%s tokenizer %+v", s.Name, tok)
		}
	}
	if !strings.Contains(stdout, "default  llm-70b/low-latency  interactive") || !strings.Contains(stdout, "default llm-70b/batch batch-api: tokenizer ") {
		t.Fatalf("table:\n%s", stdout)
	}
	if testing.Short() {
		return
	}
	doc, err := os.ReadFile("../../docs/serving.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), stdout) {
		t.Fatalf("docs/serving.md does not show the seed example's table; update it from 'go run ./cmd/brigade serve examples/serving/seed.yaml':\n%s", stdout)
	}
}
