package iteration

import (
	"bytes"
	"os"
	"testing"
)

// The readers take user files: whatever the bytes, they return a value or
// an error naming the file, and never panic.

func FuzzParseArch(f *testing.F) {
	seed, _ := os.ReadFile("testdata/blis/qwen3-14b-config.json")
	f.Add(seed)
	f.Add([]byte(`{"num_hidden_layers": 1e30}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseArch(data, "m.json"); err != nil && !bytes.Contains([]byte(err.Error()), []byte("m.json")) {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}

func FuzzParseGPUs(f *testing.F) {
	seed, _ := os.ReadFile("testdata/blis/hardware_config.json")
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseGPUs(data, "hw.json"); err != nil && !bytes.Contains([]byte(err.Error()), []byte("hw.json")) {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}

func FuzzParseCoeffs(f *testing.F) {
	seed, _ := os.ReadFile("testdata/blis/defaults.yaml")
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseCoeffs(data, "d.yaml"); err != nil && !bytes.Contains([]byte(err.Error()), []byte("d.yaml")) {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}

// FuzzReplay reads a trace and, when it is valid, replays it through a
// small replica: every request must end, once, after it arrived.
func FuzzReplay(f *testing.F) {
	f.Add([]byte("arrival_time_us,input_tokens,output_tokens\n0,100,10\n5,3000,2\n5,17,1\n"))
	f.Add([]byte("arrival_time_us,input_tokens,output_tokens,first_chunk_time_us,last_chunk_time_us\n0,1,1,,\n"))
	f.Add([]byte("arrival_time_us,input_tokens,output_tokens,prefix_group,prefix_length\n0,100,10,a,64\n5,100,3,a,100\n6,40,2,,\n9,100,1,b,99\n"))
	_, lat := qwenH100(f)
	p := Params{MaxSeqs: 3, TokenBudget: 512, LongPrefill: 300, BlockSize: 16, KVBlocks: 300, MaxReqTokens: 4096}
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := ParseBLISTrace(bytes.NewReader(data), "t.csv")
		if err != nil {
			if !bytes.Contains([]byte(err.Error()), []byte("t.csv")) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(reqs) > 200 {
			return
		}
		r, err := Replay(p, lat, reqs)
		if err != nil {
			return // out of order or too long: refused, not run
		}
		for k, q := range r.Reqs {
			if q.Done < q.First || q.First <= q.Arrive {
				t.Fatalf("request %d: arrive %d first %d done %d", k, q.Arrive, q.First, q.Done)
			}
		}
		if r.UsedBlocks() != 0 || r.Waiting() != 0 || r.Running() != 0 {
			t.Fatalf("after the run: %d blocks held, %d waiting, %d running", r.UsedBlocks(), r.Waiting(), r.Running())
		}
	})
}

// TestReplayDeterministic replays the committed sample twice.
func TestReplayDeterministic(t *testing.T) {
	p, lat := qwenH100(t)
	reqs, err := ReadBLISTrace("testdata/blis/r24_head.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := Replay(p, lat, reqs)
	b, _ := Replay(p, lat, reqs)
	for k := range a.Reqs {
		if a.Reqs[k].First != b.Reqs[k].First || a.Reqs[k].Done != b.Reqs[k].Done {
			t.Fatalf("request %d differs between two replays", k)
		}
	}
	if a.Summarise() != b.Summarise() {
		t.Fatal("summaries differ")
	}
}
