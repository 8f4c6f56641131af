package workloads

import (
	"math"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// MIG requests in traces and generators.
//
// A MIG job asks for one MIG instance: either an exact profile by name
// (mig_profile, e.g. "3g.71gb") or any instance with at least
// mig_min_slices compute slices and mig_min_memory_gb GiB of memory (either
// or both). Its request is then GPUs 1 and GPUMilli 0: how much of the GPU
// it holds depends on the instance it gets (hwmodel.MIGMilli).

// maxMIGSlices bounds mig_min_slices: no GPU has more than 7 compute slices.
const maxMIGSlices = 7

// maxMIGMemoryGiB bounds mig_min_memory_gb well above any GPU's memory.
const maxMIGMemoryGiB = 1 << 20

// brigadeMIG reads the MIG columns of the current row into j.Req.MIG and
// checks them against the rest of the row. The row's gpus, gpu_milli and
// gpu_models are already in j.Req.
func brigadeMIG(t *table, j *Job) error {
	profile := t.get("mig_profile")
	slices, memGB := t.get("mig_min_slices"), t.get("mig_min_memory_gb")
	if profile == "" && slices == "" && memGB == "" {
		return nil
	}
	field := "mig_profile"
	if profile == "" {
		field = "mig_min_slices"
		if slices == "" {
			field = "mig_min_memory_gb"
		}
	}
	if j.Req.GPUs != 1 {
		return t.errorf("gpus", "want 1 for a MIG job (%s is set: it asks for one MIG instance), found %d", field, j.Req.GPUs)
	}
	if m := t.get("gpu_milli"); m != "" {
		return t.errorf("gpu_milli", "want an empty cell for a MIG job (the instance fixes its share of the GPU), found %q", m)
	}
	var r hwmodel.MIGRequest
	if profile != "" {
		if slices != "" || memGB != "" {
			other := "mig_min_slices"
			if slices == "" {
				other = "mig_min_memory_gb"
			}
			return t.errorf(other, "want it empty when mig_profile is set (ask for a profile by name, or for minimum slices and memory, not both), found %q", t.get(other))
		}
		name := strings.ToLower(profile)
		if !MIGProfileExists(name, j.Req.Models) {
			return t.errorf("mig_profile", "want a MIG profile of %s (%s), found %q", modelsForMessage(j.Req.Models), MIGProfileNames(j.Req.Models), profile)
		}
		r.Profile = name
	}
	if slices != "" {
		n, err := t.integer("mig_min_slices", 1, maxMIGSlices)
		if err != nil {
			return err
		}
		r.MinSlices = int(n)
	}
	if memGB != "" {
		f, err := strconv.ParseFloat(memGB, 64)
		if err != nil || math.IsNaN(f) || f <= 0 || f > maxMIGMemoryGiB {
			return t.errorf("mig_min_memory_gb", "want a memory size in GiB > 0 and <= %d, e.g. 32.5, found %q", maxMIGMemoryGiB, memGB)
		}
		r.MinMemoryMiB = int64(math.Ceil(f * 1024))
	}
	if profile == "" && !MIGRequestServable(r, j.Req.Models) {
		return t.errorf(field, "no MIG profile of %s has %s", modelsForMessage(j.Req.Models), minimumsText(r))
	}
	j.Req.GPUMilli = 0
	j.Req.MIG = r
	return nil
}

func minimumsText(r hwmodel.MIGRequest) string {
	var parts []string
	if r.MinSlices > 0 {
		parts = append(parts, strconv.Itoa(r.MinSlices)+" or more compute slices")
	}
	if r.MinMemoryMiB > 0 {
		parts = append(parts, strconv.FormatInt(r.MinMemoryMiB, 10)+" MiB or more memory")
	}
	return strings.Join(parts, " and ")
}

func modelsForMessage(s hwmodel.ModelSet) string {
	if s == hwmodel.AnyModel {
		return "any MIG-capable GPU model"
	}
	return s.String()
}

// MIGProfileExists reports whether some GPU model that models accepts has
// a MIG profile of that name (exact, lower case).
func MIGProfileExists(name string, models hwmodel.ModelSet) bool {
	for _, m := range hwmodel.Models() {
		if !models.Accepts(m.ID) {
			continue
		}
		if _, _, ok := hwmodel.LookupMIGProfile(m.ID, name); ok {
			return true
		}
	}
	return false
}

// MIGRequestServable reports whether some MIG profile of a GPU model that
// models accepts matches r.
func MIGRequestServable(r hwmodel.MIGRequest, models hwmodel.ModelSet) bool {
	for _, m := range hwmodel.Models() {
		if !models.Accepts(m.ID) {
			continue
		}
		for k := range hwmodel.MIGProfiles(m.ID) {
			if r.Matches(m.ID, k) {
				return true
			}
		}
	}
	return false
}

// MIGProfileNames lists the distinct MIG profile names of the models that
// models accepts, in catalogue order, separated by ", ".
func MIGProfileNames(models hwmodel.ModelSet) string {
	var names []string
	seen := map[string]bool{}
	for _, m := range hwmodel.Models() {
		if !models.Accepts(m.ID) {
			continue
		}
		for _, p := range hwmodel.MIGProfiles(m.ID) {
			if !seen[p.Name] {
				seen[p.Name] = true
				names = append(names, p.Name)
			}
		}
	}
	if len(names) == 0 {
		return "none: no accepted model supports MIG"
	}
	return strings.Join(names, ", ")
}

// MIGSlicesOf is the compute-slice count a MIG request asks for at least:
// the larger of its MinSlices and the "<n>g" of its profile name, and at
// least 1 (a request by memory alone needs one slice or more). Load
// estimates use it, counting a MIG job as slices/7 of a GPU.
func MIGSlicesOf(r hwmodel.MIGRequest) int {
	n := r.MinSlices
	if p := r.Profile; p != "" {
		if i := strings.IndexByte(p, 'g'); i > 0 {
			if v, err := strconv.Atoi(p[:i]); err == nil {
				n = max(n, v)
			}
		}
	}
	return max(n, 1)
}

// migGPUShare is a MIG request's share of a GPU for load estimates: its
// slices over 7 (every MIG-capable model has seven compute slices).
func migGPUShare(r hwmodel.MIGRequest) float64 {
	return float64(MIGSlicesOf(r)) / maxMIGSlices
}
