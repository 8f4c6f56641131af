package serving

import (
	"github.com/brigadesim/brigade/hwmodel"
)

// Golden signals beyond TTFT, E2E and the queue: the books a vLLM server's
// /metrics would give for one class (docs/serving.md maps each to its vLLM
// name). Everything is kept per completed request in O(1): a request's
// decode gaps enter the inter-token histogram as one weighted
// observation, and a class's running requests are integrated over time by
// summing each request's time in flight (Little's law), so no per-class
// counter has to be touched at every dispatch.

// classSignals is one class's books beside classBook's latencies.
type classSignals struct {
	itl, tpot         latencyBook
	promptTok, genTok int64
	preempted         int64
	runUS             float64 // Σ time in flight of its requests (request-µs)
}

func newClassSignals() classSignals {
	return classSignals{itl: newLatencyBook(), tpot: newLatencyBook()}
}

// decodeGaps returns q's inter-token gaps, completed at now: their sum (µs)
// and count. The token-rate models spread the decode evenly over out-1
// gaps; the iteration engine counted them (since the last preemption).
func decodeGaps(s *service, q *request, now hwmodel.Time) (sum float64, n int64) {
	if s.spec.Replica.Iteration != nil {
		return float64(q.itlSum), int64(q.itls)
	}
	if q.out <= 1 {
		return 0, 0
	}
	return float64(now - q.ttft), int64(q.out - 1)
}

// signalComplete books completed request q of class book cb at now.
func (m *model) signalComplete(s *service, cb *classBook, q *request, now hwmodel.Time) {
	g := &cb.sig
	g.promptTok += int64(q.in)
	g.genTok += int64(q.out)
	g.runUS += float64(now - q.dispatch)
	if s.spec.Replica.Iteration != nil {
		g.preempted += int64(q.preempted)
	}
	if q.out > 1 {
		// vLLM's time per output token: the decode time over the tokens
		// after the first, one observation per request; under the
		// token-rate models also every gap's length.
		tpot := float64(now-q.ttft) / float64(q.out-1)
		g.tpot.addN(tpot, 1)
		gap, n := tpot, int64(q.out-1)
		if s.spec.Replica.Iteration != nil {
			gap, n = float64(q.itlSum)/float64(max(q.itls, 1)), int64(q.itls)
		}
		if n > 0 {
			g.itl.addN(gap, n)
			if as := s.spec.Autoscale; as != nil && as.Metric == MetricITL {
				s.tickITL.addN(int64(gap+0.5), n)
			}
		}
	}
	m.alertComplete(s, q, now)
}

// signalFail books request q of class book cb ending as an error or a
// timeout at now.
func (m *model) signalFail(s *service, cb *classBook, q *request) {
	if q.state == reqRunning {
		cb.sig.runUS += float64(m.now - q.dispatch)
	}
	m.alertFail(s, q)
}

// signalsAtHorizon adds the time in flight of the requests still running
// at the horizon to their classes.
func (m *model) signalsAtHorizon() {
	for j := range m.reqs {
		q := &m.reqs[j]
		if q.state == reqRunning {
			s := m.svcs[q.svc]
			s.classes[q.class].sig.runUS += float64(m.horizon - q.dispatch)
		}
	}
}

// finishSignals fills c's signals from g; slotUS is the ready replicas'
// slots integrated over time (slot-µs), horizon the run's length.
func finishSignals(c *ClassResult, g *classSignals, slotUS float64, horizon hwmodel.Time) {
	c.ITL, c.TPOT = g.itl.latency(), g.tpot.latency()
	c.PromptTokens, c.GenerationTokens, c.Preemptions = g.promptTok, g.genTok, g.preempted
	if horizon > 0 {
		h := horizon.Seconds()
		c.RequestRate = float64(c.Requests) / h
		c.PromptTokensPerS = float64(g.promptTok) / h
		c.GenerationTokensPerS = float64(g.genTok) / h
	}
	if slotUS > 0 {
		c.Saturation = g.runUS / slotUS
	}
}

func mergeSignals(dst, src *classSignals) {
	merge(&dst.itl, &src.itl)
	merge(&dst.tpot, &src.tpot)
	dst.promptTok += src.promptTok
	dst.genTok += src.genTok
	dst.preempted += src.preempted
	dst.runUS += src.runUS
}
