package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
)

// syntheticPhilly writes n jobs in the shape of the Pollux philly.csv
// (15 virtual clusters, unsorted timestamps over four months, mostly
// 1-GPU jobs) to dir and returns the file's path.
func syntheticPhilly(b *testing.B, dir string, n int) string {
	rng := rand.New(rand.NewPCG(1, 9))
	var buf bytes.Buffer
	buf.WriteString("timestamp,duration,num_gpus,gpu_time,cluster\n")
	gpus := []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 16}
	for range n {
		at := time.Unix(1504521041+rng.Int64N(9408690), 0).UTC()
		d, g := 1+rng.Int64N(100000), gpus[rng.IntN(len(gpus))]
		fmt.Fprintf(&buf, "%s,%d.0,%d,%d.0,vc%02d\n", at.Format("2006-01-02 15:04:05"), d, g, d*int64(g), rng.IntN(15))
	}
	path := filepath.Join(dir, "philly-synthetic.csv")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// phillyTrace is the real Philly trace when it is found, else "".
func phillyTrace() string {
	for _, dir := range []string{os.Getenv("BRIGADE_TRACES"), "../../../shared/traces", "../../shared/traces"} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "philly-pollux/philly.csv")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// BenchmarkSim runs brigade sim whole, as the command does (flags,
// reading, the engine, the plots, every results file, run.json, the
// table), and reports where the time goes: read-ms (reading the trace
// and the cluster, checking that every job fits), run-ms (every policy's
// engine run and the summaries), plots-ms and files-ms (the results
// files, run.json and the folder's swap), each per command.
//
// pool512 replays a trace on bench/simpy/pool512.yaml under strict FCFS,
// the model of the SimPy fixture (bench/simpy). philly-synthetic is a
// generated trace of philly.csv's shape, always there (the CI guard runs
// it); philly is the real 82,247-job trace when it is found
// ($BRIGADE_TRACES or ../shared/traces).
func BenchmarkSim(b *testing.B) {
	dir := b.TempDir()
	synthetic := syntheticPhilly(b, dir, 20000)
	pool := filepath.Join("..", "..", "bench", "simpy", "pool512.yaml")
	cases := []struct {
		name string
		args []string
	}{
		{"default/fcfs", []string{"--policy", "fcfs"}},
		{"philly-synthetic/pool512/fcfs", []string{"--trace", synthetic, "--cluster", pool, "--policy", "fcfs"}},
	}
	if p := phillyTrace(); p != "" {
		cases = append(cases,
			struct {
				name string
				args []string
			}{"philly/philly-like/fcfs", []string{"--trace", p, "--cluster", "philly-like", "--policy", "fcfs"}},
			struct {
				name string
				args []string
			}{"philly/philly-like/fcfs,sjf,priority,fair", []string{"--trace", p, "--cluster", "philly-like", "--policy", "fcfs,sjf,priority,fair"}},
			struct {
				name string
				args []string
			}{"philly/pool512/fcfs", []string{"--trace", p, "--cluster", pool, "--policy", "fcfs"}},
		)
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "out")
			var read, run, plots, files time.Duration
			for b.Loop() {
				st, err := simStages(append(c.args, "--quiet", "--out", out))
				if err != nil {
					b.Fatal(err)
				}
				read += st[0]
				run += st[1]
				plots += st[2]
				files += st[3]
			}
			n := float64(b.N)
			b.ReportMetric(float64(read.Milliseconds())/n, "read-ms")
			b.ReportMetric(float64(run.Milliseconds())/n, "run-ms")
			b.ReportMetric(float64(plots.Milliseconds())/n, "plots-ms")
			b.ReportMetric(float64(files.Milliseconds())/n, "files-ms")
		})
	}
}

// simStages runs brigade sim as simulate does, without progress bars,
// and times its stages: reading, running, plotting, writing the files.
func simStages(args []string) ([4]time.Duration, error) {
	var st [4]time.Duration
	f, err := parseSim(args, io.Discard)
	if err != nil {
		return st, err
	}
	t0 := time.Now()
	c, err := f.comparison(io.Discard)
	if err != nil {
		return st, err
	}
	var tRead, tPlots, tPlotted time.Time
	c.Started = func(*runner.Simulation) { tRead = time.Now() }
	if extra := c.Extra; extra != nil {
		c.Extra = func(dir string, runs []runner.PolicyRun) error {
			tPlots = time.Now()
			defer func() { tPlotted = time.Now() }()
			return extra(dir, runs)
		}
	}
	s, err := runner.Simulate(c)
	if err != nil {
		return st, err
	}
	if err := results.FormatTable(io.Discard, s.Summaries()); err != nil {
		return st, err
	}
	end := time.Now()
	if tPlots.IsZero() { // --no-plots
		tPlots, tPlotted = end, end
	}
	st[0], st[1], st[2], st[3] = tRead.Sub(t0), tPlots.Sub(tRead), tPlotted.Sub(tPlots), end.Sub(tPlotted)
	return st, nil
}
