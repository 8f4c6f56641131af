package scheduler

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	corev1 "k8s.io/api/core/v1"
)

// ExportCluster is the name of the cluster spec an export writes.
const ExportCluster = "kube"

// ExportOptions say what the pods alone do not.
type ExportOptions struct {
	Name    string    // the scheduler's name: its pods are exported
	Policy  string    // the policy spec it ran
	Now     time.Time // where jobs still queued or running are cut
	Command []string  // for run.json
	// NodeSelector: only nodes carrying all these labels are the
	// cluster, as the scheduler's Config.NodeSelector.
	NodeSelector map[string]string
}

// Export writes a results folder in brigade sim's format from what the
// API server says of the scheduler's pods (src): jobs.parquet,
// attempts.parquet and jobs.csv through package results' writers,
// summary.json, estimates.csv (what the policy ordered by), cluster.yaml
// (the schedulable nodes as a spec of named nodes) and run.json, so that
// brigade sim --replay runs the same jobs on the same nodes and the start
// orders can be compared. Times count from the first pod's submission
// (brigade.sim/submitted-at within its bounds, else its creation). A
// job is a pod or a gang; it started when its first member was bound and
// ended when its last member did. Both are the scheduler's round clock
// where it recorded them (brigade.sim/bound-at, brigade.sim/released-at:
// the times at which the policy saw the start and the end, to the
// microsecond), else the API's whole seconds (PodScheduled=True, the
// containers' finishedAt). A job its scheduler preempted has its
// preempted attempts first (brigade.sim/attempts on its last pods; its
// submission is its first pods'), lost unless the policy suspends its
// jobs. The folder is written whole or not at all (results.WriteFolder).
func Export(ctx context.Context, src Source, opt ExportOptions, dir string) error {
	if opt.Name == "" {
		opt.Name = DefaultName
	}
	label := opt.Policy
	if sp, err := policies.ParseSpec(opt.Policy); err == nil {
		label = sp.String()
	}
	nodes, err := src.Nodes()
	if err != nil {
		return err
	}
	pods, err := src.Pods()
	if err != nil {
		return err
	}
	type group struct {
		key  string
		pods []*corev1.Pod
		// created is the job's submission: its pods' earliest, or the
		// first one its history (note) records when they were recreated
		// after a preemption.
		created time.Time
		note    attemptsNote
	}
	byKey := map[string]*group{}
	var groups []*group
	for _, p := range pods {
		if p.Spec.SchedulerName != opt.Name {
			continue
		}
		key := exportName(p)
		g := byKey[key]
		if g == nil {
			g = &group{key: key, created: submittedAt(p)}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.pods = append(g.pods, p)
		if submittedAt(p).Before(g.created) {
			g.created = submittedAt(p)
		}
	}
	var epoch time.Time
	for _, g := range groups {
		if n, ok := readAttempts(g.pods); ok {
			g.note = n
			if n.Submitted.Before(g.created) {
				g.created = n.Submitted
			}
		}
		if epoch.IsZero() || g.created.Before(epoch) {
			epoch = g.created
		}
	}
	suspends := false
	if sp, err := policies.ParseSpec(opt.Policy); err == nil {
		if pol, err := sp.New(); err == nil {
			suspends = policies.Suspends(pol)
		}
	}
	slices.SortFunc(groups, func(a, b *group) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	at := func(t time.Time) hwmodel.Time { return hwmodel.Time(max(t.Sub(epoch).Microseconds(), 0)) }
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	var jobs []results.JobRecord
	var est []string
	var tenants []policies.Tenant
	seen := map[string]bool{}
	totalGPUs := 0
	var specNodes []string
	for _, n := range nodes {
		if !selects(opt.NodeSelector, n) {
			continue
		}
		info, ok := buildNode(n, func(string) {})
		if !ok {
			continue
		}
		totalGPUs += info.hw.GPUs
		line := fmt.Sprintf("  - name: %s\n    gpus: %d\n    cpu_milli: %d\n    memory_mib: %d\n", info.name, wholeGPUs(info), info.hw.CPUMilli, info.hw.MemoryMiB)
		if wholeGPUs(info) > 0 {
			line += fmt.Sprintf("    gpu_model: %s\n", hwmodel.Model(info.hw.Model).Name)
		}
		specNodes = append(specNodes, line)
	}
	slices.Sort(specNodes)
	for id, g := range groups {
		slices.SortFunc(g.pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		var reqs []podReq
		for _, p := range g.pods {
			r, _ := podRequest(p)
			reqs = append(reqs, r)
		}
		req := request(reqs)
		p0 := g.pods[0]
		prio := 0
		if p0.Spec.Priority != nil {
			prio = int(*p0.Spec.Priority)
		}
		tn := tenantOf(p0)
		if !seen[tn] {
			seen[tn] = true
			tenants = append(tenants, policies.Tenant{Name: tn, Weight: 1})
		}
		submit := at(arrival(g.pods, g.created))
		jr := results.JobRecord{ID: int32(id), Name: g.key, Tenant: tn, Priority: prio, Submit: submit, Ready: submit,
			GPUs: req.GPUs, GPUMilli: req.GPUMilli, CPUMilli: req.CPUMilli, MemoryMiB: req.MemoryMiB, MIGProfile: req.MIG.Profile}
		var start, end time.Time
		var nodeNames []string
		allDone, anyFailed := true, false
		for _, p := range g.pods {
			if t := scheduledAt(p); !t.IsZero() && (start.IsZero() || t.Before(start)) {
				start = t
			}
			if p.Spec.NodeName != "" && !slices.Contains(nodeNames, p.Spec.NodeName) {
				nodeNames = append(nodeNames, p.Spec.NodeName)
			}
			allDone = allDone && finished(p)
			anyFailed = anyFailed || p.Status.Phase == corev1.PodFailed
			if e := endedAt(p); e.After(end) {
				end = e
			}
		}
		slices.Sort(nodeNames)
		e, _ := estimates(p0)
		est = append(est, g.key+","+results.FormatSeconds(e))
		switch {
		case start.IsZero():
			jr.State = "queued"
			jr.Start, jr.End = at(opt.Now), at(opt.Now)
			jr.Wait = jr.End - submit
		default:
			jr.Attempts = 1
			// The API's times keep whole seconds: a start read from them
			// may fall before a submission stamped to the nanosecond.
			jr.Start = max(at(start), submit)
			jr.Wait = jr.Start - submit
			jr.Nodes = strings.Join(nodeNames, "+")
			a := results.AttemptRecord{Start: jr.Start, Wait: jr.Wait, Nodes: jr.Nodes, ExitCode: results.NoExitCode}
			switch {
			case allDone && anyFailed:
				jr.State, jr.Reason, a.Ended = results.Failed, results.ReasonRetriesExhausted, results.AttemptFailed
			case allDone:
				jr.State, a.Ended, a.ExitCode = results.Succeeded, results.AttemptSucceeded, 0
			default:
				jr.State, a.Ended, end = "running", results.AttemptRunning, opt.Now
			}
			jr.End = max(at(end), jr.Start)
			a.End = jr.End
			if a.Ended == results.AttemptRunning {
				a.End = -1
			}
			jr.Run = jr.End - jr.Start
			jr.AttemptLog = []results.AttemptRecord{a}
			if len(g.note.Preempted) > 0 {
				withPreempted(&jr, g.note.Preempted, at, suspends)
			}
		}
		jobs = append(jobs, jr)
	}
	var last hwmodel.Time
	for _, j := range jobs {
		last = max(last, j.End)
	}
	sum := results.Summarize(results.RunInput{Policy: label, Cluster: ExportCluster, Workload: "kube: " + opt.Name,
		TotalGPUs: totalGPUs, Tenants: tenants, Jobs: jobs, Timeline: exportTimeline(jobs, totalGPUs, last)})
	pj := []results.PolicyJobs{{Policy: label, Jobs: jobs}}
	spec := "# Written by brigade-kube export: the schedulable nodes as a cluster spec\n# (docs/cluster.md), for brigade sim --replay of this folder.\nname: " +
		ExportCluster + "\nnodes:\n" + strings.Join(specNodes, "")
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	// The cluster spec is named by its final path, as live's export does:
	// brigade sim --replay finds the cluster through it.
	cluster := results.InputFile{Role: "cluster", Path: filepath.Join(abs, "cluster.yaml"), SHA256: results.SHA256Hex([]byte(strings.TrimSuffix(spec, "\n") + "\n"))}
	if opt.Command == nil {
		opt.Command = []string{}
	}
	return results.WriteFolder(abs, func(tmp string) error {
		p := func(n string) string { return filepath.Join(tmp, n) }
		for _, f := range []func() error{
			func() error { return results.WriteSummaryJSON(p("summary.json"), []results.Summary{sum}) },
			func() error { return results.WriteJobsParquet(p("jobs.parquet"), pj) },
			func() error { return results.WriteAttemptsParquet(p("attempts.parquet"), pj) },
			func() error { return results.WriteJobsCSV(p("jobs.csv"), pj) },
			func() error { return writeLines(p("estimates.csv"), "name,estimate_s", est) },
			func() error { return writeLines(p("cluster.yaml"), strings.TrimSuffix(spec, "\n"), nil) },
			func() error {
				return results.WriteRunJSON(p("run.json"), results.RunInfo{SchemaVersion: results.SchemaVersion, BrigadeVersion: results.Version,
					Command: opt.Command, Inputs: []results.InputFile{cluster}, Files: []string{"summary.json", "jobs.parquet", "attempts.parquet", "jobs.csv", "estimates.csv", "cluster.yaml"}})
			},
		} {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	})
}

// withPreempted puts the attempts a job's scheduler preempted before its
// last one (AnnoAttempts) ahead of it: the job started with the first,
// waited between them, and ran for all of them. What a preempted attempt
// ran is lost unless the policy suspends its jobs (gandiva, gavel,
// optimus: a job keeps its progress), as brigade sim counts it, so that
// a replay gives the job its whole work.
func withPreempted(jr *results.JobRecord, spans []attemptSpan, at func(time.Time) hwmodel.Time, suspends bool) {
	last := jr.AttemptLog[0]
	log := make([]results.AttemptRecord, 0, len(spans)+1)
	prev := jr.Submit
	var run, lost hwmodel.Time
	for _, sp := range spans {
		start := min(max(at(sp.Start), prev), last.Start)
		end := min(max(at(sp.End), start), last.Start)
		log = append(log, results.AttemptRecord{Start: start, End: end, Wait: start - prev, Ended: results.AttemptPreempted, ExitCode: results.NoExitCode})
		run += end - start
		if !suspends {
			lost += end - start
		}
		prev = end
	}
	last.Wait = last.Start - prev
	log = append(log, last)
	var wait hwmodel.Time
	for _, a := range log {
		wait += a.Wait
	}
	jr.AttemptLog = log
	jr.Start = log[0].Start
	jr.Wait, jr.Run = wait, jr.Run+run
	jr.Attempts = len(log)
	jr.Preemptions = len(spans)
	jr.PreemptLost, jr.Lost = lost, lost
}

// writeLines writes a header and CSV rows already joined (names are
// namespace/name, which hold no comma); cluster.yaml is one header.
func writeLines(path, header string, rows []string) error {
	return results.AtomicWriteFile(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, header+"\n"); err != nil {
			return err
		}
		for _, r := range rows {
			if _, err := io.WriteString(w, r+"\n"); err != nil {
				return err
			}
		}
		return nil
	})
}

// scheduledAt is when the pod was bound: the scheduler's
// brigade.sim/bound-at, else its PodScheduled=True condition's time
// (whole seconds), else its start time (zero if not bound).
func scheduledAt(p *corev1.Pod) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, p.Annotations[AnnoBoundAt]); err == nil && p.Spec.NodeName != "" {
		return t
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	if p.Spec.NodeName != "" && p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return time.Time{}
}

// endedAt is when the pod's job ended: the scheduler's
// brigade.sim/released-at (when the policy saw its resources free), else
// its last container's finishedAt (whole seconds), else zero.
func endedAt(p *corev1.Pod) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, p.Annotations[AnnoReleasedAt]); err == nil {
		return t
	}
	var t time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil && term.FinishedAt.Time.After(t) {
			t = term.FinishedAt.Time
		}
	}
	return t
}

// arrival is when a job reached its scheduler's policy: the queued-at its
// Bindings carried (brigade.sim/queued-at), when it lies between the
// job's submission and its first Binding, else its submission. A replay
// lets the job arrive then, so that its policy chooses among the jobs the
// scheduler's had seen; its ID keeps the submission's order.
func arrival(pods []*corev1.Pod, submitted time.Time) time.Time {
	for _, p := range pods {
		t, err := time.Parse(time.RFC3339Nano, p.Annotations[AnnoQueuedAt])
		if err != nil || t.Before(submitted) {
			continue
		}
		if s := scheduledAt(p); !s.IsZero() && t.After(s) {
			continue
		}
		return t
	}
	return submitted
}
