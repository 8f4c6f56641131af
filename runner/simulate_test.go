package runner

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// TestCheckJobCount: the bound is JobBytes + policies × PolicyJobBytes per
// job against the memory available.
func TestCheckJobCount(t *testing.T) {
	defer func(f func() (uint64, bool)) { availableMemory = f }(availableMemory)
	availableMemory = func() (uint64, bool) { return 8 << 30, true } // 8 GiB
	per := uint64(JobBytes + 2*PolicyJobBytes)                       // 2.5 KiB with two policies
	fits := int((8 << 30) / per)
	tests := []struct {
		jobs, policies int
		want           string // "" accepts
	}{
		{1000, 2, ""},
		{fits, 2, ""},
		{fits + 1, 2, "need about 8.0 GiB of memory (2.5 KiB per job) and 8.0 GiB is available; at most " + strconv.Itoa(fits) + " jobs fit"},
		{1000000000, 4, "under 4 policies need about"},
		{1000000000, 1, "under 1 policy need about"},
		{0, 1, "want a positive number of jobs, got 0"},
		{-5, 1, "want a positive number of jobs, got -5"},
		{MaxJobs + 1, 1, "more than Brigade runs"},
	}
	for _, tc := range tests {
		err := CheckJobCount(tc.jobs, tc.policies)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckJobCount(%d, %d) = %v, want %q", tc.jobs, tc.policies, err, tc.want)
		}
	}
	availableMemory = func() (uint64, bool) { return 0, false }
	if err := CheckJobCount(MaxJobs, 4); err != nil {
		t.Errorf("unknown memory: %v; only the cap applies", err)
	}
	if got, ok := systemMemory(); ok && got == 0 {
		t.Errorf("systemMemory says 0 bytes available")
	}
}

func mustCluster(t *testing.T, name string) *hwmodel.Cluster {
	t.Helper()
	spec, err := hwmodel.ResolveCluster(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCheckFits: the first job no node can hold is named with its source
// line, its request and the largest node; the rest are counted.
func TestCheckFits(t *testing.T) {
	w, err := workloads.ReadBrigade(strings.NewReader("name,submit_s,duration_s,gpus,gpu_models\nok,0,10,8,\nbig,1,10,16,\ntypo,2,10,1,A100\nbigger,3,10,64,\n"), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	c := mustCluster(t, "h200x8")
	err = CheckFits(w, c, "h200x8")
	for _, want := range []string{`t.csv:3: job "big" can never run on cluster h200x8: it asks for 16 GPUs, 0 milli-CPU, 0 MiB of memory`,
		"the largest node, dgx-h200-000, has 8 GPUs of model H200", "2 more jobs cannot either"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
	w.Jobs = w.Jobs[:1]
	if err := CheckFits(w, c, "h200x8"); err != nil {
		t.Errorf("a job that fits: %v", err)
	}
}

// TestSyntheticFor: on a cluster that holds every GPU count the workload
// is SyntheticAtLoad's exactly; on a small one every job fits.
func TestSyntheticFor(t *testing.T) {
	big := mustCluster(t, "dgx-h100x64")
	a, err := SyntheticFor(big, 500, 3, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	b, err := SyntheticAtLoad(500, 3, big.TotalGPUs(), 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("on %d GPUs SyntheticFor differs from SyntheticAtLoad", big.TotalGPUs())
	}
	small := mustCluster(t, "h200x8")
	w, err := SyntheticFor(small, 2000, 3, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckFits(w, small, "h200x8"); err != nil {
		t.Error(err)
	}
	if b, _ := SyntheticAtLoad(2000, 3, small.TotalGPUs(), 0.9); CheckFits(b, small, "h200x8") == nil {
		t.Errorf("the test needs a workload SyntheticAtLoad makes too big for h200x8")
	}
}

// A comparison whose records stream to their files as each run ends
// (streamRecords) writes the folder a held one does, byte for byte, with
// its policies run two at a time and its records made in pieces.
func TestSimulateStreamsTheSameFolder(t *testing.T) {
	var specs []policies.Spec
	for _, p := range []string{"fcfs", "sjf+bf", "fair/bestfit", "priority+bf/packing"} {
		specs = append(specs, policies.MustParseSpec(p))
	}
	dir := t.TempDir()
	write := func(name string, from int) map[string][]byte {
		defer func(was, piece int) { streamRecords, recordsPiece = was, piece }(streamRecords, recordsPiece)
		streamRecords, recordsPiece = from, 700
		out := filepath.Join(dir, name)
		s, err := Simulate(Comparison{Synthetic: 3000, Cluster: "h200x8", Policies: specs, Seed: 4, Out: out, Command: []string{"test"}, Parallel: 2,
			Options: Options{Faults: &Faults{Model: hwmodel.FailureModel{NodeMTBF: 2 * hwmodel.Day, NodeRepair: hwmodel.RepairModel{Kind: "fixed", Mean: 2 * hwmodel.Hour}},
				Retry: "fixed", MaxRetries: 3}}})
		if err != nil {
			t.Fatal(err)
		}
		if streamed := s.Runs[0].Jobs == nil; streamed != (from == 0) {
			t.Fatalf("streamRecords %d: runs streamed %v", from, streamed)
		}
		files := map[string][]byte{}
		ents, _ := os.ReadDir(out)
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(out, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = b
		}
		return files
	}
	held, streamed := write("held", math.MaxInt), write("streamed", 0)
	if len(held) != len(Files)+1 {
		t.Fatalf("held: %d files", len(held))
	}
	for name, b := range held {
		if !bytes.Equal(streamed[name], b) {
			t.Errorf("%s streamed differs from %s held", name, name)
		}
	}
}

// TestSimulate: one call reads the workload, runs the policies, reports
// progress up to every job of every policy, and writes a whole folder;
// a failing Extra leaves the earlier folder.
func TestSimulate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	var last, calls, files int
	c := Comparison{Synthetic: 300, Cluster: "h200x8", Policies: []policies.Spec{policies.MustParseSpec("fcfs"), policies.MustParseSpec("sjf")},
		Seed: 4, Out: out, Command: []string{"test"}, Parallel: 2,
		Progress: func(done, total int) {
			if total != 600 || done < last {
				t.Errorf("progress %d/%d after %d", done, total, last)
			}
			last, calls = done, calls+1
		},
		Writing: func(done, total int) { files = done },
	}
	s, err := Simulate(c)
	if err != nil {
		t.Fatal(err)
	}
	if last != 600 || calls < 4 || files != len(Files)+2 {
		t.Errorf("progress ended at %d after %d calls, %d writing steps", last, calls, files)
	}
	if s.Jobs != 300 || len(s.Runs) != 2 || s.ClusterName != "h200x8" || !strings.HasPrefix(s.WorkloadName, "synthetic: 300 jobs") {
		t.Errorf("simulation %+v", s)
	}
	ents, _ := os.ReadDir(out)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := append(slices.Clone(Files), "run.json")
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("wrote %v, want %v", names, want)
	}
	before, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	c.Seed, c.Progress, c.Writing = 5, nil, nil
	c.Extra = func(dir string, runs []PolicyRun) error { return errors.New("disk full") }
	if _, err := Simulate(c); err == nil || err.Error() != "disk full" {
		t.Errorf("failing Extra: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(out, "summary.json")); string(after) != string(before) {
		t.Errorf("a failed run changed the folder")
	}
	c.Extra, c.Out = nil, filepath.Join(out, "summary.json", "x")
	if _, err := Simulate(c); err == nil || !strings.Contains(err.Error(), "is a file, not a folder") {
		t.Errorf("--out below a file: %v", err)
	}
	c.Out, c.Synthetic, c.Fail = filepath.Join(t.TempDir(), "o"), 50, []string{"nowhere@1h+1m"}
	var re *RequestError
	if _, err := Simulate(c); !errors.As(err, &re) || re.Field != "fail" {
		t.Errorf("bad --fail: %v, want a RequestError for fail", err)
	}
}
