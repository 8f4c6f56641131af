package scenario

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

// buildWorkload makes the file's workload: its explicit jobs first (IDs
// 0..n-1, in file order), then the generated ones; or the trace. It
// returns the workload and a one-line description of it.
func (f *File) buildWorkload() (*workloads.Workload, string, error) {
	w := f.Workload
	if w.Embedded {
		wl, err := workloads.Default()
		if err != nil {
			return nil, "", err
		}
		return wl, orName(w.Name, workloads.DefaultName), nil
	}
	if w.Trace != "" {
		path := f.resolve(w.Trace)
		wl, err := workloads.ReadFile(path, w.Format)
		if err != nil {
			return nil, "", err
		}
		return wl, orName(w.Name, fmt.Sprintf("%s (%d jobs)", w.Trace, len(wl.Jobs))), nil
	}
	out := &workloads.Workload{}
	tenants := map[string]bool{}
	for _, j := range w.Jobs {
		job := workloads.Job{
			Name: j.Name, Tenant: orName(j.Tenant, j.Name),
			Submit:   duration(nil, "", j.Submit),
			Duration: duration(nil, "", j.Duration),
			Req: hwmodel.Request{GPUs: j.GPUs, GPUMilli: hwmodel.MilliPerGPU,
				CPUMilli: int64(j.CPUPerGPU*1000) * int64(j.GPUs), MemoryMiB: j.MemGiBPerGPU * 1024 * int64(j.GPUs)},
		}
		if j.GPUs == 0 {
			job.Req.GPUMilli = 0
		}
		job.Estimate = job.Duration
		job.Class = classOf(out, j.Class)
		job.Dataset = datasetOf(out, j.Dataset)
		if c := j.Checkpoint; c != nil {
			job.Checkpoint = workloads.Checkpoint{Every: duration(nil, "", c.Every), Cost: duration(nil, "", c.Cost)}
		}
		out.Jobs = append(out.Jobs, job)
		if !tenants[job.Tenant] {
			tenants[job.Tenant] = true
			out.Tenants = append(out.Tenants, workloads.Tenant{Name: job.Tenant, Weight: 1})
		}
	}
	desc := ""
	if s := w.Synthetic; s != nil {
		gen, err := s.generate(f.Seed)
		if err != nil {
			return nil, "", err
		}
		if len(w.Classes) > 0 {
			names, weights, err := workloads.ParseClassList(strings.Join(w.Classes, ","))
			if err != nil {
				return nil, "", err
			}
			workloads.DrawClasses(gen, names, weights, f.Seed)
			for k := range gen.Jobs {
				gen.Jobs[k].Class = classOf(out, gen.ClassName(&gen.Jobs[k]))
			}
		}
		if len(w.Datasets) > 0 {
			names, weights, err := workloads.ParseClassList(strings.Join(w.Datasets, ","))
			if err != nil {
				return nil, "", err
			}
			workloads.DrawDatasets(gen, names, weights, f.Seed)
			for k := range gen.Jobs {
				gen.Jobs[k].Dataset = datasetOf(out, gen.DatasetName(&gen.Jobs[k]))
			}
		}
		out.Jobs = append(out.Jobs, gen.Jobs...)
		out.Tenants = append(out.Tenants, gen.Tenants...)
		switch {
		case s.Load > 0:
			desc = fmt.Sprintf("%d generated jobs at load %g of %d GPUs", s.Jobs, s.Load, s.LoadGPUs)
		default:
			desc = fmt.Sprintf("%d generated jobs, %g per hour", s.Jobs, s.RatePerHour)
		}
	}
	for i := range out.Jobs {
		out.Jobs[i].Deps = nil // generated jobs have none, and their IDs moved by the explicit ones
	}
	f.explicitAt = sortBySubmit(out, len(w.Jobs))
	out.FillEstimates()
	if len(w.Jobs) > 0 {
		desc = fmt.Sprintf("%d explicit jobs", len(w.Jobs)) + map[bool]string{true: " + " + desc, false: ""}[desc != ""]
	}
	return out, orName(w.Name, desc+fmt.Sprintf(", seed %d", f.Seed)), nil
}

// sortBySubmit puts w's jobs in submission order, as a workload must be
// (stably: jobs submitted together keep their order, explicit ones
// first), and returns where each of the first explicit jobs went. A
// workload already in order is left as it is.
func sortBySubmit(w *workloads.Workload, explicit int) []int {
	at := make([]int, explicit)
	for i := range at {
		at[i] = i
	}
	if slices.IsSortedFunc(w.Jobs, func(a, b workloads.Job) int { return cmp.Compare(a.Submit, b.Submit) }) {
		return at
	}
	order := make([]int, len(w.Jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(w.Jobs[a].Submit, w.Jobs[b].Submit) })
	jobs := make([]workloads.Job, len(w.Jobs))
	for to, from := range order {
		jobs[to] = w.Jobs[from]
		if from < explicit {
			at[from] = to
		}
	}
	w.Jobs = jobs
	return at
}

// classOf and datasetOf are name's number in w's classes or datasets
// (added if new), 0 for "".
func classOf(w *workloads.Workload, name string) uint16   { return intern(&w.Classes, name) }
func datasetOf(w *workloads.Workload, name string) uint16 { return intern(&w.Datasets, name) }

func intern(names *[]string, name string) uint16 {
	if name == "" {
		return 0
	}
	if k := slices.Index(*names, name); k >= 0 {
		return uint16(k + 1)
	}
	*names = append(*names, name)
	return uint16(len(*names))
}

func orName(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// generate runs the generator: Poisson arrivals at RatePerHour, or the
// default mix spaced to Load of LoadGPUs; then MIG requests by phase.
func (s *Synthetic) generate(seed uint64) (*workloads.Workload, error) {
	if s.Load > 0 {
		w, err := runner.SyntheticAtLoad(s.Jobs, seed, s.LoadGPUs, s.Load)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	cfg := workloads.DefaultSyntheticConfig()
	cfg.Jobs = s.Jobs
	if s.RatePerHour > 0 {
		cfg.Arrival.RatePerHour = s.RatePerHour
	}
	d := cfg.Duration
	if x := s.Duration; x != nil {
		d = workloads.DurationConfig{Dist: x.Dist, Median: duration(nil, "", x.Median), Sigma: x.Sigma,
			Min: duration(nil, "", x.Min), Max: duration(nil, "", x.Max)}
		if d.Dist == "" {
			d.Dist = "lognormal"
		}
		cfg.Duration = d
	}
	if s.MIG != nil {
		// Arrivals, durations, tenants and estimates come from the
		// generator; each request is redrawn below from its phase's mix.
		cfg.MIG = workloads.MIGConfig{Fraction: 1, Duration: &d, Classes: []workloads.MIGClass{{MinSlices: 1, Weight: 1}}}
	}
	w, err := workloads.Generate(cfg, seed)
	if err != nil {
		return nil, err
	}
	if m := s.MIG; m != nil {
		phaseLength := duration(nil, "", m.PhaseLength)
		r := rand.New(rand.NewPCG(seed, 0x6d6967)) // "mig": its own stream
		for i := range w.Jobs {
			ph := m.Phases[0]
			if phaseLength > 0 {
				ph = m.Phases[int(w.Jobs[i].Submit/phaseLength)%len(m.Phases)]
			}
			total := 0.0
			for _, k := range ph.Classes {
				total += k.Weight
			}
			u := r.Float64() * total
			k := 0
			for ; k < len(ph.Classes)-1 && u >= ph.Classes[k].Weight; k++ {
				u -= ph.Classes[k].Weight
			}
			w.Jobs[i].Req.MIG = hwmodel.MIGRequest{MinSlices: ph.Classes[k].MinSlices, MinMemoryMiB: ph.Classes[k].MinMemoryGiB * 1024}
		}
	}
	return w, nil
}

// asWholeGPUs is w with every MIG request replaced by one whole GPU.
func asWholeGPUs(w *workloads.Workload) *workloads.Workload {
	out := &workloads.Workload{Jobs: append([]workloads.Job(nil), w.Jobs...), Tenants: w.Tenants, Classes: w.Classes, Datasets: w.Datasets}
	for i := range out.Jobs {
		r := &out.Jobs[i].Req
		if r.WantsMIG() {
			r.MIG, r.GPUMilli = hwmodel.MIGRequest{}, hwmodel.MilliPerGPU
		}
	}
	return out
}
