package main

import (
	"fmt"
	"github.com/brigadesim/brigade/hwmodel"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/sweep"
)

const sweepUsage = `Usage: brigade sweep GRID --out DIR [flags]
       brigade sweep merge --out DIR SHARD_DIR...

Runs the cross product of a grid file (docs/sweeps.md): workloads (traces
or synthetic generator settings) × clusters × loads × seeds, one run each,
every policy of the grid compared on the run's arrivals. Runs go to
--workers workers. Each finished run is recorded in DIR/runs.d/KEY.json; a
rerun with the same grid and --out skips recorded runs, so an interrupted
sweep resumes. Then, from the records in canonical order:
  DIR/runs.csv, DIR/runs.parquet  one row per run and policy: run, key,
                                  workload, cluster, load, seed, policy,
                                  then the grid's metrics
  DIR/summary.csv                 per workload, cluster, load, policy and
                                  metric: n seeds, mean, sd, 95% CI (Student t)
  DIR/pairs.csv                   per pair of policies and metric: paired
                                  t-test across seeds (mean_diff, t, p_value)
  DIR/grid.json                   the grid as read
and the summary table is printed.

Shards: --shard i/n runs only the runs whose canonical index mod n is i.
Without --shard, a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (with
--shards n, or BRIGADE_SHARDS=n) or a Slurm array's SLURM_ARRAY_TASK_ID
(minus SLURM_ARRAY_TASK_MIN) and SLURM_ARRAY_TASK_COUNT choose it. "{shard}"
in --out is replaced by i. Each shard writes its own DIR; 'brigade sweep
merge --out DIR SHARD_DIR...' joins them into the tables one machine would
have written, byte for byte.`

const sweepExamples = `  brigade sweep examples/sweep.yaml --out sweep-out
  brigade sweep examples/sweep.yaml --out sweep-out --workers 2 --quiet
  brigade sweep examples/sweep.yaml --out shards/0 --shard 0/4
  JOB_COMPLETION_INDEX=3 brigade sweep grid.yaml --shards 4 --out /results/shard-{shard}
  brigade sweep merge --out sweep-out shards/0 shards/1 shards/2 shards/3
`

const mergeUsage = `Usage: brigade sweep merge --out DIR SHARD_DIR...

Joins the records of shard folders written by 'brigade sweep --shard' (all
for the same grid) into DIR and writes the tables one unsharded sweep would
have written (runs.csv, runs.parquet, summary.csv, pairs.csv), then prints
the summary. A run in no shard is an error unless --partial.`

const mergeExamples = `  brigade sweep merge --out sweep-out shards/0 shards/1 shards/2 shards/3
  brigade sweep merge --out sweep-out shards/*
`

func runSweep(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "merge" {
		return runSweepMerge(args[1:], stdout, stderr)
	}
	fs := newFlagSet("sweep", sweepUsage, sweepExamples)
	out := fs.String("out", "", "results `directory` (required; created if missing)")
	workers := fs.Int("workers", 0, "runs at once (default GOMAXPROCS)")
	shardFlag := fs.String("shard", "", "run only shard `i/n`: the runs whose index mod n is i (0 <= i < n)")
	shards := fs.Int("shards", 0, "number of shards `n` when the index comes from JOB_COMPLETION_INDEX (default $BRIGADE_SHARDS)")
	quiet := fs.Bool("quiet", false, "print nothing but errors and the table (no progress bar either; the bar shows only when stderr is a terminal)")
	if err := fs.Parse(args); err != nil {
		return fs.parse(args, stdout) // prints --help, wraps usage errors
	}
	if fs.NArg() != 1 {
		return usageError{fmt.Errorf("want one grid file, got %d arguments", fs.NArg())}
	}
	if *out == "" {
		return usageError{fmt.Errorf("--out is required")}
	}
	if *workers < 0 {
		return usageError{fmt.Errorf("--workers must be >= 0, got %d", *workers)}
	}
	shard, err := resolveShard(*shardFlag, *shards, os.Getenv)
	if err != nil {
		return usageError{err}
	}
	dir := strings.ReplaceAll(*out, "{shard}", strconv.Itoa(shard.I))
	g, err := sweep.LoadGrid(fs.Arg(0))
	if err != nil {
		return err
	}
	total := 0
	for _, r := range g.Runs() {
		if shard.Has(r.Index) {
			total++
		}
	}
	if !*quiet {
		sh := ""
		if shard.N > 1 {
			sh = fmt.Sprintf(" (shard %d/%d of %d)", shard.I, shard.N, len(g.Runs()))
		}
		fmt.Fprintf(stderr, "brigade: sweep of %s%s × %s into %s\n", hwmodel.Plural(total, "run", "runs"), sh, hwmodel.Plural(len(g.Policies), "policy", "policies"), dir)
	}
	bar := newProgress(stderr, *quiet, "brigade sweep", "runs", total)
	var log io.Writer
	if !*quiet {
		log = stderr
	}
	recs, err := sweep.Sweep(g, dir, sweep.Options{Workers: *workers, Shard: shard, Progress: bar.Func(), Log: log})
	bar.Done()
	if err != nil {
		return err
	}
	if err := sweep.PrintSummary(stdout, g, recs); err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(stderr, "brigade: wrote %s to %s\n", strings.Join(sweep.Files, ", "), dir)
	}
	return nil
}

// resolveShard picks the shard: --shard, else JOB_COMPLETION_INDEX with
// --shards (or BRIGADE_SHARDS), else SLURM_ARRAY_TASK_ID −
// SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT; else every run.
func resolveShard(flag string, n int, getenv func(string) string) (sweep.Shard, error) {
	if flag != "" {
		s, err := sweep.ParseShard(flag)
		if err != nil {
			return s, fmt.Errorf("--shard: %v", err)
		}
		return s, nil
	}
	atoi := func(name string) (int, error) {
		v, err := strconv.Atoi(getenv(name))
		if err != nil {
			return 0, fmt.Errorf("%s=%q: want an integer", name, getenv(name))
		}
		return v, nil
	}
	if getenv("JOB_COMPLETION_INDEX") != "" {
		i, err := atoi("JOB_COMPLETION_INDEX")
		if err != nil {
			return sweep.Shard{}, err
		}
		if n == 0 && getenv("BRIGADE_SHARDS") != "" {
			if n, err = atoi("BRIGADE_SHARDS"); err != nil {
				return sweep.Shard{}, err
			}
		}
		if n == 0 {
			return sweep.Shard{}, fmt.Errorf("JOB_COMPLETION_INDEX is set: give the number of shards (the Job's completions) with --shards n or BRIGADE_SHARDS")
		}
		return sweep.ParseShard(fmt.Sprintf("%d/%d", i, n))
	}
	if getenv("SLURM_ARRAY_TASK_ID") != "" {
		id, err := atoi("SLURM_ARRAY_TASK_ID")
		if err != nil {
			return sweep.Shard{}, err
		}
		lo := 0
		if getenv("SLURM_ARRAY_TASK_MIN") != "" {
			if lo, err = atoi("SLURM_ARRAY_TASK_MIN"); err != nil {
				return sweep.Shard{}, err
			}
		}
		if n == 0 {
			if getenv("SLURM_ARRAY_TASK_COUNT") == "" {
				return sweep.Shard{}, fmt.Errorf("SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_COUNT: give --shards n")
			}
			if n, err = atoi("SLURM_ARRAY_TASK_COUNT"); err != nil {
				return sweep.Shard{}, err
			}
		}
		s, err := sweep.ParseShard(fmt.Sprintf("%d/%d", id-lo, n))
		if err != nil {
			return s, fmt.Errorf("SLURM_ARRAY_TASK_ID %d − SLURM_ARRAY_TASK_MIN %d of %d: %v (use a contiguous array such as --array=0-%d)", id, lo, n, err, n-1)
		}
		return s, nil
	}
	if n > 1 {
		return sweep.Shard{}, fmt.Errorf("--shards needs JOB_COMPLETION_INDEX (or use --shard i/n)")
	}
	return sweep.Shard{}, nil
}

func runSweepMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep merge", mergeUsage, mergeExamples)
	out := fs.String("out", "", "merged results `directory` (required)")
	partial := fs.Bool("partial", false, "write the tables even when some runs are in no shard")
	quiet := fs.Bool("quiet", false, "print nothing but errors and the table")
	if err := fs.Parse(args); err != nil {
		return fs.parse(args, stdout)
	}
	if *out == "" {
		return usageError{fmt.Errorf("--out is required")}
	}
	if fs.NArg() == 0 {
		return usageError{fmt.Errorf("want at least one shard folder")}
	}
	g, recs, err := sweep.Merge(*out, fs.Args(), *partial)
	if err != nil {
		return err
	}
	if err := sweep.PrintSummary(stdout, g, recs); err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(stderr, "brigade: merged %s from %s; wrote %s to %s\n", hwmodel.Plural(len(recs), "run", "runs"), hwmodel.Plural(fs.NArg(), "folder", "folders"), strings.Join(sweep.Files, ", "), *out)
	}
	return nil
}
