package iteration

import (
	"fmt"
	"math"
)

// Batch is what one engine step computes, as the latency model sees it.
type Batch struct {
	// PrefillTokens is the prompt tokens computed this step (all chunks);
	// PrefillAttn is Σ t·(s + t/2) over the prefill chunks, t the chunk's
	// tokens and s its prompt's length (the attention work of a chunk,
	// the same s-based estimate BLIS uses).
	PrefillTokens, PrefillAttn float64
	// Decodes is the sequences taking one decode token; DecodeCtx the sum
	// of their context lengths (tokens already in the KV cache).
	Decodes, DecodeCtx float64
	// Seqs is the requests in the step (prefill and decode).
	Seqs int
}

// Latency gives a step's time from its batch: roofline terms (FLOPs over
// peak, bytes over bandwidth) for prefill, decode, weight loading and the
// tensor-parallel all-reduce, each times a learned coefficient, plus
// per-layer, per-request and per-step overheads. Tensor parallelism
// divides the projections, FFN, attention heads, KV traffic and weights
// among the TP GPUs. The per-step terms that do not depend on the batch
// are computed once here.
type Latency struct {
	c Coeffs
	// per-token FLOPs of the projections and FFN (all layers, per GPU)
	linFlops float64
	// attention FLOPs per unit of PrefillAttn / DecodeCtx
	attnFlops float64
	// KV bytes per token (all layers, per GPU)
	kvBytes float64
	// µs: weights read once per step, all-reduce per token
	weightUS, arUS float64
	flopsUS, bwUS  float64
	fixedUS        float64 // Beta[4]·L + Beta[6]
}

// NewLatency builds the latency model of arch on tp GPUs of g with
// coefficients c. Dense models only: the MoE expert placement terms are
// not modelled, and a mixture-of-experts model is refused rather than
// timed wrongly.
func NewLatency(a Arch, g GPU, tp int, c Coeffs) (*Latency, error) {
	if tp < 1 {
		return nil, fmt.Errorf("tensor parallelism %d: want ≥ 1", tp)
	}
	if a.MoE() {
		return nil, fmt.Errorf("model with %d experts: the iteration-level latency model covers dense models only", a.Experts)
	}
	if a.Heads%tp != 0 || a.KVHeads%tp != 0 {
		return nil, fmt.Errorf("tensor parallelism %d must divide the attention heads (%d) and KV heads (%d)", tp, a.Heads, a.KVHeads)
	}
	if g.TFLOPs <= 0 || g.BandwidthTBs <= 0 {
		return nil, fmt.Errorf("GPU %q: want a positive peak and bandwidth", g.Name)
	}
	L := float64(a.Layers)
	d := float64(a.Hidden)
	// BLIS's trained-physics model takes the head width as hidden/heads,
	// not config's head_dim; the coefficients were fitted that way, so it
	// is kept (the two agree for Qwen3-14B and most dense models).
	dH := d / float64(a.Heads)
	dKV := float64(a.KVHeads) * dH
	t := float64(tp)
	bpp := a.BytesPerParam
	ff := float64(a.Intermediate)
	l := &Latency{c: c}
	l.flopsUS = g.TFLOPs * 1e6
	if bpp == 1 && g.TFLOPsFP8 > 0 {
		l.flopsUS = g.TFLOPsFP8 * 1e6
	}
	l.bwUS = g.BandwidthTBs * 1e6
	// Q and O projections (d×d each), K and V (d×dKV each), 2 FLOPs per
	// multiply-add; the gated FFN's three d×ff matrices.
	l.linFlops = L * (2*d*(2*d+2*dKV) + 6*d*ff) / t
	l.attnFlops = L * 4 * (float64(a.Heads) / t) * dH
	l.kvBytes = L * 2 * (dKV / t) * 2 // K and V, 2 bytes per element
	weights := L * (d*(2*d+2*dKV) + 3*d*ff) * bpp / t
	l.weightUS = weights / l.bwUS
	if tp > 1 {
		// ring all-reduce after attention and after the FFN of every
		// layer: 2·(tp-1)/tp of the hidden state, per token
		l.arUS = 2 * L * d * bpp * 2 * (t - 1) / t / l.bwUS
	}
	l.fixedUS = c.Beta[4]*L + c.Beta[6]
	return l, nil
}

// Coeffs returns the model's coefficients (the alpha overheads).
func (l *Latency) Coeffs() *Coeffs { return &l.c }

// StepUS is the time of one step of b in whole µs (at least 1).
func (l *Latency) StepUS(b *Batch) int64 {
	if b.Seqs == 0 {
		return 1
	}
	c := &l.c
	var pf, dc float64
	if b.PrefillTokens > 0 {
		comp := (l.linFlops*b.PrefillTokens + l.attnFlops*b.PrefillAttn) / l.flopsUS
		kv := l.kvBytes * b.PrefillTokens / l.bwUS
		if c.SplitPrefill {
			pf = c.Beta[0]*comp + c.Beta[8]*kv
		} else {
			pf = c.Beta[0] * math.Max(comp, kv)
		}
	}
	if b.Decodes > 0 {
		comp := (l.linFlops*b.Decodes + l.attnFlops*b.DecodeCtx) / l.flopsUS
		kv := l.kvBytes * (b.DecodeCtx + b.Decodes) / l.bwUS
		if c.SplitDecode {
			dc = c.Beta[1]*comp + c.Beta[9]*kv
		} else {
			dc = c.Beta[1] * math.Max(comp, kv)
		}
	}
	us := pf + dc + c.Beta[2]*l.weightUS + c.Beta[3]*l.arUS*(b.PrefillTokens+b.Decodes) +
		c.Beta[5]*float64(b.Seqs) + l.fixedUS
	if math.IsNaN(us) || us >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return max(1, int64(us)) // truncated, as BLIS does
}

// AloneUS estimates a request's end-to-end time on an idle replica that
// computes budget tokens a step: the queueing overhead, its prompt in
// chunks, then a decode step per further token at the context's midpoint,
// the per-token and per-request overheads. For a gateway's latency
// ratio, not for results.
func (l *Latency) AloneUS(in, out, budget int) float64 {
	c := &l.c
	us := c.Alpha[0]
	chunk := func(t int) float64 {
		return float64(l.StepUS(&Batch{PrefillTokens: float64(t), PrefillAttn: float64(t) * (float64(in) + float64(t)/2), Seqs: 1}))
	}
	if full := in / budget; full > 0 {
		us += float64(full) * chunk(budget) // every full chunk costs the same
	}
	if rem := in % budget; rem > 0 {
		us += chunk(rem)
	}
	us += c.Alpha[2]
	if out > 1 {
		mid := float64(in) + float64(out)/2
		us += float64(out-1) * (float64(l.StepUS(&Batch{Decodes: 1, DecodeCtx: mid, Seqs: 1})) + c.Alpha[2])
	}
	if out > 0 {
		us += c.Alpha[1]
	}
	return us
}
