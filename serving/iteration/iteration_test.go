package iteration

import (
	"strings"
	"testing"
)

func TestParseArch(t *testing.T) {
	a, err := ReadArch("testdata/blis/qwen3-14b-config.json")
	if err != nil {
		t.Fatal(err)
	}
	want := Arch{Layers: 40, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, Intermediate: 17408, Vocab: 151936, BytesPerParam: 2}
	if a != want {
		t.Errorf("got %+v, want %+v", a, want)
	}
	for _, c := range []struct{ name, in, want string }{
		{"missing layers", `{"hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 10}`, "m.json:1: num_hidden_layers: missing"},
		{"line of a bad value", "{\n\"num_hidden_layers\": \"forty\",\n\"hidden_size\": 8, \"num_attention_heads\": 2, \"intermediate_size\": 8, \"vocab_size\": 10}", "m.json:2: num_hidden_layers"},
		{"negative", `{"num_hidden_layers": -1, "hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 10}`, "num_hidden_layers: want a positive whole number"},
		{"dtype", `{"num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 10, "torch_dtype": "int3"}`, "torch_dtype: want a dtype"},
		{"moe without top-k", `{"num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 10, "num_local_experts": 8}`, "num_experts_per_tok: missing"},
		{"heads do not divide", `{"num_hidden_layers": 1, "hidden_size": 9, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 10}`, "not a multiple"},
		{"not a mapping", `[1, 2]`, "want a mapping"},
		{"nested text_config", `{"text_config": {"hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 10}}`, "text_config.num_hidden_layers: missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseArch([]byte(c.in), "m.json")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestParseGPUs(t *testing.T) {
	g, err := ReadGPUs("testdata/blis/hardware_config.json")
	if err != nil {
		t.Fatal(err)
	}
	if h := g["H100"]; h != (GPU{Name: "H100", TFLOPs: 989.5, TFLOPsFP8: 1979, BandwidthTBs: 3.35, MemoryGiB: 80}) {
		t.Errorf("H100: %+v", h)
	}
	for _, c := range []struct{ name, in, want string }{
		{"no memory", "{\"X\": {\"TFlopsPeak\": 1, \"BwPeakTBs\": 1}}", "hw.json:1: X.MemoryGiB: missing"},
		{"zero memory", "{\"X\": {\"TFlopsPeak\": 1, \"BwPeakTBs\": 1,\n \"MemoryGiB\": 0}}", "hw.json:2: X.MemoryGiB: want a positive number"},
		{"not a mapping", `{"X": 3}`, "X: want a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseGPUs([]byte(c.in), "hw.json")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestParseCoeffs(t *testing.T) {
	c, err := ReadCoeffs("testdata/blis/defaults.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Alpha[0] != 15563.199579 || c.Beta[9] != 1.94710771 || !c.SplitPrefill || !c.SplitDecode {
		t.Errorf("got %v", c)
	}
	short, err := ParseCoeffs([]byte("trained_physics_coefficients: {alpha_coeffs: [1, 2, 3], beta_coeffs: [1, 2, 3, 4, 5, 6, 7]}"), "d.yaml")
	if err != nil || short.Beta[10] != 4 || short.SplitPrefill {
		t.Errorf("7 betas: %v %v; want the all-to-all term to default to Beta[3] and the roofline max", short, err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"no section", "defaults: {}", "trained_physics_coefficients: missing"},
		{"two alphas", "trained_physics_coefficients:\n  alpha_coeffs: [1, 2]\n  beta_coeffs: [1, 2, 3, 4, 5, 6, 7]", "d.yaml:2: trained_physics_coefficients.alpha_coeffs: want 3 numbers"},
		{"misspelt", "trained_physics_coefficients:\n  alpha_coeffs: [1, 2, 3]\n  beta_coefs: [1]", "beta_coefs"},
		{"negative", "trained_physics_coefficients: {alpha_coeffs: [1, 2, 3], beta_coeffs: [1, 2, 3, 4, 5, 6, -7]}", "want ≥ 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCoeffs([]byte(tc.in), "d.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestKVBlocks works out Qwen3-14B's cache on one H100 at 0.9 (BLIS's
// 15,909 blocks). Weights: embeddings and LM head 2 × 151,936 × 5,120 =
// 1,555,824,640; per layer attention 5,120 × (5,120 + 2,048) + 5,120² =
// 62,914,560, norms 10,240, FFN 3 × 5,120 × 17,408 = 267,386,880, so
// 330,311,680 × 40 layers = 13,212,467,200; final norm 5,120:
// 14,768,296,960 parameters, 29,536,593,920 bytes = 27.508 GiB. Free:
// 80 × 0.9 − 27.508 − 5.5 − 0.15 = 38.842 GiB = 41,705,8xx,xxx bytes; a
// block is 40 layers × 2 × 128 × 8 heads × 2 bytes × 16 tokens =
// 2,621,440 bytes: 15,909 blocks.
func TestKVBlocks(t *testing.T) {
	a, _ := ReadArch("testdata/blis/qwen3-14b-config.json")
	g := GPU{Name: "H100", TFLOPs: 989.5, BandwidthTBs: 3.35, MemoryGiB: 80}
	if w := WeightBytes(a); w != 29_536_593_920 {
		t.Errorf("weights %v bytes, want 29,536,593,920", w)
	}
	for _, c := range []struct {
		name  string
		g     GPU
		tp    int
		util  float64
		want  int64
		error string
	}{
		{"one H100", g, 1, 0.9, 15909, ""},
		{"no memory", GPU{Name: "X", TFLOPs: 1, BandwidthTBs: 1}, 1, 0.9, 0, "has no memory"},
		{"does not fit", GPU{Name: "small", TFLOPs: 1, BandwidthTBs: 1, MemoryGiB: 24}, 1, 0.9, 0, "no room for a KV cache"},
		{"too small for a request", GPU{Name: "tight", TFLOPs: 1, BandwidthTBs: 1, MemoryGiB: 37}, 1, 0.9, 0, "cannot hold one request"},
		{"bad fraction", g, 1, 0, 0, "want a fraction"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := KVBlocks(a, c.g, c.tp, 16, c.util, 10240)
			if c.error != "" {
				if err == nil || !strings.Contains(err.Error(), c.error) {
					t.Fatalf("got %d, %v; want an error containing %q", got, err, c.error)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

// TestStepTime checks the step formula on Qwen3-14B / H100 by hand.
// Weights read per step: 40 × (5,120 × (10,240 + 2,048) + 3 × 5,120 ×
// 17,408) × 2 bytes = 26,424,115,200 bytes / 3.35e6 bytes/µs = 7,887.8
// µs, × 1.36253 = 10,747.2 µs; fixed 32.0955 × 40 + 126.025 = 1,409.8
// µs. One decode at context 1,000: KV read 40 × 2 × 1,024 × 2 bytes ×
// 1,001 tokens / 3.35e6 = 48.96 µs × 1.9471 = 95.3; per request 4.42;
// decode compute has coefficient 0. Total 12,256.8, truncated: 12,256.
func TestStepTime(t *testing.T) {
	_, lat := qwenH100(t)
	for _, c := range []struct {
		name string
		b    Batch
		want int64
	}{
		{"empty", Batch{}, 1},
		{"one decode", Batch{Decodes: 1, DecodeCtx: 1000, Seqs: 1}, 12256},
	} {
		if got := lat.StepUS(&c.b); got != c.want {
			t.Errorf("%s: %d µs, want %d", c.name, got, c.want)
		}
	}
	// Tensor parallelism divides the work: the same batch on two GPUs
	// is faster but for the all-reduce it adds.
	a, _ := ReadArch("testdata/blis/qwen3-14b-config.json")
	gpus, _ := ReadGPUs("testdata/blis/hardware_config.json")
	co, _ := ReadCoeffs("testdata/blis/defaults.yaml")
	lat2, err := NewLatency(a, gpus["H100"], 2, co)
	if err != nil {
		t.Fatal(err)
	}
	big := Batch{PrefillTokens: 2048, PrefillAttn: 2048 * 3072, Seqs: 1}
	if one, two := lat.StepUS(&big), lat2.StepUS(&big); !(two < one) {
		t.Errorf("prefill of 2,048 tokens: TP 2 takes %d µs, TP 1 %d", two, one)
	}
	if _, err := NewLatency(a, gpus["H100"], 3, co); err == nil {
		t.Error("TP 3 does not divide 40 heads: want an error")
	}
}

// TestReplicaScenarios runs small hand-checked cases through a replica
// with a tiny cache and checks block conservation after every step.
func TestReplicaScenarios(t *testing.T) {
	_, lat := qwenH100(t)
	for _, c := range []struct {
		name        string
		p           Params
		reqs        []TraceReq
		preemptions int64 // at least (0: none)
		chunks      int64 // steps of the run (-1: not checked)
	}{
		// 5,000 prompt tokens at 2,048 a step: 3 prefill steps, then 2
		// decode steps for 3 output tokens.
		{"chunked prefill", Params{MaxSeqs: 4, TokenBudget: 2048, BlockSize: 16, KVBlocks: 400, MaxReqTokens: 5003},
			[]TraceReq{{Arrive: 0, In: 5000, Out: 3}}, 0, 5},
		// Two requests of 40 prompt and 40 output tokens need 5 blocks
		// each at the end; 8 blocks cannot hold both, so the newer is
		// preempted when both need their fifth (and again each time it
		// comes back, until the older is done).
		{"preemption", Params{MaxSeqs: 4, TokenBudget: 2048, BlockSize: 16, KVBlocks: 8, MaxReqTokens: 80},
			[]TraceReq{{Arrive: 0, In: 40, Out: 40}, {Arrive: 0, In: 40, Out: 40}}, 1, -1},
		// The sequence limit keeps the second request waiting.
		{"max seqs", Params{MaxSeqs: 1, TokenBudget: 2048, BlockSize: 16, KVBlocks: 100, MaxReqTokens: 20},
			[]TraceReq{{Arrive: 0, In: 10, Out: 2}, {Arrive: 0, In: 10, Out: 2}}, 0, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReplica(c.p, lat)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range c.reqs {
				r.Queue(r.Add(q.Arrive, q.In, q.Out), q.Arrive)
			}
			for t0 := r.Next(); t0 >= 0; t0 = r.Next() {
				r.Step(t0)
				held := int64(0)
				for _, q := range r.Reqs {
					held += int64(len(q.blocks))
					if q.Done < 0 && len(q.blocks) > 0 {
						if want := (q.progress + 15) / 16; int64(len(q.blocks)) != want && q.progress > 0 {
							t.Fatalf("a request with %d tokens cached holds %d blocks, want %d", q.progress, len(q.blocks), want)
						}
					}
				}
				if held+int64(r.kv.free) != c.p.KVBlocks {
					t.Fatalf("blocks held %d + free %d != %d", held, r.kv.free, c.p.KVBlocks)
				}
			}
			for k, q := range r.Reqs {
				if q.Done < 0 || q.First < 0 || q.Done < q.First {
					t.Errorf("request %d: first %d done %d", k, q.First, q.Done)
				}
				if q.Out > 1 && q.ITLs != q.Out-1 {
					t.Errorf("request %d: %d token gaps, want %d", k, q.ITLs, q.Out-1)
				}
			}
			if r.Preemptions < c.preemptions || (c.preemptions == 0 && r.Preemptions > 0) {
				t.Errorf("%d preemptions, want %d", r.Preemptions, c.preemptions)
			}
			if c.chunks >= 0 && r.Steps != c.chunks {
				t.Errorf("%d steps, want %d", r.Steps, c.chunks)
			}
		})
	}
}

func TestDeque(t *testing.T) {
	var d deque
	var want []int32
	for i := range int32(40) {
		if i%3 == 0 {
			d.pushFront(i)
			want = append([]int32{i}, want...)
		} else {
			d.pushBack(i)
			want = append(want, i)
		}
	}
	for _, w := range want {
		if d.front() != w {
			t.Fatalf("front %d, want %d", d.front(), w)
		}
		d.popFront()
	}
	if d.len() != 0 {
		t.Fatal("not empty")
	}
}
