package workloads

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func TestReadOpenBPodsGood(t *testing.T) {
	v100s, _ := hwmodel.ParseModelSet("V100M16|V100M32")
	tests := []struct {
		file string
		want []OpenBPod
	}{
		{"good.csv", []OpenBPod{
			{"pod-a", hwmodel.Request{GPUs: 1, GPUMilli: 1000, CPUMilli: 12000, MemoryMiB: 16384}, "", 2},
			{"pod-b", hwmodel.Request{GPUs: 1, GPUMilli: 460, CPUMilli: 6000, MemoryMiB: 12288}, "", 3},
			{"pod-c", hwmodel.Request{CPUMilli: 4000, MemoryMiB: 8192}, "", 4},
			{"pod-d", hwmodel.Request{GPUs: 8, GPUMilli: 1000, CPUMilli: 32000, MemoryMiB: 65536, Models: v100s}, "V100M16|V100M32", 5},
			{"pod-e", hwmodel.Request{GPUs: 1, GPUMilli: 320, CPUMilli: 2000, MemoryMiB: 4096}, "", 6},   // Pending: kept
			{"pod-f", hwmodel.Request{GPUs: 2, GPUMilli: 1000, CPUMilli: 8000, MemoryMiB: 16384}, "", 7}, // gpu_spec nan
			{"pod-g", hwmodel.Request{GPUs: 1, GPUMilli: 1000, CPUMilli: 1000}, "", 8},
		}},
		{"good-multigpu.csv", []OpenBPod{
			{"pod-a", hwmodel.Request{GPUs: 1, GPUMilli: 1000, CPUMilli: 8000, MemoryMiB: 30517}, "", 2},
			{"pod-b", hwmodel.Request{GPUs: 1, GPUMilli: 460, CPUMilli: 6000, MemoryMiB: 12288}, "", 3},
			{"pod-c", hwmodel.Request{CPUMilli: 4000, MemoryMiB: 8192}, "", 4},
			{"pod-d", hwmodel.Request{GPUs: 8, GPUMilli: 1000, CPUMilli: 32000, MemoryMiB: 65536}, "", 5},
			{"pod-e", hwmodel.Request{GPUs: 4, GPUMilli: 1000, CPUMilli: 88000, MemoryMiB: 327680}, "", 6},
		}},
		// The phase is not read: a list ReadOpenB rejects for its phase is fine here.
		{"bad-phase.csv", nil},
	}
	for _, tc := range tests {
		pods, err := ReadOpenBPodsFile(filepath.Join("testdata", "openb", tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if tc.want != nil && !reflect.DeepEqual(pods, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.file, pods, tc.want)
		}
	}
}

func TestReadOpenBPodsBad(t *testing.T) {
	for _, c := range []badCase{
		{"bad-number.csv", 3, "cpu_milli", []string{"want an integer", `"12k"`}},
		{"bad-unknown-model.csv", 2, "gpu_spec", []string{`unknown GPU model "G9"`}},
		{"bad-duplicate-name.csv", 4, "name", []string{`"pod-a" is already used on line 2`}},
		{"bad-shared-multi.csv", 2, "gpu_milli", []string{"num_gpu 2", "found 500"}},
		{"bad-num-gpu.csv", 2, "num_gpu", []string{"0..8", "found 9"}},
	} {
		path := filepath.Join("testdata", "openb", c.file)
		pods, err := ReadOpenBPodsFile(path)
		if pods != nil {
			t.Errorf("%s: pods along with error %v", c.file, err)
		}
		checkParseError(t, err, path, c)
	}
	for in, want := range map[string]badCase{
		"":                                    {line: 1, msg: []string{"want a header line"}},
		"name,cpu_milli,memory_mib,num_gpu\n": {line: 1, field: "gpu_milli", msg: []string{`"gpu_milli" is missing`}},
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\n":            {line: 1, msg: []string{"no pods"}},
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,0,5\n": {line: 2, field: "gpu_milli", msg: []string{"want 0 for a pod with num_gpu 0"}},
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\n,1,1,0,0\n":  {line: 2, field: "name", msg: []string{"empty"}},
	} {
		_, err := ReadOpenBPods(strings.NewReader(in), "p.csv")
		checkParseError(t, err, "p.csv", want)
	}
}

// TestRealOpenBPods reads all 17 shipped pod lists, the five-column ones
// included, with the counts of traces/README.md.
func TestRealOpenBPods(t *testing.T) {
	dir := filepath.Dir(tracePath(t, "alibaba-gpu-v2023/openb_pod_list_default.csv"))
	tests := []struct {
		name         string
		pods, cpu    int
		milli, specd int64
	}{
		{"default", 8152, 1088, 6086800, 0},
		{"cpu050", 7439, 375, 6086800, 0},
		{"cpu250", 9420, 2356, 6086800, 0},
		{"gpushare100", 8152, 1088, 3952670, 0},
		{"gpuspec33", 8152, 1088, 6086800, 2388},
		{"multigpu20", 8324, 1088, 7086800, 0},
		{"multigpu50", 9061, 1088, 11358800, 0},
	}
	for _, tc := range tests {
		pods, err := ReadOpenBPodsFile(filepath.Join(dir, "openb_pod_list_"+tc.name+".csv"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var cpu int
		var milli, specd int64
		for _, p := range pods {
			if p.Req.GPUs == 0 {
				cpu++
			}
			milli += p.Req.TotalMilli()
			if p.GPUSpec != "" {
				specd++
			}
		}
		if len(pods) != tc.pods || cpu != tc.cpu || milli != tc.milli || specd != tc.specd {
			t.Errorf("%s: %d pods, %d CPU-only, %d milli-GPU, %d with gpu_spec; want %d, %d, %d, %d",
				tc.name, len(pods), cpu, milli, specd, tc.pods, tc.cpu, tc.milli, tc.specd)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "openb_pod_list_*.csv"))
	if len(files) != 17 {
		t.Errorf("%d pod lists, want 17", len(files))
	}
	for _, f := range files {
		if _, err := ReadOpenBPodsFile(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// FuzzReadOpenBPods: no input panics; an error is a *ParseError about the
// named file; accepted pods have valid requests, unique names, rising line
// numbers and a gpu_spec key consistent with their model set.
func FuzzReadOpenBPods(f *testing.F) {
	addFixtures(f, "openb")
	f.Add([]byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,8,1000\nb,0,0,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pods, err := ReadOpenBPods(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != "fuzz.csv" || pe.Line < 0 || pe.Msg == "" {
				t.Fatalf("badly located error %T: %v", err, err)
			}
			if pods != nil {
				t.Fatal("pods along with an error")
			}
			return
		}
		names := map[string]bool{}
		line := 0
		for _, p := range pods {
			if err := p.Req.Validate(); err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			if p.Name == "" || names[p.Name] || p.Line <= line {
				t.Fatalf("pod %+v: empty or repeated name, or line not after %d", p, line)
			}
			names[p.Name], line = true, p.Line
			if (p.GPUSpec == "") != (p.Req.Models == hwmodel.AnyModel) {
				t.Fatalf("pod %+v: gpu_spec key and model set disagree", p)
			}
		}
	})
}
