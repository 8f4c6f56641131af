package live

import (
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
)

// ExportNode is the name of the one node of a live run in the results
// (nodes column) and in the cluster spec written beside them: the spec's
// node group is named "local", so its node is "local-000", and a replay of
// the folder on that spec gives the same node names.
const ExportNode = "local-000"

// ExportCluster is the name of the cluster spec (cluster.yaml) an export
// writes; it is the summary's cluster too.
const ExportCluster = "live-local"

// ExportBucket is the time-series bucket width of an export: brigade sim's
// default (--bucket 1h), so that a replay with default flags has the same
// buckets.
const ExportBucket = hwmodel.Hour

// ExportFiles lists the files Export writes, in order.
var ExportFiles = []string{"summary.json", "jobs.parquet", "attempts.parquet", "timeseries.parquet", "tenants.parquet",
	"jobs.csv", "timeseries.csv", "tenants.csv", "events.csv", "estimates.csv", "cluster.yaml", "run.json"}

// EventsCSVHeader is the header of events.csv.
var EventsCSVHeader = []string{"time_s", "job", "name", "attempt", "event", "gpus", "gpu_milli", "exit", "reason"}

// exportFault, set by tests, fails an export after its k-th file.
var exportFault func(k int) error

// ExportOptions say what the records alone do not.
type ExportOptions struct {
	Policy string // the policy spec the run used
	GPUs   []GPU  // the run's GPUs, in index order
	// Epoch is the wall time of run time 0 (the state file's creation).
	Epoch time.Time
	// Now is the run time (µs) at which the run stopped: jobs still queued
	// or running are cut there. 0: the last recorded transition.
	Now int64
	// Command is the command line for run.json ("brigade", "live", ...).
	Command []string
	// JobsFile, when set and readable, is listed in run.json's inputs.
	JobsFile string
	// Machine is the node's CPU and memory (for cluster.yaml) and tenant
	// weights; zero: what the state file records.
	Machine Machine
	// Keep are paths the export must leave alone (the state file, the log
	// folder): like JobsFile, none may lie inside the folder it replaces.
	Keep []string
}

// Export writes the results folder of a live run to dir in brigade sim's
// format (docs/results.md, docs/live.md): summary.json, jobs.parquet,
// attempts.parquet, timeseries.parquet, tenants.parquet and their CSV twins,
// plus events.csv (every transition in time order), cluster.yaml (this
// machine as a cluster spec, for brigade sim --replay) and run.json. It
// writes everything into a temporary folder beside dir and renames it into
// place only when every file is written: on error nothing is left behind
// and an existing dir is untouched; on success an existing dir is replaced.
// It replaces only what CheckOut allows: never a folder of the user's, nor
// one holding JobsFile or a Keep path.
func Export(recs []*Record, opt ExportOptions, dir string) error {
	if dir == "" {
		return errors.New("live: export: no output folder")
	}
	if len(opt.GPUs) == 0 {
		return errors.New("live: export: no GPUs given")
	}
	pol, _, err := newPolicy(opt.Policy)
	if err != nil {
		return fmt.Errorf("live: export: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := CheckOut(abs, append(slices.Clone(opt.Keep), opt.JobsFile)...); err != nil {
		return err
	}
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	dropLeftovers(parent, filepath.Base(abs))
	tmp, err := os.MkdirTemp(parent, tmpPrefix(filepath.Base(abs)))
	if err != nil {
		return fmt.Errorf("live: export: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := writeExport(tmp, abs, recs, opt, pol.Name()); err != nil {
		return fmt.Errorf("live: export to %s: %w", dir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	// Replace an existing folder: move it aside, move the new one in, then
	// remove the old one (a crash in between leaves both, never a mix).
	old := ""
	if _, err := os.Stat(abs); err == nil {
		old = tmp + ".old"
		if err := os.Rename(abs, old); err != nil {
			return fmt.Errorf("live: export: %w", err)
		}
	}
	if err := os.Rename(tmp, abs); err != nil {
		if old != "" {
			_ = os.Rename(old, abs)
		}
		return fmt.Errorf("live: export: %w", err)
	}
	done = true
	if old != "" {
		_ = os.RemoveAll(old)
	}
	syncDir(parent)
	return nil
}

// CheckOut reports whether a live results folder may be written to dir,
// replacing what is there: dir must be missing, empty, or a results folder
// Brigade wrote (results.CheckReplaceable), and none of keep (the job
// file, the state file, the log folder; "" is skipped) may be dir or lie
// inside it. brigade live checks it before the run as well as at the
// export, so that a run is not spent on results it cannot write.
func CheckOut(dir string, keep ...string) error {
	d, err := resolve(dir)
	if err != nil {
		return err
	}
	var inside []string
	for _, k := range keep {
		if k == "" {
			continue
		}
		p, err := resolve(k)
		if err != nil {
			return err
		}
		if rel, err := filepath.Rel(d, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			inside = append(inside, k)
		}
	}
	if len(inside) > 0 {
		return fmt.Errorf("live: refusing to write results to %s: replacing it would remove %s, which the run needs (give another --out)", dir, strings.Join(inside, " and "))
	}
	if err := results.CheckReplaceable(dir); err != nil {
		return fmt.Errorf("live: %w", err)
	}
	return nil
}

// resolve is p made absolute with its symbolic links resolved, as far as
// it exists (so that a folder reached through a link is recognised).
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), nil
		}
		if cur == filepath.Dir(cur) {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

func tmpPrefix(base string) string { return "." + base + ".tmp-" }

// dropLeftovers removes the temporary folders an export to base killed
// midway left beside it (their names are the export's own pattern).
func dropLeftovers(parent, base string) {
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), tmpPrefix(base)) {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// ExportState exports the run a state file holds (Export), after a crash or
// from another process: the policy, GPUs and epoch come from the state file
// when opt leaves them empty (state files of older versions hold no policy
// or GPUs: give them), Now defaults to the wall clock. The state file, and
// the log folder it records, are kept out of what the export replaces. The
// state file must not be open in a running brigade live.
func ExportState(state string, opt ExportOptions, dir string) error {
	if _, err := os.Stat(state); err != nil {
		return err
	}
	s, err := openStore(state)
	if err != nil {
		return err
	}
	recs, err := s.all()
	var epoch, pol, gpus, logs, machine []byte
	if err == nil {
		epoch, err = s.getMeta("epoch")
	}
	if err == nil {
		logs, err = s.getMeta("logs")
	}
	if err == nil {
		pol, err = s.getMeta("policy")
	}
	if err == nil {
		gpus, err = s.getMeta("gpus")
	}
	if err == nil {
		machine, err = s.getMeta("machine")
	}
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if len(epoch) != 8 {
		return fmt.Errorf("%s: not a brigade live state file (no epoch)", state)
	}
	ep := time.UnixMicro(int64(binary.BigEndian.Uint64(epoch)))
	if opt.Epoch.IsZero() {
		opt.Epoch = ep
	}
	if opt.Policy == "" {
		if len(pol) == 0 {
			return fmt.Errorf("%s: the state file does not record its policy; give it", state)
		}
		opt.Policy = string(pol)
	}
	if len(opt.GPUs) == 0 {
		if len(gpus) == 0 {
			return fmt.Errorf("%s: the state file does not record its GPUs; give them", state)
		}
		if err := json.Unmarshal(gpus, &opt.GPUs); err != nil {
			return fmt.Errorf("%s: GPUs: %w", state, err)
		}
		for i := range opt.GPUs {
			if m, ok := hwmodel.LookupModel(opt.GPUs[i].Catalogue); ok && opt.GPUs[i].Catalogue != "" {
				opt.GPUs[i].ModelID, opt.GPUs[i].Known = m.ID, true
			}
		}
	}
	if opt.Machine.CPUMilli == 0 && len(machine) > 0 {
		if err := json.Unmarshal(machine, &opt.Machine); err != nil {
			return fmt.Errorf("%s: machine: %w", state, err)
		}
	}
	if opt.Now == 0 {
		opt.Now = time.Since(opt.Epoch).Microseconds()
	}
	opt.Keep = append([]string{state, string(logs)}, opt.Keep...)
	return Export(recs, opt, dir)
}

// putRunMeta records the run's policy, GPUs and log folder (absolute) in
// the state file, for ExportState (the latest run's, when a restart
// changes them): the log folder is one of the paths an export keeps.
func (s *store) putRunMeta(policy string, gpus []GPU, logDir string, m Machine) error {
	mb, err := json.Marshal(m)
	if err == nil {
		err = s.setMeta("machine", mb)
	}
	b, err := json.Marshal(gpus)
	if err == nil {
		err = s.setMeta("policy", []byte(policy))
	}
	if err == nil {
		err = s.setMeta("gpus", b)
	}
	if err == nil {
		err = s.setMeta("logs", []byte(logDir))
	}
	return err
}

// attemptLog is a record's attempts: the ended ones, plus the running one
// (End -1). A record of an older state file without Attempts gets its last
// attempt rebuilt from its own fields.
func attemptLog(r *Record) []AttemptRecord {
	log := slices.Clone(r.Attempts)
	if len(log) == 0 && r.Attempt > 0 && r.State != Running {
		end, q := r.End, r.Queued
		if r.State == Queued {
			end, q = r.Queued, r.Start
		}
		log = append(log, AttemptRecord{Queued: q, Start: r.Start, End: end, GPUs: r.GPUs, Milli: r.Milli, Exit: r.Exit, Reason: r.Reason})
	}
	if r.State == Running {
		log = append(log, AttemptRecord{Queued: r.Queued, Start: r.Start, End: -1, GPUs: r.GPUs, Milli: r.Milli, Exit: -1})
	}
	return log
}

// HardwareReason reports whether an attempt's reason says its GPU failed
// rather than the process on its own: the driver's health checks end such
// attempts with "GPU <index> <uuid> down: <why>" (health.go). They count as
// hardware_failure in attempts.parquet and in jobs' hardware_failures, and
// give a gpu_down line in events.csv.
func HardwareReason(reason string) bool {
	return strings.HasPrefix(reason, "GPU ") && strings.Contains(reason, " down")
}

func endedAs(a AttemptRecord) string {
	switch {
	case a.End < 0:
		return results.AttemptRunning
	case a.Exit == 0:
		return results.AttemptSucceeded
	case a.Preempted:
		return results.AttemptPreempted
	case HardwareReason(a.Reason):
		return results.AttemptHardwareFailure
	}
	return results.AttemptFailed
}

// failReason is a failed job's reason in results' vocabulary, with its
// detail in the driver's own words.
func failReason(r *Record, attempts int) (string, string) {
	detail := r.Reason
	switch {
	case r.DepFailed:
		return results.ReasonDependencyFailed, detail
	case r.DeadlineMissed:
		return results.ReasonDeadline, detail
	case attempts == 0:
		return results.ReasonUnsatisfiable, detail
	}
	if detail == "" {
		detail = fmt.Sprintf("attempt %d exited %d, no retries left", r.Attempt, r.Exit)
	}
	return results.ReasonRetriesExhausted, detail
}

// readyAt is when r entered the queue for the first time: its
// submission, or for a job with dependencies when the last of them
// succeeded; -1 when it never did (a dependency failed).
func readyAt(r *Record, log []AttemptRecord) int64 {
	switch {
	case len(r.Spec.Deps) == 0:
		return r.Submit
	case len(log) > 0:
		return log[0].Queued
	case r.State == Queued:
		return r.Queued
	}
	return -1
}

type liveEvent struct {
	t       int64
	job     int32
	attempt int
	kind    string
	gpus    []int
	milli   int32
	exit    int
	reason  string
	// timeline deltas
	dq, dr, dsys int
	dalloc       int64
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, "+")
}

func attemptMilli(a AttemptRecord, req hwmodel.Request) int64 {
	m := int64(a.Milli)
	if m == 0 && len(a.GPUs) > 0 {
		m = int64(req.GPUMilli)
	}
	return m * int64(len(a.GPUs))
}

func writeExport(tmp, final string, recs []*Record, opt ExportOptions, label string) error {
	// Tenants in order of first appearance.
	tenantOf := map[string]int{}
	var tenantNames []string
	tname := func(r *Record) string {
		if r.Spec.Tenant == "" {
			return "default"
		}
		return r.Spec.Tenant
	}
	for _, r := range recs {
		if _, ok := tenantOf[tname(r)]; !ok {
			tenantOf[tname(r)] = len(tenantNames)
			tenantNames = append(tenantNames, tname(r))
		}
	}
	jobs := make([]results.JobRecord, 0, len(recs))
	var evs []liveEvent
	var lastSubmit, lastT int64
	unfinished := false
	for _, r := range recs {
		req := r.Spec.request()
		log := attemptLog(r)
		ready := readyAt(r, log)
		state := results.JobState(r.State)
		if r.State == Pending {
			state = results.JobState(Queued) // in the system, not yet run
		}
		jr := results.JobRecord{ID: r.ID, Name: r.Spec.Name, Tenant: tname(r), Priority: r.Spec.Priority,
			Submit: hwmodel.Time(r.Submit), Ready: results.NotReady, GPUs: req.GPUs, GPUMilli: req.GPUMilli,
			Attempts: len(log), State: state, CPUMilli: req.CPUMilli, MemoryMiB: req.MemoryMiB, Deps: slices.Clone(r.Spec.Deps)}
		if ready >= 0 {
			jr.Ready = hwmodel.Time(max(ready, r.Submit))
		}
		if r.State == Failed {
			jr.Reason, jr.ReasonDetail = failReason(r, len(log))
		}
		lastSubmit = max(lastSubmit, r.Submit)
		// A job with dependencies enters the queue when they succeeded.
		queuedAtSubmit := ready == r.Submit
		dq := 0
		if queuedAtSubmit {
			dq = 1
		}
		evs = append(evs, liveEvent{t: r.Submit, job: r.ID, kind: "submit", exit: -1, dq: dq, dsys: 1})
		if ready > r.Submit {
			evs = append(evs, liveEvent{t: ready, job: r.ID, kind: "ready", exit: -1, dq: 1})
		}
		terminal := r.State == Succeeded || r.State == Failed
		if !terminal {
			unfinished = true
		}
		for k, a := range log {
			milli := attemptMilli(a, req)
			per := a.Milli
			if per == 0 && len(a.GPUs) > 0 {
				per = req.GPUMilli
			}
			ended := endedAs(a)
			if k == 0 {
				jr.Start = hwmodel.Time(a.Start)
			}
			jr.Wait += hwmodel.Time(max(a.Start-a.Queued, 0))
			jr.GPUMilli = per
			if len(a.GPUs) == 0 {
				jr.GPUMilli = req.GPUMilli
			}
			jr.Nodes = ExportNode
			end := a.End
			if end >= 0 {
				jr.Run += hwmodel.Time(end - a.Start)
				if ended != results.AttemptSucceeded {
					jr.Lost += hwmodel.Time(end - a.Start)
				}
				if ended == results.AttemptHardwareFailure {
					jr.HardwareFailures++
				}
				if ended == results.AttemptPreempted {
					// A live job keeps no progress across a preemption.
					jr.Preemptions++
					jr.PreemptLost += hwmodel.Time(end - a.Start)
				}
			}
			code := a.Exit
			if end < 0 {
				code = results.NoExitCode
			}
			jr.AttemptLog = append(jr.AttemptLog, results.AttemptRecord{Start: hwmodel.Time(a.Start), End: hwmodel.Time(end),
				Wait: hwmodel.Time(max(a.Start-a.Queued, 0)), Nodes: ExportNode, Ended: ended, ExitCode: code})
			evs = append(evs, liveEvent{t: a.Start, job: r.ID, attempt: k + 1, kind: "start", gpus: a.GPUs, milli: per, exit: -1,
				dq: -1, dr: 1, dalloc: milli})
			if end < 0 {
				continue
			}
			if ended == results.AttemptHardwareFailure {
				evs = append(evs, liveEvent{t: end, job: r.ID, attempt: k + 1, kind: "gpu_down", gpus: a.GPUs, milli: per, exit: a.Exit, reason: a.Reason})
			}
			e := liveEvent{t: end, job: r.ID, attempt: k + 1, kind: "end", gpus: a.GPUs, milli: per, exit: a.Exit, reason: a.Reason,
				dr: -1, dalloc: -milli}
			last := k == len(log)-1
			if last && terminal {
				e.dsys = -1
			}
			evs = append(evs, e)
			if !last || r.State == Queued {
				evs = append(evs, liveEvent{t: end, job: r.ID, attempt: k + 2, kind: "retry", exit: -1, dq: 1})
			}
		}
		switch {
		case terminal:
			jr.End = hwmodel.Time(r.End)
			if len(log) == 0 { // failed at submission: never fitted
				jr.Start = jr.End
				out := -1
				if ready < 0 {
					out = 0 // a dependency failed: it was never queued
				}
				evs = append(evs, liveEvent{t: r.End, job: r.ID, kind: "end", exit: r.Exit, reason: r.Reason, dq: out, dsys: -1})
			}
		default:
			jr.End = -1 // set to the window's end below
		}
		jobs = append(jobs, jr)
	}
	slices.SortStableFunc(evs, func(a, b liveEvent) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	if len(evs) > 0 {
		lastT = evs[len(evs)-1].t
	}
	end := lastT
	if unfinished && opt.Now > end {
		end = opt.Now
	}
	for i := range jobs {
		if jobs[i].End < 0 {
			jobs[i].End = hwmodel.Time(end)
			if jobs[i].Attempts == 0 {
				jobs[i].Start = jobs[i].End
			}
		}
	}

	// The timeline, from the events.
	capMilli := int64(len(opt.GPUs)) * hwmodel.MilliPerGPU
	tl := results.NewTimeline(ExportBucket, capMilli)
	weights := make([]float64, len(tenantNames))
	has := make([]bool, len(tenantNames))
	for i := range weights {
		weights[i], has[i] = 1, true
	}
	tl.TrackTenants(tenantNames, results.FairShares(weights, has))
	var st results.State
	tmilli := make([]int64, len(tenantNames))
	var arrivals *results.Integrals
	for _, e := range evs {
		st.Queued += e.dq
		st.Running += e.dr
		st.InSystem += e.dsys
		st.AllocatedMilli += e.dalloc
		tmilli[tenantOf[tname(recs[e.job])]] += e.dalloc
		tl.ObserveTenants(hwmodel.Time(e.t), st, tmilli)
		if arrivals == nil && e.t >= lastSubmit {
			ig := tl.Integrals()
			arrivals = &ig
		}
	}
	tl.Close(hwmodel.Time(end))
	tenants := make([]policies.Tenant, len(tenantNames))
	for i, n := range tenantNames {
		tenants[i] = policies.Tenant{Name: n, Weight: 1}
	}
	workload := "live"
	if opt.JobsFile != "" {
		workload = "live: " + filepath.Base(opt.JobsFile)
	}
	sum := results.Summarize(results.RunInput{Policy: label, Cluster: ExportCluster, Workload: workload,
		TotalGPUs: len(opt.GPUs), Tenants: tenants, Jobs: jobs, Timeline: tl, Arrivals: arrivals, Events: int64(len(evs))})

	pj := []results.PolicyJobs{{Policy: label, Jobs: jobs}}
	ps := []results.PolicyTimeline{{Policy: label, Timeline: tl}}
	p := func(n string) string { return filepath.Join(tmp, n) }
	steps := []func() error{
		func() error { return results.WriteSummaryJSON(p("summary.json"), []results.Summary{sum}) },
		func() error { return results.WriteJobsParquet(p("jobs.parquet"), pj) },
		func() error { return results.WriteAttemptsParquet(p("attempts.parquet"), pj) },
		func() error { return results.WriteTimeseriesParquet(p("timeseries.parquet"), ps) },
		func() error { return results.WriteTenantsParquet(p("tenants.parquet"), ps) },
		func() error { return results.WriteJobsCSV(p("jobs.csv"), pj) },
		func() error { return results.WriteTimeseriesCSV(p("timeseries.csv"), ps) },
		func() error { return results.WriteTenantsCSV(p("tenants.csv"), ps) },
		func() error { return writeEventsCSV(p("events.csv"), evs, recs) },
		func() error { return writeEstimatesCSV(p("estimates.csv"), recs) },
	}
	for k, f := range steps {
		if err := f(); err != nil {
			return err
		}
		if exportFault != nil {
			if err := exportFault(k); err != nil {
				return err
			}
		}
	}
	spec := clusterYAML(opt.GPUs, opt.Machine)
	if err := results.AtomicWriteFile(p("cluster.yaml"), func(w io.Writer) error {
		_, err := io.WriteString(w, spec)
		return err
	}); err != nil {
		return err
	}
	return writeLiveRunJSON(p("run.json"), final, spec, opt, label)
}

func writeEventsCSV(path string, evs []liveEvent, recs []*Record) error {
	return results.AtomicWriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(EventsCSVHeader); err != nil {
			return err
		}
		for _, e := range evs {
			exit, milli := "", ""
			if e.kind == "end" || e.kind == "gpu_down" {
				exit = strconv.Itoa(e.exit)
			}
			if len(e.gpus) > 0 {
				milli = strconv.Itoa(int(e.milli))
			}
			if err := cw.Write([]string{results.FormatSeconds(hwmodel.Time(e.t)), strconv.Itoa(int(e.job)), recs[e.job].Spec.Name,
				strconv.Itoa(e.attempt), e.kind, joinInts(e.gpus), milli, exit, e.reason}); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// writeEstimatesCSV writes each job's runtime estimate as the live policy
// saw it (the job file's estimate, else the one-hour default), for brigade
// sim --replay: sjf and backfill then order the replay as they did live.
func writeEstimatesCSV(path string, recs []*Record) error {
	return results.AtomicWriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write([]string{"name", "estimate_s"}); err != nil {
			return err
		}
		for _, r := range recs {
			if err := cw.Write([]string{r.Spec.Name, results.FormatSeconds(r.Spec.estimate())}); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// clusterYAML is this machine as a brigade cluster spec (docs/cluster.md):
// one node of the run's GPUs, of the model the driver scheduled on (an
// unknown model is taken as an H100-80GB, as the driver does).
func clusterYAML(gpus []GPU, m Machine) string {
	model := "H100-80GB"
	if gpus[0].Known && gpus[0].Catalogue != "" {
		model = gpus[0].Catalogue
	}
	spec := fmt.Sprintf(`# Written by brigade live: the machine the live run used, as a cluster spec
# (docs/cluster.md), so that brigade sim --replay of this folder runs on it.
name: %s
description: %q
node_groups:
  - name_prefix: local
    count: 1
    gpu_model: %s
    gpus_per_node: %d
`, ExportCluster, fmt.Sprintf("%d x %s (brigade live)", len(gpus), gpus[0].Model), model, len(gpus))
	// The CPU and memory jobs were booked against (older state files
	// record none: unlimited, as the driver had them).
	if m.CPUMilli > 0 {
		spec += fmt.Sprintf("    cpu_milli: %d\n", m.CPUMilli)
	}
	if m.MemoryMiB > 0 {
		spec += fmt.Sprintf("    memory_mib: %d\n", m.MemoryMiB)
	}
	return spec
}

// liveRunInfo is run.json of a live export: sim's keys (results.RunInfo),
// plus what only a live run has under "live".
type liveRunInfo struct {
	results.RunInfo
	Live liveRunDetails `json:"live"`
}

type liveRunDetails struct {
	Policy      string `json:"policy"`       // the policy spec as given
	PolicyLabel string `json:"policy_label"` // the label in the results
	// Started is the wall time (RFC 3339, UTC, µs) of run time 0, from
	// which every *_s time of the folder counts.
	Started string `json:"started"`
	GPUs    []GPU  `json:"gpus"`
}

func writeLiveRunJSON(path, final, spec string, opt ExportOptions, label string) error {
	info := liveRunInfo{
		RunInfo: results.RunInfo{SchemaVersion: results.SchemaVersion, BrigadeVersion: results.Version,
			Command: opt.Command, Files: ExportFiles[:len(ExportFiles)-1]},
		Live: liveRunDetails{Policy: opt.Policy, PolicyLabel: label, Started: opt.Epoch.UTC().Format("2006-01-02T15:04:05.000000Z07:00"), GPUs: opt.GPUs},
	}
	if info.Command == nil {
		info.Command = []string{}
	}
	if opt.JobsFile != "" {
		if in, err := results.FileInput("jobs", opt.JobsFile); err == nil {
			info.Inputs = append(info.Inputs, in)
		}
	}
	// The cluster spec is named by its final absolute path; a reader that
	// finds no file there (the folder moved) looks for it in the folder.
	info.Inputs = append(info.Inputs, results.InputFile{Role: "cluster", Path: filepath.Join(final, "cluster.yaml"),
		SHA256: results.SHA256Hex([]byte(spec))})
	return results.AtomicWriteFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	})
}
