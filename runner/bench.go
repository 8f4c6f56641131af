package runner

import (
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// BenchCase is one engine benchmark: a synthetic workload of Jobs jobs
// offered at Load times the capacity of a cluster of GPUs H100s (8 per
// node), scheduled by Policy. Load above 1 builds a queue that grows for the
// whole arrival window: the overloaded case.
type BenchCase struct {
	Jobs   int
	GPUs   int
	Policy string // a policy spec (policies.ParseSpec)
	Load   float64
	Seed   uint64
	// Faults, when it injects failures, adds them (drawn from Seed's
	// failure stream over FaultHorizon) and the fault machinery.
	Faults *Faults
	// Speeds runs under the default speed table, durations measured on
	// A100-80GB; the workload then needs classes (BenchClasses).
	Speeds bool
	// Data runs on BenchDataCluster, the workload's jobs reading its
	// datasets (BenchDatasets).
	Data bool
}

// benchDatasets are BenchDataCluster's datasets: name, size in GB.
var benchDatasets = []struct {
	name string
	gb   float64
}{{"imagenet", 150}, {"coco", 25}, {"c4", 800}, {"audioset", 300}, {"laion", 2000}, {"openwebtext", 40}, {"librispeech", 60}, {"kinetics", 450}}

// BenchDataCluster is BenchCluster's nodes with data: a storage tier read
// at 2 GB/s, 500 GB of cache per node, and benchDatasets, each with a
// replica on every 64th node from its own offset.
func BenchDataCluster(gpus int) (*hwmodel.Cluster, error) {
	if gpus <= 0 || gpus%8 != 0 {
		return nil, fmt.Errorf("bench cluster: GPU count %d must be a positive multiple of 8", gpus)
	}
	n := gpus / 8
	width := max(3, len(strconv.Itoa(n-1)))
	spec := &hwmodel.ClusterSpec{Name: "bench-data", Storage: &hwmodel.StorageSpec{ReadGBPerS: 2},
		NodeGroups: []hwmodel.NodeGroupSpec{{NamePrefix: "h100", Count: n, GPUModel: "H100", GPUsPerNode: 8, CacheGB: 500}}}
	for k, d := range benchDatasets {
		ds := hwmodel.DatasetSpec{Name: d.name, SizeGB: d.gb}
		for i := k; i < n; i += 64 {
			ds.Replicas = append(ds.Replicas, fmt.Sprintf("h100-%0*d", width, i))
		}
		spec.Datasets = append(spec.Datasets, ds)
	}
	return spec.Build()
}

// BenchDatasets gives w's jobs BenchDataCluster's datasets, drawn evenly
// from seed.
func BenchDatasets(w *workloads.Workload, seed uint64) {
	names := make([]string, len(benchDatasets))
	for i, d := range benchDatasets {
		names[i] = d.name
	}
	workloads.DrawDatasets(w, names, nil, seed)
}

// BenchClasses gives w's jobs classes drawn evenly over the default speed
// table's classes, from seed: what a case with Speeds runs.
func BenchClasses(w *workloads.Workload, seed uint64) {
	classes := hwmodel.DefaultSpeeds().Classes()[1:] // less the generic class
	workloads.DrawClasses(w, classes, nil, seed)
}

func (c BenchCase) String() string {
	s := fmt.Sprintf("%s/jobs=%d/gpus=%d/load=%g", c.Policy, c.Jobs, c.GPUs, c.Load)
	if c.Faults.Injects() {
		s += "/faults"
	}
	if c.Speeds {
		s += "/speeds"
	}
	if c.Data {
		s += "/data"
	}
	return s
}

// BenchCluster is an all-H100 cluster of gpus GPUs, 8 per node, with CPU
// and memory to spare (synthetic jobs ask for 8 cores and 64 GiB per GPU).
func BenchCluster(gpus int) (*hwmodel.Cluster, error) {
	if gpus <= 0 || gpus%8 != 0 {
		return nil, fmt.Errorf("bench cluster: GPU count %d must be a positive multiple of 8", gpus)
	}
	h100, _ := hwmodel.LookupModel("H100")
	nodes := make([]hwmodel.Node, gpus/8)
	for i := range nodes {
		nodes[i] = hwmodel.Node{Name: fmt.Sprintf("h100-%05d", i), Model: h100.ID, GPUs: 8, CPUMilli: 224000, MemoryMiB: 2 << 20}
	}
	return hwmodel.NewCluster(nodes)
}

// BenchWorkload generates the case's workload with SyntheticAtLoad.
func (c BenchCase) BenchWorkload() (*workloads.Workload, error) {
	w, err := SyntheticAtLoad(c.Jobs, c.Seed, c.GPUs, c.Load)
	if err != nil {
		return nil, err
	}
	w.FillEstimates()
	return w, nil
}

// Prepare builds the engine for one measured run.
func (c BenchCase) Prepare(w *workloads.Workload) (*Prepared, error) {
	build := BenchCluster
	if c.Data {
		build = BenchDataCluster
	}
	cluster, err := build(c.GPUs)
	if err != nil {
		return nil, err
	}
	spec, err := policies.ParseSpec(c.Policy)
	if err != nil {
		return nil, err
	}
	if spec.NeedsTarget() {
		spec.Placer = policies.PlacerConfig{Seed: c.Seed, Target: TargetOf(w)}
	}
	p, err := spec.New()
	if err != nil {
		return nil, err
	}
	opt := Options{}.ForPolicy(spec)
	if c.Speeds {
		a100, _ := hwmodel.LookupModel("A100-80GB")
		opt.Speeds, opt.SpeedReference = hwmodel.DefaultSpeeds(), a100.ID
	}
	if c.Faults.Injects() {
		opt.Faults = c.Faults
		if opt.FaultSchedule, err = c.Faults.Schedule(cluster, w, c.Seed); err != nil {
			return nil, err
		}
	}
	return Prepare(cluster, w, p, opt)
}

// BenchResult is what one measured run cost.
type BenchResult struct {
	Events    int64
	Jobs      int
	Faults    int // injected failures the run reached
	Calls     int64
	MaxQueued int
	Wall      time.Duration
	// CPU is the process's CPU time (user and system, all threads: the
	// garbage collector's too) over the run, from getrusage; 0 where the
	// system cannot tell (HasUsage false).
	CPU time.Duration
	// PeakRSS is the process's peak resident set in bytes after the run
	// (getrusage's maxrss): a peak over the whole process so far, the
	// workload and the engine's books included, not the run's own.
	PeakRSS        int64
	HasUsage       bool
	Allocs         uint64
	EventsPerSec   float64 // per wall second
	AllocsPerEvent float64
}

// CPUPerEvent is the CPU time per event, 0 when unknown.
func (r BenchResult) CPUPerEvent() time.Duration {
	if r.Events == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Events)
}

// EventsPerCPUSecond is events per second of process CPU time, 0 when
// unknown.
func (r BenchResult) EventsPerCPUSecond() float64 {
	if r.CPU <= 0 {
		return 0
	}
	return float64(r.Events) / r.CPU.Seconds()
}

// PeakRSSPerJob is PeakRSS divided by the workload's jobs.
func (r BenchResult) PeakRSSPerJob() float64 {
	if r.Jobs == 0 {
		return 0
	}
	return float64(r.PeakRSS) / float64(r.Jobs)
}

// Measure runs the engine once and reports its speed. Only Run is timed
// (wall and process CPU time): generating the workload and building the
// engine are not.
func Measure(p *Prepared) (BenchResult, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu0, _, ok0 := processUsage()
	t0 := time.Now()
	res, err := p.Engine.Run()
	wall := time.Since(t0)
	cpu1, rss, ok1 := processUsage()
	runtime.ReadMemStats(&after)
	if err != nil {
		return BenchResult{}, err
	}
	p.Timeline.Close(res.End)
	r := BenchResult{Events: res.Events, Jobs: len(res.Jobs), Faults: len(res.Faults), Calls: res.Calls, MaxQueued: p.Timeline.Max().Queued,
		Wall: wall, Allocs: after.Mallocs - before.Mallocs}
	if ok0 && ok1 {
		r.CPU, r.PeakRSS, r.HasUsage = cpu1-cpu0, rss, true
	}
	if s := wall.Seconds(); s > 0 {
		r.EventsPerSec = float64(res.Events) / s
	}
	if res.Events > 0 {
		r.AllocsPerEvent = float64(r.Allocs) / float64(res.Events)
	}
	return r, nil
}

// SyntheticAtLoad generates jobs from workloads.DefaultSyntheticConfig with
// durations capped at two days, then spaces the arrivals so that the jobs'
// GPU-time is load × gpus × the arrival window
// (workloads.Workload.ScaleToLoad). The cap matters: with the default
// 60-day cap, a handful of jobs would hold most of the GPU-time of a few
// thousand and run mostly after the last arrival, so the arrival window
// would see far less than the offered load.
func SyntheticAtLoad(jobs int, seed uint64, gpus int, load float64) (*workloads.Workload, error) {
	return syntheticAtLoad(syntheticConfig(), jobs, seed, gpus, load)
}

// SyntheticFor is SyntheticAtLoad for cluster c: the GPU counts that no
// node or gang of c could hold (with the CPU and memory a synthetic job
// asks per GPU) are not drawn, so that every job can run. On a cluster
// that holds every count, it is SyntheticAtLoad exactly.
func SyntheticFor(c *hwmodel.Cluster, jobs int, seed uint64, load float64) (*workloads.Workload, error) {
	cfg := syntheticConfig()
	var counts []int
	var weights []float64
	for i, n := range cfg.GPUCounts {
		r := hwmodel.Request{GPUs: n, GPUMilli: hwmodel.MilliPerGPU, CPUMilli: int64(n) * cfg.CPUMilliPerGPU, MemoryMiB: int64(n) * cfg.MemoryMiBPerGPU}
		if c.Satisfiable(r) == nil {
			counts, weights = append(counts, n), append(weights, cfg.GPUWeights[i])
		}
	}
	if len(counts) > 0 {
		cfg.GPUCounts, cfg.GPUWeights = counts, weights
	}
	return syntheticAtLoad(cfg, jobs, seed, c.TotalGPUs(), load)
}

func syntheticConfig() workloads.SyntheticConfig {
	cfg := workloads.DefaultSyntheticConfig()
	cfg.Duration.Max = 2 * hwmodel.Day
	return cfg
}

func syntheticAtLoad(cfg workloads.SyntheticConfig, jobs int, seed uint64, gpus int, load float64) (*workloads.Workload, error) {
	cfg.Jobs = jobs
	w, err := workloads.Generate(cfg, seed)
	if err != nil {
		return nil, err
	}
	if err := w.ScaleToLoad(gpus, load); err != nil {
		return nil, err
	}
	return w, nil
}
