package main

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

const faultsExampleUsage = `Usage: brigade faults-example [flags]

Runs the fault-tolerance worked example and writes docs/faults.md: a
512-GPU cluster (preset dgx-h100x64: 64 DGX H100 nodes × 8) runs one
multi-week training job (256 GPUs × 21 days of work) beside a seeded
synthetic queue of batch jobs sized for the other 256 GPUs, under node
failures (each node fails after an exponential time of mean --node-mtbf and
is repaired --node-repair later; heartbeats every 5 s, dead after 30 s;
restart 2 min; fixed retries). Each setting runs the same jobs against the
same failures:

  no-faults       no failures, 5-minute checkpoints, FCFS + EASY backfill
  no-checkpoints  failures, the training job never checkpoints, backfill
  checkpoints     failures, the training job checkpoints every 5 minutes
                  of progress (10 s each), backfill
  no-backfill     as checkpoints, FCFS without backfill: idle GPUs wait
                  while the training job waits for 256 free GPUs

The same flags give byte-identical outputs.`

const faultsExampleExamples = `  brigade faults-example
  brigade faults-example --node-mtbf 10d --md /tmp/faults.md
`

type faultsExampleFlags struct {
	batch                int
	load                 float64
	seed                 uint64
	nodeMTBF, nodeRepair string
	trainDays            float64
	trainGPUs            int
	ckptEvery, ckptCost  string
	restart              string
	maxRetries           int
	md, png              string
	check                bool
}

func runFaultsExample(args []string, stdout, stderr io.Writer) error {
	var f faultsExampleFlags
	fs := newFlagSet("faults-example", faultsExampleUsage, faultsExampleExamples)
	fs.IntVar(&f.batch, "batch-jobs", 24000, "synthetic batch `jobs` (Philly-like sizes, lognormal durations capped at 2 d)")
	fs.Float64Var(&f.load, "load", 0.8, "batch GPU demand as a multiple of the GPUs the training job leaves (arrivals are spaced to match)")
	fs.Uint64Var(&f.seed, "seed", 1, "root seed: the batch workload and the failures draw their own streams from it")
	fs.StringVar(&f.nodeMTBF, "node-mtbf", "30d", "mean time between failures of each node")
	fs.StringVar(&f.nodeRepair, "node-repair", "2h", "node repair time")
	fs.Float64Var(&f.trainDays, "train-days", 21, "the training job's work, in days")
	fs.IntVar(&f.trainGPUs, "train-gpus", 256, "the training job's GPUs")
	fs.StringVar(&f.ckptEvery, "checkpoint-every", "5m", "the training job's checkpoint interval (of progress)")
	fs.StringVar(&f.ckptCost, "checkpoint-cost", "10s", "time each checkpoint takes")
	fs.StringVar(&f.restart, "restart-time", "2m", "time a retried attempt spends restarting")
	fs.IntVar(&f.maxRetries, "max-retries", 50, "retries a job gets after failures (--retry fixed)")
	fs.StringVar(&f.md, "md", "docs/faults.md", "markdown `file` to write")
	fs.StringVar(&f.png, "png", "docs/faults-example.png", "PNG `file` to write (the plot)")
	fs.BoolVar(&f.check, "check-invariants", false, "re-check every engine invariant after every event (slow)")
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	ex, err := runFaultSetups(f)
	if err != nil {
		return err
	}
	var md bytes.Buffer
	writeFaultsMarkdown(&md, f, ex)
	png, err := faultsPlot(ex)
	if err != nil {
		return err
	}
	if err := writeExampleDocs(f.md, md.Bytes(), f.png, png); err != nil {
		return err
	}
	io.WriteString(stdout, ex.table)
	fmt.Fprintf(stderr, "brigade faults-example: wrote %s and %s\n", f.md, f.png)
	return nil
}

type faultSetup struct {
	name, what         string
	faults, ckpt, fill bool
}

var faultSetups = []faultSetup{
	{"no-faults", "no failures; checkpoints; backfill", false, true, true},
	{"no-checkpoints", "failures; the training job never checkpoints; backfill", true, false, true},
	{"checkpoints", "failures; checkpoints every 5 min of progress; backfill", true, true, true},
	{"no-backfill", "failures; checkpoints; FCFS without backfill", true, true, false},
}

// faultRow is one setting's numbers.
type faultRow struct {
	setup      faultSetup
	sum        results.Summary
	train      results.JobRecord
	batchWait  float64 // mean wait of batch jobs that ran, s
	batchDone  int
	batchTotal int
	timeline   *results.Timeline
}

type faultExample struct {
	workload string
	rows     []faultRow
	table    string
}

// faultsExampleWorkload is the training job (ID 0, submitted at 0) and the
// batch queue.
func faultsExampleWorkload(f faultsExampleFlags, totalGPUs int) (*workloads.Workload, string, error) {
	if f.trainGPUs <= 0 || f.trainGPUs >= totalGPUs || f.trainGPUs%8 != 0 || !(f.trainDays > 0) || f.batch < 1 || !(f.load > 0) {
		return nil, "", usageError{fmt.Errorf("want 0 < --train-gpus < %d (a multiple of 8), --train-days > 0, --batch-jobs >= 1 and --load > 0", totalGPUs)}
	}
	batch, err := runner.SyntheticAtLoad(f.batch, f.seed, totalGPUs-f.trainGPUs, f.load)
	if err != nil {
		return nil, "", err
	}
	train := workloads.Job{
		Name: "train", Tenant: "training", Submit: 0,
		Duration: hwmodel.FromSeconds(f.trainDays * 86400),
		Req:      hwmodel.Request{GPUs: f.trainGPUs, GPUMilli: hwmodel.MilliPerGPU, CPUMilli: int64(f.trainGPUs) * 8000, MemoryMiB: int64(f.trainGPUs) * 64 * 1024},
	}
	train.Estimate = train.Duration
	w := &workloads.Workload{
		Jobs:    append([]workloads.Job{train}, batch.Jobs...),
		Tenants: append([]workloads.Tenant{{Name: "training", Weight: 1}}, batch.Tenants...),
	}
	for i := 1; i < len(w.Jobs); i++ {
		w.Jobs[i].Deps = nil // synthetic jobs have none; IDs shift by one
	}
	w.FillEstimates()
	last := batch.Jobs[len(batch.Jobs)-1].Submit
	return w, fmt.Sprintf("train (%d GPUs × %g d) + %d batch jobs at load %g of the other %d GPUs, arriving over %s, seed %d",
		f.trainGPUs, f.trainDays, f.batch, f.load, totalGPUs-f.trainGPUs, results.HumanDuration(last.Seconds()), f.seed), nil
}

func runFaultSetups(f faultsExampleFlags) (*faultExample, error) {
	spec, ok := hwmodel.Preset("dgx-h100x64")
	if !ok {
		return nil, fmt.Errorf("no cluster preset dgx-h100x64")
	}
	probe, err := spec.Build()
	if err != nil {
		return nil, err
	}
	w, name, err := faultsExampleWorkload(f, probe.TotalGPUs())
	if err != nil {
		return nil, err
	}
	dur := func(flag, v string) (hwmodel.Time, error) {
		t, err := hwmodel.ParseDuration(v)
		if err != nil || t < 0 {
			return 0, usageError{fmt.Errorf("--%s: %v", flag, orPositive(err))}
		}
		return t, nil
	}
	var mtbf, repair, every, cost, restart hwmodel.Time
	for _, d := range []struct {
		flag, v string
		t       *hwmodel.Time
	}{{"node-mtbf", f.nodeMTBF, &mtbf}, {"node-repair", f.nodeRepair, &repair}, {"checkpoint-every", f.ckptEvery, &every},
		{"checkpoint-cost", f.ckptCost, &cost}, {"restart-time", f.restart, &restart}} {
		if *d.t, err = dur(d.flag, d.v); err != nil {
			return nil, err
		}
	}
	if mtbf <= 0 || repair <= 0 || every <= 0 {
		return nil, usageError{fmt.Errorf("--node-mtbf, --node-repair and --checkpoint-every must be positive")}
	}
	ex := &faultExample{workload: name}
	for _, s := range faultSetups {
		wl := &workloads.Workload{Jobs: append([]workloads.Job(nil), w.Jobs...), Tenants: w.Tenants}
		if s.ckpt {
			wl.Jobs[0].Checkpoint = workloads.Checkpoint{Every: every, Cost: cost}
		}
		faults := &runner.Faults{Retry: "fixed", MaxRetries: f.maxRetries, RestartTime: restart}
		if s.faults {
			faults.Model = hwmodel.FailureModel{NodeMTBF: mtbf, NodeRepair: hwmodel.RepairModel{Kind: "fixed", Mean: repair}}
		}
		runs, err := runner.Run(runner.Spec{
			Workload: wl, WorkloadName: name, NewCluster: spec.Build, ClusterName: "dgx-h100x64",
			Policies: []policies.Spec{{Order: "fcfs", Options: policies.Options{Backfill: s.fill}}},
			Seed:     f.seed, Options: runner.Options{CheckInvariants: f.check, Faults: faults},
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		r := runs[0]
		row := faultRow{setup: s, sum: r.Summary, train: r.Jobs[0], batchTotal: len(r.Jobs) - 1, timeline: r.Timeline}
		row.sum.Policy = s.name
		var waitSum float64
		ran := 0
		for _, j := range r.Jobs[1:] {
			if j.State == results.Succeeded {
				row.batchDone++
			}
			if j.Attempts > 0 {
				waitSum += j.Wait.Seconds()
				ran++
			}
		}
		if ran > 0 {
			row.batchWait = waitSum / float64(ran)
		}
		ex.rows = append(ex.rows, row)
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "setting\tfailures\tjobs hit\ttrain\ttrain JCT\ttrain failures\tbatch done\tbatch wait\tGPU util\tlost GPU-h\tckpt GPU-h\tgoodput\tdown GPU-h")
	for _, r := range ex.rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t%d/%d\t%s\t%.1f%%\t%.0f\t%.0f\t%.2f%%\t%.0f\n",
			r.setup.name, r.sum.Faults.Count, r.sum.Faults.JobsHit, r.train.State, trainJCT(r.train), r.train.HardwareFailures,
			r.batchDone, r.batchTotal, results.HumanDuration(r.batchWait), 100*r.sum.GPUUtilisationArrivals,
			r.sum.LostGPUHours, r.sum.CheckpointGPUHours, 100*r.sum.Goodput, r.sum.DownGPUHours)
	}
	tw.Flush()
	ex.table = b.String()
	return ex, nil
}

// trainJCT is the training job's completion time in days.
func trainJCT(j results.JobRecord) string {
	return fmt.Sprintf("%.2f d", (j.End-j.Submit).Seconds()/86400)
}

func writeFaultsMarkdown(w io.Writer, f faultsExampleFlags, ex *faultExample) {
	cmd := "go run ./cmd/brigade faults-example"
	def := faultsExampleFlags{batch: 24000, load: 0.8, seed: 1, nodeMTBF: "30d", nodeRepair: "2h", trainDays: 21, trainGPUs: 256,
		ckptEvery: "5m", ckptCost: "10s", restart: "2m", maxRetries: 50, md: f.md, png: f.png, check: f.check}
	if f != def {
		cmd += fmt.Sprintf(" --batch-jobs %d --load %g --seed %d --node-mtbf %s --node-repair %s --train-days %g --train-gpus %d --checkpoint-every %s --checkpoint-cost %s --restart-time %s --max-retries %d",
			f.batch, f.load, f.seed, f.nodeMTBF, f.nodeRepair, f.trainDays, f.trainGPUs, f.ckptEvery, f.ckptCost, f.restart, f.maxRetries)
	}
	fmt.Fprintf(w, faultsMarkdownHead, cmd)
	fmt.Fprintf(w, "Workload: %s. Cluster: `dgx-h100x64` (512 H100s). Failures: each node fails after an exponential time of mean %s and is repaired %s later (`--node-mtbf %s --node-repair %s`), drawn once from the seed's failure stream; heartbeats every 5 s, a node is declared dead 30 s after its last one; a retried attempt restarts in %s; every job may be retried %d times.\n\n",
		ex.workload, f.nodeMTBF, f.nodeRepair, f.nodeMTBF, f.nodeRepair, f.restart, f.maxRetries)
	fmt.Fprintln(w, "| setting | what | failures | jobs hit | training job | training JCT | training failures | batch done | batch wait (mean) | GPU util | lost GPU-h | checkpoint GPU-h | goodput | down GPU-h |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range ex.rows {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %s | %d | %d/%d | %s | %.1f%% | %.0f | %.0f | %.2f%% | %.0f |\n",
			r.setup.name, r.setup.what, r.sum.Faults.Count, r.sum.Faults.JobsHit, r.train.State, trainJCT(r.train), r.train.HardwareFailures,
			r.batchDone, r.batchTotal, results.HumanDuration(r.batchWait), 100*r.sum.GPUUtilisationArrivals,
			r.sum.LostGPUHours, r.sum.CheckpointGPUHours, 100*r.sum.Goodput, r.sum.DownGPUHours)
	}
	fmt.Fprint(w, faultsMarkdownTail)
}

const faultsMarkdownHead = `# Failures, checkpoints and backfill: a worked example

<!-- Generated by %s; do not edit by hand. -->

What does a node failure cost a multi-week training run, and how much do
checkpoints and backfill win back? This example runs one seeded scenario
four ways; every setting faces the same jobs and (where failures are on)
the same failures, because failures are drawn from their own random stream
of the root seed.

`

const faultsMarkdownTail = `
![GPU utilisation and out-of-service GPUs over time, and goodput, per setting](faults-example.png)

Settings with failures face the same failures, so their out-of-service
lines coincide until a run ends (no-checkpoints runs longest); the
utilisation lines of no-faults, no-checkpoints and checkpoints nearly
coincide while batch jobs arrive.

Columns: *failures* injected before the run ended, and *jobs hit* (running
attempts they killed); the *training job*'s state, completion time (submit
to end) and the failures it suffered; *batch done* and the mean *wait* of
the batch jobs that ran; *GPU util*, allocated GPU-time over capacity during
the batch arrival window; *lost GPU-h*, GPU-time that left no lasting
progress (work since the last checkpoint, the time a job ran on a dead node
until the failure was detected, restarts); *checkpoint GPU-h*, GPU-time
spent writing checkpoints; *goodput*, useful over allocated GPU-time (see
docs/metrics.md); *down GPU-h*, capacity out of service from failure to
repair.

How to read it:

- Without checkpoints, each failure throws away everything the training
  job has done: with 32 nodes of mean 30 days between failures, it meets a
  failure about once a day, so 21 days of uninterrupted work never happen;
  it burns its retries and fails, having lost all its GPU-time.
- With 5-minute checkpoints a failure costs at most 5 minutes of work plus
  detection (≤ 35 s) plus the 2-minute restart, and the waiting for 256 free
  GPUs again; the checkpoints themselves cost 10 s every 5 minutes (3 % of
  the training job's time).
- The training job's failures also free GPUs for the batch queue: while it
  waits to restart, batch jobs run on its idle GPUs, so batch waits need
  not grow with failures.
- Without backfill, while the training job waits for 256 GPUs after a
  failure, FCFS holds every batch job behind it: the training job restarts
  sooner, but batch waits grow by orders of magnitude. With EASY backfill,
  batch jobs that finish before the training job's reservation fill the
  idle GPUs, and the training job pays for it with a later restart (a
  reservation is only as good as the batch jobs' runtime estimates).

Run ` + "`brigade sim --help`" + ` for the same fault flags on any trace
(` + "`--node-mtbf`, `--gpu-mtbf`, `--fail`, `--fail-trace`, `--retry`, `--checkpoint-every`" + `, …).
`

// faultsPlotWindow is the averaging window of the plot's time series.
const faultsPlotWindow = 12 * hwmodel.Hour

// windowed averages a timeline's buckets over faultsPlotWindow: GPU
// utilisation (%) and out-of-service GPUs, against days.
func windowed(t *results.Timeline) (util, down plotter.XYs) {
	type acc struct{ cov, util, down float64 }
	var ws []acc
	for _, b := range t.Buckets() {
		i := int(b.Start / faultsPlotWindow)
		for len(ws) <= i {
			ws = append(ws, acc{})
		}
		c := float64(b.Covered)
		ws[i].cov += c
		ws[i].util += c * b.GPUUtilisation
		ws[i].down += c * b.DownGPUs
	}
	for i, w := range ws {
		if w.cov == 0 {
			continue
		}
		x := (float64(i) + 0.5) * faultsPlotWindow.Seconds() / 86400
		util = append(util, plotter.XY{X: x, Y: 100 * w.util / w.cov})
		down = append(down, plotter.XY{X: x, Y: w.down / w.cov})
	}
	return util, down
}

func faultsPlot(ex *faultExample) ([]byte, error) {
	colours := []color.Color{
		color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
		color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	}
	util := plot.New()
	util.Title.Text = "GPU utilisation (12 h means)"
	util.X.Label.Text = "days"
	util.Y.Label.Text = "% of 512 GPUs allocated"
	util.Y.Min, util.Y.Max = 0, 105
	down := plot.New()
	down.Title.Text = "GPUs out of service (12 h means)"
	down.X.Label.Text = "days"
	down.Y.Label.Text = "GPUs"
	down.Y.Min = 0
	var names []string
	var goodput plotter.Values
	for i, r := range ex.rows {
		names = append(names, r.setup.name)
		goodput = append(goodput, 100*r.sum.Goodput)
		u, d := windowed(r.timeline)
		lu, err := plotter.NewLine(u)
		if err != nil {
			return nil, err
		}
		lu.Color, lu.Width = colours[i%len(colours)], vg.Points(1.2)
		util.Add(lu)
		util.Legend.Add(r.setup.name, lu)
		if r.setup.faults {
			ld, err := plotter.NewLine(d)
			if err != nil {
				return nil, err
			}
			ld.Color, ld.Width = colours[i%len(colours)], vg.Points(1.2)
			down.Add(ld)
			down.Legend.Add(r.setup.name, ld)
		}
	}
	util.Legend.Top = false
	down.Legend.Top = true
	gp := plot.New()
	gp.Title.Text = "Goodput (useful / allocated GPU-time)"
	gp.Y.Label.Text = "%"
	bars, err := plotter.NewBarChart(goodput, vg.Points(28))
	if err != nil {
		return nil, err
	}
	bars.Color, bars.LineStyle.Width = colours[2], 0
	gp.Add(bars)
	gp.NominalX(names...)
	gp.Y.Min, gp.Y.Max = 0, 100
	const width, height = 15 * vg.Inch, 4.2 * vg.Inch
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(100))}
	dc := draw.New(c)
	third := width / 3
	util.Draw(draw.Crop(dc, 0, -2*third, 0, 0))
	down.Draw(draw.Crop(dc, third, -third, 0, 0))
	gp.Draw(draw.Crop(dc, 2*third, 0, 0, 0))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
