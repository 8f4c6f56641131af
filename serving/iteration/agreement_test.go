package iteration

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/")

// refDir holds BLIS's full reference runs when the shared checkout is
// beside the repository.
const refDir = "../../../shared/reference-results/blis-serving"

// qwenH100 builds the replica BLIS ran: Qwen3-14B on one H100 with vLLM's
// defaults (256 sequences, 2048 tokens a step, 16-token blocks, 0.9 of
// memory), from the model files BLIS used.
func qwenH100(t testing.TB) (Params, *Latency) {
	t.Helper()
	a, err := ReadArch("testdata/blis/qwen3-14b-config.json")
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := ReadGPUs("testdata/blis/hardware_config.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadCoeffs("testdata/blis/defaults.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lat, err := NewLatency(a, gpus["H100"], 1, c)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := KVBlocks(a, gpus["H100"], 1, 16, 0.9, 8192+2048)
	if err != nil {
		t.Fatal(err)
	}
	return Params{MaxSeqs: 256, TokenBudget: 2048, BlockSize: 16, KVBlocks: blocks, MaxReqTokens: 8192 + 2048}, lat
}

// blisSummary is the part of BLIS's printed metrics compared here.
type blisSummary struct {
	Completed   int     `json:"completed_requests"`
	PerS        float64 `json:"responses_per_sec"`
	TTFTMean    float64 `json:"ttft_mean_ms"`
	TTFTP99     float64 `json:"ttft_p99_ms"`
	ITLMean     float64 `json:"itl_mean_ms"`
	E2EMean     float64 `json:"e2e_mean_ms"`
	E2EP99      float64 `json:"e2e_p99_ms"`
	Preemptions int64   `json:"preemption_count"`
}

func readSummary(t *testing.T, path string) blisSummary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s blisSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// exact counts the requests whose first and last token times Brigade
// reproduces to the µs, among those that end by cutoff µs.
func exact(r *Replica, reqs []TraceReq, post, cutoff int64) (same, closed int) {
	for k, t := range reqs {
		if t.Last < 0 || t.Last+post > cutoff {
			continue
		}
		closed++
		q := &r.Reqs[k]
		if q.First == t.First && q.Done == t.Last+post {
			same++
		}
	}
	return same, closed
}

func relDiff(a, b float64) float64 {
	if b == 0 {
		return math.Abs(a)
	}
	return math.Abs(a-b) / math.Abs(b)
}

// row is one line of the table; pre is "-" where the source does not
// count preemptions (BLIS's per-request trace).
func row(rate, who string, s Summary, pre string) string {
	return fmt.Sprintf("| %s | %s | %.1f / %.1f | %.2f | %.3f / %.3f | %.3f | %s |\n",
		rate, who, s.TTFTMean, s.TTFTP99, s.ITLMean, s.E2EMean/1e3, s.E2EP99/1e3, s.CompletionsPerS, pre)
}

const tableHead = "| rate | run | TTFT mean / p99 ms | ITL mean ms | E2E mean / p99 s | completions/s | preemptions |\n|---|---|---|---|---|---|---|\n"

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *rewrite {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs; got:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestBLISAgreementSample replays the committed first requests of each
// BLIS run. Requests arriving later cannot change a request that ended
// before they queued, so every request of the sample that BLIS finished
// before the sample's last arrival plus the queueing overhead must come
// out identical to the µs; the summary of those requests on both sides
// is the golden file.
func TestBLISAgreementSample(t *testing.T) {
	p, lat := qwenH100(t)
	post, qdelay := int64(lat.Coeffs().Alpha[1]), int64(lat.Coeffs().Alpha[0])
	var out bytes.Buffer
	out.WriteString(tableHead)
	for _, rate := range []string{"8", "14", "24"} {
		reqs, err := ReadBLISTrace("testdata/blis/r" + rate + "_head.csv.gz")
		if err != nil {
			t.Fatal(err)
		}
		r, err := Replay(p, lat, reqs)
		if err != nil {
			t.Fatal(err)
		}
		cutoff := reqs[len(reqs)-1].Arrive + qdelay
		same, closed := exact(r, reqs, post, cutoff)
		if closed < len(reqs)/3 || same != closed {
			t.Errorf("rate %s: %d of the %d requests that end before the sample's cutoff match BLIS to the µs; want all (and at least a third of %d)", rate, same, closed, len(reqs))
		}
		var mine []TraceReq
		var theirs []TraceReq
		for k, tr := range reqs {
			if tr.Last >= 0 && tr.Last+post <= cutoff {
				q := r.Reqs[k]
				mine = append(mine, TraceReq{Arrive: q.Arrive, In: q.In, Out: q.Out, First: q.First, Last: q.Done - post})
				theirs = append(theirs, tr)
			}
		}
		out.WriteString(row(rate, "Brigade", SummariseTrace(mine, float64(post)), fmt.Sprint(r.Preemptions)))
		out.WriteString(row(rate, "BLIS", SummariseTrace(theirs, float64(post)), "-"))
		fmt.Fprintf(&out, "| %s | requests compared | %d of %d (identical: %d) | | | | |\n", rate, closed, len(reqs), same)
	}
	golden(t, "testdata/agreement-sample.golden", out.Bytes())
}

// TestBLISAgreement replays BLIS's full one-hour runs when the shared
// reference results are present, checks the targets (TTFT and E2E mean
// and p99 within 5 % at 8 and 14 requests/s; completions/s within 5 %
// and preemptions within a factor of 2 at 24) against BLIS's printed
// summaries, and keeps the table docs/serving.md shows as a golden file.
func TestBLISAgreement(t *testing.T) {
	if _, err := os.Stat(refDir); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is absent: the full BLIS reference runs are not here (TestBLISAgreementSample covers the committed sample)", refDir)
	}
	if testing.Short() {
		t.Skip("-short: replays 165,600 requests")
	}
	p, lat := qwenH100(t)
	post := int64(lat.Coeffs().Alpha[1])
	var out bytes.Buffer
	out.WriteString(tableHead)
	for _, rate := range []string{"8", "14", "24"} {
		reqs, err := ReadBLISTrace(filepath.Join(refDir, "r"+rate+"_requests.csv.gz"))
		if err != nil {
			t.Fatal(err)
		}
		blis := readSummary(t, filepath.Join(refDir, "r"+rate+"_summary.json"))
		r, err := Replay(p, lat, reqs)
		if err != nil {
			t.Fatal(err)
		}
		s := r.Summarise()
		type check struct {
			name      string
			got, want float64
		}
		checks := []check{{"completions/s", s.CompletionsPerS, blis.PerS}}
		if rate != "24" {
			checks = append(checks, check{"TTFT mean", s.TTFTMean, blis.TTFTMean}, check{"TTFT p99", s.TTFTP99, blis.TTFTP99},
				check{"E2E mean", s.E2EMean, blis.E2EMean}, check{"E2E p99", s.E2EP99, blis.E2EP99})
		}
		for _, c := range checks {
			if d := relDiff(c.got, c.want); d > 0.05 {
				t.Errorf("rate %s: %s %.4g against BLIS's %.4g: %.1f %% off, want within 5 %%", rate, c.name, c.got, c.want, d*100)
			}
		}
		if r.Preemptions > 2*blis.Preemptions || 2*r.Preemptions < blis.Preemptions {
			t.Errorf("rate %s: %d preemptions against BLIS's %d: want within a factor of 2", rate, r.Preemptions, blis.Preemptions)
		}
		same, closed := exact(r, reqs, post, math.MaxInt64)
		out.WriteString(row(rate, "Brigade", s, fmt.Sprint(r.Preemptions)))
		out.WriteString(row(rate, "BLIS (summary)", Summary{TTFTMean: blis.TTFTMean, TTFTP99: blis.TTFTP99, ITLMean: blis.ITLMean,
			E2EMean: blis.E2EMean, E2EP99: blis.E2EP99, CompletionsPerS: blis.PerS}, fmt.Sprint(blis.Preemptions)))
		fmt.Fprintf(&out, "| %s | identical to the µs | %d of %d requests | | | | |\n", rate, same, closed)
	}
	golden(t, "testdata/agreement.golden", out.Bytes())
}
