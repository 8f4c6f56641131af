package iteration

import (
	"fmt"

	"github.com/brigadesim/brigade/config"
)

// Arch is what the latency model and the KV cache need of a model's
// architecture, read from a Hugging Face config.json.
type Arch struct {
	Layers       int // num_hidden_layers
	Hidden       int // hidden_size
	Heads        int // num_attention_heads
	KVHeads      int // num_key_value_heads (absent: Heads, plain multi-head attention)
	HeadDim      int // head_dim (absent: Hidden / Heads)
	Intermediate int // intermediate_size, the FFN width (per expert for MoE)
	Vocab        int // vocab_size
	TiedEmbed    bool
	// Experts is the routed experts per MoE layer (num_local_experts or
	// num_experts; 0: dense), ExpertsPerToken num_experts_per_tok and
	// ExpertFFN moe_intermediate_size (0: Intermediate).
	Experts, ExpertsPerToken, ExpertFFN int
	// BytesPerParam is the weights' and activations' width from
	// torch_dtype (bfloat16, float16: 2; float32: 4; absent: 2).
	BytesPerParam float64
}

// MoE reports a mixture-of-experts model.
func (a *Arch) MoE() bool { return a.Experts > 1 }

// ReadArch reads a Hugging Face config.json.
func ReadArch(path string) (Arch, error) {
	data, err := config.ReadFile(path, "model config", config.MaxFileBytes)
	if err != nil {
		return Arch{}, err
	}
	return ParseArch(data, path)
}

// ParseArch reads a Hugging Face config.json's text; file names it in
// errors. Unknown fields are ignored (a config.json holds many that no
// latency model reads); a missing needed one is an error naming it.
func ParseArch(data []byte, file string) (Arch, error) {
	e := config.NewErrors(file)
	root, ok := config.Parse(data, e)
	if !ok {
		return Arch{}, e.Err()
	}
	if !root.IsMapping() {
		root.Fail("want a mapping (a Hugging Face config.json), got %s", root.Describe())
		return Arch{}, e.Err()
	}
	a := Arch{BytesPerParam: 2}
	// Multimodal configs keep the language model's fields under text_config.
	src := root
	if t, ok := root.Field("text_config"); ok && t.IsMapping() {
		src = t
	}
	need := func(dst *int, names ...string) {
		for _, n := range names {
			if v, ok := src.Field(n); ok && !v.IsNull() {
				v.Decode(dst)
				if *dst <= 0 {
					v.Fail("want a positive whole number, got %s", v.Describe())
				}
				return
			}
		}
		src.Errors().Add(names[0], "missing; the iteration-level latency model needs it")
	}
	opt := func(dst *int, names ...string) {
		for _, n := range names {
			if v, ok := src.Field(n); ok && !v.IsNull() {
				v.Decode(dst)
				if *dst < 0 {
					v.Fail("want a whole number ≥ 0, got %s", v.Describe())
				}
				return
			}
		}
	}
	need(&a.Layers, "num_hidden_layers", "n_layer", "num_layers")
	need(&a.Hidden, "hidden_size", "n_embd", "d_model")
	need(&a.Heads, "num_attention_heads", "n_head")
	need(&a.Intermediate, "intermediate_size", "ffn_dim")
	need(&a.Vocab, "vocab_size")
	opt(&a.KVHeads, "num_key_value_heads", "num_kv_heads")
	opt(&a.HeadDim, "head_dim")
	opt(&a.Experts, "num_local_experts", "num_experts", "n_routed_experts")
	opt(&a.ExpertsPerToken, "num_experts_per_tok")
	opt(&a.ExpertFFN, "moe_intermediate_size")
	if v, ok := src.Field("tie_word_embeddings"); ok && !v.IsNull() {
		v.Decode(&a.TiedEmbed)
	}
	if v, ok := src.Field("torch_dtype"); ok && !v.IsNull() {
		s, _ := v.String()
		switch s {
		case "bfloat16", "float16", "half":
			a.BytesPerParam = 2
		case "float32", "float":
			a.BytesPerParam = 4
		case "float8_e4m3fn", "fp8":
			a.BytesPerParam = 1
		default:
			v.Fail("want a dtype (bfloat16, float16, float32, float8_e4m3fn), got %s", v.Describe())
		}
	}
	if e.Count() > 0 {
		return Arch{}, e.Err()
	}
	if a.KVHeads == 0 {
		a.KVHeads = a.Heads
	}
	if a.HeadDim == 0 {
		if a.Hidden%a.Heads != 0 {
			return Arch{}, fmt.Errorf("%s: hidden_size %d is not a multiple of num_attention_heads %d and head_dim is absent", file, a.Hidden, a.Heads)
		}
		a.HeadDim = a.Hidden / a.Heads
	}
	if a.MoE() && a.ExpertsPerToken == 0 {
		return Arch{}, fmt.Errorf("%s: num_experts_per_tok: missing; a mixture-of-experts model (%d experts) needs it", file, a.Experts)
	}
	return a, nil
}
