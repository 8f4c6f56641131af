package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/brigadesim/brigade/live"
	"github.com/brigadesim/brigade/workloads"
)

const liveUsage = `Usage: brigade live --jobs FILE [flags]

Runs the jobs of a YAML job file (docs/live.md) as real processes on this
machine's GPUs, scheduled by the same policy code as brigade sim. Each job
runs in its own process group with CUDA_VISIBLE_DEVICES set to the UUIDs of
the GPUs the policy chose, its output appended to LOGS/<name>.log; exit code
0 is Succeeded, anything else Failed (retried as the job's retries say,
after an exponential back-off: --backoff, then --backoff-factor times
longer at each further retry, as brigade sim's).

Every job state change is written and fsynced to the state file (bbolt)
before it is acted on. After a crash or kill -9, the same command resumes:
finished jobs are not rerun, queued jobs keep their place, running jobs are
re-adopted when their process is still alive (pid and start time match),
otherwise settled by the exit file their wrapper writes: ended with their
exit status, queued again unspent if the command never ran, failed without
a retry if their status was lost (they may have succeeded). An attempt ends
when its whole process group is gone: what outlives the wrapper is killed
before the GPUs are handed on.

New jobs: append entries to the --jobs file while it runs; the file is
re-read every --tick and entries with new names are submitted (names are
unique; a changed entry with an old name is ignored).

Without an NVIDIA driver it fails as brigade gpus does, unless --gpus-fake
gives made-up GPUs (tests and demos). It never changes GPU settings.
SIGINT/SIGTERM stop scheduling and leave running jobs running; a restart
re-adopts them.

Health: NVML is polled every --heartbeat-interval (0 turns health checks
off) and critical XID and double-bit ECC events are watched. A GPU that does
not answer, or reports such an error, is marked down (kept in the state
file): the jobs on it are killed and fail, rerun on other GPUs as their
retries allow. A GPU down for not answering comes back after 3 answered
heartbeats; one down for a critical error stays down until --gpu-up names
it. Down GPUs are printed at the end; see docs/live.md.

--metrics ADDR serves Prometheus metrics at http://ADDR/metrics while it
runs (queue length, running jobs, completions and failures, wait and job
completion time histograms, per-GPU utilisation and memory from NVML; none
per GPU with --gpus-fake). Only a loopback address is accepted (":9400"
means every interface) unless --metrics-public is given. A Grafana
dashboard is in deploy/grafana/brigade-live.json; see docs/live.md.

When the run ends (--exit-when-done, or SIGINT/SIGTERM), its results go to
--out in brigade sim's format (summary.json, jobs.parquet/csv,
attempts.parquet, timeseries and tenants files, run.json) plus events.csv
(every transition) and cluster.yaml (this machine), so that
'brigade sim --replay OUT' and 'brigade fidelity OUT SIM_OUT' work on it.
After a crash, 'brigade live export --state FILE --out DIR' writes the same
folder from the state file. --out replaces only a missing or empty folder
or an earlier Brigade results folder, never one holding the job file, the
state file or the logs (checked before any job runs). See docs/live.md.`

const liveExamples = `  brigade live --jobs jobs.yaml --policy fair
  brigade live --jobs jobs.yaml --policy fcfs --state run1.db --logs run1-logs --exit-when-done
  brigade live --jobs examples/live/jobs.yaml --gpus-fake 4 --exit-when-done   # no GPU needed
  brigade live export --state run1.db --out run1-out   # results of a run that crashed
`

func runLive(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "export" {
		return runLiveExport(args[1:], stdout)
	}
	fs := newFlagSet("live", liveUsage, liveExamples)
	jobs := fs.String("jobs", "", "the YAML job file (required); watched for new entries")
	policy := fs.String("policy", "fcfs", "the policy `spec`, as brigade sim takes it, e.g. sjf+bf/bestfit (live runs no MIG reconfiguration and no fgd placement)")
	fs.grammar = policyHelp()
	state := fs.String("state", "brigade-state.db", "the crash-safe state file (bbolt)")
	logs := fs.String("logs", "brigade-logs", "folder for per-job log files")
	fake := fs.Int("gpus-fake", 0, "use N made-up GPUs instead of NVML (tests, demos)")
	tick := new(time.Duration)
	fs.wallDuration(tick, "tick", time.Second, positive, "how often to re-read the job file and poll re-adopted processes")
	done := fs.Bool("exit-when-done", false, "exit once no job is queued or running")
	heartbeat := new(time.Duration)
	fs.wallDuration(heartbeat, "heartbeat-interval", live.DefaultHeartbeat, nonNegative, "how often NVML is polled as each GPU's heartbeat; a GPU that does not answer or reports a critical XID/ECC error is marked down and its jobs rerun elsewhere (0: no health checks)")
	gpusUp := fs.StringSlice("gpu-up", nil, "GPUs (UUIDs or indices) an operator has repaired: clear the down state --state keeps for them")
	metricsAddr := fs.String("metrics", "", "serve Prometheus metrics at http://`ADDR`/metrics, e.g. 127.0.0.1:9400 (\"\": none)")
	metricsPublic := fs.Bool("metrics-public", false, "allow a --metrics address that is not loopback (reachable from other machines)")
	backoff := new(time.Duration)
	fs.wallDuration(backoff, "backoff", live.DefaultBackoff, nonNegative, "exponential retry back-off, as brigade sim's: a failed job's first retry waits this long, each further one --backoff-factor times longer (0: none)")
	backoffFactor := fs.Float64("backoff-factor", 2, "back-off growth per retry")
	grace := new(time.Duration)
	fs.wallDuration(grace, "grace", live.DefaultGrace, positive, "how long a preempted job has between SIGTERM and SIGKILL to save a checkpoint in $BRIGADE_CHECKPOINT_DIR")
	cpus := fs.Float64("cpus", 0, "CPU cores that jobs' cpu_milli requests are booked against (0: this machine's)")
	memoryMiB := fs.Int64("memory-mib", 0, "memory in MiB that jobs' memory_mib requests are booked against (0: this machine's)")
	tenantWeights := fs.String("tenant-weights", "", "CSV `file` of tenant,weight for fair share, as brigade sim's (default: every tenant weighs 1)")
	quiet := fs.Bool("quiet", false, "print nothing but errors and the end-of-run summary (no log of job starts and ends on stderr)")
	out := fs.String("out", "brigade-live-out", "`folder` for the results, written when the run ends (replaced atomically, but only when empty or an earlier Brigade results folder, and never one holding the job file, state or logs); \"\" writes none")
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	if *jobs == "" {
		return usageError{errors.New("--jobs is required")}
	}
	if !(*backoffFactor >= 1) || math.IsInf(*backoffFactor, 0) {
		return usageError{fmt.Errorf("--backoff-factor must be >= 1, got %g", *backoffFactor)}
	}
	if *backoff < 0 {
		return usageError{fmt.Errorf("--backoff must be >= 0, got %v", *backoff)}
	}
	if *backoff == 0 {
		*backoff = -1 // none; 0 would be the driver's default
	}
	if *grace <= 0 {
		return usageError{fmt.Errorf("--grace must be > 0, got %v", *grace)}
	}
	if !(*cpus >= 0) || *cpus > 1e6 {
		return usageError{fmt.Errorf("--cpus must be in 0..1e6, got %g", *cpus)}
	}
	if *memoryMiB < 0 {
		return usageError{fmt.Errorf("--memory-mib must be >= 0, got %d", *memoryMiB)}
	}
	machine := live.Machine{CPUMilli: int64(math.Round(*cpus * 1000)), MemoryMiB: *memoryMiB}
	if *tenantWeights != "" {
		w, err := workloads.ReadTenantWeights(*tenantWeights)
		if err != nil {
			return err
		}
		machine.TenantWeights = map[string]float64{}
		for _, t := range w {
			machine.TenantWeights[t.Name] = t.Weight
		}
	}
	if *out != "" {
		// Before any job runs: the results must not replace the run's own
		// files or a folder of the user's.
		if err := live.CheckOut(*out, *jobs, *state, *logs); err != nil {
			return err
		}
	}
	var gpus []live.GPU
	if *fake > 0 {
		gpus = live.FakeGPUs(*fake)
	} else {
		var err error
		gpus, err = discoverGPUs()
		switch {
		case errors.Is(err, live.ErrNoDriver):
			return fmt.Errorf("%v; live mode needs one (or --gpus-fake N for a demo)", err)
		case errors.Is(err, live.ErrNoCgo):
			return fmt.Errorf("this binary was %v; rebuild it with CGO_ENABLED=1 for live mode (or use --gpus-fake N)", err)
		case err != nil:
			return err
		case len(gpus) == 0:
			return errors.New("NVML reports no GPUs on this machine")
		}
	}
	logTo := stderr
	if *quiet {
		logTo = io.Discard
	}
	lm, err := openLiveMetrics(*metricsAddr, *metricsPublic, *fake > 0, gpus, stderr)
	if err != nil {
		return err
	}
	defer lm.close()
	health, err := openLiveHealth(*heartbeat, *fake > 0, gpus, stderr)
	if err != nil {
		return err
	}
	if health != nil {
		defer health.Close()
	}
	d, err := live.Open(live.Config{GPUs: gpus, Policy: *policy, State: *state, LogDir: *logs,
		JobsFile: *jobs, Tick: *tick, ExitWhenDone: *done, Log: logTo, Metrics: lm.metrics(),
		Health: health, HeartbeatInterval: *heartbeat, GPUsUp: *gpusUp, Backoff: *backoff, BackoffFactor: *backoffFactor,
		Grace: *grace, Machine: machine})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lm.serve(ctx)
	runErr := d.Run(ctx)
	lm.close()
	lat := slices.Clone(d.Latencies)
	down := d.DownGPUs()
	machine = d.Machine() // with what was detected
	if err := d.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return runErr
	}
	recs, err := live.ReadState(*state)
	if err != nil {
		return err
	}
	count := map[live.State]int{}
	for _, r := range recs {
		count[r.State]++
	}
	fmt.Fprintf(stdout, "jobs: %d succeeded, %d failed, %d queued, %d running\n",
		count[live.Succeeded], count[live.Failed], count[live.Queued], count[live.Running])
	for _, g := range down {
		fmt.Fprintf(stdout, "GPU %d %s down: %s\n", g.Index, g.UUID, g.Reason)
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		fmt.Fprintf(stdout, "scheduling calls: %d, p50 %v, p99 %v\n", len(lat), lat[len(lat)/2], lat[len(lat)*99/100])
	}
	if *out != "" {
		opt := live.ExportOptions{Policy: *policy, GPUs: gpus, Machine: machine, JobsFile: *jobs, Keep: []string{*logs}, Command: append([]string{"brigade", "live"}, args...)}
		if err := live.ExportState(*state, opt, *out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "results: %s\n", *out)
	}
	return nil
}
