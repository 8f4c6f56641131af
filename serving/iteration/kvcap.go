package iteration

import "fmt"

// Memory set aside besides weights and KV cache, as vLLM's profiler finds
// it for a dense model on one GPU (activations of the largest batch, and
// CUDA context, NCCL buffers outside PyTorch); BLIS uses the same figures.
const (
	activationGiB       = 5.5
	nonTorchGiBOneGPU   = 0.15
	nonTorchGiBPerTPGPU = 0.6
)

// WeightBytes is the model's parameter memory: embeddings, attention and
// norms per layer, the gated FFN, the LM head unless tied.
func WeightBytes(a Arch) float64 {
	d := float64(a.Hidden)
	kv := float64(a.KVHeads * a.HeadDim)
	L := float64(a.Layers)
	ffn := 3 * d * float64(a.Intermediate)
	if a.MoE() {
		ef := float64(a.ExpertFFN)
		if ef == 0 {
			ef = float64(a.Intermediate)
		}
		ffn = 3*d*ef*float64(a.Experts) + float64(a.Experts)*d
	}
	params := float64(a.Vocab)*d + L*(d*(d+2*kv)+d*d+2*d) + L*ffn + d
	if !a.TiedEmbed {
		params += float64(a.Vocab) * d
	}
	return params * a.BytesPerParam
}

// KVBlocks is the KV cache's capacity in blocks of blockSize tokens per
// GPU of a tp-way replica: util × memory, less weights, activations and
// the non-PyTorch overhead, over the bytes of one block (K and V of every
// layer for the GPU's share of KV heads). It is an error when the model
// does not fit or the cache could not hold one request of maxTokens.
func KVBlocks(a Arch, g GPU, tp, blockSize int, util float64, maxTokens int) (int64, error) {
	if g.MemoryGiB <= 0 {
		return 0, fmt.Errorf("GPU %q has no memory (MemoryGiB %g)", g.Name, g.MemoryGiB)
	}
	if util <= 0 || util > 1 {
		return 0, fmt.Errorf("gpu memory utilisation %g: want a fraction in (0, 1]", util)
	}
	if tp < 1 || blockSize < 1 {
		return 0, fmt.Errorf("tensor parallelism %d and block size %d: want ≥ 1", tp, blockSize)
	}
	const gib = 1 << 30
	perToken := float64(a.Layers) * 2 * float64(a.HeadDim) * float64(a.KVHeads) * a.BytesPerParam / float64(tp)
	perBlock := int64(perToken * float64(blockSize))
	nonTorch := nonTorchGiBOneGPU
	if tp > 1 {
		nonTorch = nonTorchGiBPerTPGPU
	}
	avail := g.MemoryGiB * util * float64(tp)
	over := WeightBytes(a)/gib + activationGiB + nonTorch*float64(tp)
	if over >= avail || perBlock <= 0 {
		return 0, fmt.Errorf("model needs %.1f GiB (weights, activations, runtime) but %d × %s at %.0f %% gives %.1f GiB: no room for a KV cache",
			over, tp, g.Name, util*100, avail)
	}
	blocks := int64((avail-over)*gib) / perBlock
	need := int64((maxTokens + blockSize - 1) / blockSize)
	if blocks < need {
		return 0, fmt.Errorf("KV cache of %d blocks (%d tokens) cannot hold one request of %d tokens", blocks, blocks*int64(blockSize), maxTokens)
	}
	return blocks, nil
}
