package iteration

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// TraceReq is one request of a trace: arrival (µs) and token counts, and
// for a trace of results (BLIS's), its first and last token times (µs;
// -1: none). Group is its prefix group and Prefix the prompt tokens it
// shares with the group (SetPrefix; a Group of -1 or a Prefix of 0: no
// group).
type TraceReq struct {
	Arrive      int64
	In, Out     int32
	First, Last int64
	Group       int32
	Prefix      int32
}

// ReadBLISTrace reads a BLIS per-request trace (trace format v3, CSV,
// optionally gzipped): arrival_time_us, input_tokens, output_tokens and,
// when present, first_chunk_time_us and last_chunk_time_us, and
// prefix_group (a name; empty: none; numbered in the order they first
// appear) with prefix_length (tokens, at most input_tokens). Errors name
// the file, line and column.
func ReadBLISTrace(path string) ([]TraceReq, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rd io.Reader = bufio.NewReader(f)
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(rd)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		rd = gz
	}
	return ParseBLISTrace(rd, path)
}

// ParseBLISTrace reads a BLIS trace from rd; file names it in errors.
func ParseBLISTrace(rd io.Reader, file string) ([]TraceReq, error) {
	cr := csv.NewReader(rd)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: want a header line: %w", file, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	idx := func(name string, need bool) (int, error) {
		i, ok := col[name]
		if !ok && need {
			return -1, fmt.Errorf("%s:1: column %s missing (want arrival_time_us, input_tokens, output_tokens)", file, name)
		}
		if !ok {
			return -1, nil
		}
		return i, nil
	}
	var cols [5]int
	for k, n := range []string{"arrival_time_us", "input_tokens", "output_tokens", "first_chunk_time_us", "last_chunk_time_us"} {
		if cols[k], err = idx(n, k < 3); err != nil {
			return nil, err
		}
	}
	gcol, _ := idx("prefix_group", false)
	lcol, _ := idx("prefix_length", false)
	groups := map[string]int32{}
	var out []TraceReq
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		var v [5]int64
		for k, c := range cols {
			v[k] = -1
			if c < 0 || c >= len(rec) || (k >= 3 && rec[c] == "") {
				if k < 3 {
					return nil, fmt.Errorf("%s:%d: %s: missing", file, line, head[cols[k]])
				}
				continue
			}
			x, err := strconv.ParseInt(rec[c], 10, 64)
			if err != nil || x < 0 || (k > 0 && k < 3 && x > math.MaxInt32) {
				return nil, fmt.Errorf("%s:%d: %s: want a whole number ≥ 0, got %q", file, line, head[c], rec[c])
			}
			v[k] = x
		}
		if v[1] == 0 {
			return nil, fmt.Errorf("%s:%d: input_tokens: want at least 1", file, line)
		}
		t := TraceReq{Arrive: v[0], In: int32(v[1]), Out: int32(v[2]), First: v[3], Last: v[4], Group: -1}
		if err := prefixColumns(&t, rec, gcol, lcol, groups); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		out = append(out, t)
	}
}

// prefixColumns reads a row's prefix_group and prefix_length (column
// indices gc and lc, -1: absent) into t; a row with an empty group has
// none.
func prefixColumns(t *TraceReq, rec []string, gc, lc int, groups map[string]int32) error {
	if gc < 0 || gc >= len(rec) || rec[gc] == "" {
		return nil
	}
	length := ""
	if lc >= 0 && lc < len(rec) {
		length = rec[lc]
	}
	n, err := strconv.ParseInt(length, 10, 64)
	if err != nil || n < 0 || n > int64(t.In) {
		return fmt.Errorf("prefix_length: want a whole number of tokens from 0 to input_tokens (%d), got %q", t.In, length)
	}
	g, ok := groups[rec[gc]]
	if !ok {
		g = int32(len(groups))
		groups[rec[gc]] = g
	}
	t.Group, t.Prefix = g, int32(n)
	return nil
}

// Replay runs reqs (sorted by arrival) through one replica: each request
// joins the wait queue Alpha[0] after it arrives; a request that queues
// at the instant a step is due is in that step. It returns the replica,
// whose Reqs hold the results in trace order.
func Replay(p Params, lat *Latency, reqs []TraceReq) (*Replica, error) {
	r, err := NewReplica(p, lat)
	if err != nil {
		return nil, err
	}
	r.Reqs = make([]Req, 0, len(reqs))
	qdelay := int64(lat.Coeffs().Alpha[0])
	for k, t := range reqs {
		if k > 0 && t.Arrive < reqs[k-1].Arrive {
			return nil, fmt.Errorf("request %d arrives at %d µs, before request %d (%d µs): want arrival order", k, t.Arrive, k-1, reqs[k-1].Arrive)
		}
		if int(t.In)+int(t.Out) > p.MaxReqTokens {
			return nil, fmt.Errorf("request %d has %d tokens; the replica holds at most %d", k, int(t.In)+int(t.Out), p.MaxReqTokens)
		}
		i := r.Add(t.Arrive, t.In, t.Out)
		if t.Group >= 0 {
			r.SetPrefix(i, t.Group, t.Prefix)
		}
	}
	next := 0
	for {
		step := r.Next()
		if next < len(reqs) && (step < 0 || reqs[next].Arrive+qdelay <= step) {
			r.Queue(int32(next), reqs[next].Arrive+qdelay)
			next++
			continue
		}
		if step < 0 {
			return r, nil
		}
		r.Step(step)
	}
}

// Summary is a run's headline numbers, computed the same way for
// Brigade's results and for a BLIS trace. Times in ms.
type Summary struct {
	Completed           int
	TTFTMean, TTFTP99   float64
	ITLMean             float64 // token-weighted: Σ gaps / Σ gap count
	E2EMean, E2EP99     float64
	CompletionsPerS     float64 // completed / (last completion − first arrival)
	Preemptions         int64
	MeanKVUtil, PeakKVU float64 // fraction of blocks held (Brigade only)
}

// percentile is the p-th percentile of sorted xs by linear
// interpolation between closest ranks (BLIS's and numpy's default).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	rank := p / 100 * float64(len(xs)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(xs)-1)
	return xs[lo] + (xs[hi]-xs[lo])*(rank-float64(lo))
}

func summarise(ttft, e2e []float64, itlSum, itlN float64, first, last int64) Summary {
	s := Summary{Completed: len(ttft)}
	if len(ttft) == 0 {
		return s
	}
	mean := func(xs []float64) float64 {
		t := 0.0
		for _, x := range xs {
			t += x
		}
		return t / float64(len(xs)) / 1e3
	}
	s.TTFTMean, s.E2EMean = mean(ttft), mean(e2e)
	slices.Sort(ttft)
	slices.Sort(e2e)
	s.TTFTP99, s.E2EP99 = percentile(ttft, 99)/1e3, percentile(e2e, 99)/1e3
	if itlN > 0 {
		s.ITLMean = itlSum / itlN / 1e3
	}
	if last > first {
		s.CompletionsPerS = float64(len(ttft)) / (float64(last-first) / 1e6)
	}
	return s
}

// Summarise is the Summary of a replayed replica's requests.
func (r *Replica) Summarise() Summary {
	var ttft, e2e []float64
	var itlSum, itlN float64
	first, last := int64(math.MaxInt64), int64(0)
	for k := range r.Reqs {
		q := &r.Reqs[k]
		first = min(first, q.Arrive)
		if q.Done < 0 {
			continue
		}
		ttft = append(ttft, float64(q.First-q.Arrive))
		e2e = append(e2e, float64(q.Done-q.Arrive))
		itlSum += float64(q.ITLSum)
		itlN += float64(q.ITLs)
		last = max(last, q.Done)
	}
	s := summarise(ttft, e2e, itlSum, itlN, first, last)
	s.Preemptions = r.Preemptions
	if r.BusyUS > 0 {
		s.MeanKVUtil = r.BlockUS / r.BusyUS / float64(r.p.KVBlocks)
	}
	s.PeakKVU = float64(r.PeakBlocks) / float64(r.p.KVBlocks)
	return s
}

// SummariseTrace is the Summary of a trace of results (BLIS's), by the
// same rules. BLIS's trace stamps the last chunk when the last token is
// out, while its E2E (and so Brigade's Done) also counts the per-request
// post-decode overhead (Alpha[1]); postDecodeUS adds it back so the two
// E2Es mean the same thing. The token gaps are last − first.
func SummariseTrace(reqs []TraceReq, postDecodeUS float64) Summary {
	var ttft, e2e []float64
	var itlSum, itlN float64
	first, last := int64(math.MaxInt64), int64(0)
	post := int64(postDecodeUS)
	for _, t := range reqs {
		first = min(first, t.Arrive)
		if t.First < 0 || t.Last < 0 {
			continue
		}
		done := t.Last
		if t.Out > 0 {
			done += post
		}
		ttft = append(ttft, float64(t.First-t.Arrive))
		e2e = append(e2e, float64(done-t.Arrive))
		if t.Out > 1 {
			itlSum += float64(t.Last - t.First)
			itlN += float64(t.Out - 1)
		}
		last = max(last, done)
	}
	return summarise(ttft, e2e, itlSum, itlN, first, last)
}
