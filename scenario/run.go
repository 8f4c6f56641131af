package scenario

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/kueue"
	"github.com/brigadesim/brigade/plan"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/serving"
	"github.com/brigadesim/brigade/workloads"
)

// Options change how a file runs without changing the file: the CLI's
// overrides.
type Options struct {
	// Seed, when not nil, replaces the file's seed.
	Seed *uint64
	// Cluster and Policy, when set, replace the file's shared cluster and
	// policy; setups that name their own keep them.
	Cluster, Policy string
	// CheckInvariants re-checks every engine invariant after every event.
	CheckInvariants bool
	// Progress, when not nil, is called as each setup starts.
	Progress func(setup string, done, total int)
}

// Outcome is one setup's run.
type Outcome struct {
	Setup Setup // with the shared fields filled in
	Run   runner.PolicyRun

	explicit   []string // the explicit jobs' names: Run.Jobs[explicitAt[i]] is explicit[i]
	explicitAt []int
	summary    map[string]any
}

// Result is a whole file's run: its setups' outcomes, or its plan.
type Result struct {
	File     *File
	Workload string // the workload's one-line description
	Outcomes []Outcome
	// Plan is a plan file's result, and PlanSeeds the seeds it ran.
	Plan *plan.Result
	// BlindPlan is the same plan without the speed table, when the plan
	// has one.
	BlindPlan *plan.Result
	PlanSeeds []uint64
	// Serving is a serving file's result; Workload is then the
	// experiment file's path.
	Serving *serving.RunSet
}

// Setups are the file's setups with the shared fields filled in; a file
// without setups has one, named after its policy.
func (f *File) setups() []Setup {
	list := f.Setups
	if len(list) == 0 {
		list = []Setup{{Name: f.Policy}}
	}
	out := make([]Setup, len(list))
	for i, s := range list {
		if s.Cluster == "" {
			s.Cluster = f.Cluster
		}
		if s.Policy == "" {
			s.Policy = f.Policy
		}
		if s.Kueue == "" && isKueue(s.Policy) {
			s.Kueue = f.Kueue
		}
		out[i] = s
	}
	return out
}

// isKueue reports whether a policy spec is of the kueue order, which
// reads the Kueue manifests.
func isKueue(spec string) bool {
	p, err := policies.ParseSpec(spec)
	return err == nil && p.Order == "kueue"
}

// Run runs every setup of f, in order. The same file and options give the
// same results, byte for byte.
func Run(f *File, opt Options) (*Result, error) {
	g := *f
	if opt.Seed != nil {
		g.Seed = *opt.Seed
	}
	if opt.Cluster != "" {
		g.Cluster = opt.Cluster
	}
	if opt.Policy != "" {
		if _, err := policies.ParseSpec(opt.Policy); err != nil {
			return nil, err
		}
		g.Policy = opt.Policy
	}
	f = &g
	if f.Serving != "" {
		res := &Result{File: f}
		if err := f.runServing(opt, res); err != nil {
			return nil, fmt.Errorf("%s: serving: %w", f.path, err)
		}
		return res, nil
	}
	if f.Plan != nil {
		res := &Result{File: f}
		if err := f.runPlan(opt, res); err != nil {
			return nil, fmt.Errorf("%s: plan: %w", f.path, err)
		}
		return res, nil
	}
	w, desc, err := f.buildWorkload()
	if err != nil {
		return nil, err
	}
	reconfig := duration(nil, "", f.MIGReconfigTime)
	res := &Result{File: f, Workload: desc}
	explicit := make([]string, len(f.Workload.Jobs))
	for i, j := range f.Workload.Jobs {
		explicit[i] = j.Name
	}
	speeds, err := f.speedTable()
	if err != nil {
		return nil, err
	}
	setups := f.setups()
	for i, s := range setups {
		if opt.Progress != nil {
			opt.Progress(s.Name, i, len(setups))
		}
		spec, err := hwmodel.ResolveCluster(f.resolveCluster(s.Cluster))
		if err != nil {
			return nil, fmt.Errorf("%s: setup %s: %w", f.path, s.Name, err)
		}
		pol, err := policies.ParseSpec(s.Policy)
		if err != nil {
			return nil, fmt.Errorf("%s: setup %s: %w", f.path, s.Name, err)
		}
		wl := &workloads.Workload{Jobs: append([]workloads.Job(nil), w.Jobs...), Tenants: w.Tenants, Classes: w.Classes, Datasets: w.Datasets}
		if s.WholeGPUs {
			wl = asWholeGPUs(wl)
		}
		if s.NoCheckpoints {
			for _, k := range f.explicitAt {
				wl.Jobs[k].Checkpoint = workloads.Checkpoint{}
			}
		}
		probe, err := spec.Build()
		if err != nil {
			return nil, fmt.Errorf("%s: setup %s: %w", f.path, s.Name, err)
		}
		if err := runner.CheckFits(wl, probe, s.Cluster); err != nil {
			return nil, fmt.Errorf("%s: setup %s: %w", f.path, s.Name, err)
		}
		specs := []policies.Spec{pol}
		tenants := make([]string, len(wl.Tenants))
		for k, t := range wl.Tenants {
			tenants[k] = t.Name
		}
		if err := kueue.Attach(specs, f.resolve(s.Kueue), "kueue:", probe.View(), tenants, desc); err != nil {
			return nil, fmt.Errorf("%s: setup %s: %w", f.path, s.Name, err)
		}
		reqs := make([]hwmodel.Request, len(wl.Jobs))
		for k := range wl.Jobs {
			reqs[k] = wl.Jobs[k].Req
		}
		target := policies.TargetFromRequests(reqs)
		pre := f.Preemption
		if s.Preemption != nil {
			pre = s.Preemption
		}
		runs, err := runner.Run(runner.Spec{
			Workload: wl, WorkloadName: desc, NewCluster: spec.Build, ClusterName: s.Cluster,
			Policies: specs, Placer: policies.PlacerConfig{Seed: f.Seed, Target: target}, Seed: f.Seed,
			Options: runner.Options{MIGReconfigTime: reconfig, CheckInvariants: opt.CheckInvariants, Faults: f.faults(s), FragTarget: &target,
				Speeds: speeds, SpeedReference: f.speedReference(),
				PreemptRestart: pre.restart(), SaveOnPreempt: pre != nil && pre.Save},
		})
		if err != nil {
			return nil, fmt.Errorf("%s: setup %s: %w", f.path, s.Name, err)
		}
		r := runs[0]
		r.Summary.Policy = s.Name
		res.Outcomes = append(res.Outcomes, Outcome{Setup: s, Run: r, explicit: explicit, explicitAt: f.explicitAt, summary: r.Summary.Fields()})
	}
	return res, nil
}

// speedTable is the file's speed table, nil without one.
func (f *File) speedTable() (*hwmodel.SpeedTable, error) {
	switch f.Speeds {
	case "":
		return nil, nil
	case runner.DefaultSpeeds:
		return hwmodel.DefaultSpeeds(), nil
	}
	return runner.LoadSpeeds(f.resolve(f.Speeds))
}

// speedReference is the model the file's durations were measured on.
func (f *File) speedReference() hwmodel.ModelID {
	m, _ := hwmodel.LookupModel(f.SpeedReference)
	return m.ID
}

// resolveCluster is a preset's name as it is, or a spec file's path
// relative to the scenario file.
func (f *File) resolveCluster(c string) string {
	if _, ok := hwmodel.Preset(c); ok {
		return c
	}
	return f.resolve(c)
}

// faults is setup s's failures and retry rules; nil without a faults
// section.
// restart is the preemption's restart delay (0 without a preemption
// section).
func (p *Preemption) restart() hwmodel.Time {
	if p == nil {
		return 0
	}
	return duration(nil, "", p.Restart)
}

func (f *File) faults(s Setup) *runner.Faults {
	if f.Faults == nil {
		return nil
	}
	out := &runner.Faults{Retry: f.Faults.Retry, MaxRetries: f.Faults.MaxRetries, RestartTime: duration(nil, "", f.Faults.RestartTime)}
	if !s.NoFaults {
		out.Model = hwmodel.FailureModel{NodeMTBF: duration(nil, "", f.Faults.NodeMTBF),
			NodeRepair: hwmodel.RepairModel{Kind: "fixed", Mean: duration(nil, "", f.Faults.NodeRepair)},
			RackMTBF:   duration(nil, "", f.Faults.RackMTBF),
			RackRepair: hwmodel.RepairModel{Kind: "fixed", Mean: duration(nil, "", f.Faults.RackRepair)}}
	}
	return out
}

// WriteText prints the results as a terminal reads them: the aligned
// table of setups, or a plan's answer and evidence.
func (r *Result) WriteText(w io.Writer) error {
	if r.Plan != nil {
		return r.Plan.WriteReport(w)
	}
	if r.Serving != nil {
		return serving.FormatTable(w, r.Serving)
	}
	rows, err := r.Table()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// Table is the results table: a header row, then a row per setup (none
// for a plan).
func (r *Result) Table() ([][]string, error) {
	if r.Plan != nil || r.Serving != nil {
		return nil, fmt.Errorf("%s: a plan or a serving experiment has no table of setups", r.File.path)
	}
	cols := r.File.Columns
	if len(cols) == 0 {
		cols = defaultColumns
	}
	rows := [][]string{make([]string, len(cols))}
	for k, c := range cols {
		rows[0][k] = c.Header
	}
	for i := range r.Outcomes {
		row := make([]string, len(cols))
		for k, c := range cols {
			x, err := r.Outcomes[i].value(c.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: columns[%d]: %w", r.File.path, k, err)
			}
			row[k] = format(x, c.Format)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// defaultColumns are a file's columns when it names none.
var defaultColumns = []Column{
	{Header: "setup", Value: "setup.name"},
	{Header: "jobs done", Value: "jobs_succeeded / jobs_submitted", Format: "of"},
	{Header: "wait mean", Value: "wait_s.mean", Format: "duration"},
	{Header: "wait p99", Value: "wait_s.p99", Format: "duration"},
	{Header: "JCT mean", Value: "jct_s.mean", Format: "duration"},
	{Header: "GPU util", Value: "gpu_utilisation_arrivals", Format: "percent"},
}

// Runs are the setups' runs, each labelled by its setup's name, for
// runner.Write.
func (r *Result) Runs() []runner.PolicyRun {
	out := make([]runner.PolicyRun, len(r.Outcomes))
	for i, o := range r.Outcomes {
		out[i] = o.Run
	}
	return out
}

// Summaries are the setups' summaries, each labelled by its setup's name.
func (r *Result) Summaries() []results.Summary {
	out := make([]results.Summary, len(r.Outcomes))
	for i, o := range r.Outcomes {
		out[i] = o.Run.Summary
	}
	return out
}
