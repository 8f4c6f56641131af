package iteration

import (
	"os"
	"path/filepath"
	"testing"
)

// refDir holds BLIS's reference runs when the shared checkout is there.
const refDir = "../../../shared/reference-results/blis-serving"

// qwenH100 builds the replica BLIS ran: Qwen3-14B on one H100, vLLM's
// defaults (256 sequences, 2048 tokens a step, 16-token blocks, 0.9 of
// memory).
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

func TestExploreBLIS(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip("EXPLORE unset")
	}
	p, lat := qwenH100(t)
	t.Logf("blocks %d", p.KVBlocks)
	for _, rate := range []string{"8", "14", "24"} {
		reqs, err := ReadBLISTrace(filepath.Join(refDir, "r"+rate+"_requests.csv.gz"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Replay(p, lat, reqs)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("rate %s brigade %+v", rate, r.Summarise())
		t.Logf("rate %s blis    %+v", rate, SummariseTrace(reqs, lat.Coeffs().Alpha[1]))
		for k := 0; k < 5; k++ {
			q := r.Reqs[k]
			t.Logf("req %d: ttft %d/%d e2e %d/%d", k, q.First-q.Arrive, reqs[k].First-reqs[k].Arrive, q.Done-q.Arrive, reqs[k].Last-reqs[k].Arrive)
		}
	}
}
