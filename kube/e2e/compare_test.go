package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brigadesim/brigade/kube/controlplane"
	"github.com/brigadesim/brigade/kube/scheduler"
	"github.com/brigadesim/brigade/kube/workload"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The cluster of each partition, and how many run at once.
const (
	partitions   = 8
	h100PerPart  = 56
	a100PerPart  = 48
	partLabel    = "brigade.sim/partition"
	h100Product  = "NVIDIA-H100-80GB-HBM3"
	a100Product  = "NVIDIA-A100-SXM4-80GB"
	jobsFile     = "testdata/jobs.csv"
	runTimeout   = 90 * time.Second
	pollInterval = 250 * time.Millisecond
	// The preempting orders run on partitions of their own, smaller, with
	// their own job set (doc.go).
	preemptFile    = "testdata/preempt.csv"
	preemptNodes   = 8
	preemptPartsAt = 100 // partition numbers from here are preempting ones
	// preemptLagBound bounds a preempting run's start error p95. The
	// order must agree; a start may part by seconds once a wake-up came
	// late (gavel's round after a busy round: 1.6 s in a CI run), but a
	// start late by a job's length means a fault.
	preemptLagBound = 5.0
)

// otherSpecs are the further built-in orders that never preempt.
var otherSpecs = []string{"multifactor+age=1000+fs=1000+size=100+qos=1000", "seed"}

// preemptSpecs are the orders that preempt, with thresholds, quanta and
// rounds in seconds to suit a job set of seconds.
var preemptSpecs = []string{"las+thresholds=2s:6s", "tiresias+thresholds=32s:96s", "srtf", "priority+preempt",
	"gandiva+quantum=4s", "gavel+round=4s", "optimus+round=4s"}

// preempting reports whether spec is one of preemptSpecs.
func preempting(spec string) bool { return slices.Contains(preemptSpecs, spec) }

// specsToRun are the specs live mode's table covers (four orders, six
// placements, with and without EASY backfill), then otherSpecs.
func specsToRun() []string {
	var out []string
	for _, o := range []string{"fcfs", "sjf", "priority", "fair"} {
		for _, bf := range []string{"", "+bf"} {
			for _, p := range []string{"firstfit", "bestfit", "dotprod", "packing", "clustering", "random"} {
				out = append(out, o+bf+"/"+p)
			}
		}
	}
	return append(append(out, otherSpecs...), preemptSpecs...)
}

// outcome is one spec's run: the fidelity row brigade fidelity wrote,
// and what explains a difference.
type outcome struct {
	spec  string
	row   map[string]string
	wall  time.Duration
	err   error
	log   string
	live  string // the start order, live
	sim   string // and replayed
	table string // brigade fidelity's table
	// preemptions live and in the replay; recreated pods (Keep).
	preempted, replayPreempted, recreated int
	want                                  int // jobs in the job set
}

// TestSchedulerMatchesReplay runs the Kubernetes scheduler under every
// spec against a real API server, with KWOK playing the pods' durations,
// exports each run and replays it in brigade sim: the replay must start
// the jobs in the same order. BRIGADE_E2E_SPECS=spec,spec runs only
// those; BRIGADE_E2E_OUT=DIR keeps each run's export and replay there.
func TestSchedulerMatchesReplay(t *testing.T) {
	specs := specsToRun()
	if v := os.Getenv("BRIGADE_E2E_SPECS"); v != "" {
		specs = strings.Split(v, ",")
	}
	t0 := time.Now()
	cp := controlplane.ForTest(t)
	ctx := t.Context()
	dir := t.TempDir()
	if keep := os.Getenv("BRIGADE_E2E_OUT"); keep != "" {
		dir = keep // each run's export and replay are kept there
	}
	bin := filepath.Join(dir, "brigade")
	built := make(chan error, 1)
	go func() {
		// Built in the root module, whose go.sum covers its own
		// dependencies (the kube module's does not cover the plots').
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/brigade")
		cmd.Dir = filepath.Join("..", "..")
		out, err := cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("go build brigade: %v\n%s", err, out)
		}
		built <- err
	}()
	w, err := workloads.ReadFile(jobsFile, "brigade")
	if err != nil {
		t.Fatal(err)
	}
	pw, err := workloads.ReadFile(preemptFile, "brigade")
	if err != nil {
		t.Fatal(err)
	}
	npre := 0
	for _, s := range specs {
		if preempting(s) {
			npre++
		}
	}
	nparts := min(partitions, len(specs)-npre)
	var names []string
	for p := range min(npre, partitions) {
		ns, err := controlplane.AddGPUNodes(ctx, cp.Clientset, preemptNodes, controlplane.NodeSpec{
			NamePrefix: fmt.Sprintf("q%d-h100-", p), GPUs: 8, Product: h100Product,
			Labels: map[string]string{partLabel: partName(preemptPartsAt + p)}})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ns...)
	}
	for p := range nparts {
		for _, g := range []struct {
			kind, product string
			n             int
		}{{"h100", h100Product, h100PerPart}, {"a100", a100Product, a100PerPart}} {
			ns, err := controlplane.AddGPUNodes(ctx, cp.Clientset, g.n, controlplane.NodeSpec{
				NamePrefix: fmt.Sprintf("p%d-%s-", p, g.kind), GPUs: 8, Product: g.product,
				Labels: map[string]string{partLabel: partName(p)}})
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, ns...)
		}
	}
	if err := controlplane.WaitNodesReady(ctx, cp.Clientset, names); err != nil {
		t.Fatal(err)
	}
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane, %d nodes in %d partitions and the brigade binary ready in %.1fs", len(names), nparts, time.Since(t0).Seconds())

	// Runs of both kinds share one pool of slots, so that no more than
	// partitions run at once; each takes a free partition of its kind.
	slots := make(chan struct{}, partitions)
	free, freePre := make(chan int, nparts), make(chan int, min(npre, partitions))
	for p := range nparts {
		free <- p
	}
	for p := range cap(freePre) {
		freePre <- preemptPartsAt + p
	}
	outs := make([]outcome, len(specs))
	var wg sync.WaitGroup
	// The preempting runs come last, by themselves: their orders decide
	// by the clock (thresholds, quanta, rounds), and rounds that a loaded
	// machine makes late would change what they decide.
	slices.SortStableFunc(specs, func(a, b string) int {
		switch pa, pb := preempting(a), preempting(b); {
		case pa == pb:
			return 0
		case pb:
			return -1
		}
		return 1
	})
	waited := false
	for i, spec := range specs {
		if preempting(spec) && !waited {
			wg.Wait()
			waited = true
		}
		slots <- struct{}{}
		pool, work := free, w
		if preempting(spec) {
			pool, work = freePre, pw
		}
		p := <-pool
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { pool <- p; <-slots }()
			outs[i] = compareOne(ctx, cp.Clientset, bin, work, spec, i, p, filepath.Join(dir, fmt.Sprintf("run-%02d", i)))
		}()
	}
	wg.Wait()
	t.Logf("%d specs in %.1fs (%d partitions of %d nodes at once, then %d of %d)\n\n%s", len(specs), time.Since(t0).Seconds(),
		nparts, h100PerPart+a100PerPart, min(npre, partitions), preemptNodes, markdown(outs))
	for _, o := range outs {
		t.Run(strings.ReplaceAll(o.spec, "/", "_"), func(t *testing.T) {
			switch {
			case o.err != nil:
				t.Fatalf("%v\nscheduler log:\n%s", o.err, o.log)
			case o.row["jobs"] != strconv.Itoa(o.want):
				t.Errorf("the export and its replay share %s jobs of the %d submitted\nscheduler log:\n%s", o.row["jobs"], o.want, o.log)
			case o.row["same_start_order"] != "yes":
				t.Errorf("the replay starts the jobs in another order:\n%s\nlive:   %s\nreplay: %s\nscheduler log:\n%s", o.table, o.live, o.sim, o.log)
			case preempting(o.spec):
				// A preemption takes effect when the evicted pods are
				// gone, a round or two after the simulator's instant:
				// the order must agree, the times within what that lag
				// adds up to. Every order but optimus (which preempts
				// only to resize elastic jobs, and pods are not) must
				// have preempted, or nothing was tested.
				if o.preempted == 0 && !strings.HasPrefix(o.spec, "optimus") {
					t.Errorf("no job was preempted; the job set must make %s preempt", o.spec)
				}
				if o.recreated < o.preempted {
					t.Errorf("%d preemptions but %d pods created again", o.preempted, o.recreated)
				}
				if v, _ := strconv.ParseFloat(o.row["start_err_p95_s"], 64); v > preemptLagBound {
					t.Errorf("start err p95 %.3f s, more than %v s:\n%s", v, preemptLagBound, o.table)
				}
			case o.row["start_err_p95_s"] != "0.000000" || o.row["jct_err_p95_s"] != "0.000000":
				// The export carries the scheduler's own clock, so the
				// replay's times are the scheduler's to the microsecond.
				t.Errorf("same order, but starts or ends differ (start err p95 %s s, JCT err p95 %s s):\n%s\nlive:   %s\nreplay: %s",
					o.row["start_err_p95_s"], o.row["jct_err_p95_s"], o.table, o.live, o.sim)
			}
		})
	}
}

func partName(p int) string { return "p" + strconv.Itoa(p) }

// compareOne runs one spec on partition p: submit, schedule until every
// pod has ended, export, replay, compare.
func compareOne(ctx context.Context, cs kubernetes.Interface, bin string, w *workloads.Workload, spec string, i, p int, dir string) outcome {
	o := outcome{spec: spec, want: len(w.Jobs)}
	name := fmt.Sprintf("cmp-%02d", i)
	sel := map[string]string{partLabel: partName(p)}
	jobs, err := workload.Build(w, workload.Options{SchedulerName: name, Namespace: name})
	if err != nil {
		o.err = err
		return o
	}
	var log bytes.Buffer
	var mu sync.Mutex
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	runSched := func() {
		done <- scheduler.Run(sctx, scheduler.Config{Name: name, Policy: spec, NodeSelector: sel, Log: lockedWriter{&mu, &log}},
			cs, nil, scheduler.RunOptions{})
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, runTimeout)
	if preempting(spec) {
		// Submitted over time while the scheduler runs, with Keep as the
		// jobs' controller: an evicted pod is created again, to start
		// over, or to resume under an order that suspends its jobs.
		mode := workload.Restart
		if suspends(spec) {
			mode = workload.Resume
		}
		kept := make(chan error, 1)
		go func() {
			n, err := workload.Keep(wctx, cs, jobs, workload.KeepOptions{Evicted: mode, Log: lockedWriter{&mu, &log}})
			o.recreated = n
			kept <- err
		}()
		go runSched()
		err = workload.Submit(wctx, cs, jobs)
		if kerr := <-kept; err == nil {
			err = kerr
		}
	} else {
		// All pods exist before the scheduler starts, so that its first
		// round sees them all, as the replay does at time 0.
		if err := workload.Submit(ctx, cs, jobs); err != nil {
			o.err = err
			cancel()
			stop()
			return o
		}
		go runSched()
		err = workload.WaitEnded(wctx, cs, jobs, pollInterval)
	}
	cancel()
	o.wall = time.Since(start)
	stop()
	if rerr := <-done; rerr != nil && err == nil {
		err = rerr
	}
	mu.Lock()
	o.log = tail(log.String(), 40)
	full := log.String()
	mu.Unlock()
	// Kept beside the export, for BRIGADE_E2E_OUT.
	if err := os.MkdirAll(dir, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "scheduler.log"), []byte(full), 0o644)
	}
	if err != nil {
		o.err = err
		return o
	}
	live, replay := filepath.Join(dir, "live"), filepath.Join(dir, "replay")
	if err := scheduler.Export(ctx, scheduler.APISource{Client: cs, Ctx: ctx},
		scheduler.ExportOptions{Name: name, Policy: spec, NodeSelector: sel}, live); err != nil {
		o.err = fmt.Errorf("export: %w", err)
		return o
	}
	// The run's pods are done with: deleting them keeps the API server
	// and KWOK light for the runs still to come.
	grace := int64(0)
	_ = cs.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &grace}, metav1.ListOptions{})
	if out, err := exec.CommandContext(ctx, bin, "sim", "--replay", live, "--policy", spec, "--out", replay, "--quiet", "--no-plots").CombinedOutput(); err != nil {
		o.err = fmt.Errorf("brigade sim --replay: %v\n%s", err, out)
		return o
	}
	out, err := exec.CommandContext(ctx, bin, "fidelity", live, replay).CombinedOutput()
	if err != nil {
		o.err = fmt.Errorf("brigade fidelity: %v\n%s", err, out)
		return o
	}
	o.table = string(out)
	if o.row, err = readFidelity(filepath.Join(replay, "fidelity.csv")); err != nil {
		o.err = err
		return o
	}
	o.live, o.sim = startOrder(filepath.Join(live, "jobs.csv")), startOrder(filepath.Join(replay, "jobs.csv"))
	o.preempted, o.replayPreempted = preemptions(filepath.Join(live, "jobs.csv")), preemptions(filepath.Join(replay, "jobs.csv"))
	return o
}

// suspends reports whether the policy of spec keeps a preempted job's
// progress (policies.Suspender).
func suspends(spec string) bool {
	sp, err := policies.ParseSpec(spec)
	if err != nil {
		return false
	}
	pol, err := sp.New()
	return err == nil && policies.Suspends(pol)
}

// preemptions sums a results folder's preemptions column (-1: unreadable).
func preemptions(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 1 {
		return -1
	}
	col := slices.Index(recs[0], "preemptions")
	if col < 0 {
		return -1
	}
	n := 0
	for _, r := range recs[1:] {
		v, _ := strconv.Atoi(r[col])
		n += v
	}
	return n
}

// readFidelity reads the one policy row of a fidelity.csv by column.
func readFidelity(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) != 2 {
		return nil, fmt.Errorf("%s: want a header and one policy's row, found %d rows", path, len(recs))
	}
	row := map[string]string{}
	for i, h := range recs[0] {
		row[h] = recs[1][i]
	}
	return row, nil
}

// startOrder is a results folder's jobs by start time, then ID, as
// brigade fidelity orders them, with their start times.
func startOrder(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		return fmt.Sprint(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	type js struct {
		name  string
		id    int
		start float64
	}
	var all []js
	for _, r := range recs[1:] {
		id, _ := strconv.Atoi(r[col["id"]])
		s, _ := strconv.ParseFloat(r[col["start_s"]], 64)
		all = append(all, js{r[col["name"]], id, s})
	}
	slices.SortFunc(all, func(a, b js) int {
		if a.start != b.start {
			if a.start < b.start {
				return -1
			}
			return 1
		}
		return a.id - b.id
	})
	var b strings.Builder
	for _, j := range all {
		fmt.Fprintf(&b, "%s@%.2f ", j.name[strings.IndexByte(j.name, '/')+1:], j.start)
	}
	return b.String()
}

// markdown is the table of docs/replay.md's live comparison, for these
// runs.
func markdown(outs []outcome) string {
	var b strings.Builder
	b.WriteString("| spec | jobs | same start order | Kendall tau | same position | start err p50 (s) | start err p95 (s) | JCT err p50 (s) | JCT err p95 (s) | preemptions (replay) | wall (s) |\n")
	b.WriteString("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, o := range outs {
		if o.err != nil {
			fmt.Fprintf(&b, "| `%s` | | error | | | | | | | | %.1f |\n", o.spec, o.wall.Seconds())
			continue
		}
		r := o.row
		pos, _ := strconv.ParseFloat(r["same_position_fraction"], 64)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %.0f%% | %s | %s | %s | %s | %d (%d) | %.1f |\n", o.spec, r["jobs"], r["same_start_order"],
			num(r["kendall_tau"], 3), pos*100, num(r["start_err_p50_s"], 3), num(r["start_err_p95_s"], 3),
			num(r["jct_err_p50_s"], 3), num(r["jct_err_p95_s"], 3), o.preempted, o.replayPreempted, o.wall.Seconds())
	}
	return b.String()
}

func num(s string, prec int) string {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-lines):], "\n")
}

// lockedWriter serialises the scheduler's log writes with the test's
// read of it.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
