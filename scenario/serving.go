package scenario

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/serving"
)

// A file whose serving field names a serving experiment file runs that
// experiment as brigade serve does (serving.RunExperiment); the scenario
// file adds what a page needs: its title, text and where it goes.

// checkServing reports the fields a serving scenario cannot have: the
// experiment file names its own cluster, batch workload, policy, faults
// and variants.
func (f *File) checkServing(e *config.Errors) {
	for _, x := range []struct {
		field string
		set   bool
	}{{"cluster", f.Cluster != ""}, {"policy", f.Policy != ""}, {"mig_reconfig_time", f.MIGReconfigTime != ""},
		{"faults", f.Faults != nil}, {"setups", len(f.Setups) > 0}, {"columns", len(f.Columns) > 0},
		{"charts", len(f.Charts) > 0}, {"plan", f.Plan != nil}} {
		if x.set {
			e.Add(x.field, "the serving experiment file names the cluster, batch workload, faults and variants; this file has no %s", x.field)
		}
	}
	if !emptyWorkload(f.Workload) {
		e.Add("workload", "the serving experiment file names the cluster, batch workload, faults and variants; this file has no workload")
	}
	if _, err := os.Stat(f.resolve(f.Serving)); err != nil {
		e.Add("serving", "%v", err)
	}
}

func emptyWorkload(w Workload) bool {
	return w.Name == "" && !w.Embedded && w.Trace == "" && w.Format == "" && w.Synthetic == nil && len(w.Jobs) == 0
}

// runServing runs the file's serving experiment.
func (f *File) runServing(opt Options, res *Result) error {
	exp, err := serving.LoadExperiment(f.resolve(f.Serving))
	if err != nil {
		return err
	}
	if opt.Seed != nil {
		exp.Seed = *opt.Seed
	}
	ropt := serving.RunOptions{CheckInvariants: opt.CheckInvariants}
	if opt.Progress != nil {
		ropt.Progress = func(done, total int) { opt.Progress("", done, total) }
	}
	res.Serving, err = serving.RunExperiment(exp, ropt)
	res.Workload = f.resolve(f.Serving)
	return err
}

// servingMarkdown writes the results part of a serving page: the table
// brigade serve prints, and the figures.
func (r *Result) servingMarkdown(b io.Writer, plots []string) error {
	var t bytes.Buffer
	if err := serving.FormatTable(&t, r.Serving); err != nil {
		return err
	}
	exp := filepath.ToSlash(r.Workload)
	fmt.Fprintf(b, "## Results\n\nThe experiment file: [%s](%s).\n\n```\n%s```\n\n", exp, relLink(r.Workload, r.File.PagePath()), t.String())
	for _, link := range plots {
		name := strings.TrimSuffix(filepath.Base(link), ".png")
		fmt.Fprintf(b, "![%s](%s)\n\n", name, link)
	}
	return nil
}

// servingPNGs are the serving experiment's figures as PNGs, named as
// brigade serve names them in plots/ (e2e-p99.png, replicas.png, ...),
// drawn through a temporary folder.
func (r *Result) servingPNGs() ([]PageFile, error) {
	dir, err := os.MkdirTemp("", "brigade-serving-plots-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	names, err := serving.WritePlots(dir, r.Serving)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []PageFile
	for _, n := range names {
		if filepath.Ext(n) != ".png" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		out = append(out, PageFile{Path: n, Data: data})
	}
	return out, nil
}
