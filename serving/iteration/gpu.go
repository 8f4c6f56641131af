package iteration

import (
	"math"
	"sort"

	"github.com/brigadesim/brigade/config"
)

// GPU is one accelerator as the roofline terms see it.
type GPU struct {
	Name string
	// TFLOPs is the dense peak at the weights' width (bf16/fp16);
	// TFLOPsFP8 the FP8 peak (0: none), used when the weights are one
	// byte wide.
	TFLOPs, TFLOPsFP8 float64
	// BandwidthTBs is the HBM bandwidth in TB/s, MemoryGiB the memory.
	BandwidthTBs float64
	MemoryGiB    float64
}

// ReadGPUs reads a BLIS-style hardware_config.json: a mapping from GPU
// name to {TFlopsPeak, TFlopsFP8, BwPeakTBs, MemoryGiB}; other keys
// (_comment, the MFU fields a roofline-only model uses) are ignored.
func ReadGPUs(path string) (map[string]GPU, error) {
	data, err := config.ReadFile(path, "hardware config", config.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	return ParseGPUs(data, path)
}

// ParseGPUs reads the text of a hardware config file; file names it in
// errors. Every GPU must give a positive peak, bandwidth and memory.
func ParseGPUs(data []byte, file string) (map[string]GPU, error) {
	e := config.NewErrors(file)
	root, ok := config.Parse(data, e)
	if !ok {
		return nil, e.Err()
	}
	if !root.IsMapping() {
		root.Fail("want a mapping from GPU name to its figures, got %s", root.Describe())
		return nil, e.Err()
	}
	out := map[string]GPU{}
	for _, name := range config.TopKeys(data) {
		v, _ := root.Field(name)
		if !v.IsMapping() {
			v.Fail("want a mapping with TFlopsPeak, BwPeakTBs and MemoryGiB, got %s", v.Describe())
			continue
		}
		g := GPU{Name: name}
		num := func(dst *float64, key string, required bool) {
			f, ok := v.Field(key)
			if !ok || f.IsNull() {
				if required {
					v.Errors().Add(key, "missing; want a positive number")
				}
				return
			}
			f.Decode(dst)
			if *dst < 0 || (required && *dst == 0) || math.IsNaN(*dst) {
				f.Fail("want a positive number, got %s", f.Describe())
			}
		}
		num(&g.TFLOPs, "TFlopsPeak", true)
		num(&g.TFLOPsFP8, "TFlopsFP8", false)
		num(&g.BandwidthTBs, "BwPeakTBs", true)
		num(&g.MemoryGiB, "MemoryGiB", true)
		out[name] = g
	}
	if e.Count() > 0 {
		return nil, e.Err()
	}
	return out, nil
}

// GPUNames lists a hardware file's GPUs in sorted order, for messages.
func GPUNames(gpus map[string]GPU) []string {
	names := make([]string, 0, len(gpus))
	for n := range gpus {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
