package workloads

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// DefaultTenantWeight is the fair-share weight of a tenant that no weights
// list mentions.
const DefaultTenantWeight = 1.0

// Build turns jobs read in input order into a validated Workload.
//
// deps[i] names the jobs that jobs[i] depends on; deps may be nil when no
// job has dependencies, and otherwise must have one entry per job. Each
// job's own Deps field is ignored and replaced by the resolved indices.
// tenants gives fair-share weights; a job's tenant that it does not list
// gets DefaultTenantWeight, and a listed tenant with no jobs is kept (after
// the tenants that have jobs, in the order given). file names the input for
// errors about jobs whose Source is empty.
//
// Build does not modify jobs or deps. It checks, in this order: each job's
// own fields, unique names, that every dependency names another job once,
// that no job depends on a job submitted after it, and that the
// dependencies have no cycle. Jobs are then in Workload order: sorted by
// Submit, ties in input order. Every error is a *ParseError located at the
// offending job's Source.
func Build(jobs []Job, deps [][]string, tenants []Tenant, file string) (*Workload, error) {
	return build(jobs, deps, tenants, file, false)
}

// build is Build; owned lets it keep jobs as the workload's array (and
// modify it) when they are already in Workload order and have no
// dependencies, as a reader's freshly read trace usually is, instead of
// copying every job.
func build(jobs []Job, deps [][]string, tenants []Tenant, file string, owned bool) (*Workload, error) {
	if deps != nil && len(deps) != len(jobs) {
		return nil, &ParseError{File: file, Msg: fmt.Sprintf("want one dependency list per job (%d), found %d", len(jobs), len(deps))}
	}
	for i := range jobs {
		if err := checkJob(&jobs[i], file); err != nil {
			return nil, err
		}
	}
	byName := make(map[string]int, len(jobs))
	for i := range jobs {
		if j, dup := byName[jobs[i].Name]; dup {
			e := jobError(&jobs[i], file, "name", "")
			e.Msg = fmt.Sprintf("job name %q is already used by the job at %s; names must be unique", jobs[i].Name, where(&jobs[j], file))
			return nil, e
		}
		byName[jobs[i].Name] = i
	}

	if owned && deps == nil && slices.IsSortedFunc(jobs, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) }) {
		w := &Workload{Jobs: jobs}
		for i := range w.Jobs {
			w.Jobs[i].Deps = nil
		}
		if err := w.setTenants(tenants, file); err != nil {
			return nil, err
		}
		return w, nil
	}
	// Resolve names to input indices, into one backing array.
	nDeps := 0
	for _, d := range deps {
		nDeps += len(d)
	}
	in := make([]int, 0, nDeps)
	start := make([]int, len(jobs)+1)
	for i := range jobs {
		start[i] = len(in)
		if deps == nil {
			continue
		}
		for k, name := range deps[i] {
			j, ok := byName[name]
			switch {
			case !ok:
				return nil, jobError(&jobs[i], file, "deps", fmt.Sprintf("job %q depends on %q, but no job has that name", jobs[i].Name, name))
			case j == i:
				return nil, jobError(&jobs[i], file, "deps", fmt.Sprintf("job %q depends on itself", jobs[i].Name))
			case slices.Contains(deps[i][:k], name):
				return nil, jobError(&jobs[i], file, "deps", fmt.Sprintf("job %q lists dependency %q twice", jobs[i].Name, name))
			}
			in = append(in, j)
		}
	}
	start[len(jobs)] = len(in)

	// Stable sort by Submit; pos[i] is input job i's index in the workload.
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(jobs[a].Submit, jobs[b].Submit) })
	pos := make([]int, len(jobs))
	for k, i := range order {
		pos[i] = k
	}
	w := &Workload{Jobs: make([]Job, len(jobs))}
	for k, i := range order {
		j := jobs[i]
		j.Deps = nil
		if n := start[i+1] - start[i]; n > 0 {
			d := in[start[i]:start[i+1]:start[i+1]]
			for x := range d {
				d[x] = pos[d[x]]
			}
			j.Deps = d
		}
		w.Jobs[k] = j
	}
	if err := checkGraph(w.Jobs, file); err != nil {
		return nil, err
	}
	if err := w.setTenants(tenants, file); err != nil {
		return nil, err
	}
	return w, nil
}

// setTenants fills w.Tenants from the jobs' tenants and the given weights.
func (w *Workload) setTenants(given []Tenant, file string) error {
	if err := checkTenantList(given, file); err != nil {
		return err
	}
	weight := make(map[string]float64, len(given))
	for _, t := range given {
		weight[t.Name] = t.Weight
	}
	seen := make(map[string]bool)
	w.Tenants = w.Tenants[:0]
	for i := range w.Jobs {
		name := w.Jobs[i].Tenant
		if seen[name] {
			continue
		}
		seen[name] = true
		wt, ok := weight[name]
		if !ok {
			wt = DefaultTenantWeight
		}
		w.Tenants = append(w.Tenants, Tenant{Name: name, Weight: wt})
	}
	for _, t := range given {
		if !seen[t.Name] {
			w.Tenants = append(w.Tenants, t)
		}
	}
	return nil
}

// ApplyTenantWeights sets the weights of the listed tenants, appending
// those that have no jobs, for example from ReadTenantWeights after
// ReadFile. Tenants it does not list keep their weight.
func (w *Workload) ApplyTenantWeights(ts []Tenant) error {
	if err := checkTenantList(ts, ""); err != nil {
		return err
	}
	idx := make(map[string]int, len(w.Tenants))
	for i, t := range w.Tenants {
		idx[t.Name] = i
	}
	for _, t := range ts {
		if i, ok := idx[t.Name]; ok {
			w.Tenants[i].Weight = t.Weight
		} else {
			w.Tenants = append(w.Tenants, t)
		}
	}
	return nil
}

func checkTenantList(ts []Tenant, file string) error {
	seen := make(map[string]bool, len(ts))
	for _, t := range ts {
		switch {
		case t.Name == "":
			return &ParseError{File: file, Field: "tenant", Msg: "want a tenant name, found an empty one"}
		case seen[t.Name]:
			return &ParseError{File: file, Field: "tenant", Msg: fmt.Sprintf("tenant %q is given a weight twice", t.Name)}
		case !(t.Weight > 0) || math.IsInf(t.Weight, 0):
			return &ParseError{File: file, Field: "weight", Msg: fmt.Sprintf("tenant %q: want a finite weight > 0, found %g", t.Name, t.Weight)}
		}
		seen[t.Name] = true
	}
	return nil
}

// checkJob checks one job's own fields.
func checkJob(j *Job, file string) *ParseError {
	bad := func(field, format string, args ...any) *ParseError {
		return jobError(j, file, field, fmt.Sprintf("job %q: ", j.Name)+fmt.Sprintf(format, args...))
	}
	switch {
	case j.Name == "":
		return jobError(j, file, "name", "want a job name, found an empty one")
	case j.Tenant == "":
		return bad("tenant", "want a tenant name, found an empty one")
	case j.Submit < 0 || j.Submit > maxTime:
		return bad("submit_s", "want a submit time in [0, %g] s, found %g s", float64(maxSeconds), j.Submit.Seconds())
	case j.App != "" && j.Duration != 0:
		return bad("duration_s", "want no duration for a job that trains application %q (its application model times it), found %g s", j.App, j.Duration.Seconds())
	case j.App != "" && (j.BatchSize <= 0 || j.BatchSize > maxCount):
		return bad("batch_size", "want a batch size in 1..%d, found %d", maxCount, j.BatchSize)
	case j.App == "" && j.BatchSize != 0:
		return bad("batch_size", "want no batch size for a job without an application, found %d", j.BatchSize)
	case j.App == "" && (j.Duration <= 0 || j.Duration > maxTime):
		return bad("duration_s", "want a duration > 0 and <= %g s, found %g s", float64(maxSeconds), j.Duration.Seconds())
	case j.Estimate < 0 || j.Estimate > maxTime:
		return bad("estimate_s", "want an estimate >= 0 (0 = none) and <= %g s, found %g s", float64(maxSeconds), j.Estimate.Seconds())
	case j.MaxRetries < 0 || j.MaxRetries > maxCount:
		return bad("retries", "want retries in 0..%d, found %d", maxCount, j.MaxRetries)
	case j.FailedAttempts < 0 || j.FailedAttempts > maxCount:
		return bad("failed_attempts", "want failed attempts in 0..%d, found %d", maxCount, j.FailedAttempts)
	case j.Deadline < 0 || j.Deadline > maxTime:
		return bad("deadline_s", "want a deadline >= 0 (0 = none) and <= %g s, found %g s", float64(maxSeconds), j.Deadline.Seconds())
	case j.Checkpoint.Every < 0 || j.Checkpoint.Every > maxTime:
		return bad("checkpoint_every_s", "want a checkpoint interval >= 0 (0 = none) and <= %g s, found %g s", float64(maxSeconds), j.Checkpoint.Every.Seconds())
	case j.Checkpoint.Cost < 0 || j.Checkpoint.Cost > maxTime:
		return bad("checkpoint_cost_s", "want a checkpoint cost >= 0 and <= %g s, found %g s", float64(maxSeconds), j.Checkpoint.Cost.Seconds())
	case j.Checkpoint.Cost > 0 && j.Checkpoint.Every == 0:
		return bad("checkpoint_cost_s", "want no checkpoint cost for a job without checkpoint_every_s, found %g s", j.Checkpoint.Cost.Seconds())
	case j.Req.GPUs > maxGPUs:
		return bad("gpus", "want at most %d GPUs, found %d", maxGPUs, j.Req.GPUs)
	case j.Req.CPUMilli > maxResource:
		return bad("cpu_milli", "want at most %d milli-CPU, found %d", int64(maxResource), j.Req.CPUMilli)
	case j.Req.MemoryMiB > maxResource:
		return bad("memory_mib", "want at most %d MiB, found %d", int64(maxResource), j.Req.MemoryMiB)
	}
	if err := j.Req.Validate(); err != nil {
		return bad("gpus", "invalid request: %v", err)
	}
	return nil
}

// checkGraph checks the dependencies of jobs in workload order: indices in
// range, no self or repeated dependency, no dependency on a job submitted
// later, and no cycle.
func checkGraph(jobs []Job, file string) error {
	for i := range jobs {
		j := &jobs[i]
		for k, d := range j.Deps {
			switch {
			case d < 0 || d >= len(jobs):
				return jobError(j, file, "deps", fmt.Sprintf("job %q: dependency index %d is outside 0..%d", j.Name, d, len(jobs)-1))
			case d == i:
				return jobError(j, file, "deps", fmt.Sprintf("job %q depends on itself", j.Name))
			case slices.Contains(j.Deps[:k], d):
				return jobError(j, file, "deps", fmt.Sprintf("job %q lists dependency %q twice", j.Name, jobs[d].Name))
			case jobs[d].Submit > j.Submit:
				return jobError(j, file, "deps", fmt.Sprintf(
					"job %q (submitted at %g s) depends on %q (at %s), which is submitted later, at %g s; a job may depend only on jobs submitted at or before its own submit time",
					j.Name, j.Submit.Seconds(), jobs[d].Name, where(&jobs[d], file), jobs[d].Submit.Seconds()))
			}
		}
	}
	return findCycle(jobs, file)
}

// findCycle runs an iterative depth-first search over the dependency edges
// and reports the first cycle it meets, naming every job on it.
func findCycle(jobs []Job, file string) error {
	const (
		white = iota
		grey
		black
	)
	colour := make([]uint8, len(jobs))
	type frame struct{ job, next int }
	var stack []frame
	for root := range jobs {
		if colour[root] != white || len(jobs[root].Deps) == 0 {
			colour[root] = black
			continue
		}
		stack = append(stack[:0], frame{root, 0})
		colour[root] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			deps := jobs[top.job].Deps
			if top.next == len(deps) {
				colour[top.job] = black
				stack = stack[:len(stack)-1]
				continue
			}
			d := deps[top.next]
			top.next++
			switch colour[d] {
			case white:
				colour[d] = grey
				stack = append(stack, frame{d, 0})
			case grey:
				// The stack from d to the top is the cycle: each job
				// depends on the next one, and the top depends on d.
				k := len(stack) - 1
				for stack[k].job != d {
					k--
				}
				var b strings.Builder
				for _, f := range stack[k:] {
					fmt.Fprintf(&b, "%q (%s) -> ", jobs[f.job].Name, where(&jobs[f.job], file))
				}
				fmt.Fprintf(&b, "%q", jobs[d].Name)
				return jobError(&jobs[d], file, "deps", "dependency cycle: "+b.String()+"; each job depends on the next")
			}
		}
	}
	return nil
}

// Validate checks the invariants documented on the package: every job's
// fields, unique names, the order by Submit, the dependencies, and the
// tenant list. Build and the readers return only workloads that pass it;
// code that assembles a Workload by hand should call it.
func (w *Workload) Validate() error {
	seen := make(map[string]int, len(w.Jobs))
	for i := range w.Jobs {
		j := &w.Jobs[i]
		if err := checkJob(j, ""); err != nil {
			return err
		}
		if k, dup := seen[j.Name]; dup {
			return jobError(j, "", "name", fmt.Sprintf("jobs %d and %d are both named %q", k, i, j.Name))
		}
		seen[j.Name] = i
		if i > 0 && j.Submit < w.Jobs[i-1].Submit {
			return jobError(j, "", "submit_s", fmt.Sprintf("job %d %q is submitted at %g s, before job %d at %g s; jobs must be sorted by submit time",
				i, j.Name, j.Submit.Seconds(), i-1, w.Jobs[i-1].Submit.Seconds()))
		}
	}
	if err := checkGraph(w.Jobs, ""); err != nil {
		return err
	}
	if err := checkTenantList(w.Tenants, ""); err != nil {
		return err
	}
	tenantIdx := make(map[string]int, len(w.Tenants))
	for i, t := range w.Tenants {
		tenantIdx[t.Name] = i
	}
	next := 0 // tenants must appear in order of first appearance
	for i := range w.Jobs {
		j := &w.Jobs[i]
		k, ok := tenantIdx[j.Tenant]
		switch {
		case !ok:
			return jobError(j, "", "tenant", fmt.Sprintf("job %q: tenant %q is missing from the tenant list", j.Name, j.Tenant))
		case k > next:
			return jobError(j, "", "tenant", fmt.Sprintf("job %q: tenant %q is listed at position %d, want %d (order of first appearance)", j.Name, j.Tenant, k, next))
		case k == next:
			next++
		}
	}
	return nil
}

// jobError builds a ParseError located at the job's Source ("file:line"),
// or at file when the job has no Source.
func jobError(j *Job, file, field, msg string) *ParseError {
	f, line := splitSource(j.Source, file)
	return &ParseError{File: f, Line: line, Field: field, Msg: msg}
}

// splitSource splits "file:line" into its parts. A Source without a line
// number is taken whole as the file; an empty one falls back to file.
func splitSource(src, file string) (string, int) {
	if src == "" {
		return file, 0
	}
	if i := strings.LastIndexByte(src, ':'); i >= 0 {
		if n, err := strconv.Atoi(src[i+1:]); err == nil && n > 0 {
			return src[:i], n
		}
	}
	return src, 0
}

// where describes a job's location for a message.
func where(j *Job, file string) string {
	if j.Source != "" {
		return j.Source
	}
	if file != "" {
		return file + ", job " + strconv.Quote(j.Name)
	}
	return "job " + strconv.Quote(j.Name)
}

// FillEstimates gives every job whose Estimate is 0 a runtime estimate:
// the median Duration of the other jobs of the same tenant that ask for the
// same number of GPUs; if there are none, of the other jobs with that GPU
// count; if there are none either, of all other jobs (and a workload of a
// single job gets its own duration). The median of an even count is the
// mean of the middle two, rounded down to the microsecond.
//
// This is a stand-in for user estimates for traces that have none (Philly,
// Alibaba). It looks at the whole trace, future jobs included, so the
// estimate it gives is better informed than a user's could be at submit
// time, yet blind to the job's own duration and to differences within a
// group. Jobs that already have an estimate keep it.
func (w *Workload) FillEstimates() {
	n := len(w.Jobs)
	missing := false
	for i := range w.Jobs {
		if w.Jobs[i].Estimate == 0 {
			missing = true
			break
		}
	}
	if !missing || n == 0 {
		return
	}
	// Group ids at each level: tenant and GPU count, GPU count, all.
	tenantID := make(map[string]int, len(w.Tenants))
	for _, t := range w.Tenants {
		tenantID[t.Name] = len(tenantID)
	}
	pairID := make(map[[2]int]int32)
	gpuID := make(map[int]int32)
	of := [3][]int32{make([]int32, n), make([]int32, n), make([]int32, n)}
	lastTenant, lastID := "", -1
	for i := range w.Jobs {
		j := &w.Jobs[i]
		if j.Tenant != lastTenant || lastID < 0 {
			id, ok := tenantID[j.Tenant]
			if !ok {
				id = len(tenantID)
				tenantID[j.Tenant] = id
			}
			lastTenant, lastID = j.Tenant, id
		}
		k := [2]int{lastID, j.Req.GPUs}
		p, ok := pairID[k]
		if !ok {
			p = int32(len(pairID))
			pairID[k] = p
		}
		g, ok := gpuID[j.Req.GPUs]
		if !ok {
			g = int32(len(gpuID))
			gpuID[j.Req.GPUs] = g
		}
		of[0][i], of[1][i] = p, g
	}
	levels := [3]durationGroups{
		newDurationGroups(w.Jobs, of[0], len(pairID)),
		newDurationGroups(w.Jobs, of[1], len(gpuID)),
		newDurationGroups(w.Jobs, of[2], 1),
	}
	// Compute every estimate before writing any, so that the order of
	// filling cannot matter (durations do not change, but stay explicit).
	est := make([]hwmodel.Time, n)
	for i := range w.Jobs {
		if w.Jobs[i].Estimate != 0 {
			continue
		}
		est[i] = w.Jobs[i].Duration
		for k := range levels {
			if d, ok := levels[k].medianWithout(of[k][i], w.Jobs[i].Duration); ok {
				est[i] = d
				break
			}
		}
	}
	for i := range w.Jobs {
		if w.Jobs[i].Estimate == 0 {
			w.Jobs[i].Estimate = est[i]
		}
	}
}

// durationGroups holds the jobs' durations by group, each group's sorted
// when it is first asked for (most jobs find their estimate in the first
// level, so the wider levels' large groups are often never sorted).
type durationGroups struct {
	start  []int // group g's durations are durs[start[g]:start[g+1]]
	durs   []hwmodel.Time
	sorted []bool
}

func newDurationGroups(jobs []Job, of []int32, groups int) durationGroups {
	d := durationGroups{start: make([]int, groups+1), durs: make([]hwmodel.Time, len(jobs)), sorted: make([]bool, groups)}
	for _, g := range of {
		d.start[g+1]++
	}
	for g := 1; g <= groups; g++ {
		d.start[g] += d.start[g-1]
	}
	next := slices.Clone(d.start[:groups])
	for i, g := range of {
		d.durs[next[g]] = jobs[i].Duration
		next[g]++
	}
	return d
}

// medianWithout is the median of group g's durations without one that
// equals own (which of equal durations is left out cannot change the
// median); false when the group has no other job. The median of an even
// count is the mean of the middle two, rounded down.
func (d *durationGroups) medianWithout(g int32, own hwmodel.Time) (hwmodel.Time, bool) {
	s := d.durs[d.start[g]:d.start[g+1]]
	if len(s) < 2 {
		return 0, false
	}
	if !d.sorted[g] {
		slices.Sort(s)
		d.sorted[g] = true
	}
	skip, _ := slices.BinarySearch(s, own)
	m := len(s) - 1
	at := func(k int) hwmodel.Time {
		if k >= skip {
			k++
		}
		return s[k]
	}
	if m%2 == 1 {
		return at(m / 2), true
	}
	a, b := at(m/2-1), at(m/2)
	return a + (b-a)/2, true
}
