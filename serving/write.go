package serving

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/sim"
)

// RunSet is what one experiment produced: the batch-only baseline (the
// same cluster, batch workload and policy without any service) and each
// variant's Result, in the experiment's variant order.
type RunSet struct {
	// Experiment names the experiment (its file's base name).
	Experiment string
	Cluster    string
	Workload   string // the batch workload, described; "" without one
	Seed       uint64
	// Baseline is the batch-only run; nil without batch jobs. With
	// Faults it faces them too.
	Baseline *sim.Result
	// BaselineNoFaults is the batch-only run without the faults, against
	// which variants with faults off are compared; nil when every
	// variant has them.
	BaselineNoFaults *sim.Result
	Variants         []VariantRun
	// Faults is the injected hardware faults (nil: none), which the
	// baseline and every variant with Faults set faced.
	Faults *FaultSet
}

// FaultSet is the hardware faults of a run set.
type FaultSet struct {
	// Describe says what was injected, in a line.
	Describe string
	// Schedule is every failure drawn and named, sorted (runner.Faults'
	// Schedule); those after a run's end never happen in it.
	Schedule []hwmodel.Fault
	// Cluster names the schedule's nodes in the summary (nil: by index).
	Cluster *hwmodel.Cluster
}

// VariantRun is one variant's result.
type VariantRun struct {
	Name   string
	Result *Result
	// Faults reports whether the variant ran with the run set's faults.
	Faults bool
}

// baselineOf is the batch-only run v is compared with: the one that
// faced the same faults, or none.
func (rs *RunSet) baselineOf(v VariantRun) *sim.Result {
	if rs.Faults != nil && !v.Faults && rs.BaselineNoFaults != nil {
		return rs.BaselineNoFaults
	}
	return rs.Baseline
}

// hasFaults reports whether some variant ran with faults.
func (rs *RunSet) hasFaults() bool {
	return slices.ContainsFunc(rs.Variants, func(v VariantRun) bool { return v.Faults })
}

// Files lists the files WriteRunSet writes, in order.
var Files = []string{"serving_summary.json", "serving_timeseries.csv", "replicas.csv", "alerts.csv"}

// WriteRunSet writes the run set's files (Files) into dir, which must
// exist, each atomically. Equal run sets give byte-identical files.
func WriteRunSet(dir string, rs *RunSet) error {
	for _, f := range []struct {
		name  string
		write func(io.Writer, *RunSet) error
	}{{Files[0], WriteSummaryJSON}, {Files[1], WriteTimeseriesCSV}, {Files[2], WriteReplicasCSV}, {Files[3], WriteAlertsCSV}} {
		if err := results.AtomicWriteFile(filepath.Join(dir, f.name), func(w io.Writer) error { return f.write(w, rs) }); err != nil {
			return err
		}
	}
	return nil
}

// --- the batch side ---

// BatchStats summarises a batch run: jobs, how long they waited (the
// time ready but not running, summed over attempts), and the attempts
// ended by preemption.
type BatchStats struct {
	Jobs, Completed     int
	WaitMean, WaitP95   float64 // seconds, over every job
	Preemptions         int64   // attempts ended preempted
	PreemptedJobs       int     // jobs preempted at least once
	LostGPUHours        float64 // GPU-time of preempted attempts since their last checkpoint
	HardwareFailures    int     // attempts lost to injected hardware faults
	waitSum             float64 // seconds
	ExtraWaitMean       float64 // seconds per job, against the baseline
	ExtraWaitHours      float64 // job-hours, against the baseline
	hasBaseline, hasAny bool
}

// batchStats summarises res (nil: no batch jobs) against base (nil: none).
func batchStats(res, base *sim.Result) BatchStats {
	var b BatchStats
	if res == nil || len(res.Jobs) == 0 {
		return b
	}
	b.hasAny = true
	b.Jobs = len(res.Jobs)
	waits := make([]float64, len(res.Jobs))
	for i, o := range res.Jobs {
		w := o.Wait.Seconds()
		waits[i] = w
		b.HardwareFailures += o.HardwareFailures
		b.waitSum += w
		if o.State == sim.Succeeded {
			b.Completed++
		}
		hit := false
		for k := range int(o.Attempts) {
			a := o.Attempt(k)
			if a.Ended == sim.AttemptPreempted {
				b.Preemptions++
				hit = true
			}
		}
		if hit {
			b.PreemptedJobs++
			b.LostGPUHours += o.LostTime.Seconds() / 3600 * float64(o.Placement.GPUCount())
		}
	}
	b.WaitMean = b.waitSum / float64(len(waits))
	b.WaitP95 = quantile(waits, 0.95)
	if base != nil && len(base.Jobs) == len(res.Jobs) {
		b.hasBaseline = true
		var bs float64
		for _, o := range base.Jobs {
			bs += o.Wait.Seconds()
		}
		b.ExtraWaitMean = (b.waitSum - bs) / float64(len(res.Jobs))
		b.ExtraWaitHours = (b.waitSum - bs) / 3600
	}
	return b
}

// quantile is the nearest-rank quantile of v (sorted in place).
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	k := int(math.Ceil(q*float64(len(v)))) - 1
	return v[min(max(k, 0), len(v)-1)]
}

// --- serving_summary.json ---

// num is a float written with at most 9 significant digits (NaN and
// infinities as null), so that the JSON is stable and readable.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	if f == 0 {
		return []byte("0"), nil
	}
	return []byte(strconv.FormatFloat(f, 'g', 9, 64)), nil
}

type jsonLatency struct {
	Mean num `json:"mean"`
	P50  num `json:"p50"`
	P90  num `json:"p90"`
	P95  num `json:"p95"`
	P99  num `json:"p99"`
	Max  num `json:"max"`
}

func toJSONLatency(l Latency) jsonLatency {
	return jsonLatency{num(l.Mean), num(l.P50), num(l.P90), num(l.P95), num(l.P99), num(l.Max)}
}

// jsonClass is a class's (or a service's "all") entry: the golden
// signals that vLLM exports are under vLLM's metric names
// (docs/serving.md, Output files, maps them); the rest have none.
type jsonClass struct {
	Name          string      `json:"name"`
	Requests      int64       `json:"requests"`
	Completed     int64       `json:"completed"`
	Errors        int64       `json:"errors"`
	Timeouts      int64       `json:"timeouts"`
	Unfinished    int64       `json:"unfinished"`
	RequestRate   num         `json:"requests_per_s"`
	ThroughputRPS num         `json:"throughput_rps"`
	ErrorRate     num         `json:"error_rate"`
	SLOAttained   num         `json:"slo_attained"`
	Saturation    num         `json:"saturation"`
	TTFT          jsonLatency `json:"vllm:time_to_first_token_seconds"`
	ITL           jsonLatency `json:"vllm:inter_token_latency_seconds"`
	TPOT          jsonLatency `json:"vllm:request_time_per_output_token_seconds"`
	E2E           jsonLatency `json:"vllm:e2e_request_latency_seconds"`
	QueueWait     jsonLatency `json:"vllm:request_queue_time_seconds"`
	PromptTokens  int64       `json:"vllm:prompt_tokens_total"`
	PromptPerS    num         `json:"prompt_tokens_per_s"`
	GenTokens     int64       `json:"vllm:generation_tokens_total"`
	GenPerS       num         `json:"generation_tokens_per_s"`
	FailedOver    *int64      `json:"failed_over,omitempty"` // with a failover section (failover.go)
	Degraded      *int64      `json:"degraded,omitempty"`
	// Iteration-level services only.
	Preemptions *int64 `json:"vllm:num_preemptions_total,omitempty"`
	KVCache     *num   `json:"vllm:kv_cache_usage_perc,omitempty"`
	// PrefixHitRatio: absent when no prompt token was found cached.
	PrefixHitRatio num         `json:"prefix_cache_hit_ratio,omitempty"`
	Stages         []jsonStage `json:"stages,omitempty"`
}

// toJSONClass writes c; iter says the service runs iteration-level
// replicas, all that c is its "all" entry.
func toJSONClass(c ClassResult, iter, all bool) jsonClass {
	j := jsonClass{
		Name: c.Name, Requests: c.Requests, Completed: c.Completed, Errors: c.Errors, Timeouts: c.Timeouts, Unfinished: c.Unfinished,
		RequestRate: num(c.RequestRate), ThroughputRPS: num(c.Throughput), ErrorRate: num(c.ErrorRate), SLOAttained: num(c.SLOAttained),
		Saturation: num(c.Saturation), TTFT: toJSONLatency(c.TTFT), ITL: toJSONLatency(c.ITL), TPOT: toJSONLatency(c.TPOT),
		E2E: toJSONLatency(c.E2E), QueueWait: toJSONLatency(c.QueueWait),
		PromptTokens: c.PromptTokens, PromptPerS: num(c.PromptTokensPerS), GenTokens: c.GenerationTokens, GenPerS: num(c.GenerationTokensPerS),
		PrefixHitRatio: num(c.PrefixHitRatio),
		Stages:         toJSONStages(c.Stages),
	}
	if iter {
		p := c.Preemptions
		j.Preemptions = &p
		if all {
			kv := num(c.KVCacheUsage)
			j.KVCache = &kv
		}
	}
	return j
}

type jsonService struct {
	Name         string      `json:"name"`
	All          jsonClass   `json:"all"`
	Classes      []jsonClass `json:"classes"`
	GPUHours     num         `json:"gpu_hours"`
	MeanReplicas num         `json:"mean_replicas"`
	MaxReplicas  int         `json:"max_replicas_ready"`
	Replicas     int         `json:"replicas_created"`
	Saturation   num         `json:"saturation"`
	ScaleOuts    int64       `json:"scale_outs"`
	ScaleIns     int64       `json:"scale_ins"`
	Ejections    int64       `json:"ejections"`
	ReplicasLost int64       `json:"replicas_lost"`
	Preempted    int64       `json:"batch_jobs_preempted"`
	GPUWaitS     num         `json:"gpu_wait_s"`
	Engine       *jsonEngine `json:"engine,omitempty"`

	// Failover and Received: failover.go.
	Failover *jsonFailover `json:"failover,omitempty"`
	Received int64         `json:"received_from_failover,omitempty"`
}

// jsonEngine is EngineBooks (iteration-level services only).
type jsonEngine struct {
	Steps       int64 `json:"steps"`
	Preemptions int64 `json:"preemptions"`
	KVBlocks    int64 `json:"kv_blocks"`
	KVUtilMean  num   `json:"kv_util_mean"`
	KVUtilPeak  num   `json:"kv_util_peak"`
	// The prefix cache's prompt tokens looked up and found, and their
	// ratio.
	PrefixQueries  int64 `json:"prefix_cache_queries"`
	PrefixHits     int64 `json:"prefix_cache_hits"`
	PrefixHitRatio num   `json:"prefix_cache_hit_ratio"`
}

type jsonBatch struct {
	Jobs           int   `json:"jobs"`
	Completed      int   `json:"completed"`
	WaitMeanS      num   `json:"wait_mean_s"`
	WaitP95S       num   `json:"wait_p95_s"`
	Preemptions    int64 `json:"preemptions"`
	PreemptedJobs  int   `json:"preempted_jobs"`
	LostGPUHours   num   `json:"lost_gpu_hours"`
	HWFailures     int   `json:"hardware_failures"`
	ExtraWaitMeanS *num  `json:"extra_wait_mean_s,omitempty"`
	ExtraWaitHours *num  `json:"extra_wait_job_hours,omitempty"`
}

func toJSONBatch(b BatchStats) *jsonBatch {
	if !b.hasAny {
		return nil
	}
	j := &jsonBatch{Jobs: b.Jobs, Completed: b.Completed, WaitMeanS: num(b.WaitMean), WaitP95S: num(b.WaitP95),
		Preemptions: b.Preemptions, PreemptedJobs: b.PreemptedJobs, LostGPUHours: num(b.LostGPUHours), HWFailures: b.HardwareFailures}
	if b.hasBaseline {
		m, h := num(b.ExtraWaitMean), num(b.ExtraWaitHours)
		j.ExtraWaitMeanS, j.ExtraWaitHours = &m, &h
	}
	return j
}

type jsonVariant struct {
	Name     string        `json:"name"`
	Requests int64         `json:"requests"`
	Events   int64         `json:"events"`
	Faults   *jsonFaultRun `json:"faults,omitempty"`
	Services []jsonService `json:"services"`
	Batch    *jsonBatch    `json:"batch,omitempty"`
	Alerts   *jsonAlerts   `json:"alerts,omitempty"`
}

// jsonFaultRun is what the faults did in one run.
type jsonFaultRun struct {
	// Injected counts the failures that happened before the run ended.
	Injected int `json:"injected"`
	// Detected counts those the orchestrator detected.
	Detected int `json:"detected"`
}

func toJSONFaultRun(r *sim.Result) *jsonFaultRun {
	j := &jsonFaultRun{}
	if r == nil {
		return j
	}
	j.Injected = len(r.Faults)
	for _, f := range r.Faults {
		if f.Detected >= 0 {
			j.Detected++
		}
	}
	return j
}

type jsonFaultSet struct {
	Describe string   `json:"description"`
	Schedule []string `json:"schedule"`
}

type jsonSummary struct {
	Experiment string        `json:"experiment"`
	Cluster    string        `json:"cluster"`
	Workload   string        `json:"batch_workload,omitempty"`
	Seed       uint64        `json:"seed"`
	HorizonS   num           `json:"horizon_s"`
	Faults     *jsonFaultSet `json:"faults,omitempty"`
	Baseline   *jsonBatch    `json:"baseline,omitempty"`
	BaseClean  *jsonBatch    `json:"baseline_no_faults,omitempty"`
	Variants   []jsonVariant `json:"variants"`
}

// WriteSummaryJSON writes serving_summary.json: per variant and service,
// the golden signals per class and over all classes, SLO attainment,
// GPU-hours, scaling, ejections and saturation; per variant, the batch
// jobs' waits and preemptions against the baseline.
func WriteSummaryJSON(w io.Writer, rs *RunSet) error {
	s := jsonSummary{Experiment: rs.Experiment, Cluster: rs.Cluster, Workload: rs.Workload, Seed: rs.Seed,
		Baseline: toJSONBatch(batchStats(rs.Baseline, nil)), BaseClean: toJSONBatch(batchStats(rs.BaselineNoFaults, nil)), Variants: []jsonVariant{}}
	if f := rs.Faults; f != nil {
		s.Faults = &jsonFaultSet{Describe: f.Describe, Schedule: []string{}}
		for _, x := range f.Schedule {
			if f.Cluster != nil && x.Node < f.Cluster.NumNodes() {
				s.Faults.Schedule = append(s.Faults.Schedule, x.Format(f.Cluster))
			} else {
				s.Faults.Schedule = append(s.Faults.Schedule, x.String())
			}
		}
	}
	for _, v := range rs.Variants {
		r := v.Result
		s.HorizonS = num(r.Horizon.Seconds())
		jv := jsonVariant{Name: v.Name, Requests: r.Requests, Events: r.Events, Services: []jsonService{},
			Batch: toJSONBatch(batchStats(r.Batch, rs.baselineOf(v)))}
		if v.Faults {
			jv.Faults = toJSONFaultRun(r.Batch)
		}
		jv.Alerts = toJSONAlerts(r)
		for _, sv := range r.Services {
			iter := sv.Engine != nil
			js := jsonService{Name: sv.Name, All: toJSONClass(sv.All, iter, true), Classes: []jsonClass{}, GPUHours: num(sv.GPUHours),
				MeanReplicas: num(sv.MeanReplicas), Replicas: len(sv.Replicas), Saturation: num(sv.Saturation),
				ScaleOuts: sv.ScaleOuts, ScaleIns: sv.ScaleIns, Ejections: sv.Ejections, ReplicasLost: sv.ReplicasLost, Preempted: sv.Preempted,
				GPUWaitS: num(sv.GPUWait.Seconds())}
			if e := sv.Engine; e != nil {
				js.Engine = &jsonEngine{Steps: e.Steps, Preemptions: e.Preemptions, KVBlocks: e.KVBlocks,
					KVUtilMean: num(e.KVUtilMean), KVUtilPeak: num(e.KVUtilPeak),
					PrefixQueries: e.PrefixQueries, PrefixHits: e.PrefixHits, PrefixHitRatio: num(e.PrefixHitRatio)}
			}
			for _, b := range sv.Series {
				js.MaxReplicas = max(js.MaxReplicas, b.ReplicasReady)
			}
			for _, c := range sv.Classes {
				js.Classes = append(js.Classes, toJSONClass(c, iter, false))
			}
			addFailoverJSON(&js, &sv)
			jv.Services = append(jv.Services, js)
		}
		s.Variants = append(s.Variants, jv)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// --- CSVs ---

// fnum formats a float for the CSVs: at most 6 decimals, no trailing
// zeros, "" for NaN and infinities.
func fnum(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	s := strconv.FormatFloat(f, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

func secs(t hwmodel.Time) string { return fnum(t.Seconds()) }

// TimeseriesHeader is serving_timeseries.csv's header.
var TimeseriesHeader = []string{"variant", "service", "bucket_start_s", "arrivals", "completed", "errors",
	"ttft_p99_s", "e2e_p50_s", "e2e_p99_s", "replicas_ready", "replicas_held", "gpus", "queue_len"}

// WriteTimeseriesCSV writes serving_timeseries.csv: one row per variant,
// service and bucket.
func WriteTimeseriesCSV(w io.Writer, rs *RunSet) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(TimeseriesHeader); err != nil {
		return err
	}
	i := strconv.Itoa
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, v := range rs.Variants {
		for _, s := range v.Result.Services {
			for _, b := range s.Series {
				if err := cw.Write([]string{v.Name, s.Name, secs(b.Start), i64(b.Arrivals), i64(b.Completed), i64(b.Errors),
					fnum(b.TTFTP99), fnum(b.E2EP50), fnum(b.E2EP99), i(b.ReplicasReady), i(b.ReplicasHeld), i(b.GPUs), i(b.QueueLen)}); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReplicasHeader is replicas.csv's header.
var ReplicasHeader = []string{"variant", "service", "replica", "node", "requested_s", "placed_s", "ready_s", "released_s",
	"serving_s", "completed", "failed", "ejections", "mean_in_flight", "throughput_rps", "mean_time_on_replica_s", "little_error"}

// WriteReplicasCSV writes replicas.csv: one row per replica with its
// life, its books and a Little's law check: mean_in_flight (the time
// integral of its requests in flight over its serving time) against
// throughput_rps × mean_time_on_replica_s; little_error is their relative
// difference (requests still in flight at the end, or failed, make it
// differ from 0).
func WriteReplicasCSV(w io.Writer, rs *RunSet) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ReplicasHeader); err != nil {
		return err
	}
	at := func(t hwmodel.Time) string {
		if t < 0 {
			return ""
		}
		return secs(t)
	}
	for _, v := range rs.Variants {
		for _, s := range v.Result.Services {
			for _, r := range s.Replicas {
				row := []string{v.Name, s.Name, strconv.Itoa(r.ID), "", at(r.Requested), at(r.Placed), at(r.Ready), at(r.Released),
					"", strconv.FormatInt(r.Completed, 10), strconv.FormatInt(r.Failed, 10), strconv.Itoa(r.Ejections), "", "", "", ""}
				if r.Placed >= 0 {
					row[3] = strconv.Itoa(r.Node)
				}
				if r.Ready >= 0 && r.Released > r.Ready {
					serving := (r.Released - r.Ready).Seconds()
					row[8] = fnum(serving)
					l := r.BusyIntegral / serving
					row[12] = fnum(l)
					x := float64(r.Completed) / serving
					row[13] = fnum(x)
					if r.Completed > 0 {
						wq := r.SojournSum / float64(r.Completed)
						row[14] = fnum(wq)
						if l > 0 {
							row[15] = fnum(math.Abs(l-x*wq) / l)
						}
					}
				}
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// --- the terminal table ---

// fmtLatency prints seconds as "420ms", "3.2s", "1.5m".
func fmtLatency(s float64, completed int64) string {
	if completed == 0 || math.IsNaN(s) {
		return "-"
	}
	switch {
	case s < 1:
		return strconv.FormatFloat(s*1000, 'f', 0, 64) + "ms"
	case s < 10:
		return strconv.FormatFloat(s, 'f', 2, 64) + "s"
	}
	return results.HumanDuration(s)
}

func pct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	return strconv.FormatFloat(100*f, 'f', 1, 64) + "%"
}

// FormatTable writes the comparison table: one row per variant, service
// and class (then the service's "all" row when it has several classes).
// The service columns (GPU-h, scale-outs, ejections; replicas lost to
// hardware faults when some variant ran with faults) and the batch
// columns (jobs preempted, extra mean wait against the batch-only
// baseline) are printed on the first row of each service. When some
// service has a failover section, a "to backup" column counts each class's
// requests its circuit sent to the backup, and a line under the table per
// such service says when the circuit was open.
func FormatTable(w io.Writer, rs *RunSet) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	faults := rs.hasFaults()
	failover := rs.hasFailover()
	lostHead := ""
	if faults {
		lostHead = "\tlost"
	}
	backupHead := ""
	if failover {
		backupHead = "\tto backup"
	}
	fmt.Fprintln(tw, "variant\tservice\tclass\trps\tTTFT p50\tTTFT p99\tE2E p50\tE2E p99\terrors\tSLO"+backupHead+"\tGPU-h\tmean repl\tscale-outs\tejections"+lostHead+"\tbatch preempted\tbatch +wait")
	for _, v := range rs.Variants {
		bs := batchStats(v.Result.Batch, rs.baselineOf(v))
		for _, s := range v.Result.Services {
			rows := s.Classes
			if len(rows) > 1 {
				rows = append(slices.Clone(rows), s.All)
			}
			for k, c := range rows {
				svcCols := "\t\t\t\t\t"
				if faults {
					svcCols += "\t"
				}
				if k == 0 {
					preempted, extra := "-", "-"
					if bs.hasAny {
						preempted = strconv.FormatInt(bs.Preemptions, 10)
						if bs.hasBaseline {
							extra = signedDuration(bs.ExtraWaitMean)
						}
					}
					lost := ""
					if faults {
						lost = "\t-"
						if v.Faults {
							lost = "\t" + strconv.FormatInt(s.ReplicasLost, 10)
						}
					}
					svcCols = fmt.Sprintf("%.1f\t%.1f\t%d\t%d%s\t%s\t%s", s.GPUHours, s.MeanReplicas, s.ScaleOuts, s.Ejections, lost, preempted, extra)
				}
				slo := pct(c.SLOAttained)
				if failover {
					slo += "\t" + toBackup(&s, c)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.Name, s.Name, c.Name, c.Throughput,
					fmtLatency(c.TTFT.P50, c.Completed), fmtLatency(c.TTFT.P99, c.Completed),
					fmtLatency(c.E2E.P50, c.Completed), fmtLatency(c.E2E.P99, c.Completed),
					pct(c.ErrorRate), slo, svcCols)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeStageLines(&buf, rs)
	// Rows without the service columns end in padding; drop it.
	var out strings.Builder
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if t, ok := strings.CutSuffix(line, "\n"); ok {
			out.WriteString(strings.TrimRight(t, " ") + "\n")
		} else {
			out.WriteString(line)
		}
	}
	out.WriteString(circuitLines(rs))
	if _, err := io.WriteString(w, out.String()); err != nil {
		return err
	}
	return formatAlertTable(w, rs)
}

func signedDuration(s float64) string {
	if s > 0 {
		return "+" + results.HumanDuration(s)
	}
	return results.HumanDuration(s)
}
