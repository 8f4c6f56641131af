package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/kueue"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/workloads"
)

// Comparison is what brigade sim asks for: a workload, a cluster, the
// policies to compare under one set of engine Options, and the results
// folder to write. Simulate does the rest.
type Comparison struct {
	// The workload: Trace (a file, in Format: a workloads format name or
	// workloads.AutoFormat), Generated, Synthetic > 0 jobs drawn from
	// Seed, or none of them for the embedded default trace.
	Trace, Format string
	Generated     *GeneratedTrace
	Synthetic     int
	// Classes and ClassWeights give the jobs of a workload that names no
	// classes (synthetic, or a trace without a class column) classes for
	// the speed table, drawn from Seed (workloads.DrawClasses).
	Classes      []string
	ClassWeights []float64
	// Datasets and DatasetWeights likewise give its jobs datasets (the
	// cluster's), drawn from Seed (workloads.DrawDatasets).
	Datasets       []string
	DatasetWeights []float64
	// Load > 0 spaces the arrivals so that the jobs' GPU-time is Load ×
	// the cluster's GPUs × the arrival window (0: as recorded; 0.9 for a
	// synthetic workload).
	Load float64
	// Cluster is a preset name, a spec file or an openb node list; ""
	// picks DefaultCluster's.
	Cluster string
	// TenantWeights is a CSV file of tenant,weight; "" weighs every
	// tenant 1.
	TenantWeights string
	Policies      []policies.Spec
	// Kueue is the Kueue manifest file the kueue order reads ("" for
	// none; package kueue).
	Kueue string
	Seed  uint64
	// StarvationThreshold: Spec.StarvationThreshold.
	StarvationThreshold hwmodel.Time
	// Parallel: Spec.Parallel.
	Parallel int
	// Options are the engine settings. Options.Faults' Named failures
	// are added to by Fail and FailTrace, which need the cluster.
	Options
	// Speeds names the speed table (LoadSpeeds: a file, DefaultSpeeds, or
	// "" for none); SpeedReference the model durations were measured on
	// (SpeedReference: "" picks the cluster's most common model).
	Speeds, SpeedReference string
	// AppsDir is a folder holding an application model
	// (hwmodel.LoadApps), which Options.Apps is read from when set.
	AppsDir string
	// Fail are failures as --fail writes them (hwmodel.ParseFault);
	// FailTrace is a CSV file of failures (hwmodel.ReadFaultTrace).
	Fail      []string
	FailTrace string

	// Out is the results folder, written whole (results.WriteFolder):
	// checked before anything runs, replaced only when complete.
	Out string
	// Command is the command line, for run.json.
	Command []string
	// Extra, when set, writes more into the folder being written (the
	// plots) before the results files; its files must be among
	// results.Derived, so that a later run may replace the folder.
	Extra func(dir string, runs []PolicyRun) error

	// Hooks that report, on the side, what happens; none changes a result.
	// Warn is told what deserves a warning. Started is told what is about
	// to run, once the workload and cluster are read. Progress is
	// Spec.Progress; Writing is told how many of the folder's files are
	// written, out of how many.
	Warn     func(msg string)
	Started  func(s *Simulation)
	Progress func(done, total int)
	Writing  func(done, total int)
}

// GeneratedTrace is a trace made in memory, in Brigade's format (brigade
// sim --replay's): it is read as File inside the results folder, and
// written there with the results.
type GeneratedTrace struct {
	File string
	Data []byte
}

// Simulation is what Simulate did.
type Simulation struct {
	Jobs         int
	WorkloadName string
	ClusterName  string
	Policies     []policies.Spec
	Runs         []PolicyRun
	// Files are the files written into Out beside run.json.
	Files []string
}

// Summaries are the runs' summaries, in policy order.
func (s *Simulation) Summaries() []results.Summary {
	out := make([]results.Summary, len(s.Runs))
	for i, r := range s.Runs {
		out[i] = r.Summary
	}
	return out
}

// RequestError is a problem with one field of a Comparison, which a
// command-line flag named Field gave.
type RequestError struct {
	Field string
	Err   error
}

func (e *RequestError) Error() string { return "--" + e.Field + ": " + e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// DefaultCluster is the cluster a comparison runs on when it names none:
// philly-sample for the embedded default trace (the cluster its jobs
// were cut for), dgx-h100x64 for a synthetic workload, philly-like for a
// trace file.
func DefaultCluster(trace bool, synthetic int) string {
	switch {
	case synthetic > 0:
		return "dgx-h100x64"
	case !trace:
		return "philly-sample"
	}
	return "philly-like"
}

// Simulate runs a comparison and writes its results folder whole: it
// checks Out first, reads the workload and the cluster, refuses a job
// that can never fit the cluster, runs every policy (Run) and writes the
// folder (results.WriteFolder: Extra's files, the files Write writes, a
// Generated trace, run.json). On any error no folder is written and an
// earlier one at Out is left as it was.
func Simulate(c Comparison) (*Simulation, error) {
	warn := func(format string, a ...any) {
		if c.Warn != nil {
			c.Warn(fmt.Sprintf(format, a...))
		}
	}
	if c.Cluster == "" {
		c.Cluster = DefaultCluster(c.Trace != "" || c.Generated != nil, c.Synthetic)
	}
	clusterFile := ""
	if fi, err := os.Stat(c.Cluster); err == nil && !fi.IsDir() {
		clusterFile = c.Cluster
	}
	if err := results.CheckOut(c.Out, c.Trace, clusterFile, c.TenantWeights, c.FailTrace, c.speedsFile(), c.Kueue); err != nil {
		return nil, err
	}
	spec, err := hwmodel.ResolveCluster(c.Cluster)
	if err != nil {
		return nil, err
	}
	probe, err := spec.Build()
	if err != nil {
		return nil, err
	}
	s := &Simulation{ClusterName: spec.Name, Policies: c.Policies}
	w, err := c.workload(probe, s)
	if err != nil {
		return nil, err
	}
	if len(w.Skipped) > 0 {
		warn("%s: %s", c.Trace, workloads.SkipText(w.Skipped))
	}
	if c.TenantWeights != "" {
		weights, err := workloads.ReadTenantWeights(c.TenantWeights)
		if err != nil {
			return nil, err
		}
		for _, t := range weights {
			if !slices.ContainsFunc(w.Tenants, func(x workloads.Tenant) bool { return x.Name == t.Name }) {
				warn("%s names tenant %q, which has no jobs in the trace", c.TenantWeights, t.Name)
			}
		}
		if err := w.ApplyTenantWeights(weights); err != nil {
			return nil, err
		}
	}
	w.FillEstimates()
	if err := CheckFits(w, probe, spec.Name); err != nil {
		return nil, err
	}
	c.Policies = slices.Clone(c.Policies)
	tenants := make([]string, len(w.Tenants))
	for i, t := range w.Tenants {
		tenants[i] = t.Name
	}
	if err := kueue.Attach(c.Policies, c.Kueue, "--kueue", probe.View(), tenants, s.WorkloadName); err != nil {
		return nil, err
	}
	s.Policies = c.Policies
	opt := c.Options
	if len(c.Fail) > 0 || c.FailTrace != "" {
		f := Faults{}
		if opt.Faults != nil {
			f = *opt.Faults
		}
		f.Named = slices.Clone(f.Named)
		for _, x := range c.Fail {
			fault, err := hwmodel.ParseFault(x, probe)
			if err != nil {
				return nil, &RequestError{"fail", err}
			}
			f.Named = append(f.Named, fault)
		}
		if c.FailTrace != "" {
			xs, err := hwmodel.ReadFaultTrace(c.FailTrace, probe)
			if err != nil {
				return nil, err
			}
			f.Named = append(f.Named, xs...)
		}
		opt.Faults = &f
	}
	if f := opt.Faults; f != nil && f.Model.RackMTBF > 0 && probe.NumRacks() == 0 {
		return nil, &RequestError{"rack-mtbf", fmt.Errorf("cluster %s names no racks, so no rack can fail; give its nodes racks (rack, nodes_per_rack: docs/cluster.md)", spec.Name)}
	}
	if err := c.speeds(&opt, spec, probe, w, warn); err != nil {
		return nil, err
	}
	if c.AppsDir != "" {
		if opt.Apps, err = hwmodel.LoadApps(os.DirFS(c.AppsDir), "."); err != nil {
			// The model's file names are relative to its folder: name it.
			return nil, &RequestError{"apps", fmt.Errorf("%s: %w", c.AppsDir, err)}
		}
	}
	target := TargetOf(w)
	opt.FragTarget = &target
	s.Jobs = len(w.Jobs)
	inputs, err := c.inputs(clusterFile)
	if err != nil {
		return nil, err
	}
	if c.Started != nil {
		c.Started(s)
	}
	s.Files = Files
	// The runs write into the folder being written: in a large comparison
	// each policy's job records go to jobs.parquet, attempts.parquet and
	// jobs.csv as its run ends, not all held until the folder is written.
	err = results.WriteFolder(c.Out, func(dir string) error {
		var (
			records       func(results.PolicyJobs) error
			closeJobFiles func() error
		)
		if Streams(s.Jobs, len(c.Policies)) {
			jobFiles, err := results.CreateJobFiles(dir)
			if err != nil {
				return err
			}
			closed := false
			records, closeJobFiles = jobFiles.Add, func() error {
				closed = true
				return jobFiles.Close()
			}
			defer func() {
				if !closed {
					_ = jobFiles.Close()
				}
			}()
		}
		var err error
		s.Runs, err = Run(Spec{
			Workload: w, WorkloadName: s.WorkloadName,
			NewCluster: spec.Build, ClusterName: spec.Name,
			Policies: c.Policies, Placer: policies.PlacerConfig{Seed: c.Seed, Target: target}, Seed: c.Seed,
			StarvationThreshold: c.StarvationThreshold,
			Parallel:            c.Parallel,
			Options:             opt,
			Progress:            c.Progress,
			// What Simulate returns and writes reads the records only,
			// and those only as they are made.
			DropOutcomes: true,
			Records:      records,
		})
		if err != nil {
			return err
		}
		w = nil // nothing reads the workload from here: let it go
		warnPolicyUnsatisfiable(warn, s.Runs)
		steps, done := len(Files)+2, 0
		step := func() {
			done++
			if c.Writing != nil {
				c.Writing(done, steps)
			}
		}
		if c.Extra != nil {
			if err := c.Extra(dir, s.Runs); err != nil {
				return err
			}
		}
		step()
		if g := c.Generated; g != nil {
			if err := results.AtomicWriteFile(filepath.Join(dir, g.File), func(w io.Writer) error { _, err := w.Write(g.Data); return err }); err != nil {
				return err
			}
		}
		if err := writeFiles(dir, s.Runs, step, closeJobFiles); err != nil {
			return err
		}
		if err := results.WriteRunJSON(filepath.Join(dir, "run.json"), results.RunInfo{
			Seed: c.Seed, Command: c.Command, Inputs: inputs, Files: Files,
		}); err != nil {
			return err
		}
		step()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// streamRecords is the number of job records (jobs × policies) from which
// Simulate streams them to their files (results.JobFiles) rather than
// holding them: the two Parquet writers held open during the runs cost
// about 50 MB whatever the size (a Zstd encoder's history and a page
// buffer per column), the records of 200,000 jobs about 70 MB. The files
// are the same bytes either way.
var streamRecords = 200_000

// Streams is whether Simulate streams the records of a comparison of jobs
// jobs under policies policies to their files as each run ends, rather
// than holding them until the folder is written.
func Streams(jobs, policies int) bool { return jobs*policies >= streamRecords }

// workload reads or makes the comparison's jobs and names them in s.
func (c *Comparison) workload(cluster *hwmodel.Cluster, s *Simulation) (*workloads.Workload, error) {
	var (
		w   *workloads.Workload
		err error
	)
	switch {
	case c.Synthetic != 0:
		if err := CheckJobCount(c.Synthetic, len(c.Policies)); err != nil {
			return nil, &RequestError{"synthetic", err}
		}
		load := c.Load
		if load == 0 {
			load = 0.9
		}
		if w, err = SyntheticFor(cluster, c.Synthetic, c.Seed, load); err != nil {
			return nil, err
		}
		if err := c.drawNames(w); err != nil {
			return nil, err
		}
		s.WorkloadName = fmt.Sprintf("synthetic: %s, load %g, seed %d", hwmodel.Plural(c.Synthetic, "job", "jobs"), load, c.Seed)
		return w, nil
	case c.Generated != nil:
		path := filepath.Join(c.Out, c.Generated.File)
		w, err = workloads.ReadBrigade(bytes.NewReader(c.Generated.Data), path)
		s.WorkloadName = filepath.Base(path)
	case c.Trace == "":
		w, err = workloads.Default()
		s.WorkloadName = workloads.DefaultName
	default:
		w, err = workloads.ReadFile(c.Trace, c.Format)
		s.WorkloadName = filepath.Base(c.Trace)
	}
	if err != nil {
		return nil, err
	}
	if err := c.drawNames(w); err != nil {
		return nil, err
	}
	if c.Load != 0 {
		before := w.OfferedLoad(cluster.TotalGPUs())
		if err := w.ScaleToLoad(cluster.TotalGPUs(), c.Load); err != nil {
			return nil, &RequestError{"load", err}
		}
		s.WorkloadName += fmt.Sprintf(", arrivals rescaled from load %.3g to %g", before, c.Load)
	}
	return w, nil
}

// inputs lists the files a comparison read, for run.json: the trace (or
// the embedded default, or the generated trace as written into Out), the
// cluster (a file, or a built-in preset), the tenant weights, the failure
// trace, the speed table, the Kueue manifest and the application model's
// files. A synthetic workload is no file: its seed is in run.json.
func (c *Comparison) inputs(clusterFile string) ([]results.InputFile, error) {
	var in results.Inputs
	switch {
	case c.Synthetic > 0:
	case c.Generated != nil:
		in = append(in, results.InputFile{Role: "trace", Path: filepath.Join(c.Out, c.Generated.File), SHA256: results.SHA256Hex(c.Generated.Data)})
	case c.Trace == "":
		in = append(in, results.InputFile{Role: "trace", Path: workloads.DefaultFile, Embedded: true, SHA256: workloads.DefaultSHA256()})
	default:
		if err := in.AddFile("trace", c.Trace); err != nil {
			return nil, err
		}
	}
	if clusterFile != "" {
		if err := in.AddFile("cluster", clusterFile); err != nil {
			return nil, err
		}
	} else {
		in = append(in, results.InputFile{Role: "cluster", Path: c.Cluster, Embedded: true})
	}
	for _, x := range []struct{ role, path string }{{"tenant-weights", c.TenantWeights}, {"fail-trace", c.FailTrace}, {"speeds", c.speedsFile()}, {"kueue", c.Kueue}} {
		if x.path != "" {
			if err := in.AddFile(x.role, x.path); err != nil {
				return nil, err
			}
		}
	}
	if c.AppsDir != "" {
		// The application model is a folder: each of its CSV files, in
		// lexical order.
		err := filepath.WalkDir(c.AppsDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Ext(path) != ".csv" {
				return err
			}
			return in.AddFile("apps", path)
		})
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// CheckFits refuses a workload with a job that no node of cluster c
// (called name) could ever hold, whatever the policy: the engine would
// fail it at submission, and a failure there looks like a policy's doing.
// The error names the first such job, where it was read (file and line,
// when the reader knows them), what it asks for and what the largest node
// offers, and how many more jobs cannot fit.
func CheckFits(w *workloads.Workload, c *hwmodel.Cluster, name string) error {
	first, why, n := -1, "", 0
	for i := range w.Jobs {
		if err := c.Satisfiable(w.Jobs[i].Req); err != nil {
			if first < 0 {
				first, why = i, err.Error()
			}
			n++
		}
	}
	if first < 0 {
		return nil
	}
	j := &w.Jobs[first]
	where := ""
	if j.Source != "" {
		where = j.Source + ": "
	}
	msg := fmt.Sprintf("%sjob %q can never run on cluster %s: it asks for %s; %s (%s)", where, j.Name, name, describeRequest(j.Req), largestNode(c, j.Req.Models), why)
	if n > 1 {
		msg += fmt.Sprintf("; %s cannot either", hwmodel.Plural(n-1, "more job", "more jobs"))
	}
	return errors.New(msg + "; give a larger cluster (--cluster) or leave such jobs out of the trace")
}

func describeRequest(r hwmodel.Request) string {
	var parts []string
	switch {
	case r.WantsMIG():
		parts = append(parts, fmt.Sprintf("a MIG instance (%s)", r.MIG))
	case r.GPUs == 1 && r.GPUMilli < hwmodel.MilliPerGPU:
		parts = append(parts, fmt.Sprintf("%d milli-GPU of one GPU", r.GPUMilli))
	default:
		parts = append(parts, hwmodel.Plural(r.GPUs, "GPU", "GPUs"))
	}
	if r.GPUs > 0 && r.Models != 0 {
		parts[0] += " of model " + r.Models.String()
	}
	parts = append(parts, fmt.Sprintf("%d milli-CPU", r.CPUMilli), fmt.Sprintf("%d MiB of memory", r.MemoryMiB))
	return strings.Join(parts, ", ")
}

// largestNode describes the node with the most GPUs that models accepts
// (then the most CPU, then memory), or says there is none.
func largestNode(c *hwmodel.Cluster, models hwmodel.ModelSet) string {
	best := -1
	for i := 0; i < c.NumNodes(); i++ {
		n := c.Node(i)
		if n.GPUs > 0 && !models.Accepts(n.Model) {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := c.Node(best)
		if n.GPUs > b.GPUs || n.GPUs == b.GPUs && (n.CPUMilli > b.CPUMilli || n.CPUMilli == b.CPUMilli && n.MemoryMiB > b.MemoryMiB) {
			best = i
		}
	}
	if best < 0 {
		return fmt.Sprintf("no node has GPUs of model %s", models)
	}
	n := c.Node(best)
	return fmt.Sprintf("the largest node, %s, has %s of model %s, %d milli-CPU and %d MiB of memory",
		n.Name, hwmodel.Plural(n.GPUs, "GPU", "GPUs"), hwmodel.Model(n.Model).Name, n.CPUMilli, n.MemoryMiB)
}

// warnPolicyUnsatisfiable warns about jobs that fit the cluster but that a
// policy's MIG mode cannot serve (static layouts without the instance a
// MIG job needs): the engine failed them at submission under that policy.
func warnPolicyUnsatisfiable(warn func(string, ...any), runs []PolicyRun) {
	for _, r := range runs {
		if n, example := r.unsatisfiable, r.unsatisfiableExample; n > 0 {
			warn("%s can never fit this cluster under %s and %s failed at submission, e.g. %s", hwmodel.Plural(n, "job", "jobs"), r.Policy, map[bool]string{true: "was", false: "were"}[n == 1], example)
		}
	}
}

// TargetOf is the target workload ("typical pods") that fgd placement and
// the fragmentation measure use for w: the FGD paper's, from the trace's
// own requests.
func TargetOf(w *workloads.Workload) policies.TargetWorkload {
	reqs := make([]hwmodel.Request, len(w.Jobs))
	for i := range w.Jobs {
		reqs[i] = w.Jobs[i].Req
	}
	return policies.TargetFromRequests(reqs)
}

// drawNames gives w's jobs the comparison's classes and datasets, if it
// names any; a workload that names its own is refused, so that none is
// silently replaced.
func (c *Comparison) drawNames(w *workloads.Workload) error {
	if len(c.Classes) > 0 {
		if len(w.Classes) > 0 {
			return &RequestError{"classes", fmt.Errorf("the trace names its jobs' classes already (column class: %s); draw classes only for a workload without them", quoteList(w.Classes))}
		}
		workloads.DrawClasses(w, c.Classes, c.ClassWeights, c.Seed)
	}
	if len(c.Datasets) > 0 {
		if len(w.Datasets) > 0 {
			return &RequestError{"datasets", fmt.Errorf("the trace names its jobs' datasets already (column dataset: %s); draw datasets only for a workload without them", quoteList(w.Datasets))}
		}
		workloads.DrawDatasets(w, c.Datasets, c.DatasetWeights, c.Seed)
	}
	return nil
}
