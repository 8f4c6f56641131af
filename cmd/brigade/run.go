package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/scenario"
)

const runUsage = `Usage: brigade run [flags] FILE...

Runs scenario files (docs/scenarios.md): each declares a cluster, a
workload (a trace, a generator, explicit jobs), faults, the setups to
compare and the table and plot to report. For each file it prints the
results table and writes the results folder (--out, one subfolder per
file when several are given); nothing else. With --page it also rewrites
the Markdown page and plot the file names: the worked examples in
examples/ are such files, and their pages in docs/ are written this way. A serving experiment
file (one with services, docs/serving.md) runs as brigade serve runs it.

Flags override the file: --seed, --cluster and --policy replace its shared
values (setups that name their own keep them); --page and --check refuse
them, because a page documents the file as written.

The same file and flags give byte-identical outputs.`

const runExamples = `  brigade run examples/mig.yaml
  brigade run --page examples/mig.yaml          # also rewrite docs/mig.md and its plot
  brigade run examples/failures.yaml --seed 2 --out /tmp/failures-seed2
  brigade run --check examples/mig.yaml examples/failures.yaml   # are their docs pages current?
`

func runRun(args []string, stdout, stderr io.Writer) error {
	var (
		opt            scenario.Options
		seed           uint64
		out            string
		page, check, q bool
	)
	fs := newFlagSet("run", runUsage, runExamples)
	fs.StringVar(&out, "out", "brigade-out", "results `directory`, written whole (with several files: one subfolder per file, named after it)")
	fs.Uint64Var(&seed, "seed", 0, "replace the file's seed")
	fs.StringVar(&opt.Cluster, "cluster", "", "replace the file's shared cluster (a preset or a cluster spec `file`)")
	fs.StringVar(&opt.Policy, "policy", "", "replace the file's shared policy `spec` (docs/policies.md)")
	fs.BoolVar(&page, "page", false, "also rewrite the Markdown page and plot the file names (page:, plot:), the only files written outside --out; how the worked examples' docs pages are made")
	fs.BoolVar(&check, "check", false, "write nothing: fail if a page or plot the file names is not what this run renders (CI keeps the docs current with it)")
	fs.BoolVar(&opt.CheckInvariants, "check-invariants", false, "re-check every engine invariant after every event (slow; for debugging)")
	fs.BoolVar(&q, "quiet", false, "print nothing but errors and the tables")
	if err := fs.parseFlags(args, stdout); err != nil {
		return err
	}
	files := fs.Args()
	if len(files) == 0 {
		return usageError{errors.New("want at least one scenario file (examples/*.yaml)")}
	}
	if fs.Changed("seed") {
		opt.Seed = &seed
	}
	overridden := opt.Seed != nil || opt.Cluster != "" || opt.Policy != ""
	if (check || page) && overridden {
		return usageError{errors.New("--page and --check document the files as written: drop --seed, --cluster and --policy")}
	}
	if check && page {
		return usageError{errors.New("--check writes nothing: give --check or --page, not both")}
	}
	// Every file is read and checked before any runs. A serving
	// experiment (a file with services) is brigade serve's.
	loaded := make([]*scenario.File, len(files))
	dirs := make([]string, len(files))
	for i, path := range files {
		dirs[i] = out
		if len(files) > 1 {
			dirs[i] = filepath.Join(out, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
		}
		if isServingExperiment(path) {
			if check || opt.Cluster != "" || opt.Policy != "" {
				return usageError{fmt.Errorf("%s is a serving experiment: it names its own clusters and policies and has no page to check (go test checks the tables docs/serving.md shows)", path)}
			}
			continue
		}
		f, err := scenario.Load(path)
		if err != nil {
			return err
		}
		loaded[i] = f
		if !check {
			if err := results.CheckOut(dirs[i], path); err != nil {
				return err
			}
		}
	}
	var stale []string
	for i, f := range loaded {
		path := files[i]
		if f == nil {
			serveArgs := []string{path, "--out", dirs[i]}
			if opt.Seed != nil {
				serveArgs = append(serveArgs, "--seed", fmt.Sprint(*opt.Seed))
			}
			if q {
				serveArgs = append(serveArgs, "--quiet")
			}
			if opt.CheckInvariants {
				serveArgs = append(serveArgs, "--check-invariants")
			}
			if err := runServe(serveArgs, stdout, stderr); err != nil {
				return err
			}
			continue
		}
		bar := newProgress(stderr, q, "brigade run "+path, "setups", len(f.Setups))
		opt.Progress = func(_ string, done, _ int) { bar.Set(done) }
		res, err := scenario.Run(f, opt)
		bar.Done()
		if err != nil {
			return err
		}
		if len(files) > 1 {
			fmt.Fprintf(stdout, "%s\n", path)
		}
		if err := res.WriteText(stdout); err != nil {
			return err
		}
		command := "go run ./cmd/brigade run --page " + filepath.ToSlash(path)
		if check {
			s, err := res.StalePages(command)
			if err != nil {
				return err
			}
			stale = append(stale, s...)
			continue
		}
		if err := res.WriteResults(dirs[i], append([]string{"brigade", "run"}, args...)); err != nil {
			return err
		}
		if !q {
			fmt.Fprintf(stderr, "brigade run: wrote %s\n", dirs[i])
		}
		if !page || f.PagePath() == "" {
			continue
		}
		wrote, err := res.WritePage(command)
		if err != nil {
			return err
		}
		if !q {
			fmt.Fprintf(stderr, "brigade run: wrote %s\n", strings.Join(wrote, ", "))
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("not what the scenario files render now (run brigade run on them and commit the result): %s", strings.Join(stale, ", "))
	}
	return nil
}

// isServingExperiment tells a serving experiment file (docs/serving.md) by
// its services section; anything else is read as a scenario file.
func isServingExperiment(path string) bool {
	data, err := config.ReadFile(path, "scenario file", 0)
	return err == nil && slices.Contains(config.TopKeys(data), "services")
}
