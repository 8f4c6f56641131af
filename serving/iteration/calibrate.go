package iteration

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/optimize"
)

// Calibration fits a latency model's coefficients to measured requests:
// their arrival, first-token and last-token times on one replica (a
// BLIS-format results trace; any server's measurements converted to its
// columns). It replays the same requests (arrivals and token counts)
// through the replica and moves the coefficients until the replay's
// latency distributions match the measured ones: the mean, p50, p90 and
// p99 of TTFT and of E2E (to the last token) and the mean inter-token
// latency, each as a relative error, squared and summed.
//
// Distributions, not request by request: a small change in step times
// changes which requests share a step, so individual requests' times move
// chaotically while their distribution moves smoothly. The search is
// Nelder-Mead over the logarithms of the coefficients it fits (so they
// stay positive), from the starting file's values.
//
// It fits five coefficients: the queueing overhead Alpha[0], prefill
// compute Beta[0], decode (Beta[9], the KV read, when the decode term is
// split; Beta[1] otherwise), the per-request Beta[5] and the per-step
// Beta[6]. The others cannot be told apart from these by request times
// on one model and GPU (the per-token Alpha[2], weight loading Beta[2]
// and per-layer Beta[4] act as per-step constants in every decode step;
// the all-reduce is zero at TP 1; the MoE terms are zero for a dense
// model; prefill's KV write grows with its tokens as its compute does),
// so they keep their starting values and the fitted ones absorb them. A
// fitted coefficient that starts at 0 stays 0. The post-decode Alpha[1]
// comes after a client's last token, so requests cannot show it.
type Calibration struct {
	Start, Fitted Coeffs
	// Replays is how many replays the search ran; Used the requests
	// with measured first and last token times.
	Replays, Used int
	// Measured, Before and After are the statistics the fit compares
	// (ms), of the measured requests and of the replays with the
	// starting and the fitted coefficients.
	Measured, Before, After Stats
	// ErrBefore and ErrAfter are the root-mean-square relative errors
	// over those statistics.
	ErrBefore, ErrAfter float64
}

// Stats are the latency statistics calibration matches, in ms.
type Stats struct {
	TTFT, E2E [4]float64 // mean, p50, p90, p99
	ITL       float64    // mean over every token gap
}

// Slice lists the statistics in the order of StatNames.
func (s Stats) Slice() []float64 {
	return append(append(append([]float64{}, s.TTFT[:]...), s.E2E[:]...), s.ITL)
}

// StatNames names Stats.Slice's entries.
var StatNames = []string{"TTFT mean", "TTFT p50", "TTFT p90", "TTFT p99", "E2E mean", "E2E p50", "E2E p90", "E2E p99", "ITL mean"}

// minMeasured is the fewest measured requests a fit accepts.
const minMeasured = 20

// maxReplays bounds the search.
const maxReplays = 1200

// fittedIdx are the coefficients calibration fits, as indices into
// [Alpha[0], Beta[0..10]].
func fittedIdx(c Coeffs) []int {
	dec := 1 + 1
	if c.SplitDecode {
		dec = 1 + 9
	}
	return []int{0, 1 + 0, dec, 1 + 5, 1 + 6}
}

func coeffAt(c *Coeffs, k int) *float64 {
	if k == 0 {
		return &c.Alpha[0]
	}
	return &c.Beta[k-1]
}

// Calibrate fits start's coefficients for arch on tp GPUs of g, with the
// replica settings p, to the measured requests (in arrival order;
// requests without both first and last times are replayed, as they
// loaded the server, but not compared).
func Calibrate(p Params, a Arch, g GPU, tp int, start Coeffs, reqs []TraceReq) (*Calibration, error) {
	cal := &Calibration{Start: start}
	measured := make([]bool, len(reqs))
	for k, t := range reqs {
		if t.First >= t.Arrive && t.Last >= t.First && t.Out > 0 {
			measured[k] = true
			cal.Used++
		}
	}
	if cal.Used < minMeasured {
		return nil, fmt.Errorf("%d requests have first_chunk_time_us and last_chunk_time_us (both after arrival, output ≥ 1 token); calibration wants at least %d", cal.Used, minMeasured)
	}
	cal.Measured = traceStats(reqs, measured)
	want := cal.Measured.Slice()
	var idx []int
	for _, k := range fittedIdx(start) {
		if *coeffAt(&start, k) > 0 {
			idx = append(idx, k)
		}
	}
	at := func(u []float64) Coeffs {
		c := start
		for j, k := range idx {
			*coeffAt(&c, k) *= math.Exp(u[j])
		}
		return c
	}
	var failed error
	eval := func(c Coeffs) (Stats, float64) {
		cal.Replays++
		lat, err := NewLatency(a, g, tp, c)
		if err != nil {
			failed = err
			return Stats{}, math.Inf(1)
		}
		r, err := Replay(p, lat, reqs)
		if err != nil {
			failed = err
			return Stats{}, math.Inf(1)
		}
		s := replicaStats(r, measured)
		sq := 0.0
		for k, v := range s.Slice() {
			d := v/want[k] - 1
			if want[k] == 0 {
				d = v
			}
			sq += d * d
		}
		return s, math.Sqrt(sq / float64(len(want)))
	}
	cal.Before, cal.ErrBefore = eval(start)
	if failed != nil {
		return nil, failed
	}
	cal.Fitted, cal.After, cal.ErrAfter = start, cal.Before, cal.ErrBefore
	if len(idx) == 0 {
		return cal, nil
	}
	prob := optimize.Problem{Func: func(u []float64) float64 {
		_, e := eval(at(u))
		return e
	}}
	// Nelder-Mead stalls in narrow valleys (Alpha[0] against Beta[0]
	// both set TTFT); restarting from its best point with a fresh
	// simplex is the usual remedy.
	x := make([]float64, len(idx))
	best := cal.ErrBefore
	for _, size := range []float64{0.2, 0.05, 0.02, 0.005} {
		res, err := optimize.Minimize(prob, x,
			&optimize.Settings{FuncEvaluations: maxReplays / 4, Converger: &optimize.FunctionConverge{Absolute: 1e-7, Iterations: 100}},
			&optimize.NelderMead{SimplexSize: size})
		if failed != nil {
			return nil, failed
		}
		if res == nil {
			return nil, fmt.Errorf("calibration: %w", err)
		}
		if res.F < best {
			best, x = res.F, res.X
		}
	}
	if best < cal.ErrBefore {
		cal.Fitted = at(x)
		cal.After, cal.ErrAfter = eval(cal.Fitted)
	}
	return cal, nil
}

func statsOf(ttft, e2e []float64, itlSum, itlN float64) Stats {
	var s Stats
	for _, x := range []struct {
		v   []float64
		out *[4]float64
	}{{ttft, &s.TTFT}, {e2e, &s.E2E}} {
		slices.Sort(x.v)
		sum := 0.0
		for _, v := range x.v {
			sum += v
		}
		x.out[0] = sum / float64(len(x.v)) / 1e3
		for j, p := range []float64{50, 90, 99} {
			x.out[j+1] = percentile(x.v, p) / 1e3
		}
	}
	if itlN > 0 {
		s.ITL = itlSum / itlN / 1e3
	}
	return s
}

// traceStats are the measured requests' statistics (E2E to the last
// token, as a client sees it).
func traceStats(reqs []TraceReq, use []bool) Stats {
	var ttft, e2e []float64
	var itlSum, itlN float64
	for k, t := range reqs {
		if !use[k] {
			continue
		}
		ttft = append(ttft, float64(t.First-t.Arrive))
		e2e = append(e2e, float64(t.Last-t.Arrive))
		if t.Out > 1 {
			itlSum += float64(t.Last - t.First)
			itlN += float64(t.Out - 1)
		}
	}
	return statsOf(ttft, e2e, itlSum, itlN)
}

// replicaStats are the same statistics of a replay, over the requests
// use marks.
func replicaStats(r *Replica, use []bool) Stats {
	var ttft, e2e []float64
	var itlSum, itlN float64
	for k := range r.Reqs {
		q := &r.Reqs[k]
		if !use[k] || q.Done < 0 {
			continue
		}
		ttft = append(ttft, float64(q.First-q.Arrive))
		e2e = append(e2e, float64(q.First+q.ITLSum-q.Arrive))
		itlSum += float64(q.ITLSum)
		itlN += float64(q.ITLs)
	}
	if len(ttft) == 0 {
		return Stats{}
	}
	return statsOf(ttft, e2e, itlSum, itlN)
}

// WriteCoeffs writes c as a defaults.yaml section that ReadCoeffs reads
// back, with as many betas as the file it started from.
func WriteCoeffs(w io.Writer, c Coeffs) error {
	n := c.Betas
	if n == 0 {
		n = len(c.Beta)
	}
	nums := func(xs []float64) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = strconv.FormatFloat(x, 'g', 10, 64)
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	_, err := fmt.Fprintf(w, "trained_physics_coefficients:\n  alpha_coeffs: %s\n  beta_coeffs: %s\n", nums(c.Alpha[:]), nums(c.Beta[:n]))
	return err
}
